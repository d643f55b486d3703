//! Configuration errors as an operator meets them, through the binary: exit code 2, the key
//! named, what is wrong said in the key's own unit, no driver dump, no password, and
//! `--check-config` refusing whatever startup would refuse.

use crate::common;

use common::*;

const TRIGGER: &str = "[[trigger]]\ndatabase = \"app\"\ncollection = \"orders\"\nfield = \"seq\"\n";

fn config_with(uri: &str, extra: &str) -> String {
    format!("[mongodb]\nuri = \"{uri}\"\n{extra}\n{TRIGGER}")
}

/// `sidecar --config <text> --check-config` and a plain start: both must refuse alike.
fn refused(name: &str, text: &str, env: &[(&str, &str)]) -> Vec<String> {
    let path = write_config(name, text);
    let path = path.to_str().unwrap();
    let mut messages = Vec::new();
    for args in [
        vec!["sidecar", "--config", path, "--check-config"],
        vec!["sidecar", "--config", path],
    ] {
        let (code, out, err) = run_bin(&args, env);
        assert_eq!(code, 2, "{name} {args:?}: exit 2, got {code}:\n{out}{err}");
        assert!(out.is_empty(), "{name}: nothing on stdout: {out}");
        assert!(!err.contains("starting"), "{name}: nothing started: {err}");
        messages.push(err);
    }
    messages
}

#[test]
fn a_bad_connection_string_is_a_configuration_error_naming_the_key() {
    let cases = [
        ("empty-host", "mongodb://", "host"),
        ("bad-port", "mongodb://admin:hunter2@h:99999/", "99999"),
        (
            "unknown-option",
            "mongodb://h/?bogusOption=1",
            "bogusoption",
        ),
        (
            "direct-several",
            "mongodb://h1,h2/?directConnection=true",
            "directConnection",
        ),
        ("no-scheme", "h:27017", "mongodb://"),
    ];
    for (name, uri, reason) in cases {
        for err in refused(name, &config_with(uri, ""), &[]) {
            assert!(err.contains("mongodb.uri"), "{name}: names the key: {err}");
            assert!(
                err.to_lowercase().contains(&reason.to_lowercase()),
                "{name}: says what is wrong ({reason}): {err}"
            );
            for dump in ["Kind:", "labels:", "server response", "source: None"] {
                assert!(!err.contains(dump), "{name}: no driver dump: {err}");
            }
            assert!(!err.contains("hunter2"), "{name}: no password: {err}");
            assert!(
                err.lines().count() <= 2 && err.len() < 400,
                "{name}: short: {err}"
            );
        }
    }

    // From the environment: the variable is named too.
    for err in refused(
        "env-uri",
        &config_with("mongodb://127.0.0.1/", ""),
        &[("MONGO_SEQ_URI", "mongodb://admin:hunter2@h:0/")],
    ) {
        assert!(
            err.contains("mongodb.uri") && err.contains("MONGO_SEQ_URI"),
            "{err}"
        );
        assert!(!err.contains("hunter2"), "{err}");
    }

    // The tools' --uri and MONGO_SEQ_URI: usage errors naming them, before any connection.
    let (code, _, err) = run_bin(
        &[
            "check",
            "--uri",
            "mongodb://admin:hunter2@h:99999/",
            "--db",
            "app",
            "--collection",
            "orders",
        ],
        &[],
    );
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("--uri") && err.contains("99999") && !err.contains("hunter2"),
        "{err}"
    );
    let (code, _, err) = run_bin(
        &["counters", "--counters", "app.counters"],
        &[("MONGO_SEQ_URI", "mongodb://h/?bogusOption=1")],
    );
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("MONGO_SEQ_URI") && err.contains("bogusoption"),
        "{err}"
    );
}

#[test]
fn numeric_keys_are_checked_in_their_own_unit() {
    // (key, table, value, what the message must say)
    let cases = [
        ("heartbeat_secs", "sidecar", "0", "second"),
        ("progress_secs", "sidecar", "0", "second"),
        ("heartbeat_secs", "sidecar", "9223372036854775807", "second"),
        ("poll_interval_ms", "sidecar", "0", "ms"),
        ("max_await_ms", "sidecar", "0", "ms"),
        ("linger_ms", "sidecar", "1001", "ms"),
        ("backoff_initial_ms", "sidecar", "0", "ms"),
        ("backoff_max_ms", "sidecar", "18446744073709551615", "ms"),
        ("backoff_initial_ms", "sidecar", "9223372036854775807", "ms"),
        ("batch_size", "sidecar", "0", "documents"),
        ("ttl_ms", "lease", "10", "ms"),
        ("renew_ms", "lease", "0", "ms"),
        ("margin_ms", "lease", "10000", "ms"),
    ];
    for (key, table, value, unit) in cases {
        let name = format!("{table}-{key}-{value}");
        let text = config_with(
            "mongodb://127.0.0.1:9/",
            &format!("[{table}]\n{key} = {value}\n"),
        );
        for err in refused(&name, &text, &[]) {
            assert!(
                err.contains(&format!("{table}.{key}")),
                "{name}: names the key: {err}"
            );
            assert!(err.contains(unit), "{name}: says `{unit}`: {err}");
            if key.ends_with("_secs") {
                assert!(
                    !err.contains("1000"),
                    "{name}: no milliseconds in a seconds key: {err}"
                );
            }
        }
    }
    // backoff_max below backoff_initial: both values, in ms.
    let text = config_with(
        "mongodb://127.0.0.1:9/",
        "[sidecar]\nbackoff_initial_ms = 500\nbackoff_max_ms = 100\n",
    );
    for err in refused("backoff-order", &text, &[]) {
        assert!(
            err.contains("sidecar.backoff_max_ms") && err.contains("500 ms") && err.contains("100"),
            "{err}"
        );
    }
}

/// Each distinct piece of an error message appears once (no "X: X" from an error that both
/// prints its cause and chains it).
fn assert_said_once(err: &str, piece: &str) {
    assert_eq!(err.matches(piece).count(), 1, "`{piece}` once in: {err}");
}

#[test]
fn errors_say_their_cause_once() {
    let (code, _, err) = run_bin(&["sidecar", "--config", "/nonexistent/mongo-seq.toml"], &[]);
    assert_eq!(code, 2, "{err}");
    assert_said_once(&err, "No such file or directory");

    // The HTTP port is taken (say, by another sidecar on this host).
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port();
    let path = write_config(
        "port-taken",
        &config_with(
            "mongodb://127.0.0.1:9/?serverSelectionTimeoutMS=200",
            &format!("[http]\nport = {port}\n"),
        ),
    );
    let (code, _, err) = run_bin(&["sidecar", "--config", path.to_str().unwrap()], &[]);
    assert_eq!(code, 1, "{err}");
    assert_said_once(&err, "in use");
    assert!(err.contains("http.port"), "names the key: {err}");

    // A tool that cannot reach the server.
    let (code, _, err) = run_bin(
        &[
            "counters",
            "--uri",
            "mongodb://127.0.0.1:9/?serverSelectionTimeoutMS=200",
            "--counters",
            "app.counters",
        ],
        &[],
    );
    assert_eq!(code, 1, "{err}");
    assert_said_once(&err, "Server selection timeout");
    for dump in ["labels:", "server response:", "source: None"] {
        assert!(!err.contains(dump), "no driver dump: {err}");
    }
}

#[test]
fn the_http_port_can_be_set_per_instance_from_the_environment() {
    let text = config_with("mongodb://127.0.0.1:9/", "[http]\nport = 9464\n");
    let cfg = mongo_seq_sidecar::config::validate(toml::from_str(&text).unwrap(), |name| {
        (name == "MONGO_SEQ_HTTP_PORT").then(|| "9465".to_owned())
    })
    .unwrap();
    assert_eq!(cfg.http.unwrap().port(), 9465);
    for err in refused("bad-port-env", &text, &[("MONGO_SEQ_HTTP_PORT", "94650")]) {
        assert!(
            err.contains("http.port") && err.contains("MONGO_SEQ_HTTP_PORT"),
            "{err}"
        );
    }
}
