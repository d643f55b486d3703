//! Shared by the sidecar's integration tests: configs for a test database, the sidecar run
//! in-process (with the test's client, so commands can be counted) or as a process.
#![allow(dead_code)]

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use mongo_seq_sidecar::config::{self, Config};
use mongo_seq_sidecar::health::Health;
use mongo_seq_sidecar::metrics::Metrics;
use mongo_seq_sidecar::server::{self, RunOptions};
use mongodb::bson::{doc, Document};
use mongodb::options::ClientOptions;
use mongodb::{Client, Collection};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

#[allow(unused_imports)]
pub use mongo_seq_test_harness::{
    client, client_options as options, mongodb_uri, mongodb_uri_apart, monitored_client,
    monitored_options, unique_db_name,
};

/// Whether a command counted by the monitor belongs to the change stream (`aggregate` opening
/// it, its `getMore`s: how many depends on how the server splits its batches) or to the
/// driver's housekeeping, rather than to numbering.
pub fn is_stream_or_housekeeping(command: &str) -> bool {
    matches!(
        command,
        "getMore"
            | "aggregate"
            | "isMaster"
            | "ismaster"
            | "hello"
            | "endSessions"
            | "killCursors"
            | "buildInfo"
            | "ping"
    )
}

/// Fast pacing for tests; `trigger` is the body of one `[[trigger]]` table (TOML lines);
/// `sidecar` lines go into `[sidecar]` (and may be followed by a `[lease]` table).
pub fn config_toml(db: &str, trigger: &str, sidecar: &str) -> String {
    config_toml_at(&mongodb_uri(), db, trigger, sidecar)
}

/// [`config_toml`] for the server at `uri` (e.g. [`mongodb_uri_apart`]).
pub fn config_toml_at(uri: &str, db: &str, trigger: &str, sidecar: &str) -> String {
    let defaults: String = [
        "poll_interval_ms = 20",
        "max_await_ms = 200",
        "heartbeat_secs = 1",
        "backoff_initial_ms = 50",
        "backoff_max_ms = 400",
    ]
    .iter()
    .filter(|line| !sidecar.contains(line.split(' ').next().unwrap_or_default()))
    .map(|line| format!("{line}\n"))
    .collect();
    format!(
        "[mongodb]\nuri = \"{uri}\"\ncounters = \"{db}.counters\"\n\n[sidecar]\n{defaults}{sidecar}\n\n[http]\nenabled = false\n\n{lease}[[trigger]]\ndatabase = \"{db}\"\ncollection = \"orders\"\nfield = \"seq\"\n{trigger}\n",
        // `sidecar` may end with its own `[lease]` table; else short leases, so a restarted
        // process (another instance id) takes over within 1.5 s.
        lease = if sidecar.contains("[lease]") { "" } else { "[lease]\nttl_ms = 1500\n\n" }
    )
}

pub fn config(db: &str, trigger: &str, sidecar: &str) -> Config {
    config::parse(&config_toml(db, trigger, sidecar), "test").expect("valid test config")
}

pub struct Running {
    pub shutdown: CancellationToken,
    pub handle: JoinHandle<Result<(), server::ServerError>>,
    pub metrics: Metrics,
    pub health: Health,
}

impl Running {
    pub async fn stop(self) {
        self.shutdown.cancel();
        tokio::time::timeout(Duration::from_secs(30), self.handle)
            .await
            .expect("sidecar stops within 30 s")
            .expect("sidecar task")
            .expect("sidecar ran cleanly");
    }
}

/// Runs the sidecar in this process with a client made from `options` (a command monitor
/// already in them keeps receiving the sidecar's commands).
pub fn start(config: Config, options: ClientOptions, backfill: bool) -> Running {
    let shutdown = CancellationToken::new();
    let (metrics, health) = (Metrics::new(), Health::default());
    let handle = tokio::spawn(server::run_with_options(
        config,
        options,
        RunOptions { backfill },
        metrics.clone(),
        health.clone(),
        shutdown.clone(),
    ));
    Running {
        shutdown,
        handle,
        metrics,
        health,
    }
}

/// Waits until every trigger watches its stream (backfill done).
pub async fn wait_running(run: &Running) {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let (_, triggers) = run.health.snapshot();
        if !triggers.is_empty()
            && triggers
                .values()
                .all(|h| h.state == mongo_seq_sidecar::health::State::Running)
        {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "sidecar not running: {triggers:?}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

pub async fn count_numbered(coll: &Collection<Document>, field: &str) -> u64 {
    coll.count_documents(doc! { field: { "$exists": true } })
        .await
        .expect("count")
}

/// Waits until `n` documents carry `field`.
pub async fn wait_numbered(coll: &Collection<Document>, field: &str, n: u64, timeout: Duration) {
    let deadline = Instant::now() + timeout;
    loop {
        let have = count_numbered(coll, field).await;
        if have >= n {
            assert_eq!(have, n, "more documents numbered than expected");
            return;
        }
        assert!(
            Instant::now() < deadline,
            "only {have} of {n} documents numbered after {timeout:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Numbers by `field`, sorted, and the counter's value.
pub async fn numbers(coll: &Collection<Document>, field: &str) -> Vec<i64> {
    use futures_util::TryStreamExt;
    let docs: Vec<Document> = coll
        .find(doc! { field: { "$exists": true } })
        .await
        .expect("find")
        .try_collect()
        .await
        .expect("docs");
    let mut out: Vec<i64> = docs
        .iter()
        .map(|d| d.get_i64(field).expect("int64 number"))
        .collect();
    out.sort_unstable();
    out
}

pub async fn counter(client: &Client, db: &str, id: &str) -> Option<i64> {
    let c: Collection<Document> = client.database(db).collection("counters");
    c.find_one(doc! { "_id": id })
        .await
        .expect("counter")
        .and_then(|d| {
            d.get_i64("seq")
                .ok()
                .or(d.get_i32("seq").ok().map(i64::from))
        })
}

pub fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_mongo-seq"))
}

/// A port nothing listens on (bound once, then released).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("free port")
        .port()
}

/// Writes `text` to a temporary config file of its own (its log beside it), even where two tests
/// of this binary give one `name`.
pub fn write_config(name: &str, text: &str) -> PathBuf {
    static WRITTEN: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = WRITTEN.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let pid = std::process::id();
    let path = std::env::temp_dir().join(format!("mongo-seq-test-{pid}-{n}-{name}.toml"));
    std::fs::write(&path, text).expect("write config");
    path
}

/// Asks a sidecar process to shut down gracefully (SIGTERM).
pub fn sigterm(child: &Child) {
    let status = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .expect("kill -TERM");
    assert!(status.success());
}

/// What a process started by [`spawn_sidecar`] with `config` logged so far.
pub fn log_of(config: &std::path::Path) -> String {
    std::fs::read_to_string(config.with_extension("log")).unwrap_or_default()
}

/// Starts `mongo-seq sidecar --config <path>` as a process (logs to a temp file).
pub fn spawn_sidecar(config: &PathBuf, extra: &[&str]) -> Child {
    let log = std::fs::File::create(config.with_extension("log")).expect("log file");
    Command::new(bin())
        .arg("sidecar")
        .arg("--config")
        .arg(config)
        .args(extra)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(log)
        .spawn()
        .expect("start mongo-seq sidecar")
}

/// Creates `coll` with pre- and post-images kept (`changeStreamPreAndPostImages`, MongoDB
/// 6.0+): a deletion's event then brings the document as it was, an update's as it left it.
pub async fn create_with_images(plain: &Client, db: &str, coll: &str) {
    let database = plain.database(db);
    database.create_collection(coll).await.unwrap();
    database
        .run_command(doc! { "collMod": coll, "changeStreamPreAndPostImages": { "enabled": true } })
        .await
        .unwrap();
}

/// A test's own database: its name, a plain client, and its `orders` collection.
pub async fn test_db(label: &str) -> (String, Client, Collection<Document>) {
    let db = unique_db_name(label);
    let plain = client().await;
    let orders = plain.database(&db).collection("orders");
    (db, plain, orders)
}

/// Runs the sidecar until it watches, inserts documents `{i}` for `range` through the change
/// stream, waits until `numbered` documents carry `seq`, and stops it gracefully.
pub async fn number_via_stream(
    cfg: &Config,
    coll: &Collection<Document>,
    range: std::ops::Range<i32>,
    numbered: u64,
) {
    let run = start(cfg.clone(), options().await, false);
    wait_running(&run).await;
    coll.insert_many(range.map(|i| doc! { "i": i }))
        .await
        .expect("insert");
    wait_numbered(coll, "seq", numbered, Duration::from_secs(60)).await;
    run.stop().await;
}

/// Runs the binary with `args` and extra environment variables (no `MONGO_SEQ_*` or
/// `MONGODB_URI` inherited); returns the exit code, stdout and stderr.
pub fn run_bin(args: &[&str], env: &[(&str, &str)]) -> (i32, String, String) {
    let mut command = Command::new(bin());
    command.args(args);
    for var in [
        "MONGO_SEQ_URI",
        "MONGODB_URI",
        "MONGO_SEQ_INSTANCE_ID",
        "MONGO_SEQ_HTTP_PORT",
        "RUST_LOG",
    ] {
        command.env_remove(var);
    }
    command.envs(env.iter().copied());
    let out = command.output().expect("run mongo-seq");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A writer inserting `per_burst` documents `{i}` every `pause` until the token is cancelled;
/// the task returns how many it inserted.
pub fn steady_writer(
    coll: &Collection<Document>,
    per_burst: i32,
    pause: Duration,
) -> (CancellationToken, JoinHandle<u64>) {
    let (coll, stop) = (coll.clone(), CancellationToken::new());
    let token = stop.clone();
    let task = tokio::spawn(async move {
        let mut n = 0u64;
        while !token.is_cancelled() {
            coll.insert_many((0..per_burst).map(|i| doc! { "i": i }))
                .await
                .expect("insert");
            n += per_burst as u64;
            tokio::time::sleep(pause).await;
        }
        n
    });
    (stop, task)
}
