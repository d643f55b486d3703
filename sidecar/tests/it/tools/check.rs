//! `mongo-seq check`: what a trigger numbers, only integers counted, non-zero on anything
//! unclean, exact beyond 2^53 in `--json`; each period's series audited on its own (documents
//! carry `<field>Period`); `--format` with or without the field of the formatted ids. (Its
//! accounts of the ledger are in `ledger.rs`, of the dead letters in `dead_letters.rs`.)

use crate::common;

use std::time::Duration;

use common::*;
use mongodb::bson::{doc, Document};
use mongodb::Collection;

use super::{check_yearly_invoices, json, series_2026, stepped_config};

const WAIT: Duration = Duration::from_secs(60);

fn check_args<'a>(uri: &'a str, db: &'a str) -> Vec<&'a str> {
    vec![
        "check",
        "--uri",
        uri,
        "--db",
        db,
        "--collection",
        "orders",
        "--field",
        "seq",
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn check_counts_only_integers_and_fails_on_anything_unclean() {
    let (db, plain, coll) = test_db("check_clean").await;
    let uri = mongodb_uri();
    let counters: Collection<Document> = plain.database(&db).collection("counters");
    counters
        .insert_one(doc! { "_id": format!("{db}.orders"), "seq": 3_i64 })
        .await
        .unwrap();
    coll.insert_many([doc! { "seq": 1 }, doc! { "seq": 2 }, doc! { "seq": 3 }])
        .await
        .unwrap();
    let (code, out, err) = run_bin(&check_args(&uri, &db), &[]);
    assert_eq!(code, 0, "clean: {out}{err}");
    assert!(
        out.contains("3 documents, 3 numbered, 0 unnumbered, 0 duplicates, 0 gaps"),
        "{out}"
    );

    // Not integers: not numbered, and not clean.
    coll.insert_many([doc! { "seq": "abc" }, doc! { "seq": 2.5 }])
        .await
        .unwrap();
    let (code, out, err) = run_bin(&check_args(&uri, &db), &[]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        out.contains("5 documents, 3 numbered, 0 unnumbered, 2 not integers"),
        "{out}"
    );
    assert!(err.contains("not integers"), "says why: {err}");
    let json: serde_json::Value =
        serde_json::from_str(&run_bin(&[&check_args(&uri, &db)[..], &["--json"]].concat(), &[]).1)
            .unwrap();
    assert_eq!(
        (json["numbered"].as_u64(), json["invalid"].as_u64()),
        (Some(3), Some(2))
    );
    coll.delete_many(doc! { "seq": { "$type": ["string", "double"] } })
        .await
        .unwrap();

    // Unnumbered documents, a counter behind the largest number: not clean either.
    coll.insert_one(doc! { "n": 1 }).await.unwrap();
    let (code, out, err) = run_bin(&check_args(&uri, &db), &[]);
    assert_eq!(code, 1, "unnumbered: {out}{err}");
    assert!(err.contains("unnumbered"), "{err}");
    coll.delete_many(doc! { "n": 1 }).await.unwrap();
    coll.insert_one(doc! { "seq": 4 }).await.unwrap();
    let (code, out, err) = run_bin(&check_args(&uri, &db), &[]);
    assert_eq!(code, 1, "counter behind: {out}{err}");
    assert!(err.contains("counter"), "{err}");
    counters
        .update_one(
            doc! { "_id": format!("{db}.orders") },
            doc! { "$set": { "seq": 4_i64 } },
        )
        .await
        .unwrap();
    assert_eq!(run_bin(&check_args(&uri, &db), &[]).0, 0);

    // A database or collection that does not exist: a clear error, exit 2.
    let (code, out, err) = run_bin(&check_args(&uri, &format!("{db}_nope")), &[]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(err.contains(&format!("{db}_nope")), "{err}");
    let (code, _, err) = run_bin(
        &[
            "check",
            "--uri",
            &uri,
            "--db",
            &db,
            "--collection",
            "ordres",
        ],
        &[],
    );
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("ordres") && err.contains("orders"),
        "names the typo and what exists: {err}"
    );
    plain.database(&db).drop().await.ok();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn check_with_the_config_sees_what_the_trigger_numbers() {
    let (db, plain, coll) = test_db("check_config").await;
    let text = stepped_config(&db);
    let path = write_config(&format!("{db}-check"), &text);
    let path = path.to_str().unwrap();
    let cfg = mongo_seq_sidecar::config::parse(&text, "test").unwrap();
    let run = start(cfg, options().await, false);
    wait_running(&run).await;
    let orders: Vec<Document> = (0..30)
        .map(|i| {
            let tenant = ["acme", "globex"][i % 2];
            doc! { "tenantId": tenant, "type": "order", "i": i as i32 }
        })
        .collect();
    coll.insert_many(orders).await.unwrap();
    // Quotes are not numbered by this trigger (`match`).
    coll.insert_many((0..5).map(|i| doc! { "tenantId": "acme", "type": "quote", "i": i }))
        .await
        .unwrap();
    wait_numbered(&coll, "seq", 30, WAIT).await;
    run.stop().await;

    let (code, out, err) = run_bin(&["check", "--config", path], &[]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains("30 documents, 30 numbered, 0 unnumbered, 0 duplicates, 0 gaps, largest 141"),
        "{out}"
    );
    // The same by hand needs --match and --step; forgetting the step is not silent.
    let uri = mongodb_uri();
    let by_hand = |extra: &[&str]| {
        let mut args = check_args(&uri, &db);
        args.extend_from_slice(&[
            "--sequence",
            "orders",
            "--scope",
            "tenantId",
            "--counters",
            "counters",
        ]);
        args.extend_from_slice(extra);
        run_bin(&args, &[])
    };
    let (code, out, _) = by_hand(&["--match", r#"{"type": "order"}"#, "--step", "10"]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("30 documents, 30 numbered"), "{out}");
    let (code, out, err) = by_hand(&["--step", "10"]);
    assert_eq!(code, 1, "quotes are unnumbered without --match: {out}{err}");
    // Without the step, 1, 11, 21, … read as gaps (the config knows better).
    let (_, out, _) = by_hand(&["--match", r#"{"type": "order"}"#]);
    assert!(out.contains("252 gaps"), "{out}");
    // A step that does not fit the numbers: off the grid, not clean.
    let (code, out, err) = by_hand(&["--match", r#"{"type": "order"}"#, "--step", "3"]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(out.contains("off the step grid"), "{out}");
    let (code, _, err) = by_hand(&["--match", "{type: order}"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--match"), "{err}");

    // A document the trigger would number but cannot (no tenant): reported, not clean.
    coll.insert_one(doc! { "type": "order", "i": 99 })
        .await
        .unwrap();
    let (code, out, err) = run_bin(&["check", "--config", path], &[]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(out.contains("1 unnumbered"), "{out}");
    plain.database(&db).drop().await.ok();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn check_json_keeps_numbers_beyond_2_pow_53_exact() {
    let (db, plain, coll) = test_db("check_big").await;
    let big = 9_007_199_254_740_993_i64;
    let start = big - 1;
    coll.insert_many([doc! { "seq": start }, doc! { "seq": big }])
        .await
        .unwrap();
    plain
        .database(&db)
        .collection::<Document>("counters")
        .insert_one(doc! { "_id": format!("{db}.orders"), "seq": big })
        .await
        .unwrap();
    let uri = mongodb_uri();
    let start_arg = start.to_string();
    let mut args = check_args(&uri, &db);
    args.extend_from_slice(&["--start", &start_arg, "--json"]);
    let (code, out, err) = run_bin(&args, &[]);
    assert_eq!(code, 0, "{out}{err}");
    let json: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        json["largest"],
        serde_json::json!("9007199254740993"),
        "{out}"
    );
    assert_eq!(
        json["counters"][format!("{db}.orders")],
        serde_json::json!("9007199254740993"),
        "{out}"
    );
    assert_exact(&json, &out);

    // A duplicate and a gap up there: the report's examples (gaps, duplicates, largest, the
    // counter) are strings too, wherever they are.
    coll.insert_many([doc! { "seq": big }, doc! { "seq": big + 2 }])
        .await
        .unwrap();
    let (code, out, err) = run_bin(&args, &[]);
    assert_eq!(code, 1, "a duplicate: {out}{err}");
    let json: serde_json::Value = serde_json::from_str(&out).unwrap();
    let report = &json["reports"][format!("{db}.orders")];
    assert_eq!(
        report["gaps"][0]["first"],
        serde_json::json!("9007199254740994"),
        "{out}"
    );
    assert_eq!(
        report["duplicates"][0]["value"],
        serde_json::json!("9007199254740993"),
        "{out}"
    );
    assert_exact(&json, &out);
    plain.database(&db).drop().await.ok();
}

/// No JSON number in `json` that JavaScript's `JSON.parse` would round.
fn assert_exact(json: &serde_json::Value, out: &str) {
    match json {
        serde_json::Value::Number(n) => assert!(
            n.as_i64().is_some_and(|n| n.abs() < (1 << 53)) || n.is_f64(),
            "{n} is not exact in JavaScript: {out}"
        ),
        serde_json::Value::Array(items) => items.iter().for_each(|v| assert_exact(v, out)),
        serde_json::Value::Object(map) => map.values().for_each(|v| assert_exact(v, out)),
        _ => {}
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn check_audits_each_period_s_series_on_its_own() {
    let (db, plain, _) = test_db("series_check").await;
    let uri = mongodb_uri();
    let database = plain.database(&db);
    let invoices: Collection<Document> = database.collection("invoices");
    let counters: Collection<Document> = database.collection("counters");
    // Two years, each numbered from 1: the same numbers in both, no duplicate within one.
    let numbered = |n: i64, period: &str| doc! { "number": n, "numberPeriod": period };
    invoices
        .insert_many([
            numbered(1, "2025"),
            numbered(2, "2025"),
            numbered(3, "2025"),
            numbered(1, "2026"),
            numbered(2, "2026"),
        ])
        .await
        .unwrap();
    counters
        .insert_many([
            doc! { "_id": "inv/2025", "seq": 3_i64 },
            doc! { "_id": "inv/2026", "seq": 2_i64 },
        ])
        .await
        .unwrap();
    let check = |extra: &[&str]| {
        let mut args = vec!["--time-zone", "Europe/Paris"];
        args.extend_from_slice(extra);
        check_yearly_invoices(&uri, &db, &args)
    };
    let (code, out, err) = check(&["--gapless"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains(
            "5 documents, 5 numbered, 0 unnumbered, 0 duplicates, 0 gaps, largest 3, 2 counters"
        ),
        "{out}"
    );
    let (code, out, err) = check(&["--json"]);
    assert_eq!(code, 0, "{out}{err}");
    let report = json(&out);
    assert_eq!(
        report["counters"],
        serde_json::json!({ "inv/2025": 3, "inv/2026": 2 }),
        "{report}"
    );
    assert_eq!(report["reports"]["inv/2026"]["largest"], 2, "{report}");

    // A duplicate within 2026, a gap in 2025, and a number without its period: each found in
    // its own series.
    invoices
        .insert_many([
            numbered(2, "2026"),
            numbered(5, "2025"),
            doc! { "number": 9_i64 },
            doc! { "number": 10_i64, "numberPeriod": "2026-05" },
        ])
        .await
        .unwrap();
    counters
        .update_one(
            doc! { "_id": "inv/2025" },
            doc! { "$set": { "seq": 5_i64 } },
        )
        .await
        .unwrap();
    let (code, out, err) = check(&["--json"]);
    assert_eq!(code, 1, "{out}{err}");
    let report = json(&out);
    assert_eq!(report["duplicates"], 1, "{report}");
    assert_eq!(report["gaps"], 1, "{report}");
    assert_eq!(report["without_period"], 2, "{report}");
    assert_eq!(
        report["reports"]["inv/2026"]["duplicateValues"], 1,
        "{report}"
    );
    assert_eq!(report["reports"]["inv/2025"]["gapCount"], 1, "{report}");
    assert!(
        err.contains("2 numbered documents without a period"),
        "{err}"
    );
    database.drop().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn check_takes_a_format_with_or_without_the_field_of_the_formatted_ids() {
    let (db, plain) = series_2026("check_format", "seq", &[1, 2]).await;
    let uri = mongodb_uri();
    let base = [
        "check",
        "--uri",
        &uri,
        "--db",
        &db,
        "--collection",
        "orders",
        "--sequence",
        "inv",
        "--reset",
        "yearly",
        "--format",
        "INV-{yyyy}-{seq:06}",
    ];
    for extra in [&[][..], &["--format-field", "invoiceNo"][..]] {
        let (code, out, err) = run_bin(&[&base[..], extra].concat(), &[]);
        assert_eq!(code, 0, "{extra:?}: {out}{err}");
        assert!(
            out.contains("  inv/2026: 1..2: 2 held, 0 voided, 0 deleted, 0 unexplained gaps"),
            "{out}"
        );
    }
    // The format is still checked with the sequence, named by its flag.
    let mut bad = base.to_vec();
    bad.pop();
    bad.push("INV-{yyyy}-{seq:06");
    let (code, _, err) = run_bin(&bad, &[]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--format"), "{err}");
    plain.database(&db).drop().await.ok();
}
