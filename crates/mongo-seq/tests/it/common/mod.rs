//! Shared by the library's integration tests (the npm package's `js/test/support.mjs`): a
//! client watched by command monitoring (counts, commands in flight, the commands themselves,
//! and a gate that holds `findAndModify` back), a fresh database per test, a snapshot of a
//! database for "nothing was written", and the check that bad input is refused.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::TryStreamExt;
use mongo_seq::{Error, Sequences};
use mongodb::bson::{doc, Document};
use mongodb::event::command::CommandEvent;
use mongodb::event::EventHandler;
use mongodb::options::ClientOptions;
use mongodb::{Client, Database};

#[allow(unused_imports)]
pub use mongo_seq_test_harness::{mongodb_uri, unique_db_name};

/// What the client sent, seen by command monitoring.
#[derive(Clone, Default)]
pub struct Monitor {
    counts: Arc<Mutex<BTreeMap<String, u64>>>,
    commands: Arc<Mutex<Vec<(String, Document)>>>,
    in_flight: Arc<AtomicI64>,
    most_in_flight: Arc<AtomicI64>,
    /// Milliseconds each `findAndModify` is held back before it is sent (0: none).
    gate_ms: Arc<AtomicU64>,
}

impl Monitor {
    fn started(&self, name: &str, command: &Document) {
        *self
            .counts
            .lock()
            .unwrap()
            .entry(name.to_owned())
            .or_default() += 1;
        self.commands
            .lock()
            .unwrap()
            .push((name.to_owned(), command.clone()));
        if name == "findAndModify" {
            let now = self.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
            self.most_in_flight.fetch_max(now, Ordering::SeqCst);
            let gate = self.gate_ms.load(Ordering::SeqCst);
            if gate > 0 {
                // Runs on the driver's task: the command waits (the test runtime has threads
                // to spare).
                std::thread::sleep(Duration::from_millis(gate));
            }
        }
    }

    fn ended(&self, name: &str) {
        if name == "findAndModify" {
            self.in_flight.fetch_sub(1, Ordering::SeqCst);
        }
    }

    /// How many `name` commands were sent since the last reset.
    pub fn count(&self, name: &str) -> u64 {
        self.counts.lock().unwrap().get(name).copied().unwrap_or(0)
    }

    /// Every count, for messages.
    pub fn snapshot(&self) -> BTreeMap<String, u64> {
        self.counts.lock().unwrap().clone()
    }

    /// The commands sent since the last reset, with their names.
    pub fn commands(&self) -> Vec<(String, Document)> {
        self.commands.lock().unwrap().clone()
    }

    pub fn reset(&self) {
        self.counts.lock().unwrap().clear();
        self.commands.lock().unwrap().clear();
        self.most_in_flight
            .store(self.in_flight.load(Ordering::SeqCst), Ordering::SeqCst);
    }

    /// The most `findAndModify` in flight at once since the last reset.
    pub fn most_in_flight(&self) -> i64 {
        self.most_in_flight.load(Ordering::SeqCst)
    }

    /// Holds every `findAndModify` back `ms` milliseconds before it is sent (0: no more).
    pub fn gate(&self, ms: u64) {
        self.gate_ms.store(ms, Ordering::SeqCst);
    }

    /// Waits until no `findAndModify` is in flight (a refill ahead runs in the background).
    pub async fn settled(&self) {
        tokio::time::sleep(Duration::from_millis(5)).await;
        for _ in 0..2000 {
            if self.in_flight.load(Ordering::SeqCst) == 0 {
                return;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        panic!("a findAndModify is still in flight after 10 s");
    }
}

/// A monitored client, its monitor, and a fresh database (dropped by [`Setup::drop_db`]).
pub struct Setup {
    pub client: Client,
    pub db: Database,
    pub monitor: Monitor,
}

impl Setup {
    pub fn seqs(&self) -> Sequences {
        Sequences::new(&self.db)
    }

    pub async fn drop_db(&self) {
        let _ = self.db.drop().await;
    }
}

/// Client options for the test server with `monitor` watching them.
pub async fn monitored_options(monitor: &Monitor) -> ClientOptions {
    let mut options = mongo_seq_test_harness::client_options().await;
    let sink = monitor.clone();
    options.command_event_handler = Some(EventHandler::callback(move |event| match event {
        CommandEvent::Started(e) => sink.started(&e.command_name, &e.command),
        CommandEvent::Succeeded(e) => sink.ended(&e.command_name),
        CommandEvent::Failed(e) => sink.ended(&e.command_name),
        _ => {}
    }));
    options
}

/// A monitored client on a fresh database named after `label`.
pub async fn setup(label: &str) -> Setup {
    let monitor = Monitor::default();
    let client = Client::with_options(monitored_options(&monitor).await).expect("a client");
    let db = client.database(&unique_db_name(label));
    Setup {
        client,
        db,
        monitor,
    }
}

/// Every document of every collection of `db`, by collection name, in `_id` order.
pub async fn snapshot(db: &Database) -> BTreeMap<String, Vec<Document>> {
    let mut contents = BTreeMap::new();
    for name in db.list_collection_names().await.expect("collections") {
        let documents: Vec<Document> = db
            .collection::<Document>(&name)
            .find(doc! {})
            .sort(doc! { "_id": 1 })
            .await
            .expect("find")
            .try_collect()
            .await
            .expect("documents");
        contents.insert(name, documents);
    }
    contents
}

/// Words that must never reach a user in a message: Rust internals, serde or Debug output.
const LEAKS: [&str; 6] = [
    "deserializ",
    "invalid type:",
    "panicked",
    "Error: ",
    "Some(",
    "{ kind:",
];

/// Runs `act` on a fresh database seeded with one user (and `seed`): it must fail with `code`,
/// with a message that explains and leaks nothing, and the database must be unchanged. Returns
/// the error.
pub async fn assert_refused<A, F, S, G>(label: &str, code: &str, act: A, seed: S) -> Error
where
    A: FnOnce(Sequences, Database) -> F,
    F: Future<Output = mongo_seq::Result<()>>,
    S: FnOnce(Database) -> G,
    G: Future<Output = ()>,
{
    let setup = setup(&format!("err_{label}")).await;
    let db = setup.db.clone();
    db.collection::<Document>("users")
        .insert_one(doc! { "_id": 1, "name": "existing" })
        .await
        .expect("seed");
    seed(db.clone()).await;
    let before = snapshot(&db).await;
    let error = match act(Sequences::new(&db), db.clone()).await {
        Ok(()) => panic!("{label}: expected {code}, but it succeeded"),
        Err(error) => error,
    };
    assert_eq!(error.code(), Some(code), "{label}: {error}");
    let message = error.to_string();
    assert!(
        message.len() > 10,
        "{label}: the message explains: {message}"
    );
    for leak in LEAKS {
        assert!(
            !message.contains(leak),
            "{label}: the message leaks `{leak}`: {message}"
        );
    }
    assert_eq!(
        snapshot(&db).await,
        before,
        "{label}: something was written"
    );
    setup.drop_db().await;
    error
}

/// A seed that adds nothing.
pub async fn nothing(_: Database) {}

/// Inserts `counter` into `counters` (a seed).
pub fn counter(
    counter: Document,
) -> impl FnOnce(Database) -> std::pin::Pin<Box<dyn Future<Output = ()>>> {
    move |db: Database| {
        Box::pin(async move {
            db.collection::<Document>("counters")
                .insert_one(counter)
                .await
                .expect("seed the counter");
        })
    }
}

/// Every document `filter` matches, by `_id`.
pub async fn all(collection: &mongodb::Collection<Document>, filter: Document) -> Vec<Document> {
    collection
        .find(filter)
        .sort(doc! { "_id": 1 })
        .await
        .expect("find")
        .try_collect()
        .await
        .expect("documents")
}
