//! Bad input (js/test/errors.test.mjs), continued: misuse of the API and values that are not
//! documents; each refused with its code before anything is written.

use crate::common;

use std::time::Duration;

use common::{assert_refused, nothing};
use mongo_seq::{
    CounterSource, ImportOptions, InsertOptions, OptimisticOptions, SequenceOptions, Sequences,
    WaitOptions,
};
use mongodb::bson::{doc, Document};
use serde::Serialize;

#[tokio::test]
async fn other_misuse_is_refused_with_a_code() {
    assert_refused(
        "format_field",
        "INVALID_ARGUMENT",
        |seqs, db| async move {
            seqs.insert_one(
                &db.collection::<Document>("users"),
                doc! {},
                InsertOptions::new("plain").format_field("code"),
            )
            .await
            .map(drop)
        },
        nothing,
    )
    .await;
    assert_refused(
        "conflict",
        "SEQUENCE_CONFLICT",
        |seqs, _| async move {
            seqs.sequence("userid", SequenceOptions::new().block(10))?;
            seqs.sequence("userid", SequenceOptions::new().block(20))
                .map(drop)
        },
        nothing,
    )
    .await;
    assert_refused(
        "bad_field",
        "INVALID_ARGUMENT",
        |seqs, db| async move {
            seqs.insert_optimistic(
                &db.collection::<Document>("users"),
                doc! {},
                OptimisticOptions::new().field("a.b"),
            )
            .await
            .map(drop)
        },
        nothing,
    )
    .await;
    assert_refused(
        "max_attempts",
        "INVALID_OPTION",
        |seqs, db| async move {
            seqs.insert_optimistic(
                &db.collection::<Document>("users"),
                doc! {},
                OptimisticOptions::new().max_attempts(0),
            )
            .await
            .map(drop)
        },
        nothing,
    )
    .await;
    assert_refused(
        "count",
        "INVALID_ARGUMENT",
        |seqs, _| async move {
            seqs.sequence("userid", None)?
                .next_many(1_000_001)
                .await
                .map(drop)
        },
        nothing,
    )
    .await;
    assert_refused(
        "too_many_docs",
        "INVALID_ARGUMENT",
        |seqs, db| async move {
            let docs = std::iter::repeat_n(doc! {}, 1_000_001);
            seqs.insert_many(&db.collection::<Document>("users"), docs, "userid")
                .await
                .map(drop)
        },
        nothing,
    )
    .await;
    for (label, name) in [
        ("empty", ""),
        ("dollar", "a$b"),
        ("system", "system.users"),
        ("nul", "a\0b"),
    ] {
        assert_refused(
            &format!("collection_{label}"),
            "INVALID_OPTION",
            |_, db| async move { Sequences::builder(&db).collection(name).build().map(drop) },
            nothing,
        )
        .await;
    }
    assert_refused(
        "wait_field",
        "INVALID_ARGUMENT",
        |seqs, db| async move {
            seqs.wait_for_number(
                &db.collection::<Document>("users"),
                1,
                WaitOptions::new().field("$n"),
            )
            .await
            .map(drop)
        },
        nothing,
    )
    .await;
    assert_refused(
        "wait_poll",
        "INVALID_OPTION",
        |seqs, db| async move {
            seqs.wait_for_number(
                &db.collection::<Document>("users"),
                1,
                WaitOptions::new().poll(Duration::ZERO),
            )
            .await
            .map(drop)
        },
        nothing,
    )
    .await;
    assert_refused(
        "import_names",
        "INVALID_OPTION",
        |seqs, _| async move {
            seqs.import_counters(
                ImportOptions::new(CounterSource::AutoIncrement)
                    .apply(true)
                    .name("Nobody._id", "x"),
            )
            .await
            .map(drop)
        },
        |db: mongodb::Database| async move {
            db.collection::<Document>("identitycounters")
                .insert_one(doc! { "model": "User", "field": "_id", "count": 4 })
                .await
                .expect("seed");
        },
    )
    .await;
}

/// What a caller may hand the driver as a document but BSON cannot store as one.
#[derive(Serialize)]
struct Overflowing {
    n: u64,
}

#[tokio::test]
async fn inserting_what_is_not_a_document_writes_nothing() {
    macro_rules! not_a_document {
        ($label:expr, $ty:ty, $value:expr) => {{
            let error = assert_refused(
                &format!("doc_one_{}", $label),
                "INVALID_ARGUMENT",
                |seqs, db| async move {
                    seqs.insert_one(&db.collection::<$ty>("users"), $value, "userid")
                        .await
                        .map(drop)
                },
                nothing,
            )
            .await;
            assert_eq!(error.details().unwrap()["argument"], "doc", "{error}");
            assert_refused(
                &format!("doc_opt_{}", $label),
                "INVALID_ARGUMENT",
                |seqs, db| async move {
                    seqs.insert_optimistic(&db.collection::<$ty>("users"), $value, None)
                        .await
                        .map(drop)
                },
                nothing,
            )
            .await;
            let many = assert_refused(
                &format!("doc_many_{}", $label),
                "INVALID_ARGUMENT",
                |seqs, db| async move {
                    seqs.insert_many(&db.collection::<$ty>("users"), [$value, $value], "userid")
                        .await
                        .map(drop)
                },
                nothing,
            )
            .await;
            assert_eq!(
                many.details().unwrap()["argument"],
                "documents[0]",
                "{many}"
            );
        }};
    }
    not_a_document!("number", i64, 5);
    not_a_document!("string", String, "x".to_owned());
    not_a_document!("array", Vec<Document>, vec![doc! { "a": 1 }]);
    not_a_document!("none", Option<Document>, None);
    not_a_document!("unit", (), ());
    not_a_document!("u64", Overflowing, Overflowing { n: u64::MAX });
    let huge = doc! { "blob": "x".repeat(16 * 1024 * 1024) };
    let error = assert_refused(
        "doc_huge",
        "INVALID_ARGUMENT",
        |seqs, db| async move {
            seqs.insert_one(&db.collection::<Document>("users"), huge, "userid")
                .await
                .map(drop)
        },
        nothing,
    )
    .await;
    assert!(error.to_string().contains("16 MiB"), "{error}");
    let fits = doc! { "blob": "x".repeat(1024) };
    let many = assert_refused(
        "doc_many_second",
        "INVALID_ARGUMENT",
        |seqs, db| async move {
            let huge = doc! { "blob": "x".repeat(16 * 1024 * 1024) };
            seqs.insert_many(&db.collection::<Document>("users"), [fits, huge], "userid")
                .await
                .map(drop)
        },
        nothing,
    )
    .await;
    assert_eq!(
        many.details().unwrap()["argument"],
        "documents[1]",
        "{many}"
    );
}
