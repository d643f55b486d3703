//! The tools on series that reset: `counters` lists each period's counter, `set-next`
//! takes a period (`--period`, or the id's last segment), `check` audits each period's series
//! on its own (documents carry `<field>Period`), `import` adopts a counter as a period's.

use crate::common;

use common::*;
use mongodb::bson::{doc, Bson, Document};
use mongodb::Collection;
use serde_json::Value;

/// Runs the binary with `args` on the counters collection `ns` of `uri`: exit code, stdout, stderr.
fn on_counters(args: &[&str], uri: &str, ns: &str) -> (i32, String, String) {
    let mut all = args.to_vec();
    all.extend_from_slice(&["--uri", uri, "--counters", ns]);
    run_bin(&all, &[])
}

async fn all_counters(counters: &Collection<Document>) -> Vec<Document> {
    let mut found = Vec::new();
    let mut cursor = counters
        .find(doc! {})
        .sort(doc! { "_id": 1 })
        .await
        .unwrap();
    while cursor.advance().await.unwrap() {
        found.push(cursor.deserialize_current().unwrap());
    }
    found
}

fn json(out: &str) -> Value {
    serde_json::from_str(out).unwrap_or_else(|e| panic!("{e}: {out}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn counters_and_set_next_understand_periods() {
    let (db, plain, _) = test_db("series_counters").await;
    let uri = mongodb_uri();
    let counters: Collection<Document> = plain.database(&db).collection("counters");
    let ns = format!("{db}.counters");
    counters
        .insert_many([
            doc! { "_id": "inv/2025", "seq": 41_i64 },
            doc! { "_id": "inv/2026", "seq": 3_i64 },
            doc! { "_id": "tickets/tenant=acme/2026-04", "seq": 10_i64 },
            doc! { "_id": "tickets/tenant=acme/2026-05", "seq": 2_i64 },
            doc! { "_id": "orders", "seq": 7_i64 },
        ])
        .await
        .unwrap();
    let tool = |args: &[&str]| on_counters(args, &uri, &ns);

    // Every counter; those of a period say which, and their series (the id without it).
    let (code, out, err) = tool(&["counters", "--json"]);
    assert_eq!(code, 0, "{out}{err}");
    let rows = json(&out);
    let period_of = |id: &str| {
        let row = rows
            .as_array()
            .unwrap()
            .iter()
            .find(|row| row["id"] == id)
            .unwrap_or_else(|| panic!("{id} in {rows}"));
        (row["series"].clone(), row["period"].clone())
    };
    assert_eq!(period_of("inv/2026"), ("inv".into(), "2026".into()));
    assert_eq!(
        period_of("tickets/tenant=acme/2026-05"),
        ("tickets/tenant=acme".into(), "2026-05".into())
    );
    assert_eq!(period_of("orders"), (Value::Null, Value::Null));

    // One sequence's: each period's counter, in order, read with its options.
    let (code, out, err) = tool(&["counters", "--sequence", "inv", "--reset", "yearly"]);
    assert_eq!(code, 0, "{out}{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 2, "{out}");
    assert!(
        lines[0].starts_with("inv/2025")
            && lines[0].ends_with("41  no definition yet  (period 2025)"),
        "{out}"
    );
    assert!(
        lines[1].starts_with("inv/2026")
            && lines[1].ends_with("3   no definition yet  (period 2026)"),
        "{out}"
    );

    // Refused before anything is written: no period, a period of another kind, a malformed
    // one, a period given twice, a period of a sequence that never resets, an unknown zone.
    let before = all_counters(&counters).await;
    let refusals: [(&[&str], &str); 7] = [
        (&["set-next", "inv", "100", "--reset", "yearly"], "--period"),
        (
            &[
                "set-next", "inv", "100", "--period", "2026-05", "--reset", "yearly",
            ],
            "resets yearly",
        ),
        (
            &[
                "set-next", "inv", "100", "--period", "20x6", "--reset", "yearly",
            ],
            "invalid argument `period`",
        ),
        (
            &[
                "set-next", "inv/2026", "100", "--period", "2026", "--reset", "yearly",
            ],
            "has its period (2026) already",
        ),
        (
            &[
                "set-next", "orders", "100", "--period", "2026", "--step", "1",
            ],
            "never resets",
        ),
        (
            &[
                "set-next",
                "inv",
                "100",
                "--period",
                "2026",
                "--reset",
                "yearly",
                "--time-zone",
                "Europe/Atlantis",
            ],
            "--time-zone",
        ),
        (
            &[
                "set-next",
                "inv",
                "100",
                "--period",
                "2026",
                "--reset",
                "yearly",
                "--year-start",
                "13",
            ],
            "--year-start",
        ),
    ];
    for (args, message) in refusals {
        let (code, out, err) = tool(args);
        assert_eq!(code, 2, "{args:?}: {out}{err}");
        assert!(
            err.contains(message),
            "{args:?}: {err} should say {message}"
        );
    }
    assert_eq!(all_counters(&counters).await, before, "nothing written");

    // A period's counter moved, by flag or by id; the others untouched.
    let (code, out, err) = tool(&[
        "set-next", "inv", "100", "--period", "2026", "--reset", "yearly",
    ]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains("inv/2026: next number is 100 (was last issued 3)"),
        "{out}"
    );
    let (code, out, err) = tool(&[
        "set-next",
        "tickets/tenant=acme/2026-06",
        "1",
        "--reset",
        "monthly",
        "--scope",
        "tenant",
        "--time-zone",
        "America/Los_Angeles",
    ]);
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(seq_of(&counters, "inv/2026").await, Some(99));
    assert_eq!(seq_of(&counters, "inv/2025").await, Some(41));
    assert_eq!(
        seq_of(&counters, "tickets/tenant=acme/2026-06").await,
        Some(0)
    );
    assert_eq!(
        seq_of(&counters, "tickets/tenant=acme/2026-05").await,
        Some(2)
    );
    // Backwards within a period is refused as for any counter (exit 3).
    let (code, _, err) = tool(&["set-next", "inv/2025", "10", "--reset", "yearly"]);
    assert_eq!(code, 3, "{err}");
    plain.database(&db).drop().await.unwrap();
}

async fn seq_of(counters: &Collection<Document>, id: &str) -> Option<i64> {
    counters
        .find_one(doc! { "_id": id })
        .await
        .unwrap()
        .and_then(|d| d.get_i64("seq").ok())
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
        let mut args = vec![
            "check",
            "--uri",
            &uri,
            "--db",
            &db,
            "--collection",
            "invoices",
            "--field",
            "number",
            "--sequence",
            "inv",
            "--reset",
            "yearly",
            "--time-zone",
            "Europe/Paris",
        ];
        args.extend_from_slice(extra);
        run_bin(&args, &[])
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
async fn import_adopts_a_plugin_counter_as_a_period_s() {
    let (db, plain, _) = test_db("series_import").await;
    let uri = mongodb_uri();
    let database = plain.database(&db);
    // mongoose-sequence counters kept one per year by hand.
    database
        .collection::<Document>("counters")
        .insert_many([
            doc! { "id": "invoice_2025", "reference_value": Bson::Null, "seq": 412 },
            doc! { "id": "invoice_2026", "reference_value": { "tenant": "acme" }, "seq": 9 },
        ])
        .await
        .unwrap();
    let (code, out, err) = run_bin(
        &[
            "import",
            "--from",
            "mongoose-sequence",
            "--uri",
            &uri,
            "--db",
            &db,
            "--counters",
            "seq_counters",
            "--name",
            "invoice_2025=invoices/2025",
            "--name",
            "invoice_2026=invoices/2026",
            "--apply",
        ],
        &[],
    );
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains("invoices/2025") && out.contains("invoices/tenant=acme/2026"),
        "{out}"
    );
    let adopted = all_counters(&database.collection("seq_counters")).await;
    // Each with the series' definition.
    let definition = doc! { "start": 1_i64, "step": 1_i64, "reset": "yearly", "timeZone": "UTC", "yearStart": 1_i64 };
    assert_eq!(
        adopted,
        [
            doc! { "_id": "invoices/2025", "seq": 412_i64, "definition": definition.clone() },
            doc! { "_id": "invoices/tenant=acme/2026", "seq": 9_i64, "definition": definition },
        ]
    );
    let (code, out, err) =
        on_counters(&["counters", "--json"], &uri, &format!("{db}.seq_counters"));
    assert_eq!(code, 0, "{out}{err}");
    let rows = json(&out);
    assert_eq!(rows[1]["series"], "invoices/tenant=acme", "{rows}");
    assert_eq!(rows[1]["period"], "2026", "{rows}");
    database.drop().await.unwrap();
}
