//! Two sidecar processes started with one instance id (a copied config, a fixed
//! `MONGO_SEQ_INSTANCE_ID`): the second stops with DUPLICATE_INSTANCE (exit 4) within a few
//! renew intervals while the first keeps numbering, instead of the two taking the lease from
//! each other in turn; a restart with that id after SIGKILL still takes over at once.

use crate::common;

use std::process::Child;
use std::time::{Duration, Instant};

use common::*;
use mongodb::bson::doc;

const TTL_MS: u64 = 3000;

fn wait_log(path: &std::path::Path, text: &str, within: Duration) {
    let deadline = Instant::now() + within;
    while !log_of(path).contains(text) {
        assert!(
            Instant::now() < deadline,
            "no `{text}` in {}:\n{}",
            path.display(),
            log_of(path)
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The child's exit code once it exits, within `within`.
fn exit_within(child: &mut Child, within: Duration) -> Option<i32> {
    let deadline = Instant::now() + within;
    loop {
        if let Some(status) = child.try_wait().expect("try_wait") {
            return status.code();
        }
        if Instant::now() >= deadline {
            return None;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_sidecar_with_the_same_instance_id_stops_and_the_first_keeps_numbering() {
    let (db, plain, coll) = test_db("twins").await;
    let id = format!("{db}-twin");
    let text = config_toml(
        &db,
        "",
        &format!("[lease]\nttl_ms = {TTL_MS}\ninstance_id = \"{id}\"\n"),
    );
    let (a_path, b_path, c_path) = (
        write_config(&format!("{db}-A"), &text),
        write_config(&format!("{db}-B"), &text),
        write_config(&format!("{db}-C"), &text),
    );
    let mut a = spawn_sidecar(&a_path, &[]);
    wait_log(&a_path, "watching for inserts", Duration::from_secs(90));
    coll.insert_many((0..10).map(|i| doc! { "i": i }))
        .await
        .unwrap();
    wait_numbered(&coll, "seq", 10, Duration::from_secs(60)).await;

    // B: the same config, so the same instance id, while A runs.
    let mut b = spawn_sidecar(&b_path, &[]);
    let started = Instant::now();
    let (stop, writer) = steady_writer(&coll, 5, Duration::from_millis(100));
    let code = exit_within(&mut b, Duration::from_secs(30));
    let stopped_after = started.elapsed();
    let b_log = log_of(&b_path);
    assert_eq!(
        code,
        Some(4),
        "B must stop (exit 4) within 30 s, not take the lease from A in turn:\nB:\n{b_log}\nA:\n{}",
        log_of(&a_path)
    );
    for expected in [
        "DUPLICATE_INSTANCE",
        "another running sidecar has this instance id",
        id.as_str(),
        &format!("pid {}", a.id()),
        "give each sidecar its own `[lease].instance_id`",
    ] {
        assert!(
            b_log.contains(expected),
            "B's log names `{expected}`:\n{b_log}"
        );
    }
    assert!(
        !b_log.contains("lease acquired"),
        "B never took the lease:\n{b_log}"
    );

    // A kept the lease all along and numbers what comes in after B stopped.
    stop.cancel();
    let inserted = writer.await.expect("writer") + 10;
    wait_numbered(&coll, "seq", inserted, Duration::from_secs(60)).await;
    let a_log = log_of(&a_path);
    assert_eq!(
        a_log.matches("lease acquired").count(),
        1,
        "A never lost its lease:\n{a_log}"
    );
    println!(
        "the twin stopped {:.1} s after it started (lease ttl {} s, renew {} s)",
        stopped_after.as_secs_f64(),
        TTL_MS / 1000,
        TTL_MS / 3000
    );

    // A dies (SIGKILL); C, restarted with the same id, finds A gone and takes over at once.
    a.kill().unwrap();
    a.wait().unwrap();
    let mut c = spawn_sidecar(&c_path, &[]);
    coll.insert_one(doc! { "after": "restart" }).await.unwrap();
    wait_numbered(&coll, "seq", inserted + 1, Duration::from_secs(60)).await;
    let c_log = log_of(&c_path);
    assert!(
        c_log.contains("no longer exists") && !c_log.contains("DUPLICATE_INSTANCE"),
        "C took over from its dead predecessor:\n{c_log}"
    );
    sigterm(&c);
    assert_eq!(c.wait().unwrap().code(), Some(0));
    assert_eq!(
        numbers(&coll, "seq").await,
        (1..=inserted as i64 + 1).collect::<Vec<_>>()
    );
    plain.database(&db).drop().await.ok();
}
