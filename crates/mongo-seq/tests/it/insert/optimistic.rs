//! Inserting numbered documents (js/test/insert.test.mjs), continued: the tutorial's optimistic
//! loop, wait_for_number, the concerns every command carries, inserts sharing next()'s block.

use crate::common;

use std::time::{Duration, Instant};

use common::{all, setup};
use futures_util::future::join_all;
use mongo_seq::{InsertOptions, OptimisticOptions, SequenceOptions, Sequences, WaitOptions};
use mongodb::bson::{doc, Document};
use mongodb::options::{IndexOptions, ReadConcern, WriteConcern};
use mongodb::IndexModel;

type TestResult = Result<(), Box<dyn std::error::Error>>;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn insert_optimistic_is_the_tutorial_s_loop() -> TestResult {
    let s = setup("ins_optimistic").await;
    let users2 = s.db.collection::<Document>("users2");
    let seqs = s.seqs();
    let grace = seqs
        .insert_optimistic(&users2, doc! { "name": "Grace H." }, None)
        .await?;
    let ted = seqs
        .insert_optimistic(&users2, doc! { "name": "Ted R." }, None)
        .await?;
    assert_eq!((grace.value, ted.value), (1, 2));
    assert_eq!(
        all(&users2, doc! {}).await,
        [
            doc! { "_id": 1_i64, "name": "Grace H." },
            doc! { "_id": 2_i64, "name": "Ted R." }
        ]
    );
    // Concurrent tasks collide on the same candidate; each retries until its insert wins.
    let tasks: Vec<_> = (0..10)
        .map(|i| {
            let (seqs, users2) = (seqs.clone(), users2.clone());
            tokio::spawn(
                async move { seqs.insert_optimistic(&users2, doc! { "i": i }, None).await },
            )
        })
        .collect();
    let mut values = Vec::new();
    for task in tasks {
        values.push(task.await??.value);
    }
    values.sort_unstable();
    assert_eq!(values, (3..=12).collect::<Vec<i64>>());
    assert_eq!(
        s.db.collection::<Document>("counters")
            .count_documents(doc! {})
            .await?,
        0,
        "no counter"
    );
    s.drop_db().await;
    Ok(())
}

#[tokio::test]
async fn insert_optimistic_with_a_sequence_s_start_step_and_format() -> TestResult {
    let s = setup("ins_optimistic_opts").await;
    let tickets = s.db.collection::<Document>("tickets");
    tickets
        .create_index(
            IndexModel::builder()
                .keys(doc! { "no": 1 })
                .options(IndexOptions::builder().unique(true).build())
                .build(),
        )
        .await?;
    let seqs = s.seqs();
    let ticket = seqs.sequence(
        "ticket",
        SequenceOptions::new().start(100).step(10).format("T{seq}"),
    )?;
    let first = seqs
        .insert_optimistic(
            &tickets,
            doc! { "title": "x" },
            OptimisticOptions::new()
                .sequence(&ticket)
                .field("no")
                .format_field("code"),
        )
        .await?;
    let second = seqs
        .insert_optimistic(
            &tickets,
            doc! { "title": "y" },
            OptimisticOptions::new()
                .sequence("ticket")
                .field("no")
                .format_field("code"),
        )
        .await?;
    assert_eq!(
        (
            first.value,
            first.formatted.as_deref(),
            second.value,
            second.formatted.as_deref()
        ),
        (100, Some("T100"), 110, Some("T110"))
    );
    let stored = tickets
        .find_one(doc! { "_id": second.inserted_id })
        .await?
        .unwrap();
    assert_eq!(stored.get_i64("no")?, 110);
    s.drop_db().await;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn wait_for_number_returns_what_another_process_writes_or_times_out() -> TestResult {
    let s = setup("ins_wait").await;
    let orders = s.db.collection::<Document>("orders");
    let id = orders
        .insert_one(doc! { "item": "book" })
        .await?
        .inserted_id;
    let seqs = s.seqs();
    // Stands in for the sidecar: numbers the document a little later.
    let sidecar = {
        let (orders, id) = (orders.clone(), id.clone());
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(150)).await;
            orders
                .update_one(doc! { "_id": id }, doc! { "$set": { "seq": 1_i64 << 60 } })
                .await
        })
    };
    let options = WaitOptions::new()
        .field("seq")
        .timeout(Duration::from_secs(5));
    assert_eq!(seqs.wait_for_number(&orders, id, options).await?, 1 << 60);
    sidecar.await??;

    let other = orders.insert_one(doc! { "item": "pen" }).await?.inserted_id;
    let started = Instant::now();
    let error = seqs
        .wait_for_number(
            &orders,
            other.clone(),
            WaitOptions::new().timeout(Duration::from_millis(300)),
        )
        .await
        .unwrap_err();
    assert_eq!(error.code(), Some("WAIT_TIMEOUT"));
    assert_eq!(
        error.details().unwrap(),
        serde_json::json!({ "field": "seq", "timeoutMs": 300, "found": true })
    );
    assert!(started.elapsed() >= Duration::from_millis(300));
    let missing = seqs
        .wait_for_number(
            &orders,
            "no such id",
            WaitOptions::new().timeout(Duration::ZERO),
        )
        .await
        .unwrap_err();
    assert_eq!(missing.details().unwrap()["found"], false);
    orders
        .update_one(
            doc! { "_id": other.clone() },
            doc! { "$set": { "seq": "soon" } },
        )
        .await?;
    let malformed = seqs
        .wait_for_number(
            &orders,
            other,
            WaitOptions::new().timeout(Duration::from_millis(300)),
        )
        .await
        .unwrap_err();
    assert_eq!(malformed.code(), Some("MALFORMED_DOCUMENT"));
    // The sidecar may number a nested field (`field = "meta.seq"` in its config).
    let nested = orders
        .insert_one(doc! { "item": "ink", "meta": { "seq": 7 } })
        .await?
        .inserted_id;
    assert_eq!(
        seqs.wait_for_number(&orders, nested, WaitOptions::new().field("meta.seq"))
            .await?,
        7
    );
    s.drop_db().await;
    Ok(())
}

/// The driver's command names that write and read.
const WRITES: [&str; 3] = ["findAndModify", "insert", "update"];
const READS: [&str; 2] = ["find", "aggregate"];

#[tokio::test]
async fn every_write_carries_w_majority_and_every_read_its_read_concern_whatever_the_client_says(
) -> TestResult {
    let monitor = common::Monitor::default();
    let mut options = common::monitored_options(&monitor).await;
    // The settings under which a failover could hand a number out twice.
    options.write_concern = Some(
        WriteConcern::builder()
            .w(mongodb::options::Acknowledgment::Nodes(1))
            .build(),
    );
    options.read_concern = Some(ReadConcern::local());
    let client = mongodb::Client::with_options(options)?;
    let db = client.database(&common::unique_db_name("concerns"));
    let seqs = Sequences::new(&db);
    let invoices = seqs.sequence("invoices", SequenceOptions::new().block(5))?;
    invoices.next().await?;
    invoices.next_many(7).await?;
    invoices.set_next(100).await?;
    invoices.current().await?;
    let documents = db.collection::<Document>("documents");
    seqs.insert_one(&documents, doc! { "kind": "one" }, "documentId")
        .await?;
    seqs.insert_many(
        &documents,
        [doc! { "kind": "a" }, doc! { "kind": "b" }],
        InsertOptions::new("documentId").field("n"),
    )
    .await?;
    seqs.insert_optimistic(
        &db.collection::<Document>("optimistic"),
        doc! { "kind": "optimistic" },
        None,
    )
    .await?;
    seqs.sequence("imported", None)?
        .seed_from_collection(&documents, "_id")
        .await?;
    seqs.sequence("imported", None)?.rewind_all().await?;
    let commands = monitor.commands();
    for name in ["findAndModify", "insert", "find", "update"] {
        assert!(
            commands.iter().any(|(n, _)| n == name),
            "no {name} was sent"
        );
    }
    let mut reads = Vec::new();
    for (name, command) in commands {
        if WRITES.contains(&name.as_str()) {
            assert_eq!(
                command.get_document("writeConcern").ok(),
                Some(&doc! { "w": "majority" }),
                "{name} {command}"
            );
        } else if READS.contains(&name.as_str()) {
            let collection = command.get_str(&name)?.to_owned();
            let level = if collection == "counters" {
                "majority"
            } else {
                "local"
            };
            assert_eq!(
                command.get_document("readConcern")?.get_str("level")?,
                level,
                "{name} {command}"
            );
            reads.push(collection);
        }
    }
    assert!(
        reads.iter().any(|c| c == "counters") && reads.iter().any(|c| c != "counters"),
        "reads of both kinds: {reads:?}"
    );
    let _ = db.drop().await;
    Ok(())
}

#[tokio::test]
async fn inserts_share_the_block_with_next() -> TestResult {
    let s = setup("ins_share").await;
    let seqs = s.seqs();
    let ids = seqs.sequence("ids", SequenceOptions::new().block(10))?;
    assert_eq!(ids.next().await?, 1);
    s.monitor.reset();
    let things = s.db.collection::<Document>("things");
    let numbers: Vec<i64> = join_all((0..3).map(|i| {
        seqs.insert_one(
            &things,
            doc! { "i": i },
            InsertOptions::new("ids").field("n"),
        )
    }))
    .await
    .into_iter()
    .map(|r| r.map(|r| r.value))
    .collect::<Result<_, _>>()?;
    assert_eq!(numbers, [2, 3, 4]);
    assert_eq!(
        s.monitor.count("findAndModify"),
        0,
        "from the block in hand"
    );
    s.drop_db().await;
    Ok(())
}
