//! Large batches (js/test/batches.test.mjs): a batch never reserves numbers it cannot hand
//! back. Sizes up to the documented limit (1,000,000 numbers per call) work, in one reservation;
//! larger ones are refused before any command is sent, so no number is burnt.

use crate::common;

use common::{assert_refused, nothing, setup};
use mongo_seq::{InsertOptions, SequenceOptions, Sequences};
use mongodb::bson::{doc, Document};

type TestResult = Result<(), Box<dyn std::error::Error>>;

const LIMIT: u64 = 1_000_000;

#[tokio::test]
async fn next_many_of_200_000_returns_every_number_in_order_with_one_reservation() -> TestResult {
    let s = setup("batch_many").await;
    let ids = s
        .seqs()
        .sequence("ids", SequenceOptions::new().block(100))?;
    assert_eq!(ids.next().await?, 1);
    s.monitor.reset();
    let many = ids.next_many(200_000).await?;
    assert_eq!(s.monitor.count("findAndModify"), 1);
    assert_eq!(many, (2..=200_001).collect::<Vec<_>>());
    assert_eq!(ids.current().await?, Some(200_001));
    s.drop_db().await;
    Ok(())
}

#[tokio::test]
async fn next_many_at_the_limit_works_and_beyond_it_nothing_is_reserved() -> TestResult {
    let s = setup("batch_limit").await;
    let ids = s.seqs().sequence("ids", None)?;
    let all = ids.next_many(LIMIT).await?;
    assert_eq!(
        (all.len() as u64, all.last()),
        (LIMIT, Some(&(LIMIT as i64)))
    );
    for count in [LIMIT + 1, 1_000_000_000, u64::MAX] {
        let error =
            assert_refused(
                &format!("batch_over_{count}"),
                "INVALID_ARGUMENT",
                move |seqs, _| async move {
                    seqs.sequence("ids", None)?.next_many(count).await.map(drop)
                },
                nothing,
            )
            .await;
        let message = error.to_string();
        assert!(
            message.contains("count") && message.contains("1000000"),
            "{message}"
        );
    }
    // A sequence holding a block refuses too, without dropping what it holds.
    let blocked = s
        .seqs()
        .sequence("blocked", SequenceOptions::new().block(10))?;
    assert_eq!(blocked.next().await?, 1);
    let error = blocked.next_many(LIMIT + 1).await.unwrap_err();
    assert_eq!(error.code(), Some("INVALID_ARGUMENT"));
    assert_eq!(blocked.next().await?, 2, "the block in hand is intact");
    s.drop_db().await;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn insert_many_of_200_000_documents_numbers_them_in_order_with_one_reservation() -> TestResult
{
    let s = setup("batch_insert").await;
    let orders = s.db.collection::<Document>("orders");
    let documents = (0..200_000).map(|i| doc! { "i": i });
    s.monitor.reset();
    let result = Sequences::new(&s.db)
        .insert_many(&orders, documents, InsertOptions::new("orders").field("n"))
        .await?;
    assert_eq!(s.monitor.count("findAndModify"), 1);
    assert_eq!(result.values, (1..=200_000).collect::<Vec<_>>());
    assert_eq!(orders.count_documents(doc! {}).await?, 200_000);
    let last = orders
        .find_one(doc! {})
        .sort(doc! { "n": -1 })
        .await?
        .ok_or("no document")?;
    assert_eq!((last.get_i32("i")?, last.get_i64("n")?), (199_999, 200_000));
    s.drop_db().await;
    Ok(())
}

#[tokio::test]
async fn insert_many_beyond_the_limit_is_refused_before_anything_is_reserved_or_inserted() {
    let error = assert_refused(
        "batch_insert_over",
        "INVALID_ARGUMENT",
        |seqs, db| async move {
            let documents = std::iter::repeat_n(doc! {}, LIMIT as usize + 1);
            seqs.insert_many(&db.collection::<Document>("orders"), documents, "orders")
                .await
                .map(drop)
        },
        nothing,
    )
    .await;
    let message = error.to_string();
    assert!(
        message.contains("`documents`") && message.contains("at most 1000000"),
        "{message}"
    );
}
