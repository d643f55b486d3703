//! Two sidecar processes on the same config: the active one is paused (SIGSTOP) past its lease,
//! the other takes over, the first is resumed (SIGCONT) and must not start numbering anything.

use crate::common;

use std::process::{Child, Command};
use std::time::{Duration, Instant};

use common::*;
use mongodb::bson::{doc, Document};
use mongodb::Collection;
use serde_json::Value;

const WAIT: Duration = Duration::from_secs(90);

fn signal(child: &Child, sig: &str) {
    let status = Command::new("kill")
        .args([sig, &child.id().to_string()])
        .status()
        .expect("kill");
    assert!(status.success(), "kill {sig}");
}

fn log_lines(path: &std::path::Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter_map(|line| serde_json::from_str(line).ok())
        .collect()
}

/// A field of a JSON log line (flattened or under `fields`).
fn field<'a>(line: &'a Value, key: &str) -> &'a Value {
    if line[key].is_null() {
        &line["fields"][key]
    } else {
        &line[key]
    }
}

fn message(line: &Value) -> &str {
    field(line, "message").as_str().unwrap_or_default()
}

fn wait_log(path: &std::path::Path, what: &str) {
    let deadline = Instant::now() + WAIT;
    while !log_lines(path).iter().any(|l| message(l).contains(what)) {
        assert!(
            Instant::now() < deadline,
            "no `{what}` in {}:\n{}",
            path.display(),
            std::fs::read_to_string(path).unwrap_or_default()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_paused_holder_resumed_after_a_takeover_assigns_nothing() {
    let (db, plain, coll) = test_db("pause").await;
    let lease = "[lease]\nttl_ms = 1500";
    let text = |id: &str| {
        config_toml(
            &db,
            "gapless = true",
            &format!("batch_size = 20\n{lease}\ninstance_id = \"{id}\"\n"),
        )
    };
    let (a_path, b_path) = (
        write_config(&format!("{db}-A"), &text("A")),
        write_config(&format!("{db}-B"), &text("B")),
    );
    let (a_log, b_log) = (a_path.with_extension("log"), b_path.with_extension("log"));
    let json = ["--log-format", "json", "--log-level", "mongo_seq=debug"];
    let mut a = spawn_sidecar(&a_path, &json);
    wait_log(&a_log, "lease acquired");
    let mut b = spawn_sidecar(&b_path, &json);
    wait_log(&b_log, "standby");

    // A writer inserts continuously while A is paused, B takes over and A resumes.
    let (stop, writer) = steady_writer(&coll, 10, Duration::from_millis(30));
    let deadline = Instant::now() + WAIT;
    while count_numbered(&coll, "seq").await < 100 {
        assert!(Instant::now() < deadline, "A numbered nothing");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    signal(&a, "-STOP");
    let paused = Instant::now();
    wait_log(&b_log, "lease acquired");
    let takeover = paused.elapsed();
    // B numbers for a while; then A wakes up, believing for an instant it is still active.
    let at_takeover = count_numbered(&coll, "seq").await;
    while count_numbered(&coll, "seq").await < at_takeover + 100 {
        assert!(Instant::now() < deadline + WAIT, "B numbers nothing");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let resumed_at = log_lines(&a_log).len();
    signal(&a, "-CONT");
    wait_log(&a_log, "lease lost");
    tokio::time::sleep(Duration::from_millis(1500)).await;
    stop.cancel();
    let inserted = writer.await.expect("writer");
    wait_numbered(&coll, "seq", inserted, WAIT).await;

    // After resuming, A decided nothing: no batch started after SIGCONT numbered anything, and
    // no lease re-acquired. The SIGSTOP may land while a batch's last write is on the wire (sent
    // before the pause, applied by the server before the takeover): that one batch may report
    // "batch applied" after SIGCONT, but only before A notices the lost lease; any batch A
    // started after SIGCONT meets its fence check first.
    let after: Vec<Value> = log_lines(&a_log).into_iter().skip(resumed_at).collect();
    let noticed = after
        .iter()
        .position(|l| message(l).contains("not the lease holder"))
        .unwrap_or(after.len());
    let applied = |lines: &[Value]| -> Vec<u64> {
        lines
            .iter()
            .filter(|l| message(l).contains("batch applied"))
            .filter_map(|l| field(l, "numbered").as_u64())
            .filter(|&n| n > 0)
            .collect()
    };
    assert!(
        applied(&after[..noticed]).len() <= 1,
        "A numbered more than the batch in flight at SIGSTOP:\n{after:#?}"
    );
    assert_eq!(
        applied(&after[noticed..]),
        Vec::<u64>::new(),
        "A numbered documents after SIGCONT:\n{after:#?}"
    );
    assert!(
        !after.iter().any(|l| message(l).contains("lease acquired")),
        "A took the lease back: {after:#?}"
    );
    assert_eq!(
        log_lines(&b_log)
            .iter()
            .filter(|l| message(l).contains("lease acquired"))
            .count(),
        1
    );
    let notice: Vec<&str> = after
        .iter()
        .map(message)
        .filter(|m| m.contains("lease") || m.contains("fenced"))
        .collect();
    println!("paused A for a takeover by B after {takeover:?}; A after SIGCONT: {notice:?}");

    // Every document numbered exactly once, without gaps, the counter carrying B's epoch.
    let seqs = numbers(&coll, "seq").await;
    assert_eq!(
        seqs,
        (1..=inserted as i64).collect::<Vec<_>>(),
        "gapless and unique"
    );
    let counters: Collection<Document> = plain.database(&db).collection("counters");
    let c = counters
        .find_one(doc! { "_id": format!("{db}.orders") })
        .await
        .unwrap()
        .unwrap();
    assert_eq!(c.get_i64("epoch").unwrap(), 2, "{c}");
    assert!(c.get("intent").is_none(), "{c}");

    for child in [&mut a, &mut b] {
        signal(child, "-TERM");
        assert_eq!(child.wait().unwrap().code(), Some(0));
    }
    plain.database(&db).drop().await.ok();
}
