//! The operator's tools as a process: `set-next` never guesses a sequence's options, `check`
//! reports what a trigger numbers and exits non-zero on anything unclean, `counters --json`
//! gives numbers.

use crate::common;

use std::time::Duration;

use common::*;
use mongodb::bson::{doc, Document};
use mongodb::Collection;

const WAIT: Duration = Duration::from_secs(60);

/// A config whose trigger numbers `db.orders` per tenant with step 10 from sequence `orders`.
fn stepped_config(db: &str) -> String {
    config_toml(
        db,
        "sequence = \"orders\"\nscope = [\"tenantId\"]\nstep = 10\nmatch = { type = \"order\" }",
        "",
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn set_next_refuses_to_guess_and_uses_the_configured_step() {
    let (db, plain, coll) = test_db("setnext_step").await;
    let uri = mongodb_uri();
    let text = stepped_config(&db);
    let path = write_config(&format!("{db}-stepped"), &text);
    let path = path.to_str().unwrap();
    let counters: Collection<Document> = plain.database(&db).collection("counters");
    let counters_ns = format!("{db}.counters");
    let id = "orders/tenantId=globex";

    // Without the config the options are unknown: refused, nothing written.
    let (code, out, err) = run_bin(
        &[
            "set-next",
            id,
            "2001",
            "--uri",
            &uri,
            "--counters",
            &counters_ns,
        ],
        &[],
    );
    assert_eq!(code, 2, "{out}{err}");
    assert!(err.contains("--config") && err.contains("step"), "{err}");
    assert_eq!(counters.count_documents(doc! {}).await.unwrap(), 0);

    // A sequence the config does not know: refused, naming those it knows.
    let (code, _, err) = run_bin(&["set-next", "invoices", "5", "--config", path], &[]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("invoices") && err.contains("`orders`"),
        "{err}"
    );

    // A counter id that does not fit the sequence's scope (a misspelled field): refused.
    for wrong in [
        "orders/tenant=globex",
        "orders",
        "orders/tenantId=globex/year=#1",
    ] {
        let (code, _, err) = run_bin(&["set-next", wrong, "2001", "--config", path], &[]);
        assert_eq!(code, 2, "{wrong}: {err}");
        assert!(err.contains("tenantId"), "{wrong}: names the scope: {err}");
    }
    assert_eq!(counters.count_documents(doc! {}).await.unwrap(), 0);

    // Off the step grid (1, 11, …, 1991, 2001): refused without --force, naming the neighbours.
    let (code, _, err) = run_bin(&["set-next", id, "2000", "--config", path], &[]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("1991") && err.contains("2001"), "{err}");
    assert_eq!(counters.count_documents(doc! {}).await.unwrap(), 0);

    // With the config: the number printed is the number the next document gets.
    let (code, out, err) = run_bin(&["set-next", id, "2001", "--config", path], &[]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("next number is 2001"), "{out}");
    let cfg = mongo_seq_sidecar::config::parse(&text, "test").unwrap();
    let run = start(cfg, options().await, false);
    wait_running(&run).await;
    coll.insert_many([
        doc! { "tenantId": "globex", "type": "order", "i": 1 },
        doc! { "tenantId": "globex", "type": "order", "i": 2 },
    ])
    .await
    .unwrap();
    wait_numbered(&coll, "seq", 2, WAIT).await;
    run.stop().await;
    assert_eq!(numbers(&coll, "seq").await, vec![2001, 2011]);

    // --force accepts a value off the grid (and says so).
    let (code, out, err) = run_bin(&["set-next", id, "3000", "--force", "--config", path], &[]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("next number is 3000"), "{out}");
    plain.database(&db).drop().await.ok();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn counters_json_gives_numbers_and_strings_only_beyond_2_pow_53() {
    let (db, plain, _) = test_db("countersjson").await;
    let counters: Collection<Document> = plain.database(&db).collection("counters");
    counters
        .insert_many([
            doc! { "_id": "a", "seq": 5_i64 },
            doc! { "_id": "b", "seq": 7_i32 },
            doc! { "_id": "big", "seq": 9_007_199_254_740_993_i64 },
            doc! { "_id": "bad", "seq": "x" },
            doc! { "_id": "none" },
        ])
        .await
        .unwrap();
    let (code, out, err) = run_bin(
        &[
            "counters",
            "--json",
            "--uri",
            &mongodb_uri(),
            "--counters",
            &format!("{db}.counters"),
        ],
        &[],
    );
    assert_eq!(code, 0, "{err}");
    let rows: serde_json::Value = serde_json::from_str(&out).expect(&out);
    let seq = |id: &str| {
        rows.as_array()
            .unwrap()
            .iter()
            .find(|r| r["id"] == id)
            .unwrap_or_else(|| panic!("{id} in {out}"))
            .clone()
    };
    assert_eq!(seq("a")["seq"], serde_json::json!(5));
    assert_eq!(seq("b")["seq"], serde_json::json!(7));
    assert_eq!(seq("big")["seq"], serde_json::json!("9007199254740993"));
    assert_eq!(seq("bad")["seq"], serde_json::Value::Null);
    assert!(
        seq("bad")["invalid"].as_str().unwrap().contains('x'),
        "{out}"
    );
    assert_eq!(seq("none")["seq"], serde_json::Value::Null);
    plain.database(&db).drop().await.ok();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn counters_with_the_config_name_the_trigger_of_each_counter() {
    let (db, plain, _) = test_db("counterstrigger").await;
    let counters: Collection<Document> = plain.database(&db).collection("counters");
    counters
        .insert_many([
            doc! { "_id": "orders/tenantId=acme", "seq": 11_i64 },
            // The sequence's name, but not its scope fields: no trigger numbers with it.
            doc! { "_id": "orders/region=eu", "seq": 1_i64 },
            doc! { "_id": "invoices", "seq": 3_i64 },
        ])
        .await
        .unwrap();
    let path = write_config(&format!("{db}-counters"), &stepped_config(&db));
    let (code, out, err) = run_bin(
        &["counters", "--json", "--config", path.to_str().unwrap()],
        &[],
    );
    assert_eq!(code, 0, "{err}");
    let rows: serde_json::Value = serde_json::from_str(&out).expect(&out);
    let trigger = |id: &str| {
        rows.as_array()
            .unwrap()
            .iter()
            .find(|r| r["id"] == id)
            .unwrap_or_else(|| panic!("{id} in {out}"))["trigger"]
            .clone()
    };
    assert_eq!(
        trigger("orders/tenantId=acme"),
        serde_json::json!(format!("{db}.orders.seq"))
    );
    assert_eq!(trigger("orders/region=eu"), serde_json::Value::Null);
    assert_eq!(trigger("invoices"), serde_json::Value::Null);
    // The text listing stays as it was.
    let (code, out, err) = run_bin(&["counters", "--config", path.to_str().unwrap()], &[]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("orders/tenantId=acme  11"), "{out}");
    plain.database(&db).drop().await.ok();
}

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
