//! What an operator sees while a trigger cannot work: `/healthz` and the
//! `mongo_seq_trigger_healthy` gauge agree and stay unhealthy until a batch succeeds; errors
//! are short and say what to fix.

use crate::common;

use std::time::{Duration, Instant};

use common::*;
use mongo_seq_sidecar::health::TriggerHealth;
use mongodb::bson::doc;

const WAIT: Duration = Duration::from_secs(60);

/// Waits until the trigger has failed `n` times in a row; returns its health.
async fn wait_errors(run: &Running, trigger: &str, n: u32) -> TriggerHealth {
    let deadline = Instant::now() + WAIT;
    loop {
        if let Some(h) = run.health.snapshot().1.get(trigger) {
            if h.consecutive_errors >= n {
                return h.clone();
            }
        }
        assert!(
            Instant::now() < deadline,
            "no error: {:?}",
            run.health.snapshot()
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_existing_duplicate_is_reported_in_one_short_line_naming_collection_field_and_value() {
    let (db, plain, coll) = test_db("dupindex").await;
    coll.insert_many([
        doc! { "seq": 7, "n": 1 },
        doc! { "seq": 7, "n": 2 },
        doc! { "n": 3 },
    ])
    .await
    .unwrap();
    let run = start(config(&db, "", ""), options().await, false);
    let trigger = format!("{db}.orders.seq");
    let h = wait_errors(&run, &trigger, 1).await;
    run.stop().await;
    let message = h.last_error.clone().unwrap_or_default();
    println!("{message}");
    assert!(
        message.len() < 300,
        "short: {} bytes: {message}",
        message.len()
    );
    assert!(!message.contains('\n'), "one line: {message}");
    for part in [format!("{db}.orders"), "`seq`".to_owned(), "7".to_owned()] {
        assert!(message.contains(&part), "names {part}: {message}");
    }
    assert!(
        !message.contains("labels:") && !message.contains("Kind:"),
        "{message}"
    );
    assert_eq!(
        count_numbered(&coll, "seq").await,
        2,
        "nothing numbered meanwhile"
    );
    plain.database(&db).drop().await.ok();
}

/// Polls `/healthz`'s state and the gauge for 4 s of retries: neither may say healthy once.
async fn assert_unhealthy_while_retrying(run: &Running, trigger: &str) {
    let first = wait_errors(run, trigger, 1).await.consecutive_errors;
    let since = Instant::now();
    let gauge = run.metrics.healthy.with_label_values(&[trigger]);
    let (mut polls, mut healthy_polls, mut gauge_up) = (0u32, 0u32, 0u32);
    let mut states = std::collections::BTreeSet::new();
    // Five more retries (each reopens the stream, reads, fails), however slow the machine.
    loop {
        let (all, triggers) = run.health.snapshot();
        polls += 1;
        healthy_polls += u32::from(all || triggers[trigger].healthy);
        gauge_up += u32::from(gauge.get() != 0);
        states.insert(format!("{:?}", triggers[trigger].state));
        if triggers[trigger].consecutive_errors >= first + 5 {
            break;
        }
        assert!(since.elapsed() < WAIT, "it stopped retrying: {triggers:?}");
        tokio::time::sleep(Duration::from_micros(200)).await;
    }
    let took = since.elapsed();
    println!("{polls} polls over 5 retries in {took:?}, states seen {states:?}");
    // The delay doubles from 50 ms (capped at 400): 5 retries take at least 50+100+200+400+400.
    assert!(
        took >= Duration::from_millis(1100),
        "the retry delay grows: 5 retries in {took:?}"
    );
    assert_eq!(
        healthy_polls, 0,
        "/healthz said healthy {healthy_polls} of {polls} times"
    );
    assert_eq!(
        gauge_up, 0,
        "the gauge said healthy {gauge_up} of {polls} times"
    );
}

/// Repairs the counter; waits until a batch succeeded and both say healthy.
async fn repair_and_wait_healthy(
    run: &Running,
    trigger: &str,
    counters: &mongodb::Collection<mongodb::bson::Document>,
    id: &str,
    coll: &mongodb::Collection<mongodb::bson::Document>,
    numbered: u64,
) {
    counters
        .update_one(doc! { "_id": id }, doc! { "$set": { "seq": 41_i64 } })
        .await
        .unwrap();
    wait_numbered(coll, "seq", numbered, WAIT).await;
    let gauge = run.metrics.healthy.with_label_values(&[trigger]);
    let deadline = Instant::now() + WAIT;
    while !(run.health.snapshot().0 && gauge.get() == 1) {
        assert!(
            Instant::now() < deadline,
            "not healthy again: {:?} gauge {}",
            run.health.snapshot(),
            gauge.get()
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_permanent_error_keeps_the_trigger_unhealthy_until_a_batch_succeeds() {
    let (db, plain, coll) = test_db("noflap").await;
    let counters = plain.database(&db).collection("counters");
    let id = format!("{db}.orders");
    let trigger = format!("{db}.orders.seq");
    // Fast retries (backoff 50..400 ms): many chances to flap.
    let cfg = config(&db, "", "");

    // In the backfill of a first start.
    counters
        .insert_one(doc! { "_id": &id, "seq": "twelve" })
        .await
        .unwrap();
    coll.insert_one(doc! { "n": 1 }).await.unwrap();
    let run = start(cfg.clone(), options().await, false);
    assert_unhealthy_while_retrying(&run, &trigger).await;
    repair_and_wait_healthy(&run, &trigger, &counters, &id, &coll, 1).await;
    run.stop().await;

    // In the change stream: every retry reopens it from the stored token and replays the event.
    counters
        .update_one(doc! { "_id": &id }, doc! { "$set": { "seq": "twelve" } })
        .await
        .unwrap();
    let run = start(cfg, options().await, false);
    wait_running(&run).await;
    coll.insert_one(doc! { "n": 2 }).await.unwrap();
    assert_unhealthy_while_retrying(&run, &trigger).await;
    repair_and_wait_healthy(&run, &trigger, &counters, &id, &coll, 2).await;
    run.stop().await;
    plain.database(&db).drop().await.ok();
}
