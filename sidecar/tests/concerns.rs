//! The sidecar's commands carry the concerns the core chose (issue 10), whatever its client's
//! options say: here a client configured `w: 1` and `readConcern: local`, the settings under
//! which a failover could roll back a reservation and hand its numbers out again. Every write
//! must carry `{w: "majority"}`, every read of the counters and the state collection
//! `{level: "majority"}`, and the reads of the watched collection `{level: "local"}`
//! (`crates/mongo-seq-core/src/concern.rs`). Seen with the driver's command monitoring, in both
//! modes, with a backfill.

mod common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::*;
use mongodb::bson::{doc, Document};
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
    let mut options = options().await;
    options.write_concern = Some(WriteConcern::builder().w(Acknowledgment::Nodes(1)).build());
    options.read_concern = Some(ReadConcern::local());
    let sink = sent.clone();
    options.command_event_handler = Some(EventHandler::callback(move |event| {
        if let CommandEvent::Started(started) = event {
            sink.lock()
                .unwrap()
                .push((started.command_name.clone(), started.command.clone()));
        }
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
                let expected = if collection == "orders" {
                    "local"
                } else {
                    "majority"
                };
                let level = command
                    .get_document("readConcern")
                    .ok()
                    .and_then(|c| c.get_str("level").ok());
                assert_eq!(level, Some(expected), "{name} on {collection}: {command}");
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
        "find counters",
        "find mongo_seq_state",
    ] {
        assert!(
            checked.keys().any(|k| k.starts_with(expected)),
            "no `{expected}` was sent: {checked:?}"
        );
    }
}
