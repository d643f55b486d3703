//! Sequences against the driver and the server (js/test/sequence.test.mjs): numbers, blocks,
//! current, set_next, seeds, scopes, formats, counters of other shapes, reset_all and exact
//! 64-bit values; command counts by command monitoring.

mod common;

use common::setup;
use futures_util::future::join_all;
use futures_util::TryStreamExt;
use mongo_seq::{SequenceOptions, Sequences};
use mongodb::bson::{doc, Bson, Document};

type TestResult = Result<(), Box<dyn std::error::Error>>;

fn one_to(n: i64) -> Vec<i64> {
    (1..=n).collect()
}

#[tokio::test]
async fn next_follows_the_tutorial() -> TestResult {
    let s = setup("seq_next").await;
    let user_ids = s.seqs().sequence("userid", None)?;
    let numbers = [
        user_ids.next().await?,
        user_ids.next().await?,
        user_ids.next().await?,
    ];
    assert_eq!(numbers, [1, 2, 3]);
    let counters: Vec<Document> =
        s.db.collection::<Document>("counters")
            .find(doc! {})
            .await?
            .try_collect()
            .await?;
    assert_eq!(counters, [doc! { "_id": "userid", "seq": 3_i64 }]);
    assert_eq!(user_ids.current().await?, Some(3));
    s.drop_db().await;
    Ok(())
}

#[tokio::test]
async fn a_legacy_double_counter_keeps_counting_as_an_int64() -> TestResult {
    let s = setup("seq_legacy").await;
    let counters = s.db.collection::<Document>("counters");
    counters
        .insert_one(doc! { "_id": "userid", "seq": 41.0 })
        .await?;
    let user_ids = s.seqs().sequence("userid", None)?;
    assert_eq!(user_ids.next().await?, 42);
    let counter = counters.find_one(doc! { "_id": "userid" }).await?.unwrap();
    assert_eq!(
        counter.get("seq"),
        Some(&Bson::Int64(42)),
        "converted by the first reservation"
    );
    s.monitor.reset();
    assert_eq!(user_ids.next_many(2).await?, [43, 44]);
    assert_eq!(
        s.monitor.count("findAndModify") + s.monitor.count("find"),
        1,
        "one command per reservation from then on"
    );
    s.drop_db().await;
    Ok(())
}

#[tokio::test]
async fn a_block_is_one_round_trip_and_its_unused_rest_a_gap() -> TestResult {
    let s = setup("seq_block").await;
    let first = Sequences::builder(&s.db)
        .collection("counters_block")
        .build()?;
    let orders = first.sequence("orders", SequenceOptions::new().block(100))?;
    s.monitor.reset();
    let mut numbers = Vec::new();
    for _ in 0..250 {
        numbers.push(orders.next().await?);
    }
    assert_eq!(numbers, one_to(250));
    assert_eq!(
        s.monitor.count("findAndModify"),
        3,
        "250 numbers from blocks of 100: 3 reservations"
    );
    assert_eq!(orders.current().await?, Some(300));
    // Another process (other Sequences) continues after the reserved block: 251..300 are a gap.
    let second = Sequences::builder(&s.db)
        .collection("counters_block")
        .build()?;
    assert_eq!(
        second
            .sequence("orders", SequenceOptions::new().block(100))?
            .next()
            .await?,
        301
    );
    assert_eq!(
        orders.next().await?,
        251,
        "the first still hands out its own block"
    );
    s.drop_db().await;
    Ok(())
}

#[tokio::test]
async fn next_many_is_one_round_trip_and_in_order() -> TestResult {
    let s = setup("seq_many").await;
    let ids = s.seqs().sequence("ids", SequenceOptions::new().block(7))?;
    ids.next().await?;
    s.monitor.reset();
    let many = ids.next_many(1000).await?;
    assert_eq!(many, (2..=1001).collect::<Vec<_>>());
    assert_eq!(s.monitor.count("findAndModify"), 1);
    assert!(ids.next_many(0).await?.is_empty());
    let refused = ids.next_many(1_000_001).await.unwrap_err();
    assert_eq!(refused.code(), Some("INVALID_ARGUMENT"));
    assert_eq!(ids.current().await?, Some(1001), "nothing reserved");
    s.drop_db().await;
    Ok(())
}

#[tokio::test]
async fn concurrent_calls_share_one_refill_and_never_repeat_a_number() -> TestResult {
    let s = setup("seq_concurrent").await;
    let ids = s.seqs().sequence("ids", SequenceOptions::new().block(10))?;
    s.monitor.reset();
    // Fifty calls at once: served in the order they were made. The one that runs a refill
    // reserves at least a block and what every caller queued ahead of it needs (the core's
    // rule): at most one reservation per block, fewer when many wait.
    let numbers: Vec<i64> = join_all((0..50).map(|_| ids.next()))
        .await
        .into_iter()
        .collect::<Result<_, _>>()?;
    assert_eq!(numbers, one_to(50));
    let reservations = s.monitor.count("findAndModify");
    assert!(
        (1..=5).contains(&reservations),
        "{reservations} reservations"
    );
    let last = ids.current().await?.unwrap();
    assert!(
        (50..60).contains(&last),
        "at most one block's rest held: counter at {last}"
    );
    s.drop_db().await;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_tasks_share_the_refills_and_never_repeat_a_number() -> TestResult {
    let s = setup("seq_concurrent_tasks").await;
    let ids = s.seqs().sequence("ids", SequenceOptions::new().block(10))?;
    s.monitor.reset();
    let tasks: Vec<_> = (0..50)
        .map(|_| {
            let ids = ids.clone();
            tokio::spawn(async move { ids.next().await })
        })
        .collect();
    let mut numbers = Vec::new();
    for task in tasks {
        numbers.push(task.await??);
    }
    numbers.sort_unstable();
    assert_eq!(numbers, one_to(50));
    // Tasks on several threads wake in any order: the one that runs a refill reserves at least
    // what the callers ahead of it need (the core's rule), so a reservation may serve more than
    // a block, and there are at most 5.
    let reservations = s.monitor.count("findAndModify");
    assert!(
        (1..=5).contains(&reservations),
        "{reservations} reservations"
    );
    let last = ids.current().await?.unwrap();
    assert!(
        (50..60).contains(&last),
        "at most one block's rest held: counter at {last}"
    );
    assert_eq!(
        s.monitor.most_in_flight(),
        1,
        "one reservation in flight at a time"
    );
    s.drop_db().await;
    Ok(())
}

#[tokio::test]
async fn with_block_1_the_callers_waiting_together_share_one_inc() -> TestResult {
    let s = setup("seq_coalesce").await;
    let ids = s.seqs().sequence("ids", None)?;
    s.monitor.reset();
    // Ten calls made at the same moment: they queue behind the first, which reserves for all.
    let numbers: Vec<i64> = join_all((0..10).map(|_| ids.next()))
        .await
        .into_iter()
        .collect::<Result<_, _>>()?;
    assert_eq!(numbers, one_to(10), "in the order the calls were made");
    assert_eq!(
        s.monitor.count("findAndModify"),
        1,
        "one $inc of 10: {:?}",
        s.monitor.snapshot()
    );
    assert_eq!(
        ids.current().await?,
        Some(10),
        "no gap: exactly what they asked for"
    );
    s.drop_db().await;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn refill_ahead_reserves_the_next_block_at_half_a_block_in_the_background() -> TestResult {
    let s = setup("seq_ahead").await;
    let options = SequenceOptions::new().block(10).refill_ahead(true);
    let ids = s.seqs().sequence("ids", options.clone())?;
    s.monitor.reset();
    let mut numbers = Vec::new();
    for _ in 0..5 {
        numbers.push(ids.next().await?);
    }
    s.monitor.settled().await;
    assert_eq!(
        s.monitor.count("findAndModify"),
        1,
        "half the block left: nothing reserved ahead yet"
    );
    numbers.push(ids.next().await?); // from the block; then the refill ahead starts
    s.monitor.settled().await;
    assert_eq!(
        s.monitor.count("findAndModify"),
        2,
        "the 6th number started the next block's reservation"
    );
    assert_eq!(
        ids.current().await?,
        Some(20),
        "the counter holds the block ahead"
    );
    for _ in 0..14 {
        numbers.push(ids.next().await?);
    }
    assert_eq!(
        numbers,
        one_to(20),
        "in order, no gap: the block ahead is served after the block"
    );
    s.monitor.settled().await;
    assert_eq!(s.monitor.count("findAndModify"), 3);
    assert_eq!(
        s.monitor.most_in_flight(),
        1,
        "one reservation in flight at a time"
    );
    // What a process holds when it stops is a gap: another one continues after it.
    assert_eq!(
        Sequences::new(&s.db)
            .sequence("ids", options)?
            .next()
            .await?,
        31
    );
    s.drop_db().await;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn ten_tasks_with_and_without_refill_ahead_exact_counts() -> TestResult {
    let s = setup("seq_ahead_concurrent").await;
    for refill_ahead in [false, true] {
        let name = format!("ids-{refill_ahead}");
        let ids = s.seqs().sequence(
            &name,
            SequenceOptions::new().block(10).refill_ahead(refill_ahead),
        )?;
        ids.next().await?; // the first block: 1..10
        s.monitor.settled().await;
        s.monitor.reset();
        let tasks: Vec<_> = (0..10)
            .map(|_| {
                let ids = ids.clone();
                tokio::spawn(async move {
                    let mut mine = Vec::new();
                    for _ in 0..20 {
                        mine.push(ids.next().await?);
                    }
                    Ok::<_, mongo_seq::Error>(mine)
                })
            })
            .collect();
        let mut all = Vec::new();
        for task in tasks {
            let mine = task.await??;
            assert!(
                mine.windows(2).all(|w| w[0] < w[1]),
                "{name}: each task's numbers increase"
            );
            all.extend(mine);
        }
        all.sort_unstable();
        assert_eq!(
            all,
            (2..=201).collect::<Vec<_>>(),
            "{name}: no gap, no repeat"
        );
        s.monitor.settled().await;
        assert_eq!(
            s.monitor.most_in_flight(),
            1,
            "{name}: one reservation in flight at a time"
        );
        let reservations = s.monitor.count("findAndModify");
        assert_eq!(
            ids.current().await?,
            Some(10 + 10 * reservations as i64),
            "{name}: a block each"
        );
        assert_eq!(reservations, 20, "{name}: 20 blocks after the first");
    }
    s.drop_db().await;
    Ok(())
}

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
    let ids = s.seqs().sequence("ids", SequenceOptions::new().block(10))?;
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
        doc! { "_id": "invoices", "sequence": 510_i64 }
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

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_tutorial_s_own_code_interleaved_on_one_counter_issues_no_number_twice() -> TestResult {
    let s = setup("seq_tutorial_mixed").await;
    let counters = s.db.collection::<Document>("counters");
    // MongoDB's tutorial: getNextSequence(name) = findAndModify {$inc: {seq: 1}}, upsert.
    let tutorial = {
        let counters = counters.clone();
        move || {
            let counters = counters.clone();
            async move {
                let counter = counters
                    .find_one_and_update(doc! { "_id": "userid" }, doc! { "$inc": { "seq": 1 } })
                    .upsert(true)
                    .return_document(mongodb::options::ReturnDocument::After)
                    .await?
                    .expect("upserted");
                Ok::<i64, mongodb::error::Error>(
                    counter
                        .get_i64("seq")
                        .or_else(|_| counter.get_i32("seq").map(i64::from))
                        .expect("an integer"),
                )
            }
        }
    };
    let one = s.seqs().sequence("userid", None)?;
    let blocks = Sequences::new(&s.db).sequence("userid", SequenceOptions::new().block(7))?;
    let mut issued = vec![tutorial().await?];
    let mut tasks = Vec::new();
    for i in 0..40 {
        let (one, blocks, tutorial) = (one.clone(), blocks.clone(), tutorial.clone());
        tasks.push(tokio::spawn(async move {
            let mut mine = vec![tutorial().await?, one.next().await?, blocks.next().await?];
            if i % 10 == 0 {
                mine.extend(one.next_many(5).await?);
            }
            Ok::<_, Box<dyn std::error::Error + Send + Sync>>(mine)
        }));
    }
    for task in tasks {
        issued.extend(task.await?.map_err(|e| e.to_string())?);
    }
    let mut distinct = issued.clone();
    distinct.sort_unstable();
    distinct.dedup();
    assert_eq!(distinct.len(), issued.len(), "no number issued twice");
    let counter = counters.find_one(doc! { "_id": "userid" }).await?.unwrap();
    assert!(
        counter.get_i64("seq")? >= *distinct.last().unwrap(),
        "the counter is past every number issued"
    );
    s.drop_db().await;
    Ok(())
}

#[tokio::test]
async fn reset_all_sets_every_counter_of_the_sequence_back_and_drops_the_blocks() -> TestResult {
    let s = setup("seq_reset").await;
    let orders = s
        .seqs()
        .sequence("orders", SequenceOptions::new().scope(["tenant"]).block(10))?;
    let acme = orders.scoped(&doc! { "tenant": "acme" })?;
    let globex = orders.scoped(&doc! { "tenant": "globex" })?;
    acme.next_many(3).await?;
    globex.next().await?;
    let outcome = orders.reset_all().await?;
    assert_eq!((outcome.reset, outcome.next), (2, 1));
    assert_eq!(
        (acme.next().await?, globex.next().await?),
        (1, 1),
        "the blocks in hand were dropped"
    );
    // A counter a sidecar keeps (a lease epoch) is refused unless forced, nothing written.
    s.db.collection::<Document>("counters")
        .insert_one(doc! { "_id": "orders/tenant=initech", "seq": 5_i64, "epoch": 3_i64 })
        .await?;
    let before = common::snapshot(&s.db).await;
    assert_eq!(
        orders.reset_all().await.unwrap_err().code(),
        Some("RESET_REFUSED")
    );
    assert_eq!(common::snapshot(&s.db).await, before);
    assert_eq!(orders.reset_all_forced().await?.reset, 3);
    s.drop_db().await;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn first_use_of_a_fresh_counter_by_many_handles_at_once_is_no_error() -> TestResult {
    // The tutorial's upsert race: sixteen handles that share nothing (each its own Sequences,
    // as sixteen processes would be) upsert the missing counter at the same moment; the
    // losers' duplicate key is retried inside.
    let s = setup("seq_first_use").await;
    s.monitor.gate(20);
    let tasks: Vec<_> = (0..16)
        .map(|_| {
            let ids = Sequences::new(&s.db).sequence("fresh", None).unwrap();
            tokio::spawn(async move { ids.next().await })
        })
        .collect();
    let mut numbers = Vec::new();
    for task in tasks {
        numbers.push(task.await??);
    }
    s.monitor.gate(0);
    numbers.sort_unstable();
    assert_eq!(numbers, one_to(16));
    let counters: Vec<Document> =
        s.db.collection::<Document>("counters")
            .find(doc! {})
            .await?
            .try_collect()
            .await?;
    assert_eq!(counters, [doc! { "_id": "fresh", "seq": 16_i64 }]);
    assert!(s.monitor.most_in_flight() > 1, "the upserts ran at once");
    s.drop_db().await;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_atlas_recipe_s_own_inc_interleaved_on_its_counter_issues_no_number_twice() -> TestResult
{
    let s = setup("seq_atlas_mixed").await;
    let counters = s.db.collection::<Document>("counters");
    let ns = doc! { "db": "shop", "coll": "students" };
    // The recipe's trigger: findOneAndUpdate({ _id: ns }, { $inc: { seq_value: 1 } }, upsert).
    let recipe = {
        let (counters, ns) = (counters.clone(), ns.clone());
        move || {
            let (counters, ns) = (counters.clone(), ns.clone());
            async move {
                let counter = counters
                    .find_one_and_update(doc! { "_id": ns }, doc! { "$inc": { "seq_value": 1 } })
                    .upsert(true)
                    .return_document(mongodb::options::ReturnDocument::After)
                    .await?
                    .expect("upserted");
                let value = counter.get("seq_value").and_then(Bson::as_i64);
                let value = value.or_else(|| counter.get_i32("seq_value").ok().map(i64::from));
                Ok::<i64, mongodb::error::Error>(value.expect("an integer"))
            }
        }
    };
    let options = SequenceOptions::new()
        .counter_id(ns.clone())
        .counter_field("seq_value");
    let students = s.seqs().sequence("students", options.clone())?;
    let blocks = Sequences::new(&s.db).sequence("students", options.block(5))?;
    let mut issued = vec![recipe().await?];
    let mut tasks = Vec::new();
    for _ in 0..30 {
        let (students, blocks, recipe) = (students.clone(), blocks.clone(), recipe.clone());
        tasks.push(tokio::spawn(async move {
            let mine = vec![
                recipe().await?,
                students.next().await?,
                blocks.next().await?,
            ];
            Ok::<_, Box<dyn std::error::Error + Send + Sync>>(mine)
        }));
    }
    for task in tasks {
        issued.extend(task.await?.map_err(|e| e.to_string())?);
    }
    let mut distinct = issued.clone();
    distinct.sort_unstable();
    distinct.dedup();
    assert_eq!(distinct.len(), issued.len(), "no number issued twice");
    let all: Vec<Document> = counters.find(doc! {}).await?.try_collect().await?;
    assert_eq!(all.len(), 1, "one counter, the recipe's: {all:?}");
    assert_eq!(all[0].get_document("_id")?, &ns, "its _id kept as it was");
    s.drop_db().await;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_cancelled_call_leaves_at_most_a_gap_and_its_refill_serves_the_others() -> TestResult {
    use std::time::Duration;
    let s = setup("seq_cancel").await;
    let ids = s.seqs().sequence("ids", SequenceOptions::new().block(10))?;
    s.monitor.gate(100);
    s.monitor.reset();
    // The first caller starts the refill and is cancelled while it is in flight; the second,
    // queued behind it, is served by that refill.
    let first = tokio::time::timeout(Duration::from_millis(20), ids.next());
    let second = {
        let ids = ids.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(5)).await;
            ids.next().await
        })
    };
    assert!(first.await.is_err(), "the first call was cancelled");
    let served = second.await??;
    s.monitor.gate(0);
    let third = ids.next().await?;
    assert!((1..=10).contains(&served) && served < third && third <= 10);
    assert_eq!(
        s.monitor.count("findAndModify"),
        1,
        "the cancelled caller's reservation served the others"
    );
    assert_eq!(
        ids.current().await?,
        Some(10),
        "the counter written once, whole"
    );

    // Many calls, every third cancelled at a random moment: never a number twice, one
    // reservation in flight at a time, and the counter past every number handed out.
    s.monitor.gate(3);
    s.monitor.reset();
    let tasks: Vec<_> = (0..120_u64)
        .map(|i| {
            let ids = ids.clone();
            tokio::spawn(async move {
                if i % 3 == 0 {
                    let wait = Duration::from_micros(500 * (i % 11));
                    tokio::time::timeout(wait, ids.next()).await.ok()
                } else {
                    Some(ids.next().await)
                }
            })
        })
        .collect();
    let mut numbers = vec![served, third];
    for task in tasks {
        if let Some(number) = task.await? {
            numbers.push(number?);
        }
    }
    s.monitor.gate(0);
    s.monitor.settled().await;
    let handed_out = numbers.len();
    numbers.sort_unstable();
    numbers.dedup();
    assert_eq!(numbers.len(), handed_out, "no number handed out twice");
    assert!(handed_out >= 82, "every call not cancelled got its number");
    assert_eq!(s.monitor.most_in_flight(), 1);
    assert!(ids.current().await?.unwrap() >= *numbers.last().unwrap());
    let after = ids.next().await?;
    assert!(after > *numbers.last().unwrap(), "numbers go on increasing");
    s.drop_db().await;
    Ok(())
}
