//! Proves the substrate the product stands on, against the embedded test server or
//! `MONGODB_URI`: atomic `$inc` counters, duplicate-key errors, resumable change streams, their
//! tokens past dropped events and their update lookups.

use std::collections::BTreeSet;
use std::time::Duration;

use futures_util::{StreamExt, TryStreamExt};
use mongo_seq_test_harness::{client, unique_db_name};
use mongodb::bson::{doc, Document};
use mongodb::change_stream::event::{ChangeStreamEvent, OperationType, ResumeToken};
use mongodb::error::{ErrorKind, WriteFailure};
use mongodb::options::{
    CollectionOptions, FullDocumentType, IndexOptions, ReturnDocument, WriteConcern,
};
use mongodb::{Collection, IndexModel};

const TASKS: i64 = 8;
const CALLS_PER_TASK: i64 = 500;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_find_one_and_update_issues_each_number_once() {
    let db = client().await.database(&unique_db_name("substrate_inc"));
    let counters: Collection<Document> = db.collection("counters");

    let mut tasks = Vec::new();
    for _ in 0..TASKS {
        let counters = counters.clone();
        tasks.push(tokio::spawn(async move {
            let mut got = Vec::with_capacity(CALLS_PER_TASK as usize);
            for _ in 0..CALLS_PER_TASK {
                let after = counters
                    .find_one_and_update(doc! { "_id": "userid" }, doc! { "$inc": { "seq": 1 } })
                    .upsert(true)
                    .return_document(ReturnDocument::After)
                    .await
                    .expect("findOneAndUpdate")
                    .expect("document after upsert");
                got.push(
                    after
                        .get_i32("seq")
                        .map(i64::from)
                        .or_else(|_| after.get_i64("seq"))
                        .expect("integer seq"),
                );
            }
            got
        }));
    }
    let mut all = Vec::new();
    for task in tasks {
        all.extend(task.await.expect("task"));
    }
    let distinct: BTreeSet<i64> = all.iter().copied().collect();
    assert_eq!(all.len() as i64, TASKS * CALLS_PER_TASK);
    assert_eq!(distinct.len(), all.len(), "some number was issued twice");
    assert_eq!(
        distinct,
        (1..=TASKS * CALLS_PER_TASK).collect::<BTreeSet<_>>()
    );
    db.drop().await.ok();
}

#[tokio::test]
async fn unique_index_rejects_duplicate_with_code_11000() {
    let db = client().await.database(&unique_db_name("substrate_dup"));
    let users: Collection<Document> = db.collection("users");
    users
        .create_index(
            IndexModel::builder()
                .keys(doc! { "email": 1 })
                .options(IndexOptions::builder().unique(true).build())
                .build(),
        )
        .await
        .expect("create unique index");
    users
        .insert_one(doc! { "email": "sarah@example.com" })
        .await
        .expect("first insert");
    let err = users
        .insert_one(doc! { "email": "sarah@example.com" })
        .await
        .expect_err("duplicate must fail");
    match *err.kind {
        ErrorKind::Write(WriteFailure::WriteError(ref e)) => assert_eq!(e.code, 11000, "{err}"),
        _ => panic!("expected a write error with code 11000, got {err}"),
    }
    assert_eq!(users.count_documents(doc! {}).await.expect("count"), 1);
    db.drop().await.ok();
}

/// Reads exactly `n` insert events, then checks that nothing else is pending.
async fn read_inserts(
    stream: &mut mongodb::change_stream::ChangeStream<ChangeStreamEvent<Document>>,
    n: usize,
) -> Vec<i32> {
    let mut seen = Vec::new();
    while seen.len() < n {
        let event = tokio::time::timeout(Duration::from_secs(20), stream.next())
            .await
            .expect("change event within 20 s")
            .expect("stream open")
            .expect("change event");
        assert_eq!(event.operation_type, OperationType::Insert);
        let full = event
            .full_document
            .expect("insert event carries fullDocument");
        seen.push(full.get_i32("n").expect("n"));
    }
    seen
}

/// How long a getMore that finds nothing waits (`maxAwaitTimeMS`) in the tests that expect
/// empty reads: a real server (and the embedded one) waits for an event up to that, 1 s by default.
const QUIET_READ: Duration = Duration::from_millis(100);

async fn assert_nothing_more(
    stream: &mut mongodb::change_stream::ChangeStream<ChangeStreamEvent<Document>>,
) {
    // Give a late duplicate the chance to show up: a few getMores over half a second.
    for _ in 0..5 {
        let extra = stream.next_if_any().await.expect("getMore");
        assert!(
            extra.is_none(),
            "event delivered twice or unexpected: {extra:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn resume_delivers_exactly_the_missed_events(use_start_after: bool) {
    let db = client().await.database(&unique_db_name("substrate_stream"));
    let events: Collection<Document> = db.collection("events");
    events
        .insert_one(doc! { "n": 0 })
        .await
        .expect("create collection");

    let mut stream = events
        .watch()
        .pipeline([doc! { "$match": { "operationType": "insert" } }])
        .await
        .expect("watch");
    events
        .insert_many((1..=3).map(|n| doc! { "n": n }))
        .await
        .expect("insert 1..3");
    assert_eq!(read_inserts(&mut stream, 3).await, vec![1, 2, 3]);
    let token: ResumeToken = stream.resume_token().expect("resume token after events");
    drop(stream);

    events
        .insert_many((4..=6).map(|n| doc! { "n": n }))
        .await
        .expect("insert 4..6 while no stream is open");

    // Empty reads wait this long on a server that waits for events (1 s without it).
    let resumed = events
        .watch()
        .pipeline([doc! { "$match": { "operationType": "insert" } }])
        .max_await_time(QUIET_READ);
    let mut stream = if use_start_after {
        resumed.start_after(token).await
    } else {
        resumed.resume_after(token).await
    }
    .expect("resume");
    assert_eq!(
        read_inserts(&mut stream, 3).await,
        vec![4, 5, 6],
        "exactly the missed events, in order"
    );
    assert_nothing_more(&mut stream).await;
    events.insert_one(doc! { "n": 7 }).await.expect("insert 7");
    assert_eq!(read_inserts(&mut stream, 1).await, vec![7]);
    db.drop().await.ok();
}

#[tokio::test]
async fn change_stream_resume_after_delivers_missed_events_once() {
    resume_delivers_exactly_the_missed_events(false).await;
}

#[tokio::test]
async fn change_stream_start_after_delivers_missed_events_once() {
    resume_delivers_exactly_the_missed_events(true).await;
}

/// A unique index partial to documents that have the field (the sidecar's): documents without
/// the field coexist, and deleting one of them works and leaves the collection consistent.
#[tokio::test]
async fn partial_unique_index_allows_many_without_the_field_and_deleting_them() {
    let db = client()
        .await
        .database(&unique_db_name("substrate_partial"));
    let docs: Collection<Document> = db.collection("docs");
    let options = IndexOptions::builder()
        .unique(true)
        .partial_filter_expression(doc! { "seq": { "$exists": true } })
        .build();
    docs.create_index(
        IndexModel::builder()
            .keys(doc! { "seq": 1 })
            .options(options)
            .build(),
    )
    .await
    .expect("partial index");
    docs.insert_many([
        doc! { "_id": 1 },
        doc! { "_id": 2 },
        doc! { "_id": 3, "seq": 1 },
    ])
    .await
    .expect("insert");
    let err = docs
        .insert_one(doc! { "_id": 4, "seq": 1 })
        .await
        .expect_err("duplicate number refused");
    assert!(
        matches!(*err.kind, ErrorKind::Write(WriteFailure::WriteError(ref e)) if e.code == 11000),
        "{err}"
    );
    let gone = docs
        .find_one_and_delete(doc! { "seq": { "$exists": false } })
        .await
        .expect("delete without the field");
    assert!(gone.is_some());
    docs.delete_one(doc! { "_id": 3 })
        .await
        .expect("delete with the field");
    assert_eq!(docs.count_documents(doc! {}).await.expect("count"), 1);
    let left = docs
        .find_one(doc! {})
        .await
        .expect("find")
        .expect("one left");
    docs.delete_one(doc! { "_id": left.get("_id").cloned().unwrap() })
        .await
        .expect("delete the last");
    assert_eq!(docs.count_documents(doc! {}).await.expect("count"), 0);
    docs.insert_one(doc! { "_id": 4, "seq": 1 })
        .await
        .expect("the number is free again");
    db.drop().await.ok();
}

/// A stream's resume token moves past the events its `$match` drops once a read has scanned
/// them (the postBatchResumeToken of a reply that found nothing): a stream resumed there does
/// not see them again, whatever it matches.
#[tokio::test]
async fn a_stream_s_token_moves_past_the_events_its_match_drops() {
    let db = client().await.database(&unique_db_name("substrate_pbrt"));
    let events: Collection<Document> = db.collection_with_options("events", majority_writes());
    events.insert_one(doc! { "n": 0 }).await.expect("create");
    let mut stream = events
        .watch()
        .pipeline([doc! { "$match": { "fullDocument.keep": true } }])
        .max_await_time(QUIET_READ)
        .await
        .expect("watch");
    events
        .insert_many((1..=5).map(|n| doc! { "n": n, "keep": false }))
        .await
        .expect("insert what the stream drops");
    let before = stream.resume_token();
    // A real server may answer before its scan reached the inserts: a few empty reads.
    let mut token = None;
    for _ in 0..20 {
        assert!(stream.next_if_any().await.expect("getMore").is_none());
        token = stream.resume_token().filter(|t| Some(t) != before.as_ref());
        if token.is_some() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let token = token.expect("the token moved after reads that found nothing");
    drop(stream);

    let mut resumed = events
        .watch()
        .pipeline([doc! { "$match": { "operationType": "insert" } }])
        .start_after(token)
        .await
        .expect("resume at the token");
    events.insert_one(doc! { "n": 6 }).await.expect("insert 6");
    assert_eq!(
        read_inserts(&mut resumed, 1).await,
        vec![6],
        "the dropped events are behind the token"
    );
    db.drop().await.ok();
}

/// An update event of a stream opened with `fullDocument: "updateLookup"` carries its own
/// document as it is when read (newer than the event), found among many, and the stream's
/// `$match` sees that document.
#[tokio::test]
async fn an_update_event_brings_its_own_document_as_it_is_now() {
    let db = client().await.database(&unique_db_name("substrate_lookup"));
    let orders: Collection<Document> = db.collection_with_options("orders", majority_writes());
    orders
        .insert_many((1..=50).map(|n| doc! { "_id": n, "status": "draft" }))
        .await
        .expect("drafts");
    let mut stream = orders
        .watch()
        .pipeline([doc! { "$match": {
            "operationType": "update",
            "fullDocument.status": "issued",
        } }])
        .full_document(FullDocumentType::UpdateLookup)
        .max_await_time(QUIET_READ)
        .await
        .expect("watch");
    // Ten orders issued by one update; one of them changed again after (its lookup shows it).
    orders
        .update_many(
            doc! { "_id": { "$gt": 20, "$lte": 30 } },
            doc! { "$set": { "status": "issued" } },
        )
        .await
        .expect("set documents 21..30 issued");
    orders
        .update_one(doc! { "_id": 25 }, doc! { "$set": { "note": "late" } })
        .await
        .expect("note on 25");
    orders
        .update_one(
            doc! { "_id": 40 },
            doc! { "$set": { "note": "draft only" } },
        )
        .await
        .expect("a draft changed: dropped by the match after its lookup");
    let mut seen = Vec::new();
    while seen.len() < 11 {
        let event = tokio::time::timeout(Duration::from_secs(20), stream.next())
            .await
            .expect("update event within 20 s")
            .expect("stream open")
            .expect("change event");
        let document = event.full_document.expect("looked-up document");
        let id = document.get_i32("_id").expect("the document's _id");
        if id == 25 {
            assert_eq!(document.get_str("note").ok(), Some("late"), "{document}");
        }
        assert_eq!(
            document.get_str("status").ok(),
            Some("issued"),
            "{document}"
        );
        seen.push(id);
    }
    let mut expected: Vec<i32> = (21..=30).collect();
    expected.push(25);
    seen.sort_unstable();
    expected.sort_unstable();
    assert_eq!(seen, expected, "each update event with its own document");
    assert_nothing_more(&mut stream).await;
    db.drop().await.ok();
}

fn majority_writes() -> CollectionOptions {
    CollectionOptions::builder()
        .write_concern(WriteConcern::majority())
        .build()
}

/// `_id: {$in: [...]}` with more conditions finds exactly the documents whose `_id` equals one of
/// the values, numbers of any type comparing by value, among many values that match nothing.
#[tokio::test]
async fn an_id_in_query_finds_exactly_the_listed_documents() {
    let db = client().await.database(&unique_db_name("substrate_in"));
    let docs: Collection<Document> = db.collection("docs");
    let oid = mongodb::bson::oid::ObjectId::new();
    docs.insert_many([
        doc! { "_id": 1_i32, "keep": true },
        doc! { "_id": 2_i64, "keep": true },
        doc! { "_id": 3.0_f64, "keep": true },
        doc! { "_id": "a", "keep": true },
        doc! { "_id": oid, "keep": true },
        doc! { "_id": { "k": 1 }, "keep": true },
        doc! { "_id": 5_i32, "keep": false },
        doc! { "_id": 6_i32, "keep": true },
    ])
    .await
    .expect("insert");
    let ids_of = |found: Vec<Document>| -> Vec<String> {
        let mut ids: Vec<String> = found
            .iter()
            .map(|d| d.get("_id").map(ToString::to_string).unwrap_or_default())
            .collect();
        ids.sort();
        ids
    };
    let mut listed: Vec<mongodb::bson::Bson> = (1000..1300).map(|n| n.into()).collect();
    listed.extend([
        1.0_f64.into(),
        2_i32.into(),
        3_i64.into(),
        "a".into(),
        oid.into(),
        5_i64.into(),
    ]);
    let found = docs
        .find(doc! { "_id": { "$in": listed.clone() }, "keep": true })
        .await
        .expect("find")
        .try_collect::<Vec<_>>()
        .await
        .expect("read");
    let expected = ids_of(
        docs.find(doc! { "_id": { "$in": [1, 2, 3, "a", oid] } })
            .await
            .expect("find")
            .try_collect::<Vec<_>>()
            .await
            .expect("read"),
    );
    assert_eq!(expected.len(), 5, "{expected:?}");
    assert_eq!(
        ids_of(found),
        expected,
        "5 is listed but not kept; 6 is kept but not listed"
    );
    listed.push(doc! { "k": 1 }.into());
    let with_document = docs
        .find(doc! { "_id": { "$in": listed }, "keep": true })
        .await
        .expect("find")
        .try_collect::<Vec<_>>()
        .await
        .expect("read");
    assert_eq!(with_document.len(), 6, "{with_document:?}");
    db.drop().await.ok();
}

/// A stream started at an event's cluster time (`startAtOperationTime`, inclusive) begins with
/// that event: a read from a position neither skips the entry at it nor any after it.
#[tokio::test]
async fn a_stream_started_at_an_event_s_time_begins_with_that_event() {
    let db = client()
        .await
        .database(&unique_db_name("substrate_start_at"));
    let events: Collection<Document> = db.collection_with_options("events", majority_writes());
    events.insert_one(doc! { "n": 0 }).await.expect("create");
    let mut first = events
        .watch()
        .pipeline([doc! { "$match": { "operationType": "insert" } }])
        .await
        .expect("watch");
    for n in 1..=3 {
        events.insert_one(doc! { "n": n }).await.expect("insert");
    }
    let event = tokio::time::timeout(Duration::from_secs(20), first.next())
        .await
        .expect("the first insert within 20 s")
        .expect("stream open")
        .expect("change event");
    assert_eq!(
        event
            .full_document
            .as_ref()
            .and_then(|d| d.get_i32("n").ok()),
        Some(1)
    );
    let at = event
        .cluster_time
        .expect("an insert event carries its clusterTime");
    drop(first);
    let mut started = events
        .watch()
        .pipeline([doc! { "$match": { "operationType": "insert" } }])
        .start_at_operation_time(at)
        .await
        .expect("watch from the event's time");
    assert_eq!(read_inserts(&mut started, 3).await, vec![1, 2, 3]);
    db.drop().await.ok();
}
