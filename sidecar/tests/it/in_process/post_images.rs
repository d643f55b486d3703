//! Numbering on issue with post-images (`post_images = true`): each update event brings the
//! document as that update left it, so documents are numbered exactly in the order they came to
//! match — even a draft edited and then issued before the trigger reads the edit's event, which
//! `updateLookup` sees matching at the edit (CONFIG.md, *Order*). In-process, against the
//! embedded server (patched for post-images) or `MONGODB_URI` (MongoDB 6.0+).

use crate::common;

use std::time::Duration;

use common::*;
use futures_util::TryStreamExt;
use mongodb::bson::{doc, Document};
use mongodb::Collection;

const WAIT: Duration = Duration::from_secs(60);

async fn numbers(coll: &Collection<Document>) -> Vec<(String, Option<i64>)> {
    let found: Vec<Document> = coll
        .find(doc! {})
        .sort(doc! { "_id": 1 })
        .await
        .unwrap()
        .try_collect()
        .await
        .unwrap();
    found
        .iter()
        .map(|d| (d.get_str("_id").unwrap().to_owned(), d.get_i64("seq").ok()))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_edit_before_the_issue_does_not_reorder_the_numbers() {
    let (db, plain, coll) = test_db("post_images").await;
    create_with_images(&plain, &db, coll.name()).await;
    let trigger =
        "on = \"match\"\nmatch = { status = \"issued\" }\npost_images = true\ngapless = true";
    let run = start(config(&db, trigger, ""), options().await, false);
    wait_running(&run).await;
    coll.insert_many([
        doc! { "_id": "a", "status": "draft" },
        doc! { "_id": "b", "status": "draft" },
    ])
    .await
    .unwrap();
    // In one command: `a` edited (still a draft), `b` issued, then `a` issued. The trigger reads
    // the three events after all of them: a lookup would show `a` issued at its edit, numbering
    // it first; its post-image shows the draft, so `b`, issued first, is numbered first.
    plain
        .database(&db)
        .run_command(doc! {
            "update": coll.name(),
            "updates": [
                { "q": { "_id": "a" }, "u": { "$set": { "total": 10 } } },
                { "q": { "_id": "b" }, "u": { "$set": { "status": "issued" } } },
                { "q": { "_id": "a" }, "u": { "$set": { "status": "issued" } } },
            ],
        })
        .await
        .unwrap();
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        let now = numbers(&coll).await;
        if now.iter().all(|(_, n)| n.is_some()) {
            assert_eq!(now, [("a".to_owned(), Some(2)), ("b".to_owned(), Some(1))]);
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "not numbered: {now:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    run.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_update_without_a_post_image_is_numbered_as_after_lost_history() {
    // The collection does not keep images: the issue's event has no post-image, and the stream
    // cannot read past it. The trigger backfills what matches and reads on from now.
    let (db, _plain, coll) = test_db("post_images_off").await;
    coll.insert_one(doc! { "_id": "a", "status": "draft" })
        .await
        .unwrap();
    let trigger = "on = \"match\"\nmatch = { status = \"issued\" }\npost_images = true";
    let run = start(config(&db, trigger, ""), options().await, false);
    wait_running(&run).await;
    coll.update_one(doc! { "_id": "a" }, doc! { "$set": { "status": "issued" } })
        .await
        .unwrap();
    let deadline = tokio::time::Instant::now() + WAIT;
    while numbers(&coll).await != [("a".to_owned(), Some(1))] {
        assert!(
            tokio::time::Instant::now() < deadline,
            "not numbered: {:?}",
            numbers(&coll).await
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // Read on from now: a later issue is numbered from the stream.
    coll.insert_one(doc! { "_id": "b", "status": "issued" })
        .await
        .unwrap();
    while numbers(&coll).await.get(1).and_then(|(_, n)| *n) != Some(2) {
        assert!(
            tokio::time::Instant::now() < deadline,
            "not numbered: {:?}",
            numbers(&coll).await
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    run.stop().await;
}

#[test]
fn post_images_need_numbering_on_match() {
    let path = std::env::temp_dir().join(format!("post-images-{}.toml", std::process::id()));
    std::fs::write(
        &path,
        "[mongodb]\nuri = \"mongodb://127.0.0.1:1\"\n[[trigger]]\ndatabase = \"d\"\ncollection = \"c\"\nfield = \"seq\"\npost_images = true\n",
    )
    .unwrap();
    let (code, out, err) = run_bin(
        &[
            "sidecar",
            "--config",
            path.to_str().unwrap(),
            "--check-config",
        ],
        &[],
    );
    assert_eq!(code, 2, "{out}{err}");
    assert!(
        err.contains("post_images") && err.contains("on = \"match\""),
        "{err}"
    );
}
