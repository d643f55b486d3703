//! A lone sidecar with the default instance id (`<host>:<pid>`, new on every start) under a
//! kill loop: a restarted process finds its predecessor's lease, proves that process gone and
//! takes over at once instead of waiting for the lease to expire. A live holder is never
//! taken over early.

use crate::common;

use std::process::{Child, Command};
use std::time::{Duration, Instant};

use common::*;
use mongodb::bson::doc;

const TTL_MS: u64 = 30_000;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restarted_sidecar_resumes_at_once_when_its_predecessor_is_gone() {
    let (db, plain, coll) = test_db("restart_stall").await;
    // An operator's setup: one sidecar, no instance id; a long lease so waiting for it shows.
    let text = config_toml(
        &db,
        "",
        &format!("batch_size = 100\n[lease]\nttl_ms = {TTL_MS}\n"),
    );
    let path = write_config(&format!("{db}-lone"), &text);
    let mut sidecar = spawn_sidecar(&path, &[]);

    // A writer inserts 100 documents/s throughout.
    let (stop, writer) = steady_writer(&coll, 10, Duration::from_millis(100));
    let numbered = || count_numbered(&coll, "seq");
    let deadline = Instant::now() + Duration::from_secs(90);
    while numbered().await < 50 {
        assert!(
            Instant::now() < deadline,
            "not numbering: {}",
            log_of(&path)
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }

    let mut stalls = Vec::new();
    let mut backlogs = Vec::new();
    for round in 0..3 {
        tokio::time::sleep(Duration::from_millis(1000 + 700 * round)).await;
        sidecar.kill().expect("SIGKILL");
        sidecar.wait().expect("wait");
        let at_kill = numbered().await;
        sidecar = spawn_sidecar(&path, &[]);
        let restarted = Instant::now();
        let mut backlog = 0;
        // Stalled until numbering moves past what was numbered at the kill.
        loop {
            let now = numbered().await;
            if now > at_kill {
                break;
            }
            let total = coll.count_documents(doc! {}).await.unwrap();
            backlog = backlog.max(total - now);
            assert!(
                restarted.elapsed() < Duration::from_millis(TTL_MS / 3),
                "restart {round}: nothing numbered {:.1} s after the restart (lease {} s): it waits for its dead predecessor's lease\n{}",
                restarted.elapsed().as_secs_f64(),
                TTL_MS / 1000,
                log_of(&path)
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        stalls.push(restarted.elapsed().as_secs_f64());
        backlogs.push(backlog);
    }
    stop.cancel();
    let inserted = writer.await.expect("writer");
    wait_numbered(&coll, "seq", inserted, Duration::from_secs(90)).await;
    sigterm(&sidecar);
    assert_eq!(sidecar.wait().unwrap().code(), Some(0));
    let log = log_of(&path);
    println!(
        "restart stalls after SIGKILL (lease ttl {} s): {:?} s, documents waiting at most {:?}",
        TTL_MS / 1000,
        stalls.iter().map(|s| format!("{s:.1}")).collect::<Vec<_>>(),
        backlogs
    );
    assert!(
        log.contains("no longer exists"),
        "took over as the predecessor is gone:\n{log}"
    );
    let mut seqs = numbers(&coll, "seq").await;
    seqs.dedup();
    assert_eq!(seqs.len() as u64, inserted, "every document once");
    plain.database(&db).drop().await.ok();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_live_holder_is_never_taken_over_early_and_a_dead_one_at_once() {
    let (db, plain, coll) = test_db("live_holder").await;
    let text = config_toml(&db, "", &format!("[lease]\nttl_ms = {TTL_MS}\n"));
    let (a_path, b_path) = (
        write_config(&format!("{db}-A"), &text),
        write_config(&format!("{db}-B"), &text),
    );
    let mut a = spawn_sidecar(&a_path, &[]);
    let deadline = Instant::now() + Duration::from_secs(90);
    while !log_of(&a_path).contains("watching for inserts") {
        assert!(
            Instant::now() < deadline,
            "A not running: {}",
            log_of(&a_path)
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    // B, same host, same config, default id: a live A is never taken over.
    let mut b = spawn_sidecar(&b_path, &[]);
    while !log_of(&b_path).contains("standby") {
        assert!(
            Instant::now() < deadline,
            "B not standing by: {}",
            log_of(&b_path)
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    coll.insert_one(doc! { "by": "A" }).await.unwrap();
    wait_numbered(&coll, "seq", 1, Duration::from_secs(60)).await;
    // SIGSTOP A for a while: paused is not gone (B keeps probing every renew interval).
    let signal = |child: &Child, sig: &str| {
        Command::new("kill")
            .args([sig, &child.id().to_string()])
            .status()
            .unwrap()
    };
    signal(&a, "-STOP");
    std::thread::sleep(Duration::from_secs(3));
    assert!(
        !log_of(&b_path).contains("lease acquired"),
        "B took over from a live (paused) A:\n{}",
        log_of(&b_path)
    );
    signal(&a, "-CONT");
    // A dies: B takes over at once, long before the lease would expire.
    a.kill().unwrap();
    a.wait().unwrap();
    let died = Instant::now();
    coll.insert_one(doc! { "by": "B" }).await.unwrap();
    wait_numbered(&coll, "seq", 2, Duration::from_millis(TTL_MS / 2)).await;
    println!(
        "A SIGKILLed: B numbering after {:.1} s (lease ttl {} s)",
        died.elapsed().as_secs_f64(),
        TTL_MS / 1000
    );
    sigterm(&b);
    assert_eq!(b.wait().unwrap().code(), Some(0));
    assert_eq!(numbers(&coll, "seq").await, vec![1, 2]);
    plain.database(&db).drop().await.ok();
}
