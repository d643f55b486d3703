//! Numbering on issue (`on = "match"`): drafts are inserted unnumbered, a document
//! gets its number when an update or a replace makes it match, exactly once, in the order
//! documents came to match; one that stops matching keeps it; a first start numbers what
//! already matches, in `backfill_sort` order. In-process, against the embedded server or
//! `MONGODB_URI`.

use crate::common;

use std::time::Duration;

use common::*;
use futures_util::TryStreamExt;
use mongodb::bson::{doc, Bson, Document};
use mongodb::Collection;

const WAIT: Duration = Duration::from_secs(60);
const ISSUED: &str = "on = \"match\"\nmatch = { status = \"issued\" }";

/// Every document, by `n`.
async fn all_by_n(coll: &Collection<Document>) -> Vec<Document> {
    coll.find(doc! {})
        .sort(doc! { "n": 1 })
        .await
        .unwrap()
        .try_collect()
        .await
        .unwrap()
}

/// `(n, seq)` of every document, by `n`.
async fn by_n(coll: &Collection<Document>) -> Vec<(i32, Option<i64>)> {
    all_by_n(coll)
        .await
        .iter()
        .map(|d| (d.get_i32("n").unwrap(), d.get_i64("seq").ok()))
        .collect()
}

async fn issue(coll: &Collection<Document>, n: i32) {
    coll.update_one(doc! { "n": n }, doc! { "$set": { "status": "issued" } })
        .await
        .unwrap();
}

/// Waits until nothing changes for a while (the stream read to its end), for the checks that
/// something did NOT happen.
async fn settle(coll: &Collection<Document>) {
    let mut last = by_n(coll).await;
    loop {
        tokio::time::sleep(Duration::from_millis(600)).await;
        let now = by_n(coll).await;
        if now == last {
            return;
        }
        last = now;
    }
}

async fn issued_in_order(gapless: bool) {
    let label = if gapless { "match_gapless" } else { "match" };
    let (db, _plain, coll) = test_db(label).await;
    let trigger = format!("{ISSUED}\ngapless = {gapless}");
    let run = start(config(&db, &trigger, ""), options().await, false);
    wait_running(&run).await;
    coll.insert_many((0..6).map(|n| doc! { "n": n, "status": "draft" }))
        .await
        .unwrap();
    // Edits of drafts that stay drafts: update events whose document does not match. (A draft
    // edited and then issued before the sidecar reads the edit's event is seen matching at
    // that edit: `updateLookup` reads the document when the event is read. CONFIG.md says so.)
    coll.update_many(
        doc! { "n": { "$in": [0, 3] } },
        doc! { "$set": { "total": 10 } },
    )
    .await
    .unwrap();
    settle(&coll).await;
    // Issued in the order 4, 1, 5 (an update), then 2 (a replace).
    for n in [4, 1, 5] {
        issue(&coll, n).await;
    }
    coll.replace_one(doc! { "n": 2 }, doc! { "n": 2, "status": "issued" })
        .await
        .unwrap();
    wait_numbered(&coll, "seq", 4, WAIT).await;
    // A numbered invoice edited again, even issued again, keeps its number; one that stops
    // matching (cancelled) keeps it too.
    issue(&coll, 4).await;
    coll.update_one(doc! { "n": 1 }, doc! { "$set": { "status": "cancelled" } })
        .await
        .unwrap();
    coll.update_one(doc! { "n": 5 }, doc! { "$set": { "total": 12 } })
        .await
        .unwrap();
    settle(&coll).await;
    let expected = vec![
        (0, None),
        (1, Some(2)),
        (2, Some(4)),
        (3, None),
        (4, Some(1)),
        (5, Some(3)),
    ];
    assert_eq!(
        by_n(&coll).await,
        expected,
        "drafts unnumbered, issued in order"
    );
    // Issued later: the next number.
    issue(&coll, 0).await;
    wait_numbered(&coll, "seq", 5, WAIT).await;
    run.stop().await;
    assert_eq!(by_n(&coll).await[0], (0, Some(5)));
    assert_eq!(numbers(&coll, "seq").await, vec![1, 2, 3, 4, 5]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_document_is_numbered_once_when_it_comes_to_match_and_keeps_its_number() {
    issued_in_order(false).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gapless_numbers_documents_in_the_order_they_came_to_match() {
    issued_in_order(true).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_first_start_numbers_what_already_matches_in_backfill_sort_order() {
    let (db, _plain, coll) = test_db("match_backfill").await;
    // Issued before any sidecar ran, `issuedAt` in the order 3, 0, 2; 1 a draft.
    let at = |ms: i64| Bson::DateTime(mongodb::bson::DateTime::from_millis(ms));
    coll.insert_many([
        doc! { "n": 0, "status": "issued", "issuedAt": at(2_000) },
        doc! { "n": 1, "status": "draft" },
        doc! { "n": 2, "status": "issued", "issuedAt": at(3_000) },
        doc! { "n": 3, "status": "issued", "issuedAt": at(1_000) },
    ])
    .await
    .unwrap();
    let trigger = format!("{ISSUED}\ngapless = true\nbackfill_sort = \"issuedAt\"");
    let run = start(
        config(&db, &trigger, "batch_size = 2"),
        options().await,
        false,
    );
    wait_running(&run).await;
    issue(&coll, 1).await;
    wait_numbered(&coll, "seq", 4, WAIT).await;
    run.stop().await;
    assert_eq!(
        by_n(&coll).await,
        vec![(0, Some(2)), (1, Some(4)), (2, Some(3)), (3, Some(1))]
    );
}

/// `(n, seq, seqPeriod, invoiceNo)` of every document, by `n`.
async fn periods(coll: &Collection<Document>) -> Vec<(i32, i64, String, String)> {
    all_by_n(coll)
        .await
        .iter()
        .map(|d| {
            (
                d.get_i32("n").unwrap(),
                d.get_i64("seq").unwrap_or(-1),
                d.get_str("seqPeriod").unwrap_or("-").to_owned(),
                d.get_str("invoiceNo").unwrap_or("-").to_owned(),
            )
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_yearly_series_issued_across_new_year_in_paris_lands_in_both_years() {
    let (db, _plain, coll) = test_db("match_yearly").await;
    let trigger = format!(
        "{ISSUED}\ngapless = true\nsequence = \"invoices\"\nreset = \"yearly\"\ntime_zone = \"Europe/Paris\"\nformat = \"INV-{{yyyy}}-{{seq:06}}\"\nformat_field = \"invoiceNo\"\ndate_field = \"issuedAt\""
    );
    let run = start(config(&db, &trigger, ""), options().await, false);
    wait_running(&run).await;
    // 2026-12-31T22:59:59.999Z is 23:59:59.999 in Paris (UTC+1), the next ms is 2027.
    let new_year_ms: i64 = 1_798_758_000_000;
    let at = |ms: i64| Bson::DateTime(mongodb::bson::DateTime::from_millis(ms));
    let offsets = [-60_000, -1, 0, -30_000, 1];
    coll.insert_many(offsets.iter().enumerate().map(
        |(n, off)| doc! { "n": n as i32, "status": "draft", "issuedAt": at(new_year_ms + off) },
    ))
    .await
    .unwrap();
    // Issued (processed) in the order 0, 2, 1, 4, 3: each in the series of its own year, even
    // December's issued after January's.
    for n in [0, 2, 1, 4, 3] {
        issue(&coll, n).await;
    }
    wait_numbered(&coll, "seq", 5, WAIT).await;
    run.stop().await;
    let expected: Vec<(i32, i64, String, String)> = [
        (0, 1, "2026"),
        (1, 2, "2026"),
        (2, 1, "2027"),
        (3, 3, "2026"),
        (4, 2, "2027"),
    ]
    .into_iter()
    .map(|(n, seq, year)| (n, seq, year.to_owned(), format!("INV-{year}-{seq:06}")))
    .collect();
    assert_eq!(periods(&coll).await, expected);
}
