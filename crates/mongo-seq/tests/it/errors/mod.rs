//! Bad input (js/test/errors.test.mjs): every case fails with its code, a message that explains
//! and leaks nothing, before anything is written (the database is compared before and after).
//! What Rust's types rule out (a name that is not a string, options that are not an object) is
//! checked where it can still happen: configuration files.

use crate::common;

mod fields;
mod misuse;
use std::collections::BTreeMap;

use common::{assert_refused, counter, nothing};
use mongo_seq::{InsertOptions, OptimisticOptions, SequenceOptions, Sequences};
use mongodb::bson::{doc, Bson, Document};

#[tokio::test]
async fn an_unknown_option_in_a_configuration_is_unknown_option_naming_the_key() {
    let error = SequenceOptions::try_from(serde_json::json!({ "colour": "red" })).unwrap_err();
    assert_eq!(error.code(), Some("UNKNOWN_OPTION"));
    assert_eq!(error.details().unwrap()["key"], "colour");
    let toml =
        toml::from_str::<BTreeMap<String, SequenceOptions>>("[orders]\nblok = 10\n").unwrap_err();
    assert!(toml.to_string().contains("unknown option `blok`"), "{toml}");
    let insert = serde_json::from_value::<InsertOptions>(
        serde_json::json!({ "sequence": "a", "feild": "_id" }),
    );
    assert!(insert.unwrap_err().to_string().contains("feild"));
}

#[tokio::test]
async fn option_values_are_checked_before_any_io() {
    let cases = [
        ("zero_step", SequenceOptions::new().step(0), "INVALID_STEP"),
        ("block_0", SequenceOptions::new().block(0), "INVALID_OPTION"),
        (
            "block_huge",
            SequenceOptions::new().block(1_000_001),
            "INVALID_OPTION",
        ),
        (
            "ahead_block_1",
            SequenceOptions::new().refill_ahead(true),
            "INVALID_OPTION",
        ),
        (
            "bounds",
            SequenceOptions::new().min(5).max(4),
            "INVALID_BOUNDS",
        ),
        (
            "start_outside",
            SequenceOptions::new().start(0).min(1),
            "INVALID_BOUNDS",
        ),
        (
            "start_minus_step",
            SequenceOptions::new().start(i64::MIN),
            "INVALID_OPTION",
        ),
        (
            "scope_twice",
            SequenceOptions::new().scope(["t", "t"]),
            "INVALID_SCOPE",
        ),
        (
            "scope_dollar",
            SequenceOptions::new().scope(["$t"]),
            "INVALID_SCOPE",
        ),
        (
            "format",
            SequenceOptions::new().format("INV-{id}"),
            "INVALID_FORMAT",
        ),
        (
            "counter_field",
            SequenceOptions::new().counter_field("a.b"),
            "INVALID_OPTION",
        ),
        (
            "counter_field_id",
            SequenceOptions::new().counter_field("_id"),
            "INVALID_OPTION",
        ),
        (
            "counter_id_scoped",
            SequenceOptions::new().scope(["t"]).counter_id("x"),
            "INVALID_OPTION",
        ),
        (
            "counter_id_number",
            SequenceOptions::new().counter_id(5),
            "INVALID_OPTION",
        ),
    ];
    for (label, options, code) in cases {
        let error = assert_refused(
            label,
            code,
            |seqs, _| async move { seqs.sequence("userid", options).map(drop) },
            nothing,
        )
        .await;
        assert!(error.to_string().len() > 20, "{label}: {error}");
    }
}

#[tokio::test]
async fn a_malformed_counter_is_reported_and_never_written() {
    for (label, seq, options) in [
        (
            "string_bounded",
            Bson::from("forty-two"),
            SequenceOptions::new().max(1000),
        ),
        (
            "fraction_default",
            Bson::Double(1.5),
            SequenceOptions::new(),
        ),
        ("string_default", Bson::from("12"), SequenceOptions::new()),
    ] {
        assert_refused(
            label,
            "MALFORMED_COUNTER",
            |seqs, _| async move { seqs.sequence("userid", options)?.next().await.map(drop) },
            counter(doc! { "_id": "userid", "seq": seq }),
        )
        .await;
    }
    assert_refused(
        "fraction_current",
        "MALFORMED_COUNTER",
        |seqs, _| async move {
            seqs.sequence("userid", SequenceOptions::new().max(1000))?
                .current()
                .await
                .map(drop)
        },
        counter(doc! { "_id": "userid", "seq": 1.5 }),
    )
    .await;
}

#[tokio::test]
async fn past_the_bound_is_sequence_exhausted_for_next_next_many_and_insert_many() {
    let at_max = || counter(doc! { "_id": "userid", "seq": 10 });
    let error = assert_refused(
        "max_next",
        "SEQUENCE_EXHAUSTED",
        |seqs, _| async move {
            seqs.sequence("userid", SequenceOptions::new().max(10))?
                .next()
                .await
                .map(drop)
        },
        at_max(),
    )
    .await;
    assert_eq!(error.details().unwrap()["bound"], 10);
    assert_refused(
        "max_many",
        "SEQUENCE_EXHAUSTED",
        |seqs, _| async move {
            seqs.sequence("userid", SequenceOptions::new().max(12))?
                .next_many(5)
                .await
                .map(drop)
        },
        at_max(),
    )
    .await;
    assert_refused(
        "max_insert_many",
        "SEQUENCE_EXHAUSTED",
        |seqs, db| async move {
            seqs.sequence("userid", SequenceOptions::new().max(12))?;
            let docs = [doc! {}, doc! {}, doc! {}];
            seqs.insert_many(
                &db.collection::<Document>("users"),
                docs,
                InsertOptions::new("userid").field("n"),
            )
            .await
            .map(drop)
        },
        at_max(),
    )
    .await;
    assert_refused(
        "max_set_next",
        "OUT_OF_BOUNDS",
        |seqs, _| async move {
            seqs.sequence("userid", SequenceOptions::new().max(10))?
                .set_next(11)
                .await
                .map(drop)
        },
        nothing,
    )
    .await;
    assert_refused(
        "off_grid",
        "INVALID_ARGUMENT",
        |seqs, _| async move {
            seqs.sequence("userid", SequenceOptions::new().step(10))?
                .set_next(15)
                .await
                .map(drop)
        },
        nothing,
    )
    .await;
}

#[tokio::test]
async fn a_bad_sequence_name_is_invalid_name() {
    for name in ["", " padded", "a/b", "tab\there", &"x".repeat(201)] {
        let error = assert_refused(
            &format!("name_{}", name.len()),
            "INVALID_NAME",
            |seqs, _| async move { seqs.sequence(name, None)?.next().await.map(drop) },
            nothing,
        )
        .await;
        assert_eq!(error.details().unwrap()["name"], name);
    }
    // A name in the options must be the one given.
    let named = SequenceOptions::try_from(serde_json::json!({ "name": "other" })).unwrap();
    assert_refused(
        "name_differs",
        "INVALID_OPTION",
        |seqs, _| async move { seqs.sequence("userid", named).map(drop) },
        nothing,
    )
    .await;
}

#[tokio::test]
async fn a_missing_scope_value_is_refused_by_every_insert() {
    let scoped =
        |seqs: &Sequences| seqs.sequence("invoice", SequenceOptions::new().scope(["tenant"]));
    assert_refused(
        "scope_one",
        "MISSING_SCOPE_FIELD",
        |seqs, db| async move {
            scoped(&seqs)?;
            seqs.insert_one(
                &db.collection::<Document>("invoices"),
                doc! { "amount": 5 },
                "invoice",
            )
            .await
            .map(drop)
        },
        nothing,
    )
    .await;
    let error = assert_refused(
        "scope_many",
        "MISSING_SCOPE_FIELD",
        |seqs, db| async move {
            scoped(&seqs)?;
            // The bad document is the last one: nothing may be reserved or inserted for the others.
            let docs = [
                doc! { "tenant": "a" },
                doc! { "tenant": "b" },
                doc! { "amount": 1 },
            ];
            seqs.insert_many(&db.collection::<Document>("invoices"), docs, "invoice")
                .await
                .map(drop)
        },
        nothing,
    )
    .await;
    assert_eq!(error.details().unwrap()["field"], "tenant");
    assert_refused(
        "scope_optimistic",
        "MISSING_SCOPE_FIELD",
        |seqs, db| async move {
            let invoice = scoped(&seqs)?;
            seqs.insert_optimistic(
                &db.collection::<Document>("invoices"),
                doc! { "amount": 5 },
                OptimisticOptions::new().sequence(&invoice),
            )
            .await
            .map(drop)
        },
        nothing,
    )
    .await;
    assert_refused(
        "scope_value",
        "INVALID_SCOPE_VALUE",
        |seqs, db| async move {
            scoped(&seqs)?;
            seqs.insert_one(
                &db.collection::<Document>("invoices"),
                doc! { "tenant": ["a"] },
                "invoice",
            )
            .await
            .map(drop)
        },
        nothing,
    )
    .await;
}
