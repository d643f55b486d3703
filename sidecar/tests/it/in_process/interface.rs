//! The trigger runs on the `Mongo` interface alone, and on tokio's clock: here against an
//! implementation that is not the driver (every command fails as if the server were unreachable)
//! under a paused clock. What it sends and when is then exact: one lease read per attempt, at the
//! backoff schedule (200 ms doubling), the health report that of a trigger retrying. This is the
//! shape the deterministic simulator builds on.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use mongo_seq_core::{Collection, Command, NumberingSpec, Reply, SequenceSpec};
use mongo_seq_sidecar::config::{Namespace, On, Settings, TriggerSpec};
use mongo_seq_sidecar::error::{MongoFailure, SidecarError};
use mongo_seq_sidecar::mongo::{CatalogEntry, EventBatch, EventStream, Mongo, ResumeToken, Watch};
use mongo_seq_sidecar::trigger::{Shared, Trigger};
use serde_json::json;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

/// A MongoDB that never answers: every command fails with a transient error, after being
/// recorded with the (virtual) time it was sent.
#[derive(Clone)]
struct Unreachable {
    start: Instant,
    sent: Arc<Mutex<Vec<Sent>>>,
}

/// A command's (virtual) milliseconds since the start, and the collection it named.
type Sent = (u128, Option<&'static str>);

fn unreachable() -> SidecarError {
    SidecarError::Mongo(MongoFailure {
        code: None,
        transient: true,
        message: "no server".to_owned(),
    })
}

struct NoStream;

impl EventStream for NoStream {
    async fn next_batch(&mut self, _max: usize) -> Result<EventBatch, SidecarError> {
        Err(unreachable())
    }
    fn resume_token(&self) -> Option<ResumeToken> {
        None
    }
}

impl Mongo for Unreachable {
    type Stream = NoStream;

    async fn execute(&self, command: Command) -> Result<Reply, SidecarError> {
        let at = self.start.elapsed().as_millis();
        self.sent
            .lock()
            .unwrap()
            .push((at, command.server_command()));
        Err(unreachable())
    }

    async fn watch(&self, _watch: Watch) -> Result<NoStream, SidecarError> {
        Err(unreachable())
    }

    async fn catalog_entries(
        &self,
        _collections: &[Collection],
    ) -> Result<Vec<CatalogEntry>, SidecarError> {
        Err(unreachable())
    }

    fn now_ms(&self) -> i64 {
        1_700_000_000_000 + i64::try_from(self.start.elapsed().as_millis()).unwrap()
    }
}

#[tokio::test(start_paused = true)]
async fn a_trigger_on_another_mongo_and_a_paused_clock_retries_on_an_exact_schedule() {
    let sequence = SequenceSpec::parse(&json!({ "name": "orders" })).unwrap();
    let spec = TriggerSpec {
        id: "app.orders.seq".to_owned(),
        ns: Namespace {
            db: "app".to_owned(),
            coll: "orders".to_owned(),
        },
        numbering: NumberingSpec::new(sequence, "seq", None, false).unwrap(),
        filter: None,
        on: On::Insert,
        backfill_sort: None,
        record_deletions: false,
        post_images: false,
        unique_index: true,
    };
    let mongo = Unreachable {
        start: Instant::now(),
        sent: Arc::default(),
    };
    let shared = Shared::default();
    let trigger = Trigger::new(spec, Settings::default(), mongo.clone(), &shared);
    let shutdown = CancellationToken::new();
    let running = tokio::spawn(trigger.run(shutdown.clone(), false));
    tokio::time::sleep(Duration::from_secs(10)).await;
    shutdown.cancel();
    running
        .await
        .unwrap()
        .expect("the trigger stops without error");

    // Each attempt reads the lease (a `find`) and fails; then 200, 400, 800, 1600, 3200 ms.
    let sent = mongo.sent.lock().unwrap().clone();
    let expected: Vec<Sent> = [0, 200, 600, 1400, 3000, 6200]
        .into_iter()
        .map(|at| (at, Some("find")))
        .collect();
    assert_eq!(sent, expected);
    let (healthy, triggers) = shared.health.snapshot();
    assert!(!healthy);
    let health = &triggers["app.orders.seq"];
    assert_eq!(
        health.last_error_code.as_deref(),
        Some("TRANSIENT(network)")
    );
    assert_eq!(health.consecutive_errors, 6);
    assert_eq!(
        shared
            .metrics
            .errors
            .with_label_values(&["app.orders.seq", "transient"])
            .get(),
        6
    );
}
