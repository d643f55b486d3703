//! The trigger pipeline in-process, against the embedded test server or MONGODB_URI.

use crate::common;

use std::time::Duration;

use common::*;
use futures_util::TryStreamExt;
use mongodb::bson::{doc, Bson, Document};
use mongodb::Collection;

const WAIT: Duration = Duration::from_secs(60);

fn int(d: &Document, field: &str) -> i64 {
    match d.get(field) {
        Some(Bson::Int32(v)) => i64::from(*v),
        Some(Bson::Int64(v)) => *v,
        other => panic!("{field} is not an integer: {other:?} in {d}"),
    }
}

async fn all(coll: &Collection<Document>) -> Vec<Document> {
    coll.find(doc! {})
        .sort(doc! { "_id": 1 })
        .await
        .expect("find")
        .try_collect()
        .await
        .expect("docs")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batch_of_1000_events_costs_a_constant_number_of_commands() {
    let (db, plain, coll) = test_db("cmdcount").await;
    coll.insert_one(doc! { "warm": 1 }).await.unwrap();
    // No heartbeat stores and no lease renewals during the measurement.
    let cfg = config(
        &db,
        "",
        "batch_size = 1000\nheartbeat_secs = 3600\n[lease]\nttl_ms = 600000",
    );

    // First run: backfill, then one event through the stream so a resume token is stored.
    let run = start(cfg.clone(), options().await, false);
    wait_running(&run).await;
    coll.insert_one(doc! { "warm": 2 }).await.unwrap();
    wait_numbered(&coll, "seq", 2, WAIT).await;
    run.stop().await;

    // 1,000 inserts while the sidecar is down: all available at once when it resumes.
    coll.insert_many((0..1000).map(|i| doc! { "i": i }))
        .await
        .unwrap();
    let (monitored, log) = monitored_options().await;
    let run = start(cfg, monitored, false);
    wait_numbered(&coll, "seq", 1002, WAIT).await;
    let metrics = run.metrics.clone();
    run.stop().await;
    let batches = metrics
        .batches
        .with_label_values(&[&format!("{db}.orders.seq")])
        .get();

    let counts = log.snapshot();
    println!("commands for 1,000 events: {counts:?} in {batches} batch(es)");
    // One batch on the embedded server; a real server may hand the 1,000 events over in two
    // getMores. Either way: one reservation and two updates (assignments, token) per batch,
    // plus the lease acquisition at start: find (lease) + findAndModify (take it) + find
    // (highest counter epoch) + update (stamp the epoch) + find (pending intents), and the
    // lease release at shutdown (findAndModify).
    assert!((1..=2).contains(&batches), "{batches} batches: {counts:?}");
    assert_eq!(
        log.count("findAndModify"),
        batches + 2,
        "one reservation per batch: {counts:?}"
    );
    // + one more token store at shutdown when a real server's post-batch token moved on.
    assert!(
        (2 * batches + 1..=2 * batches + 2).contains(&log.count("update")),
        "{counts:?}"
    );
    // Lease (3 finds) + the shard keys (config.collections) + state load + the first batch's
    // check for already-numbered documents.
    assert!(log.count("find") <= 5 + batches, "{counts:?}");
    let total: u64 = counts
        .iter()
        .filter(|(name, _)| !is_stream_or_housekeeping(name))
        .map(|(_, n)| n)
        .sum();
    assert!(
        total <= 14,
        "a constant handful of commands, not thousands: {counts:?}"
    );
    assert_eq!(
        numbers(&coll, "seq").await,
        (1..=1002).collect::<Vec<i64>>()
    );
    assert_eq!(
        counter(&plain, &db, &format!("{db}.orders")).await,
        Some(1002)
    );
    plain.database(&db).drop().await.ok();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prenumbered_documents_are_left_alone_and_never_collide() {
    let (db, plain, coll) = test_db("prenumbered").await;
    let run = start(config(&db, "", ""), options().await, false);
    wait_running(&run).await;
    coll.insert_one(doc! { "n": "a" }).await.unwrap();
    wait_numbered(&coll, "seq", 1, WAIT).await;

    // Inserted by a client that numbers documents itself (e.g. the JS package).
    coll.insert_one(doc! { "n": "pre", "seq": 100, "note": "keep me" })
        .await
        .unwrap();
    let before = coll.find_one(doc! { "n": "pre" }).await.unwrap().unwrap();
    coll.insert_many((0..3).map(|i| doc! { "n": format!("b{i}") }))
        .await
        .unwrap();
    wait_numbered(&coll, "seq", 5, WAIT).await;
    // A pre-set number and an unnumbered document in one insert: the number the sidecar would
    // reserve next (104) is taken; the unnumbered document gets a free one.
    coll.insert_many([doc! { "n": "pre2", "seq": 104 }, doc! { "n": "c" }])
        .await
        .unwrap();
    wait_numbered(&coll, "seq", 7, WAIT).await;
    run.stop().await;

    assert_eq!(
        coll.find_one(doc! { "n": "pre" }).await.unwrap().unwrap(),
        before,
        "pre-numbered document untouched"
    );
    let docs = all(&coll).await;
    let by_name = |n: &str| {
        int(
            docs.iter().find(|d| d.get_str("n") == Ok(n)).unwrap(),
            "seq",
        )
    };
    assert_eq!(by_name("a"), 1);
    assert_eq!(
        [by_name("b0"), by_name("b1"), by_name("b2")],
        [101, 102, 103]
    );
    assert_eq!(by_name("pre2"), 104);
    assert_eq!(by_name("c"), 105);
    let mut seen: Vec<i64> = docs.iter().map(|d| int(d, "seq")).collect();
    seen.sort_unstable();
    seen.dedup();
    assert_eq!(seen.len(), 7, "no duplicates");
    assert_eq!(
        counter(&plain, &db, &format!("{db}.orders")).await,
        Some(105)
    );
    plain.database(&db).drop().await.ok();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scoped_counters_run_independently_and_format_follows_the_template() {
    let (db, plain, coll) = test_db("scope").await;
    let trigger = "sequence = \"orders\"\nscope = [\"tenantId\"]\nformat = \"ORD-{seq:06}\"\nformat_field = \"code\"\nmatch = { type = \"order\" }";
    let run = start(config(&db, trigger, ""), options().await, false);
    let tenants = ["acme", "globex", "initech"];
    for round in 0..10 {
        let batch: Vec<Document> = tenants
            .iter()
            .map(|t| doc! { "tenantId": *t, "type": "order", "round": round })
            .collect();
        coll.insert_many(batch).await.unwrap();
    }
    coll.insert_one(doc! { "tenantId": "acme", "type": "quote" })
        .await
        .unwrap();
    wait_numbered(&coll, "seq", 30, WAIT).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    run.stop().await;

    for tenant in tenants {
        let docs: Vec<Document> = coll
            .find(doc! { "tenantId": tenant, "type": "order" })
            .sort(doc! { "round": 1 })
            .await
            .unwrap()
            .try_collect()
            .await
            .unwrap();
        let seqs: Vec<i64> = docs.iter().map(|d| int(d, "seq")).collect();
        assert_eq!(
            seqs,
            (1..=10).collect::<Vec<_>>(),
            "tenant {tenant} runs 1..10 in insert order"
        );
        for d in &docs {
            assert_eq!(
                d.get_str("code").unwrap(),
                format!("ORD-{:06}", int(d, "seq"))
            );
        }
        assert_eq!(
            counter(&plain, &db, &format!("orders/tenantId={tenant}")).await,
            Some(10)
        );
    }
    let quote = coll
        .find_one(doc! { "type": "quote" })
        .await
        .unwrap()
        .unwrap();
    assert!(
        quote.get("seq").is_none(),
        "`match` filters out other documents"
    );
    plain.database(&db).drop().await.ok();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_malformed_counter_stops_writes_reports_and_recovers_when_fixed() {
    let (db, plain, coll) = test_db("malformed").await;
    let counters: Collection<Document> = plain.database(&db).collection("counters");
    let id = format!("{db}.orders");
    counters
        .insert_one(doc! { "_id": &id, "seq": "twelve" })
        .await
        .unwrap();
    coll.insert_one(doc! { "n": 1 }).await.unwrap();
    let run = start(config(&db, "", ""), options().await, false);
    let trigger = format!("{db}.orders.seq");

    let deadline = std::time::Instant::now() + WAIT;
    loop {
        let (healthy, triggers) = run.health.snapshot();
        if !healthy && triggers[&trigger].consecutive_errors >= 2 {
            let h = &triggers[&trigger];
            assert_eq!(
                h.last_error_code.as_deref(),
                Some("MALFORMED_COUNTER"),
                "{h:?}"
            );
            assert!(h.last_error.as_deref().unwrap_or("").contains(&id), "{h:?}");
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no error reported: {triggers:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(
        run.metrics
            .errors
            .with_label_values(&[&trigger, "counter"])
            .get()
            >= 2
    );
    assert_eq!(run.metrics.healthy.with_label_values(&[&trigger]).get(), 0);
    assert!(run.metrics.render().contains("mongo_seq_errors_total"));
    assert_eq!(
        count_numbered(&coll, "seq").await,
        0,
        "no writes while the counter is malformed"
    );
    assert_eq!(
        counters
            .find_one(doc! { "_id": &id })
            .await
            .unwrap()
            .unwrap()
            .get_str("seq"),
        Ok("twelve")
    );

    // Repaired by hand: the retry picks it up.
    counters
        .update_one(doc! { "_id": &id }, doc! { "$set": { "seq": 41_i64 } })
        .await
        .unwrap();
    wait_numbered(&coll, "seq", 1, WAIT).await;
    assert_eq!(numbers(&coll, "seq").await, vec![42]);
    let deadline = std::time::Instant::now() + WAIT;
    while !run.health.snapshot().0 {
        assert!(
            std::time::Instant::now() < deadline,
            "healthy again after the batch"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    run.stop().await;
    plain.database(&db).drop().await.ok();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redelivered_events_never_renumber_and_a_restart_resumes_after_the_stored_token() {
    let (db, plain, coll) = test_db("resume").await;
    let cfg = config(&db, "", "batch_size = 7");
    number_via_stream(&cfg, &coll, 0..20, 20).await;
    let state: Collection<Document> = plain.database(&db).collection("mongo_seq_state");
    let stored = state
        .find_one(doc! { "_id": format!("{db}.orders.seq") })
        .await
        .unwrap()
        .expect("state document");
    assert!(
        stored.get_document("token").is_ok(),
        "token stored: {stored}"
    );
    assert_eq!(stored.get_bool("backfillDone"), Ok(true));

    // Forget the newest progress: the stream replays events whose documents are numbered.
    state
        .update_one(
            doc! { "_id": format!("{db}.orders.seq") },
            doc! { "$unset": { "token": "" } },
        )
        .await
        .unwrap();
    coll.insert_many((20..25).map(|i| doc! { "i": i }))
        .await
        .unwrap();
    let run = start(cfg, options().await, false);
    wait_numbered(&coll, "seq", 25, WAIT).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    run.stop().await;
    assert_eq!(
        numbers(&coll, "seq").await,
        (1..=25).collect::<Vec<i64>>(),
        "every document once, no gaps"
    );
    assert_eq!(
        counter(&plain, &db, &format!("{db}.orders")).await,
        Some(25)
    );
    plain.database(&db).drop().await.ok();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_failing_trigger_does_not_stop_the_others() {
    let db = unique_db_name("isolation");
    let plain = client().await;
    let orders: Collection<Document> = plain.database(&db).collection("orders");
    let invoices: Collection<Document> = plain.database(&db).collection("invoices");
    plain
        .database(&db)
        .collection::<Document>("counters")
        .insert_one(doc! { "_id": "broken", "seq": [1] })
        .await
        .unwrap();
    let text = format!(
        "{}\n[[trigger]]\ndatabase = \"{db}\"\ncollection = \"invoices\"\nfield = \"no\"\nsequence = \"invoices\"\n",
        config_toml(&db, "sequence = \"broken\"", "")
    );
    let cfg = mongo_seq_sidecar::config::parse(&text, "test").unwrap();
    let run = start(cfg, options().await, false);
    orders.insert_one(doc! { "n": 1 }).await.unwrap();
    invoices
        .insert_many((0..3).map(|i| doc! { "i": i }))
        .await
        .unwrap();
    wait_numbered(&invoices, "no", 3, WAIT).await;
    let deadline = std::time::Instant::now() + WAIT;
    loop {
        let (healthy, triggers) = run.health.snapshot();
        if !healthy {
            assert!(!triggers[&format!("{db}.orders.seq")].healthy);
            assert!(
                triggers[&format!("{db}.invoices.no")].healthy,
                "{triggers:?}"
            );
            break;
        }
        assert!(std::time::Instant::now() < deadline, "{triggers:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    invoices.insert_one(doc! { "i": 3 }).await.unwrap();
    wait_numbered(&invoices, "no", 4, WAIT).await;
    assert_eq!(count_numbered(&orders, "seq").await, 0);
    run.stop().await;
    plain.database(&db).drop().await.ok();
}
