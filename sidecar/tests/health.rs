//! What an operator sees while a trigger cannot work: `/healthz` and the
//! `mongo_seq_trigger_healthy` gauge agree and stay unhealthy until a batch succeeds; errors
//! are short and say what to fix.

mod common;

use std::time::{Duration, Instant};

use common::*;
use mongo_seq::health::TriggerHealth;
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
    let run = start(config(&db, "", ""), client().await, false);
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
