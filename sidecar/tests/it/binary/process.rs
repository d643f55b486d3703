//! The `mongo-seq` binary as a process: crash and restart, graceful shutdown, bad configs,
//! and the `check`, `counters` and `set-next` commands.

use crate::common;

use std::process::Command;
use std::time::Duration;

use common::*;
use mongodb::bson::{doc, Document};
use mongodb::Collection;

const WAIT: Duration = Duration::from_secs(90);

fn run(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(bin())
        .args(args)
        .env_remove("MONGO_SEQ_URI")
        .output()
        .expect("run mongo-seq");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigkill_mid_stream_then_restart_numbers_every_document_exactly_once() {
    let db = unique_db_name("restart");
    let plain = client().await;
    let coll: Collection<Document> = plain.database(&db).collection("orders");
    let path = write_config(&db, &config_toml(&db, "", "batch_size = 50"));
    let mut sidecar = spawn_sidecar(&path, &[]);

    // A writer inserts 3,000 documents in small bursts while the sidecar is killed and restarted.
    let writer_coll = coll.clone();
    let writer = tokio::spawn(async move {
        for burst in 0..60 {
            writer_coll
                .insert_many((0..50).map(|i| doc! { "burst": burst, "i": i }))
                .await
                .expect("insert");
            tokio::time::sleep(Duration::from_millis(15)).await;
        }
    });
    let deadline = std::time::Instant::now() + WAIT;
    while count_numbered(&coll, "seq").await < 500 {
        assert!(
            std::time::Instant::now() < deadline,
            "sidecar numbered nothing; log: {}",
            std::fs::read_to_string(path.with_extension("log")).unwrap_or_default()
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    sidecar.kill().expect("SIGKILL");
    sidecar.wait().expect("wait");
    let at_kill = count_numbered(&coll, "seq").await;
    writer.await.expect("writer");
    assert!(at_kill < 3000, "killed mid-stream ({at_kill} numbered)");

    let mut sidecar = spawn_sidecar(&path, &[]);
    wait_numbered(&coll, "seq", 3000, WAIT).await;
    sigterm(&sidecar);
    let status = sidecar.wait().expect("wait");
    assert_eq!(status.code(), Some(0), "graceful shutdown exits 0");

    let seqs = numbers(&coll, "seq").await;
    let mut distinct = seqs.clone();
    distinct.dedup();
    assert_eq!(distinct.len(), 3000, "every document numbered exactly once");
    let largest = *seqs.last().unwrap();
    assert_eq!(
        counter(&plain, &db, &format!("{db}.orders")).await,
        Some(largest),
        "counter equals the largest number"
    );
    println!("restart: {at_kill} numbered at SIGKILL, largest {largest} for 3000 documents");
    let (code, out, err) = run(&[
        "check",
        "--uri",
        &mongodb_uri(),
        "--db",
        &db,
        "--collection",
        "orders",
    ]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains("3000 documents, 3000 numbered, 0 unnumbered, 0 duplicates"),
        "{out}"
    );
    plain.database(&db).drop().await.ok();
}

#[test]
fn bad_configs_exit_2_naming_the_key_and_start_nothing() {
    let uri = "mongodb://127.0.0.1:9/";
    let trigger = "[[trigger]]\ndatabase = \"app\"\ncollection = \"orders\"\nfield = \"seq\"\n";
    let base = format!("[mongodb]\nuri = \"{uri}\"\n");
    let cases: Vec<(&str, String, &str)> = vec![
        (
            "unknown-key",
            format!("{base}[sidecar]\nbatch_sise = 10\n{trigger}"),
            "batch_sise",
        ),
        (
            "missing-field",
            format!("{base}[[trigger]]\ndatabase = \"app\"\nfield = \"seq\"\n"),
            "collection",
        ),
        (
            "wrong-type",
            format!("{base}{trigger}start = \"one\"\n"),
            "start",
        ),
        (
            "invalid-name",
            format!("{base}{trigger}sequence = \"a/b\"\n"),
            "trigger[0].sequence",
        ),
        (
            "invalid-format",
            format!("{base}{trigger}format = \"ORD-{{id}}\"\nformat_field = \"code\"\n"),
            "trigger[0].format",
        ),
        (
            "duplicate-trigger",
            format!("{base}{trigger}{trigger}"),
            "duplicate trigger",
        ),
        (
            "id-field",
            format!(
                "{base}[[trigger]]\ndatabase = \"app\"\ncollection = \"orders\"\nfield = \"_id\"\n"
            ),
            "trigger[0].field",
        ),
        (
            "bad-db",
            format!(
                "{base}[[trigger]]\ndatabase = \"a$b\"\ncollection = \"orders\"\nfield = \"seq\"\n"
            ),
            "trigger[0].database",
        ),
        (
            "bad-uri",
            format!("[mongodb]\nuri = \"http://x\"\n{trigger}"),
            "mongodb.uri",
        ),
        (
            "bad-match",
            format!("{base}{trigger}match = {{ \"$where\" = \"1\" }}\n"),
            "trigger[0].match",
        ),
    ];
    for (name, text, key) in cases {
        let path = write_config(name, &text);
        let (code, out, err) = run(&["sidecar", "--config", path.to_str().unwrap()]);
        assert_eq!(code, 2, "{name}: exit 2, got {code}: {err}");
        assert!(err.contains(key), "{name}: message names `{key}`: {err}");
        assert!(
            !err.contains("starting") && out.is_empty(),
            "{name}: nothing started: {err}"
        );
    }
    let (code, _, err) = run(&["sidecar", "--config", "/nonexistent/mongo-seq.toml"]);
    assert_eq!(code, 2, "{err}");
    let (code, out, _) = run(&["sidecar", "--help"]);
    assert_eq!(code, 0);
    assert!(out.contains("--backfill"));
}

#[test]
fn secrets_never_reach_the_logs() {
    let path = write_config("secret", "[mongodb]\nuri = \"mongodb://admin:hunter2@127.0.0.1:9/?serverSelectionTimeoutMS=200\"\n[http]\nenabled = false\n[[trigger]]\ndatabase = \"app\"\ncollection = \"orders\"\nfield = \"seq\"\n");
    let mut child = spawn_sidecar(&path, &[]);
    std::thread::sleep(Duration::from_millis(1500));
    sigterm(&child);
    let status = child.wait().unwrap();
    let log = std::fs::read_to_string(path.with_extension("log")).unwrap();
    assert_eq!(status.code(), Some(0), "{log}");
    assert!(log.contains("admin:****@"), "{log}");
    assert!(!log.contains("hunter2"), "{log}");

    // Structured logs: one JSON object per line, redacted too.
    let mut child = spawn_sidecar(&path, &["--log-format", "json"]);
    std::thread::sleep(Duration::from_millis(1000));
    sigterm(&child);
    assert_eq!(child.wait().unwrap().code(), Some(0));
    let log = std::fs::read_to_string(path.with_extension("log")).unwrap();
    assert!(!log.contains("hunter2"), "{log}");
    for line in log.lines() {
        let event: serde_json::Value =
            serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"));
        assert!(event.get("level").is_some(), "{line}");
    }
    let (code, out, err) = run(&[
        "sidecar",
        "--config",
        path.to_str().unwrap(),
        "--check-config",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("valid"), "{out}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn check_fails_on_duplicates_and_gaps_and_set_next_never_goes_backwards() {
    let db = unique_db_name("cli");
    let uri = mongodb_uri();
    let plain = client().await;
    let coll: Collection<Document> = plain.database(&db).collection("orders");
    let counters: Collection<Document> = plain.database(&db).collection("counters");
    let name = format!("{db}.orders");
    coll.insert_many([
        doc! { "seq": 1 },
        doc! { "seq": 2 },
        doc! { "seq": 4 },
        doc! {},
    ])
    .await
    .unwrap();
    counters
        .insert_one(doc! { "_id": &name, "seq": 4 })
        .await
        .unwrap();
    let args = [
        "check",
        "--uri",
        &uri,
        "--db",
        &db,
        "--collection",
        "orders",
        "--field",
        "seq",
    ];

    let (code, out, err) = run(&args);
    assert_eq!(code, 1, "an unnumbered document fails: {out}{err}");
    assert!(
        out.contains("4 documents, 3 numbered, 1 unnumbered, 0 duplicates, 1 gaps, largest 4"),
        "{out}"
    );
    coll.delete_many(doc! { "seq": { "$exists": false } })
        .await
        .unwrap();
    let (code, out, err) = run(&args);
    assert_eq!(code, 0, "gaps alone pass: {out}{err}");
    let (code, _, _) = run(&[&args[..], &["--gapless"]].concat());
    assert_eq!(code, 1, "--gapless fails on gaps");
    coll.insert_one(doc! { "seq": 2 }).await.unwrap();
    let (code, out, _) = run(&args);
    assert_eq!(code, 1, "duplicates fail: {out}");
    assert!(out.contains("1 duplicates"), "{out}");

    let counters_ns = format!("{db}.counters");
    let (code, out, err) = run(&["counters", "--uri", &uri, "--counters", &counters_ns]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains(&name) && out.contains('4'), "{out}");
    let cfg = write_config(&format!("{db}-cli"), &config_toml(&db, "", ""));
    let cfg = cfg.to_str().unwrap();
    let (code, _, err) = run(&["set-next", &name, "3", "--config", cfg]);
    assert_eq!(
        code, 3,
        "backwards refused (exit 3: refused without --force)"
    );
    assert!(err.contains("--force"), "{err}");
    let (code, out, err) = run(&["set-next", &name, "10", "--config", cfg]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("next number is 10"), "{out}");
    assert_eq!(counter(&plain, &db, &name).await, Some(9));
    let (code, _, err) = run(&["set-next", &name, "3", "--force", "--config", cfg]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(counter(&plain, &db, &name).await, Some(2));
    for sub in ["check", "counters", "set-next"] {
        let (code, out, _) = run(&[sub, "--help"]);
        assert_eq!(code, 0);
        assert!(out.contains("Usage"), "{out}");
    }
    plain.database(&db).drop().await.ok();
}

/// A port nothing listens on (now).
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Starts a private embedded server on `port` (the launcher prints its URI when ready).
fn private_server(port: u16) -> (std::process::Child, String) {
    use std::io::BufRead;
    let launcher =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/mongo-server/run");
    let mut child = Command::new(launcher)
        .args(["--port", &port.to_string()])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("start private test server");
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert!(
        line.starts_with("mongodb://"),
        "private server did not start: {line:?}"
    );
    (child, line.trim().to_owned())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_restart_is_retried_with_backoff_and_numbering_resumes() {
    if std::env::var("MONGODB_URI").is_ok_and(|u| !u.trim().is_empty()) {
        println!("skipped: needs a server it may stop (the embedded one)");
        return;
    }
    let port = free_port();
    let (mut server, uri) = private_server(port);
    // Notice the server's return quickly (driver defaults: 10 s heartbeat, 30 s selection).
    let uri = format!("{uri}?heartbeatFrequencyMS=500&serverSelectionTimeoutMS=2000");
    let db = unique_db_name("outage");
    let text = config_toml(&db, "", "").replace(&mongodb_uri(), &uri);
    let cfg = mongo_seq_sidecar::config::parse(&text, "test").unwrap();
    let client = mongo_seq_sidecar::server::connect(&uri).await.unwrap();
    let coll: Collection<Document> = client.database(&db).collection("orders");
    let run = start(
        cfg,
        mongodb::options::ClientOptions::parse(&uri).await.unwrap(),
        false,
    );
    wait_running(&run).await;
    coll.insert_many((0..3).map(|i| doc! { "i": i }))
        .await
        .unwrap();
    wait_numbered(&coll, "seq", 3, WAIT).await;

    // The server goes away: the trigger reports the transient error and retries.
    server.kill().unwrap();
    server.wait().unwrap();
    let trigger = format!("{db}.orders.seq");
    let deadline = std::time::Instant::now() + WAIT;
    while run
        .metrics
        .errors
        .with_label_values(&[&trigger, "transient"])
        .get()
        == 0
    {
        assert!(
            std::time::Instant::now() < deadline,
            "no transient error reported: {}",
            run.metrics.render()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(!run.health.snapshot().0, "unhealthy during the outage");

    // It comes back (empty: the test server keeps data in memory) on the same port.
    let (server, _) = private_server(port);
    wait_running(&run).await;
    coll.insert_many((0..4).map(|i| doc! { "after": i }))
        .await
        .unwrap();
    wait_numbered(&coll, "seq", 4, WAIT).await;
    assert!(run.health.snapshot().0);
    run.stop().await;
    drop(server);
}

/// SIGTERM → exit 0 within the 10 s CONFIG.md promises (Kubernetes' grace period is 30 s), even
/// when no server was ever reachable (the driver would wait 30 s to select one), also right
/// after the start.
#[test]
fn shutdown_is_bounded_when_the_server_was_never_reachable() {
    let closed = free_port();
    for (name, uri, after) in [
        ("refused", format!("mongodb://127.0.0.1:{closed}/"), 1500),
        (
            "unresolvable",
            "mongodb://mongo-seq-test.invalid:27017/".to_owned(),
            1500,
        ),
        ("at-once", format!("mongodb://127.0.0.1:{closed}/"), 100),
    ] {
        let path = write_config(
            &format!("unreachable-{name}"),
            &format!("[mongodb]\nuri = \"{uri}\"\n[http]\nport = 0\n[[trigger]]\ndatabase = \"app\"\ncollection = \"orders\"\nfield = \"seq\"\n[[trigger]]\ndatabase = \"app\"\ncollection = \"invoices\"\nfield = \"seq\"\n"),
        );
        let mut child = spawn_sidecar(&path, &[]);
        std::thread::sleep(Duration::from_millis(after));
        let asked = std::time::Instant::now();
        sigterm(&child);
        let deadline = asked + Duration::from_secs(40);
        let status = loop {
            if let Some(status) = child.try_wait().unwrap() {
                break status;
            }
            if std::time::Instant::now() > deadline {
                child.kill().ok();
                break child.wait().unwrap();
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        let took = asked.elapsed();
        let log = std::fs::read_to_string(path.with_extension("log")).unwrap_or_default();
        println!(
            "{name}: SIGTERM → exit {:?} in {:.1} s",
            status.code(),
            took.as_secs_f64()
        );
        assert_eq!(status.code(), Some(0), "{name}: exit 0:\n{log}");
        assert!(
            took <= Duration::from_millis(10_500),
            "{name}: exited {:.1} s after SIGTERM (promised: 10 s):\n{log}",
            took.as_secs_f64()
        );
    }
}

/// The same bound when the server goes away while a trigger holds its lease and is busy.
#[test]
fn shutdown_is_bounded_when_the_server_is_lost_while_holding_the_lease() {
    if std::env::var("MONGODB_URI").is_ok_and(|u| !u.trim().is_empty()) {
        println!("skipped: needs a server it may stop (the embedded one)");
        return;
    }
    let port = free_port();
    let (mut server, uri) = private_server(port);
    let path = write_config(
        "lost-server",
        &format!("[mongodb]\nuri = \"{uri}\"\n[http]\nport = 0\n[[trigger]]\ndatabase = \"app\"\ncollection = \"orders\"\nfield = \"seq\"\n"),
    );
    let log = path.with_extension("log");
    let mut child = spawn_sidecar(&path, &[]);
    let deadline = std::time::Instant::now() + WAIT;
    while !std::fs::read_to_string(&log)
        .unwrap_or_default()
        .contains("watching for inserts")
    {
        assert!(std::time::Instant::now() < deadline, "not watching");
        std::thread::sleep(Duration::from_millis(20));
    }
    server.kill().unwrap();
    server.wait().unwrap();
    std::thread::sleep(Duration::from_millis(500));
    let asked = std::time::Instant::now();
    sigterm(&child);
    let status = child.wait().unwrap();
    let took = asked.elapsed();
    println!(
        "server lost while holding the lease: SIGTERM → exit {:?} in {:.1} s",
        status.code(),
        took.as_secs_f64()
    );
    let text = std::fs::read_to_string(&log).unwrap_or_default();
    assert_eq!(status.code(), Some(0), "{text}");
    assert!(
        took <= Duration::from_millis(10_500),
        "{:.1} s:\n{text}",
        took.as_secs_f64()
    );
}
