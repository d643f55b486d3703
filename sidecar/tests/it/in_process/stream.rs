//! The change stream as the binary reads it ([`Connection`]'s `watch`): events bring only the
//! fields of the inserted document the numbering reads, however large the document is.

use crate::common;

use std::time::{Duration, Instant};

use common::{client, unique_db_name};
use mongo_seq_core::ChangeStream;
use mongo_seq_sidecar::config::Namespace;
use mongo_seq_sidecar::connection::Connection;
use mongo_seq_sidecar::mongo::{EventStream, Mongo, Watch};
use mongodb::bson::{doc, oid::ObjectId, Document};
use serde_json::json;

fn namespace(db: &str, coll: &str) -> Namespace {
    Namespace {
        db: db.to_owned(),
        coll: coll.to_owned(),
    }
}

/// The binary's change stream of the inserts into `db.orders`, events bringing `fields`, read
/// 1,000 events at most per reply.
async fn watch_inserts(client: &mongodb::Client, db: &str, fields: &[&str]) -> impl EventStream {
    let mongo = Connection::for_trigger(
        client,
        &namespace(db, "orders"),
        &namespace(db, "counters"),
        &namespace(db, "state"),
    );
    mongo
        .watch(Watch {
            stream: ChangeStream {
                filter: json!({ "operationType": "insert" }),
                update_lookup: false,
                post_images: false,
                fields: fields.iter().map(|f| (*f).to_owned()).collect(),
                deleted_fields: Vec::new(),
            },
            start_after: None,
            batch_size: 1000,
            max_await: Duration::from_millis(200),
        })
        .await
        .unwrap()
}

#[tokio::test]
async fn events_bring_only_the_fields_the_numbering_reads() {
    let client = client().await;
    let db = unique_db_name("stream_fields");
    let mut stream = watch_inserts(&client, &db, &["_id", "meta.seq", "tenant"]).await;
    let id = ObjectId::new();
    let large = "x".repeat(1 << 20);
    client
        .database(&db)
        .collection::<Document>("orders")
        .insert_one(doc! {
            "_id": id,
            "tenant": "a",
            "meta": { "seq": 7, "note": &large },
            "payload": &large,
        })
        .await
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    let event = loop {
        assert!(Instant::now() < deadline, "the insert event never came");
        if let Some(event) = stream.next_batch(10).await.unwrap().events.pop() {
            break event;
        }
    };
    assert_eq!(
        event.document,
        Some(json!({
            "_id": { "$oid": id.to_hex() },
            "tenant": "a",
            "meta": { "seq": { "$numberInt": "7" } },
        }))
    );
    assert!(
        event.cluster_time.is_some_and(|time| time.t > 0),
        "the cluster time (the anchor of the batch's reads, and the lag metric) is kept"
    );
    client.database(&db).drop().await.unwrap();
}

/// A backlog is read in full batches: a read that took only some events of a full reply (a
/// batch topped up after waiting, `batches.rs`) leaves the rest buffered, and the next batch is
/// that rest and the server's next reply, not the rest alone (a short batch would wait for
/// arrivals while the backlog waits on the server).
#[tokio::test]
async fn a_backlog_is_read_in_full_batches_after_a_partial_read() {
    const BACKLOG: usize = 2_500;
    let client = client().await;
    let db = unique_db_name("stream_backlog");
    let mut stream = watch_inserts(&client, &db, &["_id"]).await;
    let orders: Vec<Document> = (0..BACKLOG).map(|i| doc! { "i": i as i64 }).collect();
    client
        .database(&db)
        .collection::<Document>("orders")
        .insert_many(orders)
        .await
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    // The first read takes a few events of the first reply.
    let mut first = 0;
    while first == 0 {
        assert!(Instant::now() < deadline, "the insert events never came");
        first = stream.next_batch(10).await.unwrap().events.len();
    }
    let mut sizes = Vec::new();
    let mut read = first;
    while read < BACKLOG {
        assert!(
            Instant::now() < deadline,
            "read {read} of {BACKLOG}: {sizes:?}"
        );
        let got = stream.next_batch(1000).await.unwrap().events.len();
        read += got;
        if got > 0 {
            sizes.push(got);
        }
    }
    assert_eq!(read, BACKLOG, "{sizes:?}");
    let (last, full) = sizes.split_last().unwrap();
    assert!(
        full.iter().all(|&n| n == 1000) && *last == BACKLOG - first - 1000 * full.len(),
        "after a read of {first}, batches of the backlog: {sizes:?}"
    );
    client.database(&db).drop().await.unwrap();
}
