//! Bad input (js/test/errors.test.mjs), continued: fields that cannot be written, malformed
//! counters, the list of codes, hostile configuration values.

use crate::common;

use std::collections::BTreeMap;

use common::{assert_refused, counter, nothing};
use mongo_seq::{InsertOptions, OptimisticOptions, SequenceOptions, Sequences};
use mongodb::bson::{doc, Bson, Document};

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
        // Named as the file (and the builder methods) spell them.
        ("refill_ahead = 1", "refill_ahead"),
        ("scope = 5", "scope"),
        ("format = {}", "format"),
        ("counter_field = \"\"", "counter_field"),
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
