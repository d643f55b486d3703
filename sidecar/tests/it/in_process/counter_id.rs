//! A trigger numbering on a counter whose `_id` is a document — the Atlas trigger recipe's
//! `{ db, coll }`, adopted in place with `counter_id` and `counter_field` — in both modes: the
//! lease stamps it, a pending gapless intent on it is completed, nothing else is created.

use crate::common;

use std::time::Duration;

use common::*;
use futures_util::TryStreamExt;
use mongodb::bson::{doc, Document};
use mongodb::Collection;

const WAIT: Duration = Duration::from_secs(60);

fn atlas_config(db: &str, gapless: bool) -> String {
    config_toml(
        db,
        &format!(
            "sequence = \"students\"\ncounter_id = {{ db = \"shop\", coll = \"students\" }}\ncounter_field = \"seq_value\"\ngapless = {gapless}"
        ),
        "",
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_document_counter_id_is_numbered_on_in_place_in_both_modes() {
    for gapless in [false, true] {
        let (db, plain, coll) = test_db(if gapless {
            "cid_gapless"
        } else {
            "cid_default"
        })
        .await;
        let counters: Collection<Document> = plain.database(&db).collection("counters");
        let atlas = doc! { "db": "shop", "coll": "students" };
        counters
            .insert_one(doc! { "_id": atlas.clone(), "seq_value": 500_i64 })
            .await
            .unwrap();
        let cfg = mongo_seq_sidecar::config::parse(&atlas_config(&db, gapless), "test").unwrap();
        let run = start(cfg, options().await, false);
        wait_running(&run).await;
        coll.insert_many((0..3).map(|i| doc! { "i": i }))
            .await
            .unwrap();
        wait_numbered(&coll, "seq", 3, WAIT).await;
        run.stop().await;
        let all: Vec<Document> = counters
            .find(doc! {})
            .await
            .unwrap()
            .try_collect()
            .await
            .unwrap();
        assert_eq!(
            numbers(&coll, "seq").await,
            vec![501, 502, 503],
            "gapless {gapless}: {all:?}"
        );
        assert_eq!(all.len(), 1, "no other counter: {all:?}");
        let counter = &all[0];
        assert_eq!(
            counter.get_document("_id").unwrap(),
            &atlas,
            "the _id kept, fields in order"
        );
        assert_eq!(counter.get_i64("seq_value").unwrap(), 503, "{counter}");
        assert!(
            counter.get("seq").is_none(),
            "the recipe's shape is kept: {counter}"
        );
        assert!(
            counter.get_i64("epoch").unwrap() >= 1,
            "the lease stamped it: {counter}"
        );
        assert!(counter.get("intent").is_none(), "{counter}");
        plain.database(&db).drop().await.ok();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pending_intent_on_a_document_counter_id_is_completed_first() {
    let (db, plain, coll) = test_db("cid_pending").await;
    let counters: Collection<Document> = plain.database(&db).collection("counters");
    let atlas = doc! { "db": "shop", "coll": "students" };
    // An interrupted holder reserved 501 for this document and died before writing it.
    coll.insert_one(doc! { "_id": "left", "i": 0 })
        .await
        .unwrap();
    counters
        .insert_one(doc! {
            "_id": atlas.clone(),
            "seq_value": 501_i64,
            "epoch": 1_i64,
            "intent": { "first": 501_i64, "count": 1_i64, "ids": ["left"], "epoch": 1_i64 },
        })
        .await
        .unwrap();
    let cfg = mongo_seq_sidecar::config::parse(&atlas_config(&db, true), "test").unwrap();
    let run = start(cfg, options().await, false);
    wait_running(&run).await;
    coll.insert_one(doc! { "_id": "next", "i": 1 })
        .await
        .unwrap();
    wait_numbered(&coll, "seq", 2, WAIT).await;
    run.stop().await;
    let left = coll
        .find_one(doc! { "_id": "left" })
        .await
        .unwrap()
        .unwrap();
    let next = coll
        .find_one(doc! { "_id": "next" })
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (left.get_i64("seq").unwrap(), next.get_i64("seq").unwrap()),
        (501, 502)
    );
    let counter = counters
        .find_one(doc! { "_id": atlas })
        .await
        .unwrap()
        .unwrap();
    assert!(counter.get("intent").is_none(), "{counter}");
    assert_eq!(counter.get_i64("seq_value").unwrap(), 502, "{counter}");
    plain.database(&db).drop().await.ok();
}
