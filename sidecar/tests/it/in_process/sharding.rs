//! A counters collection sharded on a key other than `_id`: the trigger reads
//! the cluster's catalog (`config.collections`) at session start and refuses with the core's
//! UNSUPPORTED_SHARD_KEY, nothing written; once the collection is sharded on `_id` (hashed
//! here), its retry numbers. No sharded cluster runs here: the catalog entry is the one a
//! `mongos` would return, written into the embedded server's `config` database (against a real
//! replica set, `MONGODB_URI`, as well: its `config.collections` is an ordinary collection of a
//! non-sharded deployment). The refusal of a write by the server (code 61) is unit-tested in
//! `executor/sharding.rs`, the rule in the core's `counter/shard_key.rs`.

use crate::common;

use std::time::{Duration, Instant};

use common::*;
use mongodb::bson::{doc, Document};
use mongodb::Collection;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn counters_sharded_on_another_key_are_refused_at_start_then_numbered_on_id() {
    let (db, plain, coll) = test_db("sharded").await;
    let catalog: Collection<Document> = plain.database("config").collection("collections");
    let namespace = format!("{db}.counters");
    catalog
        .insert_one(doc! { "_id": &namespace, "key": { "tenant": 1 }, "unique": false })
        .await
        .unwrap();
    let run = start(config(&db, "", ""), options().await, false);
    coll.insert_one(doc! { "i": 1 }).await.unwrap();

    // The trigger reports the refusal and retries; nothing is numbered, no counter written.
    let deadline = Instant::now() + Duration::from_secs(30);
    let error = loop {
        let (healthy, triggers) = run.health.snapshot();
        let trigger = triggers.values().next().cloned();
        if let Some(error) = trigger.as_ref().and_then(|t| t.last_error.clone()) {
            assert!(!healthy);
            assert_eq!(
                trigger.unwrap().last_error_code.as_deref(),
                Some("UNSUPPORTED_SHARD_KEY")
            );
            break error;
        }
        assert!(Instant::now() < deadline, "no error reported: {triggers:?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert!(
        error.contains(&format!(
            "the collection {namespace} is sharded on {{ tenant: 1 }}"
        )),
        "{error}"
    );
    assert!(
        error.contains("unsharded collection") && error.contains("{ _id: 1 }"),
        "{error}"
    );
    let counters: Collection<Document> = plain.database(&db).collection("counters");
    assert_eq!(
        counters.count_documents(doc! {}).await.unwrap(),
        0,
        "no counter written"
    );
    assert_eq!(count_numbered(&coll, "seq").await, 0);

    // Sharded on a hashed `_id`: the next attempt passes and numbers.
    catalog
        .update_one(
            doc! { "_id": &namespace },
            doc! { "$set": { "key": { "_id": "hashed" } } },
        )
        .await
        .unwrap();
    wait_numbered(&coll, "seq", 1, Duration::from_secs(60)).await;
    run.stop().await;
    assert_eq!(numbers(&coll, "seq").await, vec![1]);
    catalog
        .delete_one(doc! { "_id": &namespace })
        .await
        .unwrap();
    plain.database(&db).drop().await.ok();
}

/// Waits until the trigger's health satisfies `ready`; returns it.
async fn health_until(
    run: &Running,
    what: &str,
    ready: impl Fn(&mongo_seq_sidecar::health::TriggerHealth) -> bool,
) -> mongo_seq_sidecar::health::TriggerHealth {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let (_, triggers) = run.health.snapshot();
        if let Some(trigger) = triggers.values().next().filter(|t| ready(t)) {
            return trigger.clone();
        }
        assert!(Instant::now() < deadline, "{what}: {triggers:?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unscoped_sequence_numbers_a_collection_sharded_on_another_key_without_the_unique_index()
{
    let (db, plain, coll) = test_db("sharded_docs").await;
    let catalog: Collection<Document> = plain.database("config").collection("collections");
    let namespace = format!("{db}.orders");
    let text = config_toml(&db, "name = \"orders\"\nunique_index = false", "");
    let path = write_config(&format!("{db}-sharded"), &text);
    let cfg = mongo_seq_sidecar::config::parse(&text, "test").unwrap();

    // Unsharded: the index is possible, `unique_index = false` is refused, nothing numbered.
    let run = start(cfg.clone(), options().await, false);
    coll.insert_one(doc! { "i": 1 }).await.unwrap();
    let refused = health_until(&run, "refused", |t| t.last_error.is_some()).await;
    assert_eq!(
        refused.last_error_code.as_deref(),
        Some("UNIQUE_INDEX_POSSIBLE")
    );
    let error = refused.last_error.unwrap();
    assert!(
        error.contains("unique_index = false") && error.contains(&namespace),
        "{error}"
    );
    assert_eq!(count_numbered(&coll, "seq").await, 0);

    // Sharded on a hashed customer id (one global order number): the next attempt starts,
    // warns what is given up, and numbers without the index.
    catalog
        .insert_one(doc! { "_id": &namespace, "key": { "customerId": "hashed" }, "unique": false })
        .await
        .unwrap();
    wait_numbered(&coll, "seq", 1, Duration::from_secs(60)).await;
    let running = health_until(&run, "warning", |t| t.warning.is_some()).await;
    assert!(!running.unique_index);
    let warning = running.warning.unwrap();
    assert!(
        warning.contains("written by hand or by another tool is no longer refused")
            && warning.contains("mongo-seq check"),
        "{warning}"
    );
    let indexes = coll.list_index_names().await.unwrap();
    assert!(
        !indexes.contains(&"mongo_seq_seq".to_owned()),
        "{indexes:?}"
    );
    run.stop().await;

    // A number written by hand twice is not refused; `check` finds it.
    coll.insert_one(doc! { "i": 2, "seq": 1_i64 })
        .await
        .unwrap();
    let (code, out, err) = run_bin(&["check", "--config", path.to_str().unwrap()], &[]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(out.contains("1 duplicates"), "{out}");
    assert!(err.contains("numbers held twice"), "{err}");

    // With the index asked for (the default), the same shard key is refused by name, with
    // what to set.
    let cfg = config(&db, "name = \"orders\"", "");
    let run = start(cfg, options().await, false);
    let refused = health_until(&run, "refused", |t| t.last_error.is_some()).await;
    assert_eq!(
        refused.last_error_code.as_deref(),
        Some("UNIQUE_INDEX_REFUSED")
    );
    let error = refused.last_error.unwrap();
    assert!(
        error.contains("sharded on { customerId: \"hashed\" }")
            && error.contains("unique_index = false"),
        "{error}"
    );
    run.stop().await;
    catalog
        .delete_one(doc! { "_id": &namespace })
        .await
        .unwrap();
    plain.database(&db).drop().await.ok();
}
