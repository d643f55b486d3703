//! The commands operators script around the daemon: `mongo-seq health` (the container image's
//! health check) against a live sidecar, a silent port, a port that is not a sidecar and no
//! port at all; `--version`; `completions`.

use crate::common;

use std::io::{Read, Write};
use std::net::TcpListener;
use std::process::Command;
use std::time::{Duration, Instant};

use common::*;
use mongodb::bson::{doc, Document};
use mongodb::Collection;

const WAIT: Duration = Duration::from_secs(90);

fn run(args: &[&str], env: &[(&str, &str)]) -> (i32, String, String) {
    let out = Command::new(bin())
        .args(args)
        .env_remove("MONGO_SEQ_HTTP_BIND")
        .envs(env.iter().copied())
        .output()
        .expect("run mongo-seq");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Runs `health` until its exit code is `want` (the sidecar's state changes asynchronously).
async fn health_until(args: &[&str], env: &[(&str, &str)], want: i32) -> (String, String) {
    health_showing(args, env, want, "").await
}

/// Like `health_until`, also waiting for the report to start with `prefix`: the sidecar's state
/// moves (a trigger registering, running → retrying), and a loaded machine can show a step between.
async fn health_showing(
    args: &[&str],
    env: &[(&str, &str)],
    want: i32,
    prefix: &str,
) -> (String, String) {
    let deadline = Instant::now() + WAIT;
    loop {
        let (code, out, err) = run(args, env);
        if code == want && out.starts_with(prefix) {
            return (out, err);
        }
        assert!(
            Instant::now() < deadline,
            "`mongo-seq {}` never exited {want} with {prefix:?}; last: {code} {out} {err}",
            args.join(" ")
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn health_follows_the_sidecar_healthy_unhealthy_healthy() {
    let (db, plain, orders) = test_db("health_cmd").await;
    let counters: Collection<Document> = plain.database(&db).collection("counters");
    let port = free_port();
    // The file binds loopback; the process is told 0.0.0.0 by the environment, as the container
    // image does, and `health` asks an unspecified address on loopback.
    let text = config_toml(&db, "", "").replace(
        "[http]\nenabled = false",
        &format!("[http]\nbind = \"127.0.0.1\"\nport = {port}"),
    );
    let path = write_config("health_cmd", &text);
    let log = path.with_extension("log");
    let mut sidecar = Command::new(bin())
        .args(["sidecar", "--config"])
        .arg(&path)
        .env("MONGO_SEQ_HTTP_BIND", "0.0.0.0")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::fs::File::create(&log).expect("log file"))
        .spawn()
        .expect("start mongo-seq sidecar");
    let config = path.to_str().expect("utf-8 path");
    let trigger = format!("{db}.orders.seq");

    let env = [("MONGO_SEQ_HTTP_BIND", "0.0.0.0")];
    let healthy = format!("healthy: http://127.0.0.1:{port}/healthz (1 trigger: {trigger} ");
    let (out, _) = health_showing(&["health", "--config", config], &env, 0, &healthy).await;
    assert!(out.starts_with(&healthy), "{out}");
    let addr = format!("127.0.0.1:{port}");
    let (code, json, _) = run(&["health", "--addr", &addr, "--json"], &[]);
    assert_eq!(code, 0);
    let body: serde_json::Value = serde_json::from_str(&json).expect("--json prints /healthz");
    assert_eq!(body["status"], "ok");

    // A counter the sidecar cannot increment: the next batch fails, /healthz says 503.
    wait_running_log(&log).await;
    counters
        .insert_one(doc! { "_id": format!("{db}.orders"), "seq": "not a number" })
        .await
        .expect("malformed counter");
    orders.insert_one(doc! { "i": 1 }).await.expect("insert");
    let unhealthy = format!(
        "unhealthy: http://{addr}/healthz (1 trigger: {trigger} retrying (MALFORMED_COUNTER: "
    );
    let (out, _) = health_showing(&["health", "--addr", &addr], &[], 1, &unhealthy).await;
    assert!(out.starts_with(&unhealthy), "{out}");

    // Repaired by hand: the retry numbers the document and health comes back.
    counters
        .update_one(
            doc! { "_id": format!("{db}.orders") },
            doc! { "$set": { "seq": 0_i64 } },
        )
        .await
        .expect("repair");
    health_until(&["health", "--addr", &addr], &[], 0).await;
    wait_numbered(&orders, "seq", 1, WAIT).await;

    sidecar.kill().expect("SIGKILL");
    sidecar.wait().expect("wait");
    let (code, _, err) = run(&["health", "--addr", &addr, "--timeout-ms", "2000"], &[]);
    assert_eq!(code, 1, "a stopped sidecar is unhealthy");
    assert!(err.contains("cannot reach http://127.0.0.1:"), "{err}");
}

/// Waits until the sidecar's log says it watches its stream.
async fn wait_running_log(log: &std::path::Path) {
    let deadline = Instant::now() + WAIT;
    while !std::fs::read_to_string(log)
        .unwrap_or_default()
        .contains("watching for inserts")
    {
        assert!(Instant::now() < deadline, "sidecar not watching");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[test]
fn health_is_bounded_by_its_timeout_and_refuses_what_is_not_healthz() {
    // A port that accepts and never answers.
    let silent = TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = silent.local_addr().expect("addr").to_string();
    let started = Instant::now();
    let (code, _, err) = run(&["health", "--addr", &addr, "--timeout-ms", "300"], &[]);
    assert_eq!(code, 1);
    assert!(
        err.contains("no answer from http://") && err.contains("300ms"),
        "{err}"
    );
    assert!(started.elapsed() < Duration::from_secs(10), "bounded wait");

    // A port that answers something else.
    let other = TcpListener::bind("127.0.0.1:0").expect("bind");
    let other_addr = other.local_addr().expect("addr").to_string();
    let server = std::thread::spawn(move || {
        let (mut stream, _) = other.accept().expect("accept");
        let mut request = [0u8; 1024];
        let _ = stream.read(&mut request);
        let _ = stream.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello");
    });
    let (code, _, err) = run(&["health", "--addr", &other_addr], &[]);
    server.join().expect("server thread");
    assert_eq!(code, 1);
    assert!(
        err.contains("answered 200 with a body that is not /healthz JSON"),
        "{err}"
    );

    // Nothing listening.
    let closed = format!("127.0.0.1:{}", free_port());
    let (code, _, err) = run(&["health", "--addr", &closed], &[]);
    assert_eq!(code, 1);
    assert!(
        err.contains(&format!("cannot reach http://{closed}/healthz")),
        "{err}"
    );
    drop(silent);
}

#[test]
fn health_usage_errors_exit_2() {
    let base = "[mongodb]\nuri = \"mongodb://localhost/\"\n[[trigger]]\ndatabase = \"a\"\ncollection = \"b\"\nfield = \"n\"\n";
    let cases = [
        (format!("{base}[http]\nport = 0\n"), "port is 0"),
        (
            format!("{base}[http]\nenabled = false\n"),
            "[http] is disabled",
        ),
        (
            format!("{base}[http]\nbind = \"localhost\"\n"),
            "config key `http.bind`",
        ),
        ("[mongodb\n".to_owned(), "config file"),
    ];
    for (index, (text, message)) in cases.iter().enumerate() {
        let path = write_config(&format!("health_usage_{index}"), text);
        let (code, _, err) = run(&["health", "--config", path.to_str().unwrap()], &[]);
        assert_eq!(code, 2, "{text}: {err}");
        assert!(err.contains(message), "{text}: {err} should say {message}");
    }
    let (code, _, err) = run(&["health", "--timeout-ms", "0"], &[]);
    assert_eq!(code, 2, "{err}");
    let (code, _, err) = run(&["health", "--addr", "somewhere"], &[]);
    assert_eq!(code, 2, "{err}");
}

#[test]
fn version_and_completions() {
    let (code, out, _) = run(&["--version"], &[]);
    assert_eq!(code, 0);
    assert!(
        out.starts_with(&format!("mongo-seq {}", env!("CARGO_PKG_VERSION"))),
        "{out}"
    );
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let (code, out, err) = run(&["completions", shell], &[]);
        assert_eq!(code, 0, "{shell}: {err}");
        for word in ["mongo-seq", "sidecar", "set-next", "health", "--config"] {
            assert!(out.contains(word), "{shell} completions lack {word}");
        }
    }
    let (code, _, _) = run(&["completions", "tcsh"], &[]);
    assert_eq!(code, 2);
}

#[test]
fn tools_refuse_bad_flags_before_connecting() {
    // Nothing listens at this URI: a name refused before connecting exits 2 at once.
    let uri = "mongodb://127.0.0.1:9/?serverSelectionTimeoutMS=200";
    let cases: [(&[&str], &str); 10] = [
        (&["counters", "--counters", ".counters"], "--counters: database name \"\""),
        (&["counters", "--counters", "db.system.x"], "--counters: invalid collection name"),
        (&["check", "--db", "a b", "--collection", "c", "--field", "n"], "--db: database name \"a b\""),
        (&["check", "--db", "d", "--collection", "$c", "--field", "n"], "--collection: invalid collection name"),
        (&["import", "--from", "auto-increment", "--db", "a.b"], "--db: database name \"a.b\""),
        (&["import", "--from", "auto-increment", "--db", "d", "--source", "system.x"], "--source: invalid option `source`: must not start with `system.`"),
        (&["import", "--from", "auto-increment", "--db", "d", "--counters", "identitycounters"], "--counters: invalid option `counters`: `identitycounters` is the auto-increment plugins' collection"),
        // check's flags are a trigger, validated as the file's `[[trigger]]` is (named by flag).
        (&["check", "--db", "d", "--collection", "c", "--match", r#"{"$where": "1"}"#], "--match: top-level `$where` is not supported"),
        (&["check", "--db", "d", "--collection", "c", "--step", "0"], "--step: "),
        (&["check", "--db", "d", "--collection", "c", "--field", "n", "--scope", "n"], "--scope: "),
    ];
    for (args, message) in cases {
        let (code, _, err) = run(&[args, &["--uri", uri]].concat(), &[]);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(
            err.contains(message),
            "{args:?}: {err} should say {message}"
        );
    }
}
