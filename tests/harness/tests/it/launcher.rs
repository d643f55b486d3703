//! The embedded test server's launcher stops when told to, so no test run leaves one behind.
//! These run with MONGODB_URI set too: they test the launcher, not the server tests use.

use std::io::{BufRead, BufReader};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn launcher() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../mongo-server/run")
}

/// Starts the launcher, checks it accepts connections at the address it printed.
fn start() -> (Child, String) {
    let mut child = Command::new(launcher())
        .args(["--port", "0"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start launcher");
    let mut line = String::new();
    BufReader::new(child.stdout.take().expect("stdout"))
        .read_line(&mut line)
        .expect("read uri");
    let address = line
        .trim()
        .trim_start_matches("mongodb://")
        .trim_end_matches('/')
        .to_owned();
    TcpStream::connect(&address)
        .unwrap_or_else(|e| panic!("connect to {address} from {line:?}: {e}"));
    (child, address)
}

fn wait_for_exit(child: &mut Child, address: &str) {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        if let Some(status) = child.try_wait().expect("try_wait") {
            assert!(
                status.success() || status.code().is_none() || status.code() == Some(143),
                "exit status {status}"
            );
            break;
        }
        assert!(
            Instant::now() < deadline,
            "launcher still running 20 s after being told to stop"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(
        TcpStream::connect(address).is_err(),
        "port {address} still accepts connections"
    );
}

#[test]
fn stops_when_stdin_closes() {
    let (mut child, address) = start();
    drop(child.stdin.take());
    wait_for_exit(&mut child, &address);
}

#[test]
fn stops_on_sigterm() {
    let (mut child, address) = start();
    let status = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .expect("kill");
    assert!(status.success());
    wait_for_exit(&mut child, &address);
}
