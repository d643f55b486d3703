//! Counters that know their definition, through the Rust library against the
//! server (js/test/definitions.test.mjs): two services with different steps on one counter —
//! the second refused naming the option, nothing reserved, at no extra command on the hot path;
//! a tutorial counter given one; a counter written before digests recorded once, then numbered
//! by the digest alone; `adopt_definition` rewriting it on purpose.

use crate::common;

use common::setup;
use mongo_seq::{SequenceOptions, Sequences};
use mongodb::bson::{doc, Document};

type TestResult = Result<(), Box<dyn std::error::Error>>;

/// The digest of `{start: 1, step: 1}` (the first 16 hex digits of the SHA-256 of
/// `{"start":{"$numberLong":"1"},"step":{"$numberLong":"1"}}`).
const PLAIN_DIGEST: &str = "b1992bd103fd143e";

#[tokio::test]
async fn two_services_with_different_steps_the_second_is_refused_and_nothing_reserved() -> TestResult
{
    let s = setup("def_steps").await;
    let counters = s.db.collection::<Document>("counters");
    // Two services: two `Sequences` (one already refuses a name asked with other options).
    let first = Sequences::new(&s.db).sequence("invoices", None)?;
    let second =
        Sequences::new(&s.db).sequence("invoices", SequenceOptions::new().start(2).step(2))?;
    s.monitor.reset();
    assert_eq!(first.next().await?, 1);
    assert_eq!(
        s.monitor.count("findAndModify"),
        1,
        "one command, as before"
    );
    let before = counters.find_one(doc! { "_id": "invoices" }).await?;
    assert_eq!(
        before,
        Some(
            doc! { "_id": "invoices", "seq": 1_i64, "definition": { "start": 1_i64, "step": 1_i64 }, "definitionDigest": PLAIN_DIGEST }
        )
    );
    s.monitor.reset();
    let error = second.next().await.unwrap_err();
    assert_eq!(error.code(), Some("SEQUENCE_CONFLICT"), "{error}");
    let message = error.to_string();
    assert!(
        message.contains("`start` is 1 there and 2 here")
            && message.contains("stored definition {start: 1, step: 1}, ours {start: 2, step: 2}"),
        "{message}"
    );
    assert_eq!(
        s.monitor.snapshot().into_iter().collect::<Vec<_>>(),
        [("find".to_owned(), 1), ("findAndModify".to_owned(), 1)],
        "the update, then one read on the conflict path only"
    );
    assert_eq!(
        counters.find_one(doc! { "_id": "invoices" }).await?,
        before,
        "nothing reserved"
    );
    assert_eq!(first.next().await?, 2);
    s.drop_db().await;
    Ok(())
}

#[tokio::test]
async fn a_tutorial_counter_is_given_one_and_adopt_rewrites_it_on_purpose() -> TestResult {
    let s = setup("def_adopt").await;
    let counters = s.db.collection::<Document>("counters");
    counters
        .insert_one(doc! { "_id": "ids", "seq": 41_i64 })
        .await?;
    assert_eq!(s.seqs().sequence("ids", None)?.next().await?, 42);
    assert_eq!(
        counters.find_one(doc! { "_id": "ids" }).await?,
        Some(
            doc! { "_id": "ids", "seq": 42_i64, "definition": { "start": 1_i64, "step": 1_i64 }, "definitionDigest": PLAIN_DIGEST }
        )
    );
    let bounded = Sequences::new(&s.db).sequence("ids", SequenceOptions::new().max(1_000))?;
    assert_eq!(
        bounded.next().await.unwrap_err().code(),
        Some("SEQUENCE_CONFLICT")
    );
    let adopted = bounded.adopt_definition().await?;
    assert_eq!(adopted.counter_id, "ids");
    assert_eq!(
        adopted.previous,
        serde_json::json!({ "start": 1, "step": 1 })
    );
    assert_eq!(
        adopted.definition,
        serde_json::json!({ "start": 1, "step": 1, "max": 1000 })
    );
    assert_eq!(adopted.changed, ["max"]);
    let recorded = counters.find_one(doc! { "_id": "ids" }).await?.unwrap();
    assert_ne!(
        recorded.get_str("definitionDigest")?,
        PLAIN_DIGEST,
        "adopt rewrites the digest with the definition"
    );
    assert_eq!(bounded.next().await?, 43, "the number is left as it was");
    // A counter that does not exist: refused, nothing written.
    let missing = s
        .seqs()
        .sequence("missing", None)?
        .adopt_definition()
        .await
        .unwrap_err();
    assert_eq!(missing.code(), Some("INVALID_ARGUMENT"), "{missing}");
    assert!(missing.to_string().contains("does not exist"), "{missing}");
    assert_eq!(counters.count_documents(doc! {}).await?, 1);
    s.drop_db().await;
    Ok(())
}

#[tokio::test]
async fn a_counter_written_before_digests_is_recorded_once_then_numbered_by_the_digest(
) -> TestResult {
    let s = setup("def_digest").await;
    let counters = s.db.collection::<Document>("counters");
    // As the release before digests left it: the definition, no digest.
    counters
        .insert_one(
            doc! { "_id": "orders", "seq": 7_i64, "definition": { "start": 1_i64, "step": 1_i64 } },
        )
        .await?;
    let orders = s.seqs().sequence("orders", None)?;
    s.monitor.reset();
    assert_eq!(orders.next().await?, 8);
    assert_eq!(
        s.monitor.snapshot().into_iter().collect::<Vec<_>>(),
        [("find".to_owned(), 1), ("findAndModify".to_owned(), 2)],
        "the digest refuses it, the read finds our definition, the write records the digest"
    );
    assert_eq!(
        counters.find_one(doc! { "_id": "orders" }).await?,
        Some(
            doc! { "_id": "orders", "seq": 8_i64, "definition": { "start": 1_i64, "step": 1_i64 }, "definitionDigest": PLAIN_DIGEST }
        )
    );
    s.monitor.reset();
    assert_eq!(orders.next().await?, 9);
    assert_eq!(
        s.monitor.count("findAndModify"),
        1,
        "from then on one command"
    );
    // Another definition written before digests: refused, naming the option, nothing written.
    counters
        .insert_one(doc! { "_id": "tickets", "seq": 7_i64, "definition": { "start": 1_i64, "step": 2_i64 } })
        .await?;
    let before = counters.find_one(doc! { "_id": "tickets" }).await?;
    let error = s
        .seqs()
        .sequence("tickets", None)?
        .next()
        .await
        .unwrap_err();
    assert_eq!(error.code(), Some("SEQUENCE_CONFLICT"), "{error}");
    assert!(
        error.to_string().contains("`step` is 2 there and 1 here"),
        "{error}"
    );
    assert_eq!(counters.find_one(doc! { "_id": "tickets" }).await?, before);
    s.drop_db().await;
    Ok(())
}
