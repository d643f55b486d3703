//! Group commit (`sidecar/src/trigger/batches.rs`): the next batch is read while the current one
//! is written, and a batch read ahead is only held: its token is stored once it is applied, never
//! before. The trigger runs on the driver's `Connection` (embedded server or MONGODB_URI) behind a
//! gate that holds the numbering's `update` of the documents until the test lets it go, so what
//! happens while a batch is being written is exact, not timed.

use crate::common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::*;
use mongo_seq_core::{Collection, Command, Reply};
use mongo_seq_sidecar::config::Config;
use mongo_seq_sidecar::connection::Connection;
use mongo_seq_sidecar::error::SidecarError;
use mongo_seq_sidecar::mongo::{CatalogEntry, EventBatch, EventStream, Mongo, ResumeToken, Watch};
use mongo_seq_sidecar::trigger::{Shared, Trigger};
use mongodb::bson::doc;
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

const WAIT: Duration = Duration::from_secs(60);

/// Holds each `update` of the documents collection (a batch's numbers) until released.
struct Gate {
    /// Updates of the documents that have started waiting.
    held: AtomicUsize,
    /// Stream reads that brought events.
    reads: AtomicUsize,
    release: Semaphore,
}

impl Default for Gate {
    fn default() -> Self {
        Self {
            held: AtomicUsize::new(0),
            reads: AtomicUsize::new(0),
            release: Semaphore::new(0),
        }
    }
}

#[derive(Clone)]
struct Gated {
    inner: Connection,
    gate: Arc<Gate>,
}

struct GatedStream {
    inner: <Connection as Mongo>::Stream,
    gate: Arc<Gate>,
}

impl EventStream for GatedStream {
    async fn next_batch(&mut self, max: usize) -> Result<EventBatch, SidecarError> {
        let batch = self.inner.next_batch(max).await?;
        if !batch.events.is_empty() {
            self.gate.reads.fetch_add(1, Ordering::SeqCst);
        }
        Ok(batch)
    }
    fn resume_token(&self) -> Option<ResumeToken> {
        self.inner.resume_token()
    }
}

impl Mongo for Gated {
    type Stream = GatedStream;

    async fn execute(&self, command: Command) -> Result<Reply, SidecarError> {
        let numbering = command.server_command() == Some("update")
            && command.collection() == Some(Collection::Documents);
        if numbering {
            self.gate.held.fetch_add(1, Ordering::SeqCst);
            self.gate
                .release
                .acquire()
                .await
                .expect("gate open")
                .forget();
        }
        self.inner.execute(command).await
    }

    async fn watch(&self, watch: Watch) -> Result<GatedStream, SidecarError> {
        Ok(GatedStream {
            inner: self.inner.watch(watch).await?,
            gate: self.gate.clone(),
        })
    }

    async fn catalog_entries(
        &self,
        collections: &[Collection],
    ) -> Result<Vec<CatalogEntry>, SidecarError> {
        self.inner.catalog_entries(collections).await
    }

    fn now_ms(&self) -> i64 {
        self.inner.now_ms()
    }
}

/// Waits (with a deadline, not a timed assertion) until `done()`.
async fn until(what: &str, done: impl Fn() -> bool) {
    let deadline = Instant::now() + WAIT;
    while !done() {
        assert!(Instant::now() < deadline, "never happened: {what}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// The trigger of `cfg` running behind a gate, and its shutdown.
async fn gated_trigger(
    cfg: &Config,
) -> (
    Arc<Gate>,
    CancellationToken,
    tokio::task::JoinHandle<Result<(), SidecarError>>,
) {
    let spec = cfg.triggers[0].clone();
    let client = mongodb::Client::with_options(options().await).expect("client");
    let gate = Arc::new(Gate::default());
    let mongo = Gated {
        inner: Connection::for_trigger(&client, &spec.ns, &cfg.counters, &cfg.state),
        gate: gate.clone(),
    };
    let shared = Shared::default();
    let trigger = Trigger::new(spec, cfg.settings.clone(), mongo, &shared);
    let shutdown = CancellationToken::new();
    let handle = tokio::spawn(trigger.run(shutdown.clone(), false));
    // Running: its stream is open once the (empty) backfill stored the first token.
    let health = shared.health.clone();
    until("the trigger watches its stream", || {
        health
            .snapshot()
            .1
            .values()
            .any(|h| h.state == mongo_seq_sidecar::health::State::Running)
    })
    .await;
    (gate, shutdown, handle)
}

/// Inserts A and B in one command with batches of one: A's update is held, and B is read (handed
/// to the trigger: the batch after A) before A's numbers are written. One batch at a time, B
/// would be read only once A is written.
async fn a_written_b_read_ahead(gate: &Gate, coll: &mongodb::Collection<mongodb::bson::Document>) {
    coll.insert_many([doc! { "n": "A" }, doc! { "n": "B" }])
        .await
        .expect("insert");
    until("A's numbers are being written", || {
        gate.held.load(Ordering::SeqCst) == 1
    })
    .await;
    until("B is read while A is written", || {
        gate.reads.load(Ordering::SeqCst) == 2
    })
    .await;
    assert_eq!(
        gate.held.load(Ordering::SeqCst),
        1,
        "A's numbers still held"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_next_batch_is_read_while_one_is_written_and_its_token_waits_for_its_own_writes() {
    let (db, _plain, coll) = test_db("readahead").await;
    // Batches of one; the token stored after every batch.
    let cfg = config(&db, "", "batch_size = 1\ncheckpoint_ms = 0");
    let (gate, _shutdown, handle) = gated_trigger(&cfg).await;
    a_written_b_read_ahead(&gate, &coll).await;

    // A is written (its token stored at once), B's numbers are then held: a crash there.
    gate.release.add_permits(1);
    until("B's numbers are being written", || {
        gate.held.load(Ordering::SeqCst) == 2
    })
    .await;
    handle.abort();
    assert_eq!(count_numbered(&coll, "seq").await, 1, "A only");

    // The next process resumes from A's token: B's event comes again and B is numbered.
    let run = start(cfg, options().await, false);
    wait_numbered(&coll, "seq", 2, WAIT).await;
    run.stop().await;
    // B's first reservation (2) went with the crash: a gap, as default mode allows.
    assert_eq!(numbers(&coll, "seq").await, vec![1, 3]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_graceful_stop_with_a_batch_read_ahead_stores_only_the_token_of_what_it_applied() {
    let (db, _plain, coll) = test_db("readahead_stop").await;
    let cfg = config(&db, "", "batch_size = 1");
    let (gate, shutdown, handle) = gated_trigger(&cfg).await;
    a_written_b_read_ahead(&gate, &coll).await;

    // Stop while A is written and B is held: A is finished, B is not numbered, and the token
    // stored at the stop is A's.
    shutdown.cancel();
    gate.release.add_permits(1);
    tokio::time::timeout(WAIT, handle)
        .await
        .expect("stops")
        .expect("task")
        .expect("stops cleanly");
    assert_eq!(gate.held.load(Ordering::SeqCst), 1, "B was not written");
    assert_eq!(count_numbered(&coll, "seq").await, 1, "A only");

    let run = start(cfg, options().await, false);
    wait_numbered(&coll, "seq", 2, WAIT).await;
    run.stop().await;
    assert_eq!(numbers(&coll, "seq").await, vec![1, 2]);
}
