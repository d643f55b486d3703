//! The ledger through the built binary: `mongo-seq void` records numbers no document
//! holds, from the trigger of `--config`, and refuses with nothing written; a gapless trigger
//! records the numbers of the documents deleted from its collection.

use crate::common;

use common::*;
use mongodb::bson::{doc, Document};
use mongodb::Collection;

/// Everything in the ledger, in `_id` order, without `at`.
async fn ledger(plain: &mongodb::Client, db: &str, name: &str) -> Vec<Document> {
    let coll: Collection<Document> = plain.database(db).collection(name);
    let mut cursor = coll.find(doc! {}).sort(doc! { "_id": 1 }).await.unwrap();
    let mut entries = Vec::new();
    while cursor.advance().await.unwrap() {
        let mut entry = cursor.deserialize_current().unwrap();
        assert!(entry.get_datetime("at").is_ok(), "`at` is a date: {entry}");
        entry.remove("at");
        entries.push(entry);
    }
    entries
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn void_records_from_the_config_s_trigger_and_refuses_with_nothing_written() {
    let (db, plain, coll) = test_db("void_cli").await;
    let text = config_toml(&db, "sequence = \"inv\"\nstep = 2", "");
    let text = text.replace("[lease]", "[lease]\ninstance_id = \"clerk-1\"");
    let path = write_config(&format!("{db}-void"), &text);
    let path = path.to_str().unwrap();
    let counters: Collection<Document> = plain.database(&db).collection("counters");
    counters
        .insert_one(doc! { "_id": "inv", "seq": 9_i64 })
        .await
        .unwrap();
    coll.insert_many([doc! { "seq": 1_i64 }, doc! { "seq": 5_i64 }])
        .await
        .unwrap();

    // Refusals before connecting (exit 2) and by the plan (exit 3): nothing written.
    for (args, code, says) in [
        (vec!["3", "--reason", " "], 2, "invalid argument `reason`"),
        (vec!["4", "--reason", "r"], 2, "nearest are 3 and 5"),
        (vec!["3", "3", "--reason", "r"], 2, "named twice"),
        (vec!["5", "--reason", "r"], 3, "NUMBER_HELD"),
        (vec!["3", "11", "--reason", "r"], 3, "NUMBER_NOT_ISSUED"),
    ] {
        let mut all = vec!["void", "inv"];
        all.extend(&args);
        all.extend(["--config", path]);
        let (got, out, err) = run_bin(&all, &[]);
        assert_eq!(got, code, "{args:?}: {out}{err}");
        assert!(err.contains(says), "{args:?}: {err}");
    }
    let (got, _, err) = run_bin(
        &["void", "orders", "3", "--reason", "r", "--config", path],
        &[],
    );
    assert_eq!(got, 2, "{err}");
    assert!(err.contains("no trigger") && err.contains("`inv`"), "{err}");
    assert!(ledger(&plain, &db, "mongo_seq_ledger").await.is_empty());

    // Voided: each number with the reason, by the config's instance id (or --by).
    let (got, out, err) = run_bin(
        &[
            "void",
            "inv",
            "3",
            "7",
            "--reason",
            "cancelled",
            "--config",
            path,
        ],
        &[],
    );
    assert_eq!(got, 0, "{out}{err}");
    assert!(out.contains("inv: voided 3, 7"), "{out}");
    let (got, _, err) = run_bin(
        &[
            "void", "inv", "9", "--reason", "lost", "--by", "alice", "--config", path,
        ],
        &[],
    );
    assert_eq!(got, 0, "{err}");
    let entry = |number: i64, reason: &str, by: &str| {
        doc! { "_id": { "counter": "inv", "number": number }, "sequence": "inv", "kind": "void", "reason": reason, "by": by }
    };
    assert_eq!(
        ledger(&plain, &db, "mongo_seq_ledger").await,
        [
            entry(3, "cancelled", "clerk-1"),
            entry(7, "cancelled", "clerk-1"),
            entry(9, "lost", "alice")
        ]
    );
    // Twice: refused (exit 3), nothing more written.
    let (got, _, err) = run_bin(
        &["void", "inv", "7", "--reason", "again", "--config", path],
        &[],
    );
    assert_eq!(got, 3, "{err}");
    assert!(err.contains("ALREADY_VOIDED"), "{err}");
    assert_eq!(ledger(&plain, &db, "mongo_seq_ledger").await.len(), 3);
    assert_eq!(
        counter(&plain, &db, "inv").await,
        Some(9),
        "the counter is untouched"
    );
    plain.database(&db).drop().await.ok();
}

/// Waits until the ledger `name` of `db` holds `n` entries.
async fn wait_ledger(plain: &mongodb::Client, db: &str, n: usize) -> Vec<Document> {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        let entries = ledger(plain, db, "mongo_seq_ledger").await;
        if entries.len() >= n {
            return entries;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the ledger has {entries:?}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gapless_trigger_records_deleted_documents_numbers_also_those_deleted_while_it_was_down()
{
    let (db, plain, coll) = test_db("deleted").await;
    // Pre-images on the collection (MongoDB 6.0+; the test server's patch 7).
    plain
        .database(&db)
        .create_collection("orders")
        .await
        .unwrap();
    plain
        .database(&db)
        .run_command(
            doc! { "collMod": "orders", "changeStreamPreAndPostImages": { "enabled": true } },
        )
        .await
        .unwrap();
    let cfg = config(&db, "sequence = \"orders\"\ngapless = true", "");
    let instance = cfg.settings.lease.instance_id.clone();
    let run = start(cfg.clone(), options().await, false);
    wait_running(&run).await;
    coll.insert_many((0..5).map(|i| doc! { "i": i }))
        .await
        .unwrap();
    wait_numbered(&coll, "seq", 5, std::time::Duration::from_secs(60)).await;
    let gone = coll.find_one(doc! { "seq": 2 }).await.unwrap().unwrap();
    coll.delete_one(doc! { "seq": 2 }).await.unwrap();
    // An unnumbered document's deletion records nothing.
    coll.insert_one(doc! { "i": 9, "seq": "not a number" })
        .await
        .unwrap();
    coll.delete_one(doc! { "i": 9 }).await.unwrap();
    let entries = wait_ledger(&plain, &db, 1).await;
    assert_eq!(
        entries,
        [doc! {
            "_id": { "counter": "orders", "number": 2_i64 }, "sequence": "orders", "kind": "deleted",
            "reason": "document deleted", "by": instance.as_str(), "document": gone.get("_id").unwrap().clone(),
        }]
    );
    run.stop().await;

    // Deleted while no sidecar runs (as after a crash between the deletion and its record):
    // recorded when the trigger resumes from its stored token.
    coll.delete_many(doc! { "seq": { "$in": [4, 5] } })
        .await
        .unwrap();
    let run = start(cfg, options().await, false);
    wait_running(&run).await;
    let entries = wait_ledger(&plain, &db, 3).await;
    let numbers: Vec<i64> = entries
        .iter()
        .map(|e| e.get_document("_id").unwrap().get_i64("number").unwrap())
        .collect();
    assert_eq!(numbers, [2, 4, 5]);
    run.stop().await;
    assert_eq!(numbers_of(&coll).await, [1, 3], "the others keep theirs");
    plain.database(&db).drop().await.ok();
}

async fn numbers_of(coll: &Collection<Document>) -> Vec<i64> {
    numbers(coll, "seq").await
}

/// The series' rule through the binary: an issued invoice taken back (cancelled) keeps its
/// number, which stays held for `check` (no unexplained gap) as for `void` (NUMBER_HELD); an
/// issued one without a number is reported unnumbered, a draft is not in the series.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_invoice_s_number_is_held_for_check_as_for_void() {
    let (db, plain, coll) = test_db("held").await;
    let trigger = "name = \"invoices\"\nsequence = \"invoices\"\nreset = \"yearly\"\ngapless = true\non = \"match\"\nmatch = { status = \"issued\" }";
    let text = config_toml(&db, trigger, "");
    let path = write_config(&format!("{db}-held"), &text);
    let cfg = mongo_seq_sidecar::config::parse(&text, "test").unwrap();
    let run = start(cfg, options().await, false);
    wait_running(&run).await;
    coll.insert_many((1..=3).map(|n| doc! { "n": n, "status": "draft" }))
        .await
        .unwrap();
    for n in 1..=3 {
        coll.update_one(doc! { "n": n }, doc! { "$set": { "status": "issued" } })
            .await
            .unwrap();
        wait_numbered(&coll, "seq", n as u64, std::time::Duration::from_secs(60)).await;
    }
    run.stop().await;
    let second = coll.find_one(doc! { "n": 2 }).await.unwrap().unwrap();
    assert_eq!(second.get_i64("seq").unwrap(), 2);
    let year = second.get_str("seqPeriod").unwrap().to_owned();
    coll.update_one(doc! { "n": 2 }, doc! { "$set": { "status": "cancelled" } })
        .await
        .unwrap();
    // A draft is not in the series yet; nothing to report about it.
    coll.insert_one(doc! { "n": 4, "status": "draft" })
        .await
        .unwrap();
    let path = path.to_str().unwrap();
    let check = || run_bin(&["check", "--config", path, "--trigger", "invoices"], &[]);
    let (code, out, err) = check();
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains(&format!(
            "  invoices/{year}: 1..3: 3 held, 0 voided, 0 deleted, 0 unexplained gaps"
        )),
        "{out}"
    );
    assert!(
        out.contains("3 documents, 3 numbered, 0 unnumbered"),
        "{out}"
    );
    let (code, _, err) = run_bin(
        &[
            "void", "invoices", "2", "--period", &year, "--reason", "r", "--config", path,
        ],
        &[],
    );
    assert_eq!(code, 3, "{err}");
    assert!(err.contains("NUMBER_HELD"), "{err}");
    // Issued while no sidecar runs: matching and unnumbered, reported as before.
    coll.insert_one(doc! { "n": 5, "status": "issued" })
        .await
        .unwrap();
    let (code, out, err) = check();
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        out.contains("4 documents, 3 numbered, 1 unnumbered"),
        "{out}"
    );
    assert!(
        err.contains("1 unnumbered documents and no dead letter saying why"),
        "{err}"
    );
    assert!(!err.contains("gaps"), "{err}");
    plain.database(&db).drop().await.ok();
}
