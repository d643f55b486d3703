//! The sidecar's commands carry the concerns the core chose, whatever its client's
//! options say: here a client configured `w: 1` and `readConcern: local`, the settings under
//! which a failover could roll back a reservation and hand its numbers out again. Every write
//! must carry `{w: "majority"}`, every read of the counters and the state collection
//! `{level: "majority"}`, the reads of the watched collection that check a change event's
//! documents `{level: "majority", afterClusterTime: <the newest event's clusterTime>}` (issue
//! 25; or, after the plan's own writes, the newest of their `operationTime`s, which a replica
//! set reports and the embedded server does not), and its other reads (a backfill's)
//! `{level: "local"}`
//! (`crates/mongo-seq-core/src/protocol/concern.rs`). Seen with the driver's command monitoring, in both
//! modes, with a backfill.

use crate::common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::*;
use mongodb::bson::{doc, Bson, Document, Timestamp};
use mongodb::event::command::CommandEvent;
use mongodb::event::EventHandler;
use mongodb::options::{Acknowledgment, ReadConcern, WriteConcern};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn writes_are_majority_and_reads_explicit_whatever_the_client_says() {
    let (db, plain, orders) = test_db("concerns").await;
    // A backfill first (documents before the start), then the stream.
    orders
        .insert_many((0..5).map(|i| doc! { "i": i }))
        .await
        .unwrap();
    let cfg = config(&db, "gapless = true", "batch_size = 3\nheartbeat_secs = 1");
    let sent: Arc<Mutex<Vec<(String, Document)>>> = Arc::default();
    // The cluster times of the change events the server sent, and of its updates.
    let events: Arc<Mutex<Vec<Timestamp>>> = Arc::default();
    let seen = events.clone();
    let mut options = options().await;
    options.write_concern = Some(WriteConcern::builder().w(Acknowledgment::Nodes(1)).build());
    options.read_concern = Some(ReadConcern::local());
    let sink = sent.clone();
    options.command_event_handler = Some(EventHandler::callback(move |event| match event {
        CommandEvent::Started(started) => sink
            .lock()
            .unwrap()
            .push((started.command_name.clone(), started.command.clone())),
        CommandEvent::Succeeded(done) => {
            // A plan's reads after its own writes are anchored at their `operationTime` (a
            // replica set reports it; a standalone, like the embedded server, does not).
            if done.command_name == "update" {
                if let Ok(time) = done.reply.get_timestamp("operationTime") {
                    seen.lock().unwrap().push(time);
                }
            }
            let cursor = done.reply.get_document("cursor").ok();
            let batch = cursor.and_then(|c| {
                c.get_array("firstBatch")
                    .or_else(|_| c.get_array("nextBatch"))
                    .ok()
            });
            for event in batch.into_iter().flatten() {
                if let Some(Ok(time)) = event.as_document().map(|e| e.get_timestamp("clusterTime"))
                {
                    seen.lock().unwrap().push(time);
                }
            }
        }
        _ => {}
    }));
    let run = start(cfg, options, true);
    wait_running(&run).await;
    orders
        .insert_many((5..12).map(|i| doc! { "i": i }))
        .await
        .unwrap();
    wait_numbered(&orders, "seq", 12, Duration::from_secs(60)).await;
    run.stop().await;
    plain.database(&db).drop().await.ok();

    let sent = sent.lock().unwrap().clone();
    let events = events.lock().unwrap().clone();
    let mut checked = std::collections::BTreeMap::<String, u32>::new();
    for (name, command) in &sent {
        let collection = command
            .get_str(name.as_str())
            .unwrap_or_default()
            .to_owned();
        match name.as_str() {
            "findAndModify" | "insert" | "update" => {
                let concern = command.get_document("writeConcern");
                assert_eq!(
                    concern.ok().and_then(|c| c.get_str("w").ok()),
                    Some("majority"),
                    "{name} on {collection}: {command}"
                );
            }
            "find" | "aggregate"
                if command.get("pipeline").is_none_or(|p| {
                    // The change stream's own aggregate is not a read of documents.
                    !p.as_array().is_some_and(|stages| {
                        stages.iter().any(|s| {
                            s.as_document()
                                .is_some_and(|s| s.contains_key("$changeStream"))
                        })
                    })
                }) =>
            {
                let concern = command.get_document("readConcern").ok();
                let after = concern.and_then(|c| c.get("afterClusterTime"));
                let expected = if collection != "orders" || after.is_some() {
                    "majority"
                } else {
                    "local"
                };
                let level = concern.and_then(|c| c.get_str("level").ok());
                assert_eq!(level, Some(expected), "{name} on {collection}: {command}");
                if let Some(after) = after {
                    assert!(
                        matches!(after, Bson::Timestamp(t) if events.contains(t)),
                        "{name} on {collection} is anchored at {after}, not at a change event's clusterTime or an update's operationTime ({events:?})"
                    );
                    // A bounded wait for the member serving it to reach the event.
                    assert_eq!(
                        command.get("maxTimeMS").and_then(Bson::as_i64),
                        Some(5_000),
                        "{name} on {collection}: {command}"
                    );
                    *checked
                        .entry(format!("{name} {collection} after an event"))
                        .or_default() += 1;
                    continue;
                }
            }
            _ => continue,
        }
        *checked.entry(format!("{name} {collection}")).or_default() += 1;
    }
    println!("commands checked: {checked:?}");
    for expected in [
        "findAndModify counters",
        "update orders",
        "find orders",
        "find orders after an event",
        "find counters",
        "find mongo_seq_state",
    ] {
        assert!(
            checked.keys().any(|k| k.starts_with(expected)),
            "no `{expected}` was sent: {checked:?}"
        );
    }
}
