//! The ledger through the built binary: `mongo-seq void` records numbers no document
//! holds, from the trigger of `--config` or the one its flags describe, and refuses with
//! nothing written; a gapless trigger records the numbers of the documents deleted from its
//! collection; `check` accounts for voided and deleted numbers (inserted by hand as the
//! ledger's writers store them) and fails only for what nothing explains.

use crate::common;

use common::*;
use mongodb::bson::{doc, DateTime, Document};
use mongodb::Collection;
use serde_json::Value;

use super::{json, series_2026};

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
    create_with_images(&plain, &db, "orders").await;
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

/// A ledger entry as the ledger's writers store it.
fn entry(counter: &str, number: i64, kind: &str, reason: &str) -> Document {
    doc! {
        "_id": { "counter": counter, "number": number },
        "sequence": counter,
        "kind": kind,
        "reason": reason,
        "at": DateTime::now(),
        "by": "test",
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn check_accounts_for_voided_and_deleted_numbers_and_fails_on_what_nothing_explains() {
    let (db, plain, orders) = test_db("accounted").await;
    let uri = mongodb_uri();
    let database = plain.database(&db);
    let ledger: Collection<Document> = database.collection("mongo_seq_ledger");
    let counter_id = format!("{db}.orders");
    orders
        .insert_many([1_i64, 2, 4, 6].map(|n| doc! { "seq": n }))
        .await
        .unwrap();
    database
        .collection::<Document>("counters")
        .insert_one(doc! { "_id": &counter_id, "seq": 6_i64 })
        .await
        .unwrap();
    let args = [
        "check",
        "--uri",
        &uri,
        "--db",
        &db,
        "--collection",
        "orders",
        "--gapless",
    ];
    let check = |extra: &[&str]| run_bin(&[&args[..], extra].concat(), &[]);

    // 3 and 5 unexplained: a gapless check fails, naming them.
    let (code, out, err) = check(&[]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(out.contains("0 duplicates, 2 gaps, largest 6"), "{out}");
    assert!(
        out.contains(&format!(
            "  {counter_id}: 1..6: 4 held, 0 voided, 0 deleted, 2 unexplained gaps (3, 5)"
        )),
        "{out}"
    );
    assert!(
        err.contains("2 numbers unaccounted for (unexplained gaps)"),
        "{err}"
    );
    let (code, _, _) = run_bin(&args[..7], &[]);
    assert_eq!(code, 0, "without --gapless, gaps alone pass");

    // 3 voided and 5 deleted: every number accounted for.
    ledger
        .insert_many([
            entry(&counter_id, 3, "void", "printer jam"),
            entry(&counter_id, 5, "deleted", "document deleted"),
        ])
        .await
        .unwrap();
    let (code, out, err) = check(&[]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains("0 duplicates, 0 gaps, 1 voided, 1 deleted, largest 6"),
        "{out}"
    );
    assert!(
        out.contains(&format!("  {counter_id}: 1..6: 4 held, 1 voided (1 \"printer jam\"), 1 deleted, 0 unexplained gaps")),
        "{out}"
    );

    // A voided number a document holds: a duplicate.
    orders.insert_one(doc! { "seq": 3_i64 }).await.unwrap();
    let (code, out, err) = check(&[]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(out.contains("1 duplicates"), "{out}");
    assert!(err.contains("numbers held twice"), "{err}");
    orders.delete_one(doc! { "seq": 3_i64 }).await.unwrap();

    // An unnumbered document and no dead letter: left silently, a failure; a dead letter
    // saying why: waiting, not a failure.
    let id = orders
        .insert_one(doc! { "note": "no number" })
        .await
        .unwrap()
        .inserted_id;
    let (code, out, err) = check(&[]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        err.contains("1 unnumbered documents and no dead letter saying why"),
        "{err}"
    );
    database
        .collection::<Document>("mongo_seq_state")
        .insert_one(doc! {
            "_id": { "trigger": format!("{db}.orders.seq"), "document": id.clone() },
            "kind": "deadLetter", "code": "MISSING_SCOPE_FIELD", "reason": "no tenant",
            "since": DateTime::now(), "lastAttempt": DateTime::now(), "attempts": 1_i64,
        })
        .await
        .unwrap();
    let (code, out, err) = check(&[]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains(
            "1 unnumbered, 0 duplicates, 0 gaps, 1 voided, 1 deleted, 1 dead letters waiting"
        ),
        "{out}"
    );
    assert!(
        out.contains("no tenant (MISSING_SCOPE_FIELD; 1 attempts)"),
        "{out}"
    );

    // Up past 2^53: a void there and a number after it; the gap between is one range, and every
    // integer beyond 2^53 − 1 in --json is a string.
    let big = (1_i64 << 53) + 2;
    orders.insert_one(doc! { "seq": big }).await.unwrap();
    ledger
        .insert_one(entry(&counter_id, big - 1, "void", "lost block"))
        .await
        .unwrap();
    database
        .collection::<Document>("counters")
        .update_one(doc! { "_id": &counter_id }, doc! { "$set": { "seq": big } })
        .await
        .unwrap();
    let (code, out, err) = check(&["--json"]);
    assert_eq!(code, 1, "unexplained 7..2^53: {out}{err}");
    let report = json(&out);
    let account = &report["accounts"][&counter_id];
    assert_eq!(account["voided"], 2, "{account}");
    assert_eq!(account["end"], Value::from(big.to_string()), "{account}");
    // 7..=2^53: 2^53 − 6 numbers (a JSON number: below 2^53 − 1).
    assert_eq!(account["gaps"], Value::from(big - 8), "{account}");
    assert_eq!(account["gapRuns"][0]["first"], 7, "{account}");
    assert_eq!(
        account["gapRuns"][0]["last"],
        Value::from((big - 2).to_string()),
        "{account}"
    );
    assert_eq!(
        account["reasons"],
        serde_json::json!([{"reason": "lost block", "count": 1}, {"reason": "printer jam", "count": 1}])
    );
    assert_eq!(report["dead_letters"], 1);
    assert_eq!(report["dead_letter_list"][0]["reason"], "no tenant");
    assert_eq!(report["unexplained_unnumbered"], 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn void_without_a_config_takes_the_trigger_as_flags() {
    let (db, plain) = series_2026("void_flags", "no", &[1, 3]).await;
    let uri = mongodb_uri();
    let trigger = [
        "--uri",
        &uri,
        "--db",
        &db,
        "--collection",
        "orders",
        "--field",
        "no",
        "--reset",
        "yearly",
        "--format",
        "INV-{yyyy}-{seq:06}",
    ];
    let void = |number: &str, extra: &[&str]| {
        let line = [
            &[
                "void",
                "inv",
                number,
                "--period",
                "2026",
                "--reason",
                "cancelled",
            ][..],
            &trigger[..],
            extra,
        ]
        .concat();
        run_bin(&line, &[])
    };
    let (code, out, err) = void("2", &[]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("inv/2026: voided 2 in"), "{out}");
    let ledger = plain
        .database(&db)
        .collection::<mongodb::bson::Document>("mongo_seq_ledger");
    assert_eq!(
        ledger
            .count_documents(doc! { "_id": { "counter": "inv/2026", "number": 2_i64 } })
            .await
            .unwrap(),
        1
    );
    // The flags' trigger says where numbers are held: 1 is.
    let (code, _, err) = void("1", &[]);
    assert_eq!(code, 3, "{err}");
    assert!(err.contains("NUMBER_HELD"), "{err}");
    // A flag that cannot apply to void is refused, named: a number is held whatever `match` says.
    let (code, _, err) = void("1", &["--match", r#"{"status": "issued"}"#]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("void --match"), "{err}");
    // The options are validated as the file's, named by flag.
    let (code, _, err) = void("1", &["--year-start", "13"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--year-start"), "{err}");
    assert_eq!(
        ledger.count_documents(doc! {}).await.unwrap(),
        1,
        "nothing more written"
    );
    plain.database(&db).drop().await.ok();
}
