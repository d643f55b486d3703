//! The sidecar in the simulated world: the product's own [`Trigger`] (built with the sidecar's
//! constructor, as `mongo-seq sidecar` builds it) on [`SimMongo`], this crate's implementation
//! of the sidecar's [`Mongo`] interface over the model. The binary implements the same trait
//! with the `mongodb` crate (`sidecar/src/connection/`); nothing of the trigger loop, the
//! lease, the backfill or the numbering plans is re-implemented here.
//!
//! What the interface adds to the world's faults: a sidecar paused past its lease between its
//! fence check and the command it sends (a GC pause, SIGSTOP, a slow network), and a skewed
//! wall clock per instance. Crashes are the world's: the instance's tasks are aborted at
//! whatever await point they are, and a new incarnation starts later.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use mongo_seq_core::{ClusterTime, Collection, Command, Reply, SeqError};
use mongo_seq_sidecar::error::{MongoFailure, SidecarError};
use mongo_seq_sidecar::mongo::{
    CatalogEntry, ChangeEvent, Deleted, EventBatch, EventStream, Mongo, ResumeToken, Watch,
};
use serde_json::Value;

use crate::client::{Client, ClientOptions, DriverError};
use crate::executor::{execute, to_document, to_json, PlanContext, PlanError};
use crate::model::error::code;
use crate::model::stream::{self, Position};
use crate::world::{ReadPreference, World};

/// The wall clock's origin: 2023-11-14 (any fixed time; only differences matter).
const EPOCH_MS: i64 = 1_700_000_000_000;

/// A process frozen until a time (SIGSTOP, a long GC pause): every call of its triggers waits.
#[derive(Default)]
pub struct Freeze {
    until_ms: Mutex<u64>,
}

impl Freeze {
    pub fn until(&self, ms: u64) {
        *self
            .until_ms
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = ms;
    }

    async fn thawed(&self, world: &World) {
        let until = *self
            .until_ms
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let now = world.now_ms();
        if until > now {
            tokio::time::sleep(Duration::from_millis(until - now)).await;
        }
    }
}

/// One sidecar process's way to MongoDB: its driver client, the trigger's namespaces, its clock.
#[derive(Clone)]
pub struct SimMongo {
    inner: Arc<Inner>,
}

struct Inner {
    client: Client,
    context: PlanContext,
    /// The instance (process incarnation) for the trace and the checks.
    name: String,
    /// How far this host's wall clock is off, ms.
    skew_ms: i64,
    /// The epoch of this incarnation's last lease acquisition of the trigger.
    acquired: Mutex<Option<i64>>,
    /// Mean simulated seconds between pauses past the lease (0: none).
    pause_every_s: f64,
    lease_ttl: Duration,
    freeze: Arc<Freeze>,
    /// The newest `operationTime` of this incarnation's acknowledged writes that changed the
    /// trigger's documents (the rule [`SimMongo::check_anchor`] checks its reads against).
    documents_written: Mutex<Option<ClusterTime>>,
}

impl SimMongo {
    /// The sidecar's client: the driver's defaults (retryable writes and reads on), no
    /// concerns of its own (what it sends is what the core chose), the connection string's
    /// `readPreference` (`secondaryPreferred` sends the reads the core lets leave the primary
    /// to a secondary).
    pub fn client(world: &World, name: &str, read_preference: ReadPreference) -> Client {
        let options = ClientOptions {
            read_preference,
            ..ClientOptions::default()
        };
        Client::new(world, name, options)
    }

    /// A trigger's `Mongo` over `client` (see [`SimMongo::client`]).
    pub fn new(
        client: Client,
        context: PlanContext,
        skew_ms: i64,
        pause_every_s: f64,
        lease_ttl: Duration,
        freeze: Arc<Freeze>,
    ) -> Self {
        let name = client.name.clone();
        Self {
            inner: Arc::new(Inner {
                client,
                context,
                name,
                skew_ms,
                acquired: Mutex::new(None),
                pause_every_s,
                lease_ttl,
                freeze,
                documents_written: Mutex::new(None),
            }),
        }
    }

    /// The rule "a trigger reads its own writes", checked across its plans as they run (the
    /// core checks it within one plan: `protocol::conformance`): a read of the documents anchored
    /// at a cluster time is anchored at or after every earlier write of this incarnation that
    /// changed them, else a secondary may answer from before that write (simulator CI seed
    /// 1,287: a document numbered by one batch came again in the next). A finding is a
    /// violation of the schedule, whatever the outcome.
    fn check_anchor(&self, command: &Command) {
        let Command::Find {
            collection: Collection::Documents,
            after_cluster_time: Some(after),
            ..
        } = command
        else {
            return;
        };
        let written = *self
            .inner
            .documents_written
            .lock()
            .expect("documents_written");
        if let Some(written) = written.filter(|written| after < written) {
            self.world().violation(format!(
                "{}: a read of its documents anchored at {after:?}, before its own write to them acknowledged at {written:?}",
                self.inner.name
            ));
        }
    }

    /// Keeps the `operationTime` of an acknowledged write that changed the documents.
    fn wrote(&self, command: &Command, reply: &Reply) {
        let changed_documents = command.collection() == Some(Collection::Documents)
            && matches!(reply, Reply::WriteResult(result) if result.n_modified > 0 || result.n > 0);
        if let (true, Reply::WriteResult(result)) = (changed_documents, reply) {
            let mut written = self
                .inner
                .documents_written
                .lock()
                .expect("documents_written");
            *written = (*written).max(result.operation_time);
        }
    }

    fn world(&self) -> &World {
        &self.inner.client.world
    }

    /// Sometimes the process stops right after its fence check, for longer than its lease: the
    /// command then reaches the server after another instance may have taken over.
    async fn maybe_pause(&self, command: &Command) {
        let every = self.inner.pause_every_s;
        if every <= 0.0 || command.write_concern().is_none() {
            return;
        }
        let world = self.world();
        // About one pause per `every` seconds of commands (a few commands per second).
        if world.calm() || !world.chance(0.3 / every) {
            return;
        }
        let ttl = u64::try_from(self.inner.lease_ttl.as_millis()).unwrap_or(10_000);
        let ms = world.between(ttl, ttl * 2);
        let what = command.server_command().unwrap_or("?");
        world.fault("sidecar-paused", &self.inner.name, || {
            format!("paused {ms} ms before sending its {what} (past its lease)")
        });
        tokio::time::sleep(Duration::from_millis(ms)).await;
    }

    /// Watches the lease document's replies: an acquisition records this incarnation's epoch;
    /// a renewal or release that took effect on a lease of a later epoch is a fenced
    /// instance's write that took effect after a takeover.
    fn observe_lease(&self, command: &Command, reply: &Reply) {
        let (
            Command::FindOneAndUpdate {
                collection: Collection::Leases,
                update,
                ..
            },
            Reply::Document { document },
        ) = (command, reply)
        else {
            return;
        };
        let Some(epoch) = document
            .pointer("/lease/epoch")
            .and_then(crate::executor::json_integer)
        else {
            return;
        };
        let sets_epoch = update
            .get("$set")
            .and_then(Value::as_object)
            .is_some_and(|set| {
                set.keys().any(|k| k == "lease.epoch")
                    || set.get("lease").is_some_and(|l| l.get("epoch").is_some())
            });
        let mut acquired = self
            .inner
            .acquired
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if sets_epoch {
            *acquired = Some(epoch);
            return;
        }
        if let Some(mine) = *acquired {
            if epoch > mine {
                let name = self.inner.name.clone();
                self.world().violation(format!(
                    "{name}, holder of epoch {mine}, wrote the lease of epoch {epoch} (a fenced instance's write took effect after a takeover)"
                ));
            }
        }
    }
}

/// A driver error as the sidecar's interface reports it.
fn failure(error: PlanError) -> SidecarError {
    match error {
        PlanError::Core(SeqError::UnexpectedReply { reason }) => SidecarError::Reply(reason),
        PlanError::Core(other) => SidecarError::from(other),
        PlanError::Driver(DriverError::Network | DriverError::ServerSelection) => {
            SidecarError::Mongo(MongoFailure {
                code: None,
                transient: true,
                message: "network error (simulated)".to_owned(),
            })
        }
        PlanError::Driver(error) => {
            let (code, transient) = match &error {
                // MaxTimeMSExpired too: the binary's classification (`classify.rs`).
                DriverError::Server(e) => (
                    Some(e.code),
                    error.retryable() || e.code == code::MAX_TIME_MS_EXPIRED,
                ),
                DriverError::WriteConcern { error: e, .. } => (Some(e.code), true),
                _ => (None, true),
            };
            SidecarError::Mongo(MongoFailure {
                code,
                transient,
                message: error.to_string(),
            })
        }
    }
}

impl Mongo for SimMongo {
    type Stream = SimStream;

    async fn execute(&self, command: Command) -> Result<Reply, SidecarError> {
        self.inner.freeze.thawed(self.world()).await;
        self.maybe_pause(&command).await;
        self.check_anchor(&command);
        let mut context = self.inner.context.clone();
        let reply = execute(&self.inner.client, &command, &mut context)
            .await
            .map_err(failure)?;
        self.observe_lease(&command, &reply);
        self.wrote(&command, &reply);
        if let Command::Find {
            collection: Collection::Documents,
            options,
            ..
        } = &command
        {
            if options.sort.is_some() {
                // A backfill page: what existed until now may be numbered in `_id` order.
                let ns = self.inner.context.documents.clone();
                self.world().with(|w| {
                    let clock = w.cluster.clock();
                    w.backfill_scans.insert(ns, clock);
                });
            }
        }
        Ok(reply)
    }

    async fn watch(&self, watch: Watch) -> Result<SimStream, SidecarError> {
        let world = self.world().clone();
        self.inner.freeze.thawed(&world).await;
        world.pause(1, 5).await;
        let ns = self.inner.context.documents.clone();
        let filter =
            to_document(&watch.stream.filter).map_err(|e| SidecarError::Reply(e.to_string()))?;
        let start = match &watch.start_after {
            Some(ResumeToken(token)) => Some(
                to_document(token)
                    .ok()
                    .and_then(|t| Position::from_token(&t).ok())
                    .ok_or_else(|| SidecarError::Reply(format!("resume token {token}")))?,
            ),
            None => None,
        };
        let member = self.inner.client.select().await.map_err(|_| no_primary())?;
        let opened = world.with(|w| {
            let node = w.cluster.node(member);
            if !node.up || node.term().is_none() {
                return Err(no_primary());
            }
            let position = match start {
                Some(position) => {
                    // Resuming from a point the oplog no longer holds fails at once.
                    stream::read(node, &ns, &[], position, 0, None)
                        .map_err(|e| stream_error(&e))?;
                    position
                }
                None => stream::start_now(node),
            };
            Ok(position)
        })?;
        world.note(&self.inner.name, || {
            format!(
                "watch {ns} from {}",
                start.map_or("now".to_owned(), |p| format!("t{}", p.ts))
            )
        });
        Ok(SimStream {
            world,
            name: self.inner.name.clone(),
            ns,
            pipeline: vec![bson::doc! { "$match": filter }],
            update_lookup: watch.stream.update_lookup,
            position: opened,
            invalidated: false,
            freeze: self.inner.freeze.clone(),
            mongo: self.clone(),
        })
    }

    fn now_ms(&self) -> i64 {
        let now = i64::try_from(self.world().now_ms()).unwrap_or(i64::MAX);
        EPOCH_MS + now + self.inner.skew_ms
    }

    /// The model is a replica set: no collection has a catalog entry (none is sharded).
    async fn catalog_entries(
        &self,
        collections: &[Collection],
    ) -> Result<Vec<CatalogEntry>, SidecarError> {
        let context = &self.inner.context;
        Ok(collections
            .iter()
            .map(|collection| CatalogEntry {
                namespace: match collection {
                    Collection::Counters => context.counters.clone(),
                    Collection::Documents => context.documents.clone(),
                    Collection::Leases => context.leases.clone(),
                    Collection::Ledger => context.ledger.clone(),
                },
                entry: None,
            })
            .collect())
    }
}

fn no_primary() -> SidecarError {
    SidecarError::Mongo(MongoFailure {
        code: None,
        transient: true,
        message: "no primary (simulated server selection)".to_owned(),
    })
}

fn stream_error(error: &crate::model::ModelError) -> SidecarError {
    match error {
        crate::model::ModelError::Server(e) if e.code == code::CHANGE_STREAM_HISTORY_LOST => {
            SidecarError::HistoryLost(e.message.clone())
        }
        crate::model::ModelError::Server(e) => SidecarError::Mongo(MongoFailure {
            code: Some(e.code),
            transient: false,
            message: e.message.clone(),
        }),
        crate::model::ModelError::Unsupported(what) => {
            SidecarError::Reply(format!("outside the model: {what}"))
        }
    }
}

/// An open change stream on the model: read from the current primary's oplog (the driver
/// resumes a stream on the new primary by itself after a failover).
pub struct SimStream {
    world: World,
    name: String,
    ns: String,
    pipeline: Vec<bson::Document>,
    /// `fullDocument: "updateLookup"`.
    update_lookup: bool,
    position: Position,
    invalidated: bool,
    freeze: Arc<Freeze>,
    mongo: SimMongo,
}

impl SimStream {
    /// What the driver's stream reports once the server closed it with `invalidate` (the
    /// collection was dropped or renamed, or its database dropped).
    fn invalidated_error(&self) -> SidecarError {
        self.world.note(&self.name, || {
            format!("change stream on {} invalidated", self.ns)
        });
        self.world.with(|w| w.invalidations_seen += 1);
        SidecarError::HistoryLost("the change stream was invalidated".to_owned())
    }
}

impl EventStream for SimStream {
    async fn next_batch(&mut self, max: usize) -> Result<EventBatch, SidecarError> {
        self.freeze.thawed(&self.world).await;
        self.world.pause(1, 10).await;
        if self.invalidated {
            return Err(self.invalidated_error());
        }
        // The stream's cursor lives on the member this process's driver selected, as its
        // commands do: one topology view, which only ever moves to a newer primary.
        let member = self
            .mongo
            .inner
            .client
            .select()
            .await
            .map_err(|_| no_primary())?;
        let read = self.world.with(|w| {
            if w.rng.chance(if w.calm {
                0.0
            } else {
                w.config.wire_fault_rate
            }) {
                return Err(SidecarError::Mongo(MongoFailure {
                    code: None,
                    transient: true,
                    message: "getMore: network error (simulated)".to_owned(),
                }));
            }
            let node = w.cluster.node(member);
            if !node.up || node.term().is_none() {
                return Err(SidecarError::Mongo(MongoFailure {
                    code: Some(code::NOT_WRITABLE_PRIMARY),
                    transient: true,
                    message: "getMore: not primary (simulated)".to_owned(),
                }));
            }
            let lookup = self.update_lookup.then_some(&mut w.rng);
            stream::read(node, &self.ns, &self.pipeline, self.position, max, lookup)
                .map_err(|e| stream_error(&e))
        });
        if read.is_err() {
            self.mongo.inner.client.set_view(None);
        }
        let read = read?;
        let mut events = Vec::new();
        for event in &read.events {
            match event.get_str("operationType") {
                Ok("invalidate") => self.invalidated = true,
                Ok("insert" | "update" | "replace") => events.push(ChangeEvent {
                    document: event.get_document("fullDocument").ok().map(to_json),
                    cluster_time: event
                        .get_timestamp("clusterTime")
                        .ok()
                        .and_then(|t| ClusterTime::new(t.time, t.increment)),
                    wall_time_ms: event
                        .get_datetime("wallTime")
                        .ok()
                        .map(|t| t.timestamp_millis()),
                    deleted: None,
                }),
                // A gapless trigger's watch asks for deletions (with pre-images).
                Ok("delete") => events.push(ChangeEvent {
                    document: None,
                    cluster_time: event
                        .get_timestamp("clusterTime")
                        .ok()
                        .and_then(|t| ClusterTime::new(t.time, t.increment)),
                    wall_time_ms: event
                        .get_datetime("wallTime")
                        .ok()
                        .map(|t| t.timestamp_millis()),
                    deleted: event
                        .get_document("documentKey")
                        .ok()
                        .and_then(|key| key.get("_id"))
                        .map(|id| Deleted {
                            id: crate::executor::to_json(&bson::doc! { "_id": id.clone() })["_id"]
                                .clone(),
                            before: event
                                .get_document("fullDocumentBeforeChange")
                                .ok()
                                .map(to_json),
                        }),
                }),
                _ => {}
            }
        }
        self.position =
            Position::from_token(&read.post_batch_token).map_err(|e| stream_error(&e))?;
        if self.invalidated && events.is_empty() {
            return Err(self.invalidated_error());
        }
        Ok(EventBatch {
            events,
            resume_token: Some(ResumeToken(to_json(&read.post_batch_token))),
        })
    }

    fn resume_token(&self) -> Option<ResumeToken> {
        Some(ResumeToken(to_json(&self.position.token())))
    }
}
