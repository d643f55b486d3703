//! Sequences (js/test/sequence.test.mjs), continued: start, step and bounds, set_next, seeds,
//! scopes and formats, exact 64-bit values, counters of other recipes.

use crate::common;

use common::setup;
use mongo_seq::SequenceOptions;
use mongodb::bson::{doc, Bson, Document};

type TestResult = Result<(), Box<dyn std::error::Error>>;

#[tokio::test]
async fn start_step_negative_step_and_max() -> TestResult {
    let s = setup("seq_options").await;
    let seqs = s.seqs();
    let evens = seqs.sequence("evens", SequenceOptions::new().start(1000).step(2))?;
    assert_eq!(evens.next_many(3).await?, [1000, 1002, 1004]);
    let down = seqs.sequence("down", SequenceOptions::new().start(3).step(-1).min(1))?;
    assert_eq!(down.next_many(3).await?, [3, 2, 1]);
    assert_eq!(
        down.next().await.unwrap_err().code(),
        Some("SEQUENCE_EXHAUSTED")
    );
    let small = seqs.sequence("small", SequenceOptions::new().max(5).block(4))?;
    assert_eq!(small.next_many(4).await?, [1, 2, 3, 4]);
    assert_eq!(
        small.next().await?,
        5,
        "a block near the bound takes what is left"
    );
    assert_eq!(
        small.next().await.unwrap_err().code(),
        Some("SEQUENCE_EXHAUSTED")
    );
    let state = small.state().await?;
    assert_eq!((state.last, state.next), (Some(5), None));
    s.drop_db().await;
    Ok(())
}

#[tokio::test]
async fn set_next_moves_forward_refuses_backwards_unless_forced_and_drops_the_block() -> TestResult
{
    let s = setup("seq_setnext").await;
    let ids = s
        .seqs()
        .sequence("ids", SequenceOptions::new().block(10).max_block(10))?;
    assert_eq!(ids.next().await?, 1);
    let outcome = ids.set_next(5000).await?;
    assert_eq!(
        (outcome.previous_last, outcome.created, outcome.next),
        (Some(10), false, 5000)
    );
    assert_eq!(
        ids.next().await?,
        5000,
        "the rest of the old block (2..10) is dropped"
    );
    let refused = ids.set_next(100).await.unwrap_err();
    assert_eq!(refused.code(), Some("BACKWARDS_REFUSED"));
    assert_eq!(refused.details().unwrap()["next"], 100);
    assert_eq!(
        ids.current().await?,
        Some(5009),
        "a refused set_next writes nothing"
    );
    assert_eq!(ids.next().await?, 5001, "and keeps the block");
    ids.set_next_forced(100).await?;
    assert_eq!(ids.next().await?, 100);
    assert!(s.seqs().sequence("fresh", None)?.set_next(7).await?.created);
    s.drop_db().await;
    Ok(())
}

#[tokio::test]
async fn seed_from_collection_jumps_past_the_largest_number_never_backwards() -> TestResult {
    let s = setup("seq_seed").await;
    let users = s.db.collection::<Document>("users");
    users
        .insert_many([
            doc! { "_id": 17 },
            doc! { "_id": 3 },
            doc! { "_id": "not-a-number" },
            doc! { "_id": 41 },
        ])
        .await?;
    let ids = s.seqs().sequence("userid", None)?;
    let state = ids.seed_from_collection(&users, "_id").await?;
    assert_eq!((state.last, state.next), (Some(41), Some(42)));
    assert_eq!(ids.next().await?, 42);
    let state = ids.seed_from_collection(&users, "_id").await?;
    assert_eq!(
        (state.last, state.next),
        (Some(42), Some(43)),
        "never moves backwards"
    );
    let state = ids.seed_from_max(1000).await?;
    assert_eq!((state.last, state.next), (Some(1000), Some(1001)));
    let empty = s.seqs().sequence("empty", None)?;
    let state = empty
        .seed_from_collection(&s.db.collection::<Document>("nothing"), "_id")
        .await?;
    assert_eq!((state.last, state.next), (None, Some(1)));
    s.drop_db().await;
    Ok(())
}

#[tokio::test]
async fn scoped_sequences_keep_a_counter_per_scope_and_format_beside_the_number() -> TestResult {
    let s = setup("seq_scope").await;
    let invoices = s.seqs().sequence(
        "invoices",
        SequenceOptions::new()
            .scope(["tenant"])
            .format("INV-{seq:06}"),
    )?;
    let acme = invoices.scoped(&doc! { "tenant": "acme" })?;
    assert_eq!(acme.next().await?, 1);
    assert_eq!(
        invoices
            .scoped(&doc! { "tenant": "acme", "other": 5 })?
            .next()
            .await?,
        2,
        "one counter per value, whoever asks"
    );
    assert_eq!(
        invoices
            .scoped(&doc! { "tenant": "globex" })?
            .next()
            .await?,
        1
    );
    assert_eq!(invoices.format(2).as_deref(), Some("INV-000002"));
    let ids: Vec<Bson> =
        s.db.collection::<Document>("counters")
            .distinct("_id", doc! {})
            .await?;
    assert_eq!(
        ids,
        [
            Bson::from("invoices/tenant=acme"),
            Bson::from("invoices/tenant=globex")
        ]
    );
    assert_eq!(
        invoices.next().await.unwrap_err().code(),
        Some("MISSING_SCOPE_FIELD")
    );
    assert_eq!(
        invoices
            .scoped(&doc! { "tenant": ["a"] })
            .unwrap_err()
            .code(),
        Some("INVALID_SCOPE_VALUE")
    );
    s.drop_db().await;
    Ok(())
}

#[tokio::test]
async fn numbers_near_the_int64_limit_are_exact() -> TestResult {
    let s = setup("seq_bigint").await;
    let big = s
        .seqs()
        .sequence("big", SequenceOptions::new().block(3).format("N{seq}"))?;
    let start = (1_i64 << 53) - 1;
    big.set_next(start).await?;
    assert_eq!(
        big.next_many(4).await?,
        [start, start + 1, start + 2, start + 3]
    );
    let counter =
        s.db.collection::<Document>("counters")
            .find_one(doc! { "_id": "big" })
            .await?
            .unwrap();
    assert_eq!(
        counter.get("seq"),
        Some(&Bson::Int64(start + 3)),
        "the counter holds the exact int64"
    );
    assert_eq!(big.format(start + 2).as_deref(), Some("N9007199254740993"));
    let inserted = s
        .seqs()
        .insert_one(
            &s.db.collection::<Document>("things"),
            doc! { "a": 1 },
            mongo_seq::InsertOptions::new(&big)
                .field("n")
                .format_field("code"),
        )
        .await?;
    assert_eq!(
        (inserted.value, inserted.formatted.as_deref()),
        (start + 4, Some("N9007199254740995"))
    );
    let stored =
        s.db.collection::<Document>("things")
            .find_one(doc! { "_id": inserted.inserted_id })
            .await?
            .unwrap();
    assert_eq!(stored.get("n"), Some(&Bson::Int64(start + 4)));
    s.drop_db().await;
    Ok(())
}

#[tokio::test]
async fn at_the_int64_limit_the_last_number_then_overflow_and_never_a_wrap() -> TestResult {
    let cases: [(&str, SequenceOptions, i64, Vec<i64>); 5] = [
        (
            "tutorial_upsert",
            SequenceOptions::new(),
            i64::MAX - 2,
            vec![i64::MAX - 1, i64::MAX],
        ),
        (
            "block",
            SequenceOptions::new().block(10),
            i64::MAX - 3,
            vec![i64::MAX - 2, i64::MAX - 1, i64::MAX],
        ),
        (
            "custom_start",
            SequenceOptions::new().start(5),
            i64::MAX - 1,
            vec![i64::MAX],
        ),
        (
            "countdown_upsert",
            SequenceOptions::new().start(-1).step(-1),
            i64::MIN + 2,
            vec![i64::MIN + 1, i64::MIN],
        ),
        (
            "countdown_block",
            SequenceOptions::new().start(-1).step(-1).block(5),
            i64::MIN + 1,
            vec![i64::MIN],
        ),
    ];
    for (label, options, seeded, expected) in cases {
        let s = setup(&format!("seq_int64_{label}")).await;
        let counters = s.db.collection::<Document>("counters");
        counters
            .insert_one(doc! { "_id": "edge", "seq": seeded })
            .await?;
        let edge = s.seqs().sequence("edge", options)?;
        let mut got = Vec::new();
        for _ in &expected {
            got.push(edge.next().await?);
        }
        assert_eq!(got, expected, "{label}");
        assert_eq!(
            edge.next().await.unwrap_err().code(),
            Some("OVERFLOW"),
            "{label}"
        );
        assert_eq!(
            edge.next_many(1).await.unwrap_err().code(),
            Some("OVERFLOW"),
            "{label}"
        );
        let counter = counters.find_one(doc! { "_id": "edge" }).await?.unwrap();
        assert_eq!(
            counter.get("seq"),
            Some(&Bson::Int64(*expected.last().unwrap())),
            "{label}: the counter stays at the limit"
        );
        s.drop_db().await;
    }
    Ok(())
}

#[tokio::test]
async fn counters_of_other_recipes_are_used_in_place() -> TestResult {
    let s = setup("seq_shapes").await;
    let counters = s.db.collection::<Document>("counters");
    // The Go block-allocation article's `{ _id, sequence }`.
    counters
        .insert_one(doc! { "_id": "invoices", "sequence": 500 })
        .await?;
    let invoices = s.seqs().sequence(
        "invoices",
        SequenceOptions::new().counter_field("sequence").block(10),
    )?;
    assert_eq!(invoices.next_many(3).await?, [501, 502, 503]);
    assert_eq!(
        counters
            .find_one(doc! { "_id": "invoices" })
            .await?
            .unwrap(),
        // The recipe's fields, and the definition.
        doc! { "_id": "invoices", "sequence": 510_i64, "definition": { "start": 1_i64, "step": 1_i64 }, "definitionDigest": "b1992bd103fd143e" }
    );
    // The Atlas trigger recipe, as published: `_id` is the change event's `ns` document.
    let ns = doc! { "db": "shop", "coll": "students" };
    counters
        .insert_one(doc! { "_id": ns.clone(), "seq_value": 7 })
        .await?;
    let students = s.seqs().sequence(
        "students",
        SequenceOptions::new()
            .counter_id(ns.clone())
            .counter_field("seq_value"),
    )?;
    assert_eq!(students.next().await?, 8);
    assert_eq!(
        counters
            .find_one(doc! { "_id": ns })
            .await?
            .unwrap()
            .get("seq_value"),
        Some(&Bson::Int64(8))
    );
    s.drop_db().await;
    Ok(())
}
