//! Backfill (first start, `--backfill`) and lost history, in-process. The 10,000-document
//! backfill runs on a server apart (`mongodb_uri_apart`): its oplog and its 1,000-statement
//! updates would slow the other tests' change streams and lease renewals on the shared one.

use crate::common;

use std::time::{Duration, Instant};

use common::*;
use mongodb::bson::{doc, Document};
use mongodb::options::ClientOptions;
use mongodb::{Client, Collection};

const WAIT: Duration = Duration::from_secs(120);

/// These tests count exact numbers, so no batch may be wasted by a lost lease: a long one. (With
/// the tests' usual 1.5 s lease, a 1,000-statement update on the test server, which runs one
/// command at a time, can hold a renewal past its margin on a loaded machine; the batch in
/// flight is then lost, as default mode allows.)
const HELD: &str = "[lease]\nttl_ms = 600000";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn backfills_10000_existing_documents_while_inserts_continue() {
    let uri = mongodb_uri_apart();
    let plain = Client::with_uri_str(&uri).await.expect("connect");
    let db = unique_db_name("backfill");
    let coll: Collection<Document> = plain.database(&db).collection("orders");
    for chunk in 0..10 {
        coll.insert_many((0..1000).map(|i| doc! { "old": chunk * 1000 + i }))
            .await
            .unwrap();
    }
    let started = Instant::now();
    let toml = config_toml_at(
        &uri,
        &db,
        "",
        &format!("batch_size = 1000\nprogress_secs = 1\n{HELD}"),
    );
    let run = start(
        mongo_seq_sidecar::config::parse(&toml, "test").expect("valid test config"),
        ClientOptions::parse(&uri).await.expect("parse the URI"),
        false,
    );
    let writer_coll = coll.clone();
    let writer = tokio::spawn(async move {
        for burst in 0..20 {
            writer_coll
                .insert_many((0..50).map(|i| doc! { "new": burst * 50 + i }))
                .await
                .unwrap();
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    });
    writer.await.unwrap();
    wait_numbered(&coll, "seq", 11_000, WAIT).await;
    let elapsed = started.elapsed();
    tokio::time::sleep(Duration::from_millis(300)).await;
    let metrics = run.metrics.clone();
    run.stop().await;

    let seqs = numbers(&coll, "seq").await;
    let mut distinct = seqs.clone();
    distinct.dedup();
    assert_eq!(distinct.len(), 11_000, "no duplicates");
    assert_eq!(
        counter(&plain, &db, &format!("{db}.orders")).await,
        seqs.last().copied()
    );
    // The pre-existing documents were numbered in _id order.
    let old: Vec<Document> = {
        use futures_util::TryStreamExt;
        coll.find(doc! { "old": { "$exists": true } })
            .sort(doc! { "_id": 1 })
            .await
            .unwrap()
            .try_collect()
            .await
            .unwrap()
    };
    let old_seqs: Vec<i64> = old.iter().map(|d| d.get_i64("seq").unwrap()).collect();
    assert_eq!(old_seqs, (1..=10_000).collect::<Vec<i64>>());
    let trigger = format!("{db}.orders.seq");
    assert_eq!(
        metrics
            .backfill_remaining
            .with_label_values(&[&trigger])
            .get(),
        0
    );
    println!(
        "backfill: 11,000 documents numbered in {:.1} s ({:.0} docs/s), {} batches, {} reservations",
        elapsed.as_secs_f64(),
        11_000.0 / elapsed.as_secs_f64(),
        metrics.batches.with_label_values(&[&trigger]).get(),
        metrics.commands.with_label_values(&[&trigger, "findAndModify"]).get()
    );
    plain.database(&db).drop().await.ok();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lost_history_backfills_and_continues_instead_of_suspending() {
    let (db, plain, coll) = test_db("lost").await;
    let cfg = config(&db, "", HELD);
    number_via_stream(&cfg, &coll, 0..5, 5).await;

    // The stored resume point is gone from the oplog (as after a long outage), and documents
    // were inserted meanwhile.
    let state: Collection<Document> = plain.database(&db).collection("mongo_seq_state");
    let id = format!("{db}.orders.seq");
    state
        .update_one(
            doc! { "_id": &id },
            doc! { "$set": { "token": { "_data": "82000000010000000129295A1004" } } },
        )
        .await
        .unwrap();
    coll.insert_many((5..8).map(|i| doc! { "i": i }))
        .await
        .unwrap();
    let run = start(cfg, options().await, false);
    wait_numbered(&coll, "seq", 8, WAIT).await;
    wait_running(&run).await;
    coll.insert_one(doc! { "i": 8 }).await.unwrap();
    wait_numbered(&coll, "seq", 9, WAIT).await;
    let metrics = run.metrics.clone();
    run.stop().await;
    assert_eq!(numbers(&coll, "seq").await, (1..=9).collect::<Vec<i64>>());
    println!(
        "lost history errors: {}",
        metrics
            .render()
            .lines()
            .filter(|l| l.starts_with("mongo_seq_errors_total"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    plain.database(&db).drop().await.ok();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn backfill_flag_numbers_documents_the_stream_never_saw() {
    let (db, plain, coll) = test_db("flag").await;
    let cfg = config(&db, "", HELD);
    number_via_stream(&cfg, &coll, 0..3, 3).await;
    // Someone removed numbers by hand; the stream has nothing to say about that.
    coll.update_many(
        doc! { "i": { "$gte": 1 } },
        doc! { "$unset": { "seq": "" } },
    )
    .await
    .unwrap();
    let run = start(cfg, options().await, true);
    wait_numbered(&coll, "seq", 3, WAIT).await;
    run.stop().await;
    assert_eq!(numbers(&coll, "seq").await, vec![1, 4, 5]);
    plain.database(&db).drop().await.ok();
}
