//! Voided numbers through the library (js/test/void.test.mjs): `Sequence::void` writes ledger
//! entries beside the counters; every refusal writes nothing.

use crate::common;

use common::{setup, snapshot};
use mongodb::bson::{doc, Document};

type TestResult = Result<(), Box<dyn std::error::Error>>;

#[tokio::test]
async fn a_void_records_each_number_and_every_refusal_writes_nothing() -> TestResult {
    let s = setup("lib_void").await;
    let seq = s.seqs().sequence("inv", None)?;
    let docs = s.db.collection::<Document>("inv");
    for _ in 0..4 {
        docs.insert_one(doc! { "no": seq.next().await? }).await?;
    }
    docs.delete_one(doc! { "no": 2 }).await?;
    let outcome = seq.void(&docs, "no", &[2], "cancelled", "alice").await?;
    assert_eq!(
        (outcome.counter_id.as_str(), outcome.numbers.as_slice()),
        ("inv", &[2][..])
    );
    let entry =
        s.db.collection::<Document>("mongo_seq_ledger")
            .find_one(doc! {})
            .await?
            .expect("an entry");
    assert_eq!(
        entry.get_document("_id")?,
        &doc! { "counter": "inv", "number": 2_i64 }
    );
    assert_eq!(
        (
            entry.get_str("kind")?,
            entry.get_str("reason")?,
            entry.get_str("by")?
        ),
        ("void", "cancelled", "alice")
    );
    assert_eq!(
        entry.get_datetime("at")?.timestamp_millis(),
        outcome.at_ms,
        "`at` is a BSON date"
    );
    let before = snapshot(&s.db).await;
    for (numbers, reason, code) in [
        (&[3][..], "r", "NUMBER_HELD"),
        (&[5][..], "r", "NUMBER_NOT_ISSUED"),
        (&[2][..], "r", "ALREADY_VOIDED"),
        (&[2, 4][..], "r", "NUMBER_HELD"),
        (&[2][..], " ", "INVALID_ARGUMENT"),
        (&[0][..], "r", "INVALID_ARGUMENT"),
    ] {
        let error = seq
            .void(&docs, "no", numbers, reason, "bob")
            .await
            .unwrap_err();
        assert_eq!(error.code(), Some(code), "{numbers:?}: {error}");
    }
    let missing = s.seqs().sequence("none", None)?;
    let error = missing
        .void(&docs, "no", &[1], "r", "bob")
        .await
        .unwrap_err();
    assert_eq!(error.code(), Some("NUMBER_NOT_ISSUED"));
    assert_eq!(snapshot(&s.db).await, before, "nothing written");
    s.drop_db().await;
    Ok(())
}

/// Every name the library reports for a counter is its `_id`: with `counter_id("shop.students")`
/// that string, not the sequence's name, in `counter_id()`, the void's outcome and its ledger entry.
#[tokio::test]
async fn a_counter_id_string_names_the_counter_everywhere() -> TestResult {
    let s = setup("lib_void_counter_id").await;
    let seq = s.seqs().sequence(
        "students",
        mongo_seq::SequenceOptions::new().counter_id("shop.students"),
    )?;
    assert_eq!(seq.counter_id()?, "shop.students");
    let docs = s.db.collection::<Document>("students");
    seq.next().await?;
    let outcome = seq.void(&docs, "_id", &[1], "lost", "alice").await?;
    assert_eq!(outcome.counter_id, "shop.students");
    let entry =
        s.db.collection::<Document>("mongo_seq_ledger")
            .find_one(doc! {})
            .await?
            .expect("an entry");
    assert_eq!(
        entry.get_document("_id")?,
        &doc! { "counter": "shop.students", "number": 1_i64 }
    );
    assert_eq!(entry.get_str("sequence")?, "students");
    Ok(())
}
