//! The client side of the wire, as the official drivers behave: server selection from a
//! topology view that can be stale, the command's read and write concern (or the client's
//! defaults), retryable writes and reads, and the faults the network and the servers inject.
//!
//! * Server selection (<https://github.com/mongodb/specifications/blob/master/source/server-selection/server-selection.md>):
//!   commands go to the member the client believes primary; the view is refreshed by the
//!   monitor now and then, and at once after a network error or a "not primary" answer, so a
//!   client may keep writing to a deposed primary that has not stepped down yet.
//! * Stale primaries (server discovery and monitoring, "Using electionId and setVersion to
//!   detect stale primaries",
//!   <https://github.com/mongodb/specifications/blob/master/source/server-discovery-and-monitoring/server-discovery-and-monitoring.md>):
//!   "The client remembers the greatest electionId and setVersion reported by a primary, and
//!   distrusts primaries from older electionIds or from the same electionId but with lesser
//!   setVersion"; such a primary is marked Unknown ("This prevents the client from oscillating
//!   between the old and new primary during a split-brain period"). A member's electionId here
//!   is its term, the set's configuration (setVersion) never changes: once a client has seen
//!   the primary of term t, it never selects a member claiming an older term, and waits for a
//!   new primary instead (seed 3,013,611 went back to the deposed primary of term 1 after the
//!   primary of term 2 crashed).
//! * Retryable writes (<https://github.com/mongodb/specifications/blob/master/source/retryable-writes/retryable-writes.md>):
//!   single-statement writes and `update`s without `multi` carry a session and a transaction
//!   number and are retried once, with the same number, after a network error or a retryable
//!   code; `updateMany` is not retryable. Retryable reads retry once too.
//! * Write concern (<https://www.mongodb.com/docs/manual/reference/write-concern/>): `w: 1`
//!   acknowledges once the primary applied the write; `w: "majority"` once the write is
//!   majority-committed, or a `writeConcernError` after `wtimeout`; a primary that steps down
//!   while a write waits interrupts it (InterruptedDueToReplStateChange, 11602).
//! * Read preference `secondaryPreferred` (server selection: "If secondaries are available,
//!   select a secondary; otherwise the primary"): for the reads the command lets leave the
//!   primary, a secondary the client can reach, picked at random (every member is within the
//!   latency window), lagging its replication and its commit point.
//! * Faults on each attempt (the seed's draw): the command lost before it reaches the server;
//!   applied but its reply lost; refused with a retryable error (ShutdownInProgress, 91) or a
//!   non-retryable one (OperationFailed, 96) before applying.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use crate::model::error::{code, is_retryable_code};
use crate::model::{
    execute, Operation, ReadLevel, Request, Response, ServerError, Ts, WriteStatus,
};
use crate::world::{ReadPreference, World, WriteConcern};

/// How long server selection waits for a primary (the drivers' default is 30 s).
const SERVER_SELECTION_MS: u64 = 30_000;

/// What a command's caller gets back instead of a reply.
#[derive(Debug, Clone, PartialEq)]
pub enum DriverError {
    /// The connection failed: the command may or may not have been applied.
    Network,
    /// The server answered with an error (`ok: 0`).
    Server(ServerError),
    /// Applied, but the write concern was not satisfied (`writeConcernError`).
    WriteConcern {
        error: ServerError,
        response: Box<Response>,
    },
    /// No primary was found in time.
    ServerSelection,
}

impl DriverError {
    pub fn retryable(&self) -> bool {
        match self {
            Self::Network => true,
            Self::Server(error) | Self::WriteConcern { error, .. } => is_retryable_code(error.code),
            Self::ServerSelection => false,
        }
    }

    pub fn code(&self) -> Option<i32> {
        match self {
            Self::Server(error) | Self::WriteConcern { error, .. } => Some(error.code),
            _ => None,
        }
    }
}

impl std::fmt::Display for DriverError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Network => write!(f, "network error"),
            Self::Server(e) => write!(f, "{} ({}): {}", e.name, e.code, e.message),
            Self::WriteConcern { error, .. } => {
                write!(
                    f,
                    "write concern error {} ({}): {}",
                    error.name, error.code, error.message
                )
            }
            Self::ServerSelection => write!(f, "server selection timed out"),
        }
    }
}

/// What a command says about its read, beside its operation.
#[derive(Debug, Clone, Copy, Default)]
pub struct ReadOptions {
    /// The read concern level (`None`: the client's default).
    pub level: Option<ReadLevel>,
    /// `readConcern.afterClusterTime`.
    pub after_cluster_time: Option<Ts>,
    /// The read may follow the client's read preference (`false`: the primary).
    pub may_leave_primary: bool,
    /// `maxTimeMS`: how long the server may wait for `afterClusterTime`.
    pub max_time_ms: Option<u64>,
}

/// A client's options (what a `MongoClient` / `Db` would be configured with).
#[derive(Debug, Clone, Copy)]
pub struct ClientOptions {
    /// The write concern of writes that name none (`None`: the deployment's default).
    pub write_concern: Option<WriteConcern>,
    /// The read concern of reads that name none (`None`: the server's default, `local`).
    pub read_concern: Option<ReadLevel>,
    pub retry_writes: bool,
    pub retry_reads: bool,
    /// Followed by the reads a command lets leave the primary (`Command::primary_only`).
    pub read_preference: ReadPreference,
}

impl Default for ClientOptions {
    fn default() -> Self {
        Self {
            write_concern: None,
            read_concern: None,
            retry_writes: true,
            retry_reads: true,
            read_preference: ReadPreference::Primary,
        }
    }
}

/// One process's client: its own topology view and session.
pub struct Client {
    pub world: World,
    pub name: String,
    pub options: ClientOptions,
    view: Mutex<Option<usize>>,
    /// The newest term (electionId) a primary reported to this client: SDAM's
    /// `maxElectionId`.
    max_term: AtomicU64,
    /// The client's own draws (which secondary serves a read), apart from the world's stream.
    rng: Mutex<crate::rng::SimRng>,
    lsid: u64,
    txn: AtomicU64,
}

/// An injected fault for one attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum WireFault {
    LostBefore,
    ReplyLost,
    RetryableBefore,
    NonRetryableBefore,
}

impl Client {
    pub fn new(world: &World, name: &str, options: ClientOptions) -> Self {
        let lsid = world.next_id();
        Self {
            world: world.clone(),
            name: name.to_owned(),
            options,
            view: Mutex::new(None),
            max_term: AtomicU64::new(0),
            rng: Mutex::new(crate::rng::SimRng::new(
                world.with(|w| w.config.seed) ^ lsid.rotate_left(32),
            )),
            lsid,
            txn: AtomicU64::new(0),
        }
    }

    fn view(&self) -> Option<usize> {
        *self
            .view
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    pub fn set_view(&self, member: Option<usize>) {
        *self
            .view
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = member;
    }

    /// The member to send to: the current view, refreshed now and then by the monitor, or
    /// discovered after a failure: the member claiming the newest term, unless that term is
    /// older than one this client has already seen (a stale primary, Unknown to SDAM).
    pub async fn select(&self) -> Result<usize, DriverError> {
        let started = self.world.now_ms();
        if self.world.chance(0.2) {
            self.set_view(None);
        }
        loop {
            if let Some(member) = self.view() {
                if self.world.with(|w| w.cluster.node(member).up) {
                    return Ok(member);
                }
            }
            let seen = self.max_term.load(Ordering::Relaxed);
            let found = self.world.with(|w| {
                w.cluster
                    .claimed_primaries()
                    .into_iter()
                    .filter_map(|m| Some((m, w.cluster.node(m).term()?)))
                    .filter(|(_, term)| *term >= seen)
                    .max_by_key(|(_, term)| *term)
            });
            if let Some((member, term)) = found {
                self.max_term.fetch_max(term, Ordering::Relaxed);
                self.set_view(Some(member));
                continue;
            }
            if self.world.now_ms().saturating_sub(started) > SERVER_SELECTION_MS
                || self.world.finished()
            {
                return Err(DriverError::ServerSelection);
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// A secondary for a `secondaryPreferred` read: one the client can reach, at random; the
    /// primary when there is none.
    async fn select_secondary(&self) -> Result<usize, DriverError> {
        let secondaries: Vec<usize> = self.world.with(|w| {
            (0..w.cluster.nodes.len())
                .filter(|&m| {
                    let node = w.cluster.node(m);
                    node.up && !node.is_arbiter() && node.term().is_none()
                })
                .collect()
        });
        if secondaries.is_empty() {
            return self.select().await;
        }
        let index = self
            .rng
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .below(secondaries.len());
        Ok(secondaries[index.min(secondaries.len() - 1)])
    }

    #[cfg(test)]
    fn node_term(&self, member: usize) -> Option<u64> {
        self.world.with(|w| w.cluster.node(member).term())
    }

    fn draw_fault(&self) -> Option<WireFault> {
        self.world.with(|w| {
            if w.calm || !w.rng.chance(w.config.wire_fault_rate) {
                return None;
            }
            Some(match w.rng.weighted(&[3, 3, 2, 1]) {
                0 => WireFault::LostBefore,
                1 => WireFault::ReplyLost,
                2 => WireFault::RetryableBefore,
                _ => WireFault::NonRetryableBefore,
            })
        })
    }

    /// Runs one command to its reply, with the client's retries.
    pub async fn run(
        &self,
        db: &str,
        operation: Operation,
        read: Option<ReadLevel>,
        write: Option<WriteConcern>,
    ) -> Result<Response, DriverError> {
        let read = ReadOptions {
            level: read,
            ..ReadOptions::default()
        };
        self.run_with(db, operation, read, write).await
    }

    /// [`Client::run`] with a read's other options.
    pub async fn run_with(
        &self,
        db: &str,
        operation: Operation,
        read: ReadOptions,
        write: Option<WriteConcern>,
    ) -> Result<Response, DriverError> {
        let is_write = operation.is_write();
        let retryable_write = is_write
            && self.options.retry_writes
            && match &operation {
                Operation::Update { statements, .. } => statements.iter().all(|s| !s.multi),
                Operation::FindAndModify { .. } | Operation::Insert { .. } => true,
                Operation::Delete { multi, .. } => !multi,
                _ => false,
            };
        let session =
            retryable_write.then(|| (self.lsid, self.txn.fetch_add(1, Ordering::Relaxed) + 1));
        let request = Request {
            db: db.to_owned(),
            operation,
            read_concern: read
                .level
                .or(self.options.read_concern)
                .unwrap_or(ReadLevel::Local),
            after_cluster_time: read.after_cluster_time,
            secondary_ok: !is_write
                && read.may_leave_primary
                && self.options.read_preference == ReadPreference::SecondaryPreferred,
            max_time_ms: read.max_time_ms,
            session,
        };
        let write = write
            .or(self.options.write_concern)
            .unwrap_or_else(|| self.world.with(|w| w.config.server_default_write));
        let may_retry = if is_write {
            retryable_write
        } else {
            self.options.retry_reads
        };
        let first = self.attempt(&request, write).await;
        match first {
            Err(error) if may_retry && error.retryable() => {
                self.world.note(&self.name, || {
                    format!("retrying {} after {error}", request.operation.name())
                });
                self.attempt(&request, write).await
            }
            other => other,
        }
    }

    /// A `majority` read with `afterClusterTime`: the server blocks it until its majority
    /// commit point has reached that time ("read operations with a specified afterClusterTime
    /// return data that meet both the read concern level requirement and the specified
    /// afterClusterTime requirement"). A deposed primary, cut off, waits until it is down, has
    /// stepped down (the read then fails: not primary) or has rejoined and caught up; a new
    /// primary until it commits an entry of its own term.
    async fn wait_for_commit_point(
        &self,
        member: usize,
        after: Ts,
        request: &Request,
    ) -> Result<(), DriverError> {
        let secondary_ok = request.secondary_ok;
        let started = self.world.now_ms();
        let mut noted = false;
        loop {
            let (up, reached, primary, commit) = self.world.with(|w| {
                let node = w.cluster.node(member);
                (
                    node.up,
                    node.commit_ts >= after,
                    node.term().is_some(),
                    node.commit_ts,
                )
            });
            if !up || self.world.finished() {
                self.set_view(None);
                return Err(DriverError::Network);
            }
            // A primary that stepped down fails the read (not primary) unless it may be
            // served by a secondary: then it waits on, as a secondary.
            if reached || (!primary && !secondary_ok) {
                let waited = self.world.now_ms().saturating_sub(started);
                self.world.with(|w| {
                    let stats = &mut w.anchored;
                    stats.reads += 1;
                    if !primary {
                        stats.on_secondary += 1;
                        stats.waited_on_secondary += u64::from(noted);
                    }
                    if noted {
                        stats.waited += 1;
                        stats.wait_ms += waited;
                        stats.max_wait_ms = stats.max_wait_ms.max(waited);
                    }
                });
                if noted {
                    self.world.note(&self.name, || {
                        format!("member {member} reached t{after} after {waited} ms (commit point t{commit})")
                    });
                }
                return Ok(());
            }
            let waited = self.world.now_ms().saturating_sub(started);
            if request.max_time_ms.is_some_and(|max| waited >= max) {
                self.world.with(|w| {
                    let stats = &mut w.anchored;
                    stats.reads += 1;
                    stats.waited += 1;
                    stats.expired += 1;
                    stats.wait_ms += waited;
                    stats.max_wait_ms = stats.max_wait_ms.max(waited);
                    if !primary {
                        stats.on_secondary += 1;
                        stats.waited_on_secondary += 1;
                    }
                });
                self.world.note(&self.name, || {
                    format!("member {member} did not reach t{after} within maxTimeMS ({waited} ms, commit point t{commit})")
                });
                return Err(DriverError::Server(ServerError {
                    code: code::MAX_TIME_MS_EXPIRED,
                    name: "MaxTimeMSExpired",
                    message: "operation exceeded time limit".into(),
                    key_pattern: None,
                }));
            }
            if !noted {
                noted = true;
                self.world.note(&self.name, || {
                    format!("member {member} waits for its majority commit point (t{commit}) to reach afterClusterTime t{after}")
                });
            }
            self.world.pause(1, 5).await;
        }
    }

    async fn attempt(
        &self,
        request: &Request,
        write: WriteConcern,
    ) -> Result<Response, DriverError> {
        let member = if request.secondary_ok {
            self.select_secondary().await?
        } else {
            self.select().await?
        };
        self.world.pause(0, 2).await;
        let fault = self.draw_fault();
        let name = request.operation.name();
        match fault {
            Some(WireFault::LostBefore) => {
                self.world.fault("command-lost", &self.name, || {
                    format!("{name} to member {member} lost before it arrived")
                });
                self.set_view(None);
                self.world.pause(5, 50).await;
                return Err(DriverError::Network);
            }
            Some(WireFault::RetryableBefore) => {
                self.world.fault("retryable-error", &self.name, || {
                    format!("{name} refused by member {member}: ShutdownInProgress")
                });
                return Err(DriverError::Server(ServerError {
                    code: code::SHUTDOWN_IN_PROGRESS,
                    name: "ShutdownInProgress",
                    message: "the server is shutting down (injected)".into(),
                    key_pattern: None,
                }));
            }
            Some(WireFault::NonRetryableBefore) => {
                self.world.fault("error", &self.name, || {
                    format!("{name} refused by member {member}: OperationFailed")
                });
                return Err(DriverError::Server(ServerError {
                    code: code::OPERATION_FAILED,
                    name: "OperationFailed",
                    message: "operation failed (injected)".into(),
                    key_pattern: None,
                }));
            }
            _ => {}
        }
        if let Some(after) = request.after_cluster_time {
            self.wait_for_commit_point(member, after, request).await?;
        }
        let outcome = self.world.with(|w| {
            if !w.cluster.node(member).up {
                return Err(DriverError::Network);
            }
            let executed = execute(&mut w.cluster, member, request);
            let summary = match &executed {
                Ok(e) => format!("ok at t{:?}", e.last_ts),
                Err(e) => e.to_string(),
            };
            let concern = match write {
                WriteConcern::W1 => "w:1",
                WriteConcern::Majority { .. } => "w:majority",
            };
            let who = self.name.clone();
            let rc = request.read_concern;
            let is_write = request.operation.is_write();
            w.note(&who, || {
                let op = describe(&request.operation);
                let db = &request.db;
                if is_write {
                    format!(
                        "→ member {member} {db}: {op} [{concern}{}] {summary}",
                        session_text(request.session)
                    )
                } else {
                    let after = request
                        .after_cluster_time
                        .map(|t| format!(" afterClusterTime t{t}"))
                        .unwrap_or_default();
                    format!("→ member {member} {db}: {op} [readConcern {rc:?}{after}] {summary}")
                }
            });
            match executed {
                Ok(executed) => {
                    let last = w.cluster.node(member).last_ts();
                    Ok((executed, last))
                }
                Err(crate::model::ModelError::Server(error)) => Err(DriverError::Server(error)),
                Err(crate::model::ModelError::Unsupported(what)) => {
                    w.violations.push(format!(
                        "model: outside the model: {what} ({})",
                        describe(&request.operation)
                    ));
                    w.finished = true;
                    Err(DriverError::Network)
                }
            }
        });
        let (executed, member_last) = match outcome {
            Ok(ok) => ok,
            Err(error) => {
                if matches!(&error, DriverError::Network)
                    || matches!(&error, DriverError::Server(e) if matches!(e.code, code::NOT_WRITABLE_PRIMARY | code::NOT_PRIMARY_NO_SECONDARY_OK))
                {
                    self.set_view(None);
                }
                return Err(error);
            }
        };
        if request.operation.is_write() {
            if let WriteConcern::Majority { wtimeout_ms } = write {
                // A write that changed nothing waits for the member's newest entry, as the
                // server does (the client's last optime).
                let ts = executed.last_ts.unwrap_or(member_last);
                let started = self.world.now_ms();
                loop {
                    let status = self
                        .world
                        .with(|w| w.cluster.write_status(member, executed.term, ts));
                    match status {
                        WriteStatus::Committed => break,
                        WriteStatus::Interrupted => {
                            self.set_view(None);
                            let up = self.world.with(|w| w.cluster.node(member).up);
                            self.world.note(&self.name, || {
                                format!("{name} interrupted while waiting for majority")
                            });
                            return Err(if up {
                                DriverError::Server(ServerError {
                                    code: code::INTERRUPTED_DUE_TO_REPL_STATE_CHANGE,
                                    name: "InterruptedDueToReplStateChange",
                                    message: "operation was interrupted".into(),
                                    key_pattern: None,
                                })
                            } else {
                                DriverError::Network
                            });
                        }
                        WriteStatus::Pending => {
                            if wtimeout_ms
                                .is_some_and(|t| self.world.now_ms().saturating_sub(started) >= t)
                            {
                                self.world.note(&self.name, || {
                                    format!("{name}: waiting for replication timed out")
                                });
                                return Err(DriverError::WriteConcern {
                                    error: ServerError {
                                        code: code::WRITE_CONCERN_FAILED,
                                        name: "WriteConcernFailed",
                                        message: "waiting for replication timed out".into(),
                                        key_pattern: None,
                                    },
                                    response: Box::new(executed.response),
                                });
                            }
                            self.world.pause(1, 5).await;
                            if self.world.finished() {
                                return Err(DriverError::Network);
                            }
                        }
                    }
                }
            }
        }
        self.world.pause(0, 2).await;
        if fault == Some(WireFault::ReplyLost) {
            self.world.fault("reply-lost", &self.name, || {
                format!("{name} applied by member {member}, reply lost")
            });
            self.set_view(None);
            return Err(DriverError::Network);
        }
        Ok(executed.response)
    }
}

fn session_text(session: Option<(u64, u64)>) -> String {
    match session {
        Some((lsid, txn)) => format!(" lsid {lsid} txn {txn}"),
        None => String::new(),
    }
}

/// A short text of a command for the trace.
pub fn describe(operation: &Operation) -> String {
    let clip = |s: String| {
        if s.len() > 400 {
            format!("{}…", &s[..400])
        } else {
            s
        }
    };
    match operation {
        Operation::FindAndModify {
            collection,
            filter,
            update,
            upsert,
            new,
            ..
        } => clip(format!(
            "findAndModify {collection} {filter} {update}{}{}",
            if *upsert { " upsert" } else { "" },
            if *new { " new" } else { "" }
        )),
        Operation::Find {
            collection,
            filter,
            sort,
            limit,
            ..
        } => clip(format!(
            "find {collection} {filter}{}{}",
            sort.as_ref()
                .map(|s| format!(" sort {s}"))
                .unwrap_or_default(),
            limit.map(|l| format!(" limit {l}")).unwrap_or_default()
        )),
        Operation::Insert {
            collection,
            documents,
            ..
        } => clip(format!(
            "insert {collection} {}",
            documents
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        )),
        Operation::Update {
            collection,
            statements,
            ordered,
        } => clip(format!(
            "update {collection} ordered:{ordered} [{}]",
            statements
                .iter()
                .map(|s| format!(
                    "{{q: {}, u: {}{}}}",
                    s.filter,
                    s.update,
                    if s.multi { ", multi" } else { "" }
                ))
                .collect::<Vec<_>>()
                .join(", ")
        )),
        Operation::Delete {
            collection,
            filter,
            multi,
        } => clip(format!(
            "delete {collection} {filter}{}",
            if *multi { " multi" } else { "" }
        )),
        Operation::Aggregate {
            collection,
            pipeline,
        } => clip(format!(
            "aggregate {collection} [{}]",
            pipeline
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        )),
        Operation::CreateIndex { collection, spec } => {
            format!("createIndexes {collection} {}", spec.name)
        }
        Operation::Drop { collection } => format!("drop {collection}"),
        Operation::Rename { from, to } => format!("renameCollection {from} → {to}"),
        Operation::DropDatabase => "dropDatabase".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::world::Config;

    fn quiet_world() -> World {
        World::new(
            Config {
                seed: 1,
                data_members: 3,
                arbiters: 0,
                server_default_write: WriteConcern::Majority { wtimeout_ms: None },
                wire_fault_rate: 0.0,
                failover_every_s: 0.0,
                truncate_every_s: 0.0,
                crash_every_s: 0.0,
                sidecars: 0,
                sidecar_crash_every_s: 0.0,
                sidecar_pause_every_s: 0.0,
                drop_every_s: 0.0,
                sidecar_read_preference: ReadPreference::Primary,
                issuing: false,
                rival: false,
                ledger: false,
                replaced_while_frozen: 0.3,
                frozen_killed_after_ms: (500, 4000),
                delete_pause_ms: (100, 1500),
                delete_newest: None,
                delete_gapless_only: false,
                void_after_delete: false,
                mutant: None,
            },
            false,
        )
    }

    /// Seed 3,013,611's topology: member 0 (term 1) cut off, member 1 elected (term 2), member 1
    /// crashes while member 0 still claims term 1.
    #[test]
    fn a_client_never_goes_back_to_the_primary_of_an_older_term() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .start_paused(true)
            .build()
            .expect("runtime");
        runtime.block_on(async {
            let world = quiet_world();
            let client = Client::new(&world, "client", ClientOptions::default());
            assert_eq!(client.select().await, Ok(0));
            let newer = world.with(|w| {
                w.cluster.isolate(0);
                w.cluster.elect()
            });
            let newer = newer.expect("members 1 and 2 elect one of them");
            client.set_view(None);
            assert_eq!(client.select().await, Ok(newer));
            world.with(|w| w.cluster.crash(newer));
            client.set_view(None);
            // Member 0 still says primary, of term 1: Unknown to this client, which waits for a
            // primary of term 2 or later until server selection times out.
            assert_eq!(client.node_term(0), Some(1));
            assert_eq!(client.select().await, Err(DriverError::ServerSelection));
            // A client that never saw term 2 has no reason to distrust member 0.
            let fresh = Client::new(&world, "fresh", ClientOptions::default());
            assert_eq!(fresh.select().await, Ok(0));
        });
    }
}
