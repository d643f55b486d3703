//! Counters that know their definition, through the built binary: `counters` shows
//! each counter's definition (human and `--json`), `set-next` refuses a counter recorded with
//! other options (SEQUENCE_CONFLICT, nothing written), and `adopt` rewrites the definition on
//! purpose and says what changed — refused for a counter that does not exist.

use crate::common;

use common::*;
use mongodb::bson::{doc, Document};
use mongodb::Collection;

use super::{all_counters, on_counters};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn counters_show_definitions_set_next_refuses_another_and_adopt_rewrites_it() {
    let (db, plain, _) = test_db("definitions_cli").await;
    let uri = mongodb_uri();
    let counters: Collection<Document> = plain.database(&db).collection("counters");
    let ns = format!("{db}.counters");
    counters
        .insert_many([
            // Recorded by a process numbering with step 2.
            doc! { "_id": "orders", "seq": 40_i64, "definition": { "start": 2_i64, "step": 2_i64 } },
            // The tutorial's: no definition yet.
            doc! { "_id": "tickets", "seq": 7_i64 },
        ])
        .await
        .unwrap();
    let tool = |args: &[&str]| on_counters(args, &uri, &ns);

    // `counters` shows each definition, or that there is none yet.
    let (code, out, err) = tool(&["counters"]);
    assert_eq!(code, 0, "{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines,
        [
            "orders   40  {start: 2, step: 2}",
            "tickets  7   no definition yet"
        ],
        "{out}"
    );
    let (code, out, err) = tool(&["counters", "--json"]);
    assert_eq!(code, 0, "{err}");
    let rows: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        rows,
        serde_json::json!([
            { "id": "orders", "seq": 40, "definition": { "start": 2, "step": 2 } },
            { "id": "tickets", "seq": 7, "definition": null },
        ]),
        "{out}"
    );

    // Another definition: set-next is refused naming the option, nothing written.
    let before = all_counters(&counters).await;
    let (code, out, err) = tool(&["set-next", "orders", "101", "--step", "1"]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        err.contains("SEQUENCE_CONFLICT") || err.contains("defined with other options"),
        "{err}"
    );
    assert!(err.contains("`start` is 2 there and 1 here"), "{err}");
    assert_eq!(all_counters(&counters).await, before, "nothing written");

    // adopt: rewrites it on purpose, says old → new and what changed; the number stays.
    let (code, out, err) = tool(&["adopt", "orders", "--step", "1", "--max", "1000"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        out.trim(),
        "orders: definition {start: 2, step: 2} → {start: 1, step: 1, max: 1000} (changed: start, step, max)",
        "{out}"
    );
    let orders = counters
        .find_one(doc! { "_id": "orders" })
        .await
        .unwrap()
        .unwrap();
    assert_eq!(orders.get_i64("seq").unwrap(), 40, "{orders}");
    assert_eq!(
        orders.get_document("definition").unwrap(),
        &doc! { "start": 1_i64, "step": 1_i64, "max": 1000_i64 }
    );
    // Now set-next with those options works, and gives the tutorial's counter its definition.
    let (code, out, err) = tool(&["set-next", "orders", "101", "--step", "1", "--max", "1000"]);
    assert_eq!(code, 0, "{out}{err}");
    let (code, out, err) = tool(&["set-next", "tickets", "8", "--step", "1"]);
    assert_eq!(code, 0, "{out}{err}");
    let (code, out, err) = tool(&["adopt", "tickets", "--step", "1", "--json"]);
    assert_eq!(code, 0, "{err}");
    let adopted: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        adopted,
        serde_json::json!({
            "counterId": "tickets",
            "previous": { "start": 1, "step": 1 },
            "definition": { "start": 1, "step": 1 },
            "changed": [],
        }),
        "{out}"
    );
    // A gapless trigger's definition, from the flags.
    let (code, out, err) = tool(&["adopt", "tickets", "--step", "1", "--gapless"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("(changed: gapless)"), "{out}");

    // Refused, nothing written: a counter that does not exist; bad input; no options.
    let before = all_counters(&counters).await;
    let (code, _, err) = tool(&["adopt", "invoices", "--step", "1"]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("counter \"invoices\" does not exist"), "{err}");
    for (args, says) in [
        (&["adopt", "orders"][..], "or the options as flags"),
        (&["adopt", "orders", "--step", "0"][..], "--step: "),
        (
            &["adopt", "orders", "--step", "x"][..],
            "--step: must be an integer",
        ),
        (&["adopt", "orders/tenant=a", "--step", "1"][..], "tenant"),
        (
            &["adopt", "invoices", "--period", "2026", "--step", "1"][..],
            "period",
        ),
    ] {
        let (code, _, err) = tool(args);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err} should say {says}");
    }
    assert_eq!(all_counters(&counters).await, before, "nothing written");
    plain.database(&db).drop().await.ok();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn adopt_of_a_period_counter_and_from_a_config_trigger() {
    let (db, plain, _) = test_db("definitions_period").await;
    let uri = mongodb_uri();
    let counters: Collection<Document> = plain.database(&db).collection("counters");
    let ns = format!("{db}.counters");
    counters
        .insert_one(doc! { "_id": "invoices/2026", "seq": 12_i64 })
        .await
        .unwrap();
    let (code, out, err) = on_counters(
        &[
            "adopt",
            "invoices",
            "--period",
            "2026",
            "--reset",
            "yearly",
            "--time-zone",
            "Europe/Madrid",
        ],
        &uri,
        &ns,
    );
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("invoices/2026: definition none → {start: 1, step: 1, reset: \"yearly\", timeZone: \"Europe/Madrid\", yearStart: 1}"),
        "{out}"
    );
    // The trigger of a config: its options and its mode (gapless).
    let path = write_config(
        &format!("{db}-def"),
        &config_toml(&db, "gapless = true\nstep = 5\nstart = 5", ""),
    );
    let sequence = format!("{db}.orders");
    let adopt = |args: &[&str]| {
        let mut all = vec![
            "adopt",
            sequence.as_str(),
            "--config",
            path.to_str().unwrap(),
        ];
        all.extend_from_slice(args);
        run_bin(&all, &[])
    };
    // No counter of that sequence yet: refused, nothing written.
    let (code, out, err) = adopt(&["--json"]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(err.contains("does not exist"), "{err}");
    assert_eq!(counters.count_documents(doc! {}).await.unwrap(), 1);
    counters
        .insert_one(doc! { "_id": sequence.as_str(), "seq": 10_i64, "definition": { "start": 1_i64, "step": 1_i64 } })
        .await
        .unwrap();
    let (code, out, err) = adopt(&["--json"]);
    assert_eq!(code, 0, "{err}");
    let adopted: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        adopted["definition"],
        serde_json::json!({ "start": 5, "step": 5, "gapless": true }),
        "{out}"
    );
    assert_eq!(
        adopted["changed"],
        serde_json::json!(["start", "step", "gapless"])
    );
    plain.database(&db).drop().await.ok();
}
