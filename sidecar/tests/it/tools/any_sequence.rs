//! The tools on any sequence, one no trigger of a config uses (the npm package's, the mongoose
//! plugin's, the Atlas recipe's counter): `set-next`, `counters` and `rewind` take the sequence's
//! options as flags, validated as the config file's keys are.

use crate::common;

use common::*;
use mongodb::bson::{doc, Bson, Document};
use mongodb::Collection;

use super::on_counters;

/// The counter document with `_id` `id`.
async fn counter_doc(counters: &Collection<Document>, id: impl Into<Bson>) -> Option<Document> {
    counters.find_one(doc! { "_id": id.into() }).await.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn set_next_and_counters_take_any_sequence_options_as_flags() {
    let (db, plain, _) = test_db("any_setnext").await;
    let uri = mongodb_uri();
    let counters: Collection<Document> = plain.database(&db).collection("counters");
    let ns = format!("{db}.counters");
    let atlas = doc! { "db": "shop", "coll": "students" };
    counters
        .insert_many([
            // A scoped sequence of the npm package, with its own counter field.
            doc! { "_id": "invoices/tenant=acme", "n": 41_i64 },
            // The Atlas trigger recipe's counter, as published.
            doc! { "_id": atlas.clone(), "seq_value": 7_i64 },
        ])
        .await
        .unwrap();
    let tool = |args: &[&str]| on_counters(args, &uri, &ns);

    // Scoped, step 10, counter field `n`: the value stored is the one before 101.
    let (code, out, err) = tool(&[
        "set-next",
        "invoices/tenant=acme",
        "101",
        "--scope",
        "tenant",
        "--step",
        "10",
        "--counter-field",
        "n",
    ]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains("next number is 101 (was last issued 41)"),
        "{out}"
    );
    let stored = counter_doc(&counters, "invoices/tenant=acme")
        .await
        .unwrap();
    assert_eq!(stored.get_i64("n").unwrap(), 91, "{stored}");

    // The Atlas recipe's `{ db, coll }` _id, found and kept as it is.
    let atlas_id = r#"{"db": "shop", "coll": "students"}"#;
    let (code, out, err) = tool(&[
        "set-next",
        "students",
        "50",
        "--counter-id",
        atlas_id,
        "--counter-field",
        "seq_value",
        "--step",
        "1",
    ]);
    assert_eq!(code, 0, "{out}{err}");
    let stored = counter_doc(&counters, atlas.clone()).await.unwrap();
    assert_eq!(stored.get_i64("seq_value").unwrap(), 49, "{stored}");
    assert_eq!(
        counters.count_documents(doc! {}).await.unwrap(),
        2,
        "no counter made"
    );

    // `counters --sequence` reads that sequence's counters with its field and id.
    let (code, out, err) = tool(&[
        "counters",
        "--sequence",
        "students",
        "--counter-id",
        atlas_id,
        "--counter-field",
        "seq_value",
        "--json",
    ]);
    assert_eq!(code, 0, "{err}");
    let rows: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        rows,
        serde_json::json!([{ "id": "students", "seq": 49, "definition": { "start": 1, "step": 1 } }]),
        "{out}"
    );
    let (code, out, err) = tool(&[
        "counters",
        "--sequence",
        "invoices",
        "--scope",
        "tenant",
        "--counter-field",
        "n",
    ]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        out.trim(),
        "invoices/tenant=acme  91  {start: 1, step: 10}",
        "{out}"
    );

    // Refused as the file's keys would be, named by flag, before anything is written.
    for (args, says) in [
        (
            &[
                "set-next",
                "invoices/tenant=acme",
                "5",
                "--scope",
                "tenant",
                "--step",
                "0",
            ][..],
            "--step: ",
        ),
        (
            &[
                "set-next",
                "invoices/tenant=acme",
                "5",
                "--scope",
                "tenant",
                "--start",
                "one",
            ],
            "--start: must be an integer, got string \"one\"",
        ),
        (
            &["set-next", "students", "5", "--counter-field", "_id"],
            "--counter-field: ",
        ),
        (
            &[
                "set-next",
                "students",
                "5",
                "--counter-id",
                "{}",
                "--step",
                "1",
            ],
            "--counter-id: must not be an empty document",
        ),
        (
            &["set-next", "invoices/tenant=acme", "5", "--step", "1"],
            "tenant",
        ),
        (
            &["set-next", "students", "5"],
            "or the options as flags (--start, --step",
        ),
        (
            &["counters", "--step", "2"],
            "pass --sequence NAME with them",
        ),
    ] {
        let (code, _, err) = tool(args);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err} should say {says}");
    }
    let path = write_config(&format!("{db}-any"), &config_toml(&db, "", ""));
    let (code, _, err) = run_bin(
        &[
            "set-next",
            "students",
            "5",
            "--config",
            path.to_str().unwrap(),
            "--step",
            "2",
        ],
        &[],
    );
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("either --config or"), "{err}");
    assert_eq!(
        counter_doc(&counters, atlas)
            .await
            .unwrap()
            .get_i64("seq_value")
            .unwrap(),
        49,
        "nothing written"
    );
    plain.database(&db).drop().await.ok();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rewind_sets_every_scope_back_and_refuses_a_sidecars_counters_with_exit_3() {
    let (db, plain, _) = test_db("any_rewind").await;
    let uri = mongodb_uri();
    let counters: Collection<Document> = plain.database(&db).collection("counters");
    let ns = format!("{db}.counters");
    counters
        .insert_many([
            doc! { "_id": "invoices", "n": 3_i64 },
            doc! { "_id": "invoices/tenant=acme", "n": 99_i64 },
            doc! { "_id": "invoices/tenant=globex", "n": 5_i64 },
            doc! { "_id": "other", "n": 1_i64 },
            // Kept by a sidecar trigger (a lease epoch): its mode is not recorded.
            doc! { "_id": "kept", "seq": 5_i64, "epoch": 2_i64 },
        ])
        .await
        .unwrap();
    let tool = |args: &[&str]| on_counters(args, &uri, &ns);
    let (code, out, err) = tool(&[
        "rewind",
        "invoices",
        "--start",
        "100",
        "--counter-field",
        "n",
    ]);
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(
        out.trim(),
        format!("rewound 3 counters of sequence `invoices` in {ns}, next 100")
    );
    for id in ["invoices", "invoices/tenant=acme", "invoices/tenant=globex"] {
        assert_eq!(
            counter_doc(&counters, id)
                .await
                .unwrap()
                .get_i64("n")
                .unwrap(),
            99,
            "{id}"
        );
    }
    assert_eq!(
        counter_doc(&counters, "other")
            .await
            .unwrap()
            .get_i64("n")
            .unwrap(),
        1
    );

    // A sidecar's counter: refused (exit 3, nothing written) unless forced.
    let (code, _, err) = tool(&["rewind", "kept", "--step", "1"]);
    assert_eq!(code, 3, "{err}");
    assert!(
        err.contains("REWIND_REFUSED") && err.contains("--force"),
        "{err}"
    );
    assert_eq!(
        counter_doc(&counters, "kept")
            .await
            .unwrap()
            .get_i64("seq")
            .unwrap(),
        5
    );
    let (code, out, err) = tool(&["rewind", "kept", "--step", "1", "--force"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("rewound 1 counter of sequence `kept`"),
        "{out}"
    );
    assert_eq!(
        counter_doc(&counters, "kept")
            .await
            .unwrap()
            .get_i64("seq")
            .unwrap(),
        0
    );

    // Options from a config: its trigger's mode is known. Gapless: refused; default: done.
    let gapless = write_config(
        &format!("{db}-gapless"),
        &config_toml(&db, "sequence = \"ledger\"\ngapless = true", ""),
    );
    let plain_trigger = write_config(
        &format!("{db}-plain"),
        &config_toml(&db, "sequence = \"ledger\"", ""),
    );
    counters
        .insert_one(doc! { "_id": "ledger", "seq": 7_i64, "epoch": 1_i64 })
        .await
        .unwrap();
    let (code, _, err) = run_bin(
        &["rewind", "ledger", "--config", gapless.to_str().unwrap()],
        &[],
    );
    assert_eq!(code, 3, "{err}");
    assert!(err.contains("gapless"), "{err}");
    let (code, out, err) = run_bin(
        &[
            "rewind",
            "ledger",
            "--config",
            plain_trigger.to_str().unwrap(),
        ],
        &[],
    );
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("rewound 1 counter of sequence `ledger`"),
        "{out}"
    );
    // A name no counter has: refused, nothing made (mongoose-sequence's counterReset('wrong')).
    let (code, out, err) = tool(&["rewind", "invoice", "--step", "1"]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(
        err.contains("`invoice` has no counter: nothing to rewind") && err.contains(&ns),
        "{err}"
    );
    assert_eq!(counters.count_documents(doc! {}).await.unwrap(), 6);
    // Without options: never guessed.
    let (code, _, err) = tool(&["rewind", "invoices"]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("rewind needs the options of sequence `invoices`"),
        "{err}"
    );
    plain.database(&db).drop().await.ok();
}
