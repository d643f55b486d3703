//! `counters` and `set-next` on a trigger's sequence and on series that reset: `set-next` never
//! guesses a sequence's options and takes a period (`--period`, or the id's last segment),
//! `counters` lists each period's counter, names the trigger of each with the config, and
//! gives numbers in `--json`; `import` adopts a counter as a period's.

use crate::common;

use std::time::Duration;

use common::*;
use mongodb::bson::{doc, Bson, Document};
use mongodb::Collection;

use serde_json::Value;

use super::{all_counters, json, on_counters, stepped_config};

const WAIT: Duration = Duration::from_secs(60);

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
    // Each with the series' definition and its digest.
    let definition = doc! { "start": 1_i64, "step": 1_i64, "reset": "yearly", "timeZone": "UTC", "yearStart": 1_i64 };
    let digest = "4d93da0932c1d04d";
    assert_eq!(
        adopted,
        [
            doc! { "_id": "invoices/2025", "seq": 412_i64, "definition": definition.clone(), "definitionDigest": digest },
            doc! { "_id": "invoices/tenant=acme/2026", "seq": 9_i64, "definition": definition, "definitionDigest": digest },
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
