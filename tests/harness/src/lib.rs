//! Test harness shared by every Rust test that talks to MongoDB.
//!
//! - [`mongodb_uri`] starts the embedded test server (mongo-java-server, see
//!   `tests/mongo-server/`) once per test binary, or returns `MONGODB_URI` when that is set
//!   (meant for a real replica set); tests never know which one they got.
//! - [`mongodb_uri_apart`] is another embedded server of the test binary, for a test whose
//!   load would slow the others (the embedded server runs one command at a time).
//! - [`unique_db_name`] gives each test its own database, so tests can share one server.
//! - [`CommandLog`] counts the commands a client sends, through the driver's command monitoring.
//!
//! The server is a child process whose stdin is a pipe held by this process: when the test
//! binary exits — passing, failing, panicking or killed — the pipe closes and the server stops.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use mongodb::event::command::CommandEvent;
use mongodb::event::EventHandler;
use mongodb::options::ClientOptions;
use mongodb::Client;

/// How long the first start may take: it may compile the launcher and fetch its jars.
const START_TIMEOUT: Duration = Duration::from_secs(300);

struct EmbeddedServer {
    uri: String,
    /// Kept so the child's stdin pipe stays open for the life of the test binary.
    _child: Child,
}

static SERVER: OnceLock<EmbeddedServer> = OnceLock::new();
static APART: OnceLock<EmbeddedServer> = OnceLock::new();

/// The connection string tests use: `MONGODB_URI` if set, else the embedded test server's.
pub fn mongodb_uri() -> String {
    uri_or(&SERVER)
}

/// For a test whose load would slow the tests beside it (10,000 documents written in batches
/// of 1,000): `MONGODB_URI` if set (a replica set takes it), else a second embedded server,
/// started on first use, for the tests that ask for one. The embedded server runs one command
/// at a time, so on the shared one such a test holds up the others' commands, lease renewals
/// included; a test binary per test file used to keep them apart.
pub fn mongodb_uri_apart() -> String {
    uri_or(&APART)
}

fn uri_or(server: &OnceLock<EmbeddedServer>) -> String {
    match std::env::var("MONGODB_URI") {
        Ok(uri) if !uri.trim().is_empty() => uri,
        _ => server.get_or_init(start_embedded_server).uri.clone(),
    }
}

/// A database name no other test (in this or a concurrent run) uses.
pub fn unique_db_name(label: &str) -> String {
    static COUNTER: AtomicU32 = AtomicU32::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let label: String = label
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .take(30)
        .collect();
    format!("mseq_{label}_{}_{n}", std::process::id())
}

/// A client for the test server.
pub async fn client() -> Client {
    Client::with_uri_str(mongodb_uri())
        .await
        .expect("connect to test MongoDB")
}

/// A client whose commands are recorded in the returned [`CommandLog`].
pub async fn monitored_client() -> (Client, CommandLog) {
    let (options, log) = monitored_options().await;
    let client = Client::with_options(options).expect("client with command monitoring");
    (client, log)
}

/// Client options for the test server, for code that builds its own client.
pub async fn client_options() -> ClientOptions {
    ClientOptions::parse(mongodb_uri())
        .await
        .expect("parse MONGODB_URI")
}

/// Client options whose commands are recorded in the returned [`CommandLog`] (for code that
/// builds its own client from them, keeping this handler).
pub async fn monitored_options() -> (ClientOptions, CommandLog) {
    let log = CommandLog::default();
    let mut options = client_options().await;
    let sink = log.clone();
    options.command_event_handler = Some(EventHandler::callback(move |event| {
        if let CommandEvent::Started(started) = event {
            sink.record(&started.command_name);
        }
    }));
    (options, log)
}

/// Command names sent by a monitored client, counted exactly.
#[derive(Clone, Default)]
pub struct CommandLog {
    counts: Arc<Mutex<BTreeMap<String, u64>>>,
}

impl CommandLog {
    fn record(&self, name: &str) {
        let mut counts = self.counts.lock().expect("command log lock");
        *counts.entry(name.to_owned()).or_default() += 1;
    }

    /// How many commands named `name` (e.g. `findAndModify`) were sent since the last reset.
    pub fn count(&self, name: &str) -> u64 {
        self.counts
            .lock()
            .expect("command log lock")
            .get(name)
            .copied()
            .unwrap_or(0)
    }

    /// All counts, e.g. for an assertion message.
    pub fn snapshot(&self) -> BTreeMap<String, u64> {
        self.counts.lock().expect("command log lock").clone()
    }

    pub fn reset(&self) {
        self.counts.lock().expect("command log lock").clear();
    }
}

fn launcher_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../mongo-server/run")
}

fn start_embedded_server() -> EmbeddedServer {
    // One log per server: a test binary may start two.
    static STARTED: AtomicU32 = AtomicU32::new(0);
    let n = STARTED.fetch_add(1, Ordering::Relaxed);
    let log_path =
        std::env::temp_dir().join(format!("mongo-test-server-{}-{n}.log", std::process::id()));
    let log = std::fs::File::create(&log_path).expect("create test server log");
    let mut child = Command::new(launcher_path())
        .args(["--port", "0"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(log)
        .spawn()
        .unwrap_or_else(|e| panic!("start {}: {e}", launcher_path().display()));

    let stdout = child.stdout.take().expect("launcher stdout");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = BufReader::new(stdout).read_line(&mut line);
        let _ = tx.send(line);
    });
    let line = rx.recv_timeout(START_TIMEOUT).unwrap_or_default();
    let uri = line.trim().to_owned();
    if !uri.starts_with("mongodb://") {
        let _ = child.kill();
        let log = std::fs::read_to_string(&log_path).unwrap_or_default();
        panic!(
            "embedded MongoDB test server did not start (log {}):\n{log}",
            log_path.display()
        );
    }
    EmbeddedServer { uri, _child: child }
}
