//! The exact commands one batch costs, by mode: what the README and docs/benchmarks.md state,
//! counted with the driver's command monitoring (change-stream reads aside: `getMore`s depend on
//! how the server splits its batches and on idle polls; `make bench` counts them per batch).
//! The resume token's write is counted apart: it follows the checkpoint interval, not batches.

use crate::common;

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use common::*;
use mongodb::bson::doc;

const WAIT: Duration = Duration::from_secs(60);

/// The commands of numbering: the stream's own and the driver's housekeeping left out.
fn numbering_commands(counts: BTreeMap<String, u64>) -> BTreeMap<String, u64> {
    counts
        .into_iter()
        .filter(|(name, _)| !is_stream_or_housekeeping(name))
        .collect()
}

/// Runs a trigger (`trigger` TOML lines), numbers one warm-up document (the first batch after a
/// start also checks for documents numbered before it), then 100 documents inserted at once, and
/// returns the commands those cost with the number of batches they took.
async fn commands_of_100(
    label: &str,
    trigger: &str,
    checkpoint_ms: u64,
) -> (BTreeMap<String, u64>, u64) {
    let (db, plain, coll) = test_db(label).await;
    let cfg = config(
        &db,
        trigger,
        &format!(
            "batch_size = 1000\nheartbeat_secs = 3600\ncheckpoint_ms = {checkpoint_ms}\n[lease]\nttl_ms = 600000"
        ),
    );
    let id = format!("{db}.orders.seq");
    let (options, log) = monitored_options().await;
    let run = start(cfg, options, false);
    wait_running(&run).await;
    let applied = |n: u64| {
        let health = run.health.clone();
        let id = id.clone();
        async move {
            let deadline = Instant::now() + WAIT;
            while health.snapshot().1.get(&id).map_or(0, |h| h.numbered) < n {
                assert!(Instant::now() < deadline, "{n} not numbered");
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        }
    };
    coll.insert_one(doc! { "warm": 1 }).await.unwrap();
    applied(1).await;
    let batches = run.metrics.batches.with_label_values(&[&id]);
    let before = batches.get();
    log.reset();
    coll.insert_many((0..100).map(|i| doc! { "i": i }))
        .await
        .unwrap();
    applied(101).await;
    let counts = numbering_commands(log.snapshot());
    let taken = batches.get() - before;
    run.stop().await;
    assert_eq!(numbers(&coll, "seq").await, (1..=101).collect::<Vec<i64>>());
    plain.database(&db).drop().await.ok();
    (counts, taken)
}

/// A checkpoint interval no test reaches: no resume-token write among the counted commands.
const NO_CHECKPOINT: u64 = 3_600_000;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_default_batch_costs_two_commands() {
    let (counts, batches) = commands_of_100("cmds_default", "", NO_CHECKPOINT).await;
    println!("default mode, 100 documents in {batches} batch(es): {counts:?}");
    // Per batch: the reservation, the numbers' update.
    let expected = BTreeMap::from([
        ("findAndModify".to_owned(), batches),
        ("update".to_owned(), batches),
    ]);
    assert_eq!(counts, expected);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gapless_batch_costs_five_commands() {
    let (counts, batches) = commands_of_100("cmds_gapless", "gapless = true", NO_CHECKPOINT).await;
    println!("gapless mode, 100 documents in {batches} batch(es): {counts:?}");
    // Per batch: the check for documents numbered meanwhile (find), the counter read (find),
    // the reservation with its intent (findAndModify), the numbers' ordered update, the
    // intent's finish (findAndModify).
    let expected = BTreeMap::from([
        ("find".to_owned(), 2 * batches),
        ("findAndModify".to_owned(), 2 * batches),
        ("update".to_owned(), batches),
    ]);
    assert_eq!(counts, expected);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_checkpoint_zero_every_batch_also_stores_its_token() {
    let (counts, batches) = commands_of_100("cmds_checkpoint0", "", 0).await;
    println!("default mode, checkpoint_ms = 0, 100 documents in {batches} batch(es): {counts:?}");
    // The reservation, the numbers' update, the resume token's update.
    let expected = BTreeMap::from([
        ("findAndModify".to_owned(), batches),
        ("update".to_owned(), 2 * batches),
    ]);
    assert_eq!(counts, expected);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sealed_batch_costs_one_command_more_than_a_gapless_one() {
    let trigger = "gapless = true\nseal_fields = [\"i\"]";
    let (counts, batches) = commands_of_100("cmds_sealed", trigger, NO_CHECKPOINT).await;
    println!("sealed gapless mode, 100 documents in {batches} batch(es): {counts:?}");
    // A gapless batch's five, and the seals' update (the head moves in the intent's finish).
    let expected = BTreeMap::from([
        ("find".to_owned(), 2 * batches),
        ("findAndModify".to_owned(), 2 * batches),
        ("update".to_owned(), 2 * batches),
    ]);
    assert_eq!(counts, expected);
}
