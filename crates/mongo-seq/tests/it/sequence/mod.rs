//! Sequences against the driver and the server (js/test/sequence.test.mjs): numbers, blocks,
//! current, set_next, seeds, scopes, formats, counters of other shapes, rewind_all and exact
//! 64-bit values; command counts by command monitoring.

use crate::common;

mod races;
mod rules;
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
    assert_eq!(
        counters,
        [
            doc! { "_id": "userid", "seq": 3_i64, "definition": { "start": 1_i64, "step": 1_i64 }, "definitionDigest": "b1992bd103fd143e" }
        ]
    );
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
async fn under_load_the_block_grows_up_to_max_block() -> TestResult {
    let s = setup("seq_grow").await;
    // Refills come milliseconds apart (under a second): 10, 20, 40, then 80 (the cap).
    let ids = s
        .seqs()
        .sequence("ids", SequenceOptions::new().block(10).max_block(80))?;
    s.monitor.reset();
    let mut numbers = Vec::new();
    for _ in 0..230 {
        numbers.push(ids.next().await?);
    }
    assert_eq!(numbers, one_to(230));
    assert_eq!(
        s.monitor.count("findAndModify"),
        5,
        "10 + 20 + 40 + 80 + 80 numbers: 5 reservations (23 at block 10)"
    );
    assert_eq!(ids.current().await?, Some(230));
    s.drop_db().await;
    Ok(())
}

#[tokio::test]
async fn a_block_is_one_round_trip_and_its_unused_rest_a_gap() -> TestResult {
    let s = setup("seq_block").await;
    let first = Sequences::builder(&s.db)
        .collection("counters_block")
        .build()?;
    let orders = first.sequence("orders", SequenceOptions::new().block(100).max_block(100))?;
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
            .sequence("orders", SequenceOptions::new().block(100).max_block(100))?
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
    let ids = s
        .seqs()
        .sequence("ids", SequenceOptions::new().block(10).max_block(10))?;
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
    let ids = s
        .seqs()
        .sequence("ids", SequenceOptions::new().block(10).max_block(10))?;
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
    let options = SequenceOptions::new()
        .block(10)
        .max_block(10)
        .refill_ahead(true);
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
            SequenceOptions::new()
                .block(10)
                .max_block(10)
                .refill_ahead(refill_ahead),
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
