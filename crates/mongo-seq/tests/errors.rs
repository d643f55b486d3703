//! Bad input (js/test/errors.test.mjs): every case fails with its code, a message that explains
//! and leaks nothing, before anything is written (the database is compared before and after).
//! What Rust's types rule out (a name that is not a string, options that are not an object) is
//! checked where it can still happen: configuration files.

mod common;

use std::collections::BTreeMap;
use std::time::Duration;

use common::{assert_refused, counter, nothing};
use mongo_seq::{
    CounterSource, ImportOptions, InsertOptions, OptimisticOptions, SequenceOptions, Sequences,
    WaitOptions,
};
use mongodb::bson::{doc, Bson, Document};
use serde::Serialize;

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
            let docs = std::iter::repeat(doc! {}).take(1_000_001);
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

#[tokio::test]
async fn a_field_that_cannot_be_written_is_refused_by_every_insert_and_the_seed() {
    let long = "x".repeat(1025);
    for (index, field) in ["$n", "", "a.b", ".a", "a\0b", long.as_str()]
        .into_iter()
        .enumerate()
    {
        let check = |error: mongo_seq::Error| {
            assert_eq!(error.details().unwrap()["argument"], "field", "{error}")
        };
        check(
            assert_refused(
                &format!("field_one_{index}"),
                "INVALID_ARGUMENT",
                |seqs, db| async move {
                    seqs.insert_one(
                        &db.collection::<Document>("users"),
                        doc! {},
                        InsertOptions::new("userid").field(field),
                    )
                    .await
                    .map(drop)
                },
                nothing,
            )
            .await,
        );
        check(
            assert_refused(
                &format!("field_many_{index}"),
                "INVALID_ARGUMENT",
                |seqs, db| async move {
                    seqs.insert_many(
                        &db.collection::<Document>("users"),
                        [doc! {}],
                        InsertOptions::new("userid").field(field),
                    )
                    .await
                    .map(drop)
                },
                nothing,
            )
            .await,
        );
        check(
            assert_refused(
                &format!("field_opt_{index}"),
                "INVALID_ARGUMENT",
                |seqs, db| async move {
                    seqs.insert_optimistic(
                        &db.collection::<Document>("users"),
                        doc! {},
                        OptimisticOptions::new().field(field),
                    )
                    .await
                    .map(drop)
                },
                nothing,
            )
            .await,
        );
        if field != "a.b" {
            check(
                assert_refused(
                    &format!("field_seed_{index}"),
                    "INVALID_ARGUMENT",
                    |seqs, db| async move {
                        seqs.sequence("userid", None)?
                            .seed_from_collection(&db.collection::<Document>("users"), field)
                            .await
                            .map(drop)
                    },
                    nothing,
                )
                .await,
            );
        }
        let format = assert_refused(
            &format!("format_field_{index}"),
            "INVALID_ARGUMENT",
            |seqs, db| async move {
                let inv = seqs.sequence("inv", SequenceOptions::new().format("INV-{seq}"))?;
                seqs.insert_one(
                    &db.collection::<Document>("users"),
                    doc! {},
                    InsertOptions::new(&inv).field("n").format_field(field),
                )
                .await
                .map(drop)
            },
            nothing,
        )
        .await;
        assert_eq!(
            format.details().unwrap()["argument"],
            "formatField",
            "{format}"
        );
    }
    for (label, field, format_field) in [
        ("same", "n", Some("n")),
        ("scope", "tenant", None),
        ("scope_parent", "customer", None),
        ("format_scope", "n", Some("tenant")),
    ] {
        let options = move |seqs: &Sequences| -> mongo_seq::Result<InsertOptions> {
            let inv = seqs.sequence(
                "inv",
                SequenceOptions::new()
                    .scope(["tenant", "customer.region"])
                    .format("I{seq}"),
            )?;
            let options = InsertOptions::new(&inv).field(field);
            Ok(match format_field {
                Some(f) => options.format_field(f),
                None => options,
            })
        };
        let document = doc! { "tenant": "acme", "customer": { "region": "eu" } };
        let again = document.clone();
        assert_refused(
            &format!("clash_{label}"),
            "INVALID_ARGUMENT",
            |seqs, db| async move {
                let options = options(&seqs)?;
                seqs.insert_one(&db.collection::<Document>("users"), document, options)
                    .await
                    .map(drop)
            },
            nothing,
        )
        .await;
        assert_refused(
            &format!("clash_many_{label}"),
            "INVALID_ARGUMENT",
            |seqs, db| async move {
                let options = options(&seqs)?;
                seqs.insert_many(&db.collection::<Document>("users"), [again], options)
                    .await
                    .map(drop)
            },
            nothing,
        )
        .await;
    }
}

#[tokio::test]
async fn a_counter_outside_the_sequence_s_range_is_malformed_and_stays_as_it_is() {
    let cases = [
        ("below_min", SequenceOptions::new().min(1), -5),
        (
            "below_min_block",
            SequenceOptions::new().min(1).block(10),
            -5,
        ),
        ("above_max", SequenceOptions::new().max(100), 150),
        (
            "countdown_above_max",
            SequenceOptions::new().start(100).step(-1).max(100),
            150,
        ),
        (
            "countdown_below_min",
            SequenceOptions::new().start(-1).step(-1).min(-50),
            -60,
        ),
    ];
    for (label, options, seq) in cases {
        let (a, b, c) = (options.clone(), options.clone(), options);
        assert_refused(
            &format!("bounds_next_{label}"),
            "MALFORMED_COUNTER",
            |seqs, _| async move { seqs.sequence("userid", a)?.next().await.map(drop) },
            counter(doc! { "_id": "userid", "seq": seq }),
        )
        .await;
        assert_refused(
            &format!("bounds_many_{label}"),
            "MALFORMED_COUNTER",
            |seqs, _| async move { seqs.sequence("userid", b)?.next_many(3).await.map(drop) },
            counter(doc! { "_id": "userid", "seq": seq }),
        )
        .await;
        assert_refused(
            &format!("bounds_current_{label}"),
            "MALFORMED_COUNTER",
            |seqs, _| async move { seqs.sequence("userid", c)?.current().await.map(drop) },
            counter(doc! { "_id": "userid", "seq": seq }),
        )
        .await;
    }
}

#[tokio::test]
async fn a_counter_whose_seq_is_an_array_is_malformed_never_the_server_s_error() {
    let kinds = [
        ("ints", Bson::from(vec![Bson::Int32(1), Bson::Int32(2)])),
        ("long", Bson::from(vec![Bson::Int64(3)])),
        ("empty", Bson::Array(vec![])),
        ("nested", Bson::from(vec![Bson::from(vec![Bson::Int32(1)])])),
    ];
    for (label, options, next) in [
        ("default", SequenceOptions::new(), 500),
        ("bounded", SequenceOptions::new().max(1000), 500),
        ("start", SequenceOptions::new().start(10), 500),
        ("countdown", SequenceOptions::new().start(-1).step(-1), -500),
    ] {
        for (kind, seq) in kinds.clone() {
            let (a, b) = (options.clone(), options.clone());
            assert_refused(
                &format!("array_{label}_{kind}"),
                "MALFORMED_COUNTER",
                |seqs, _| async move { seqs.sequence("userid", a)?.next().await.map(drop) },
                counter(doc! { "_id": "userid", "seq": seq.clone() }),
            )
            .await;
            assert_refused(
                &format!("array_set_{label}_{kind}"),
                "MALFORMED_COUNTER",
                |seqs, _| async move { seqs.sequence("userid", b)?.set_next(next).await.map(drop) },
                counter(doc! { "_id": "userid", "seq": seq }),
            )
            .await;
        }
    }
}

#[test]
fn every_code_is_listed_once() {
    let codes: Vec<&str> = mongo_seq::Error::codes().collect();
    assert!(
        codes.contains(&"SEQUENCE_EXHAUSTED")
            && codes.contains(&"WAIT_TIMEOUT")
            && codes.contains(&"SEQUENCE_CONFLICT")
    );
    let mut distinct = codes.clone();
    distinct.sort_unstable();
    distinct.dedup();
    assert_eq!(distinct.len(), codes.len());
}

#[test]
fn hostile_values_in_a_configuration_file_are_refused_naming_the_option() {
    // TOML's nan and inf, fractions, strings for numbers, doubles beyond 2^53, wrong types,
    // absurd sizes: refused when the file is read, never read as a default.
    for (line, option) in [
        ("block = nan", "block"),
        ("max = -inf", "max"),
        ("block = 1.5", "block"),
        ("step = \"1\"", "step"),
        ("max = 1e300", "max"),
        ("min = 1.0e19", "min"),
        ("block = true", "block"),
        ("block = -1", "block"),
        ("block = 1000000000000", "block"),
        ("start = -9223372036854775808", "start"),
        ("refill_ahead = 1", "refillAhead"),
        ("scope = 5", "scope"),
        ("format = {}", "format"),
        ("counter_field = \"\"", "counterField"),
    ] {
        let error = toml::from_str::<BTreeMap<String, SequenceOptions>>(&format!("[s]\n{line}\n"))
            .expect_err(line);
        let message = error.to_string();
        assert!(
            message.contains(&format!("invalid option `{option}`")),
            "{line}: {message}"
        );
    }
    for (value, option) in [
        (
            serde_json::json!({ "start": 9_223_372_036_854_775_808_u64 }),
            "start",
        ),
        (serde_json::json!({ "block": 1e20 }), "block"),
        (serde_json::json!(null), "options"),
        (serde_json::json!([1]), "options"),
        (serde_json::json!("block"), "options"),
        (
            serde_json::json!({ "block": 5, "refill_ahead": true, "refillAhead": true }),
            "refillAhead",
        ),
    ] {
        let error = SequenceOptions::try_from(value.clone()).expect_err(&value.to_string());
        assert_eq!(error.code(), Some("INVALID_OPTION"), "{value}: {error}");
        assert_eq!(
            error.details().unwrap()["option"],
            option,
            "{value}: {error}"
        );
    }
}
