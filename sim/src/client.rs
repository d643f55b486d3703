//! The client side of the wire, as the official drivers behave: server selection from a
//! topology view that can be stale, the command's read and write concern (or the client's
//! defaults), retryable writes and reads, and the faults the network and the servers inject.
//!
//! * Server selection (<https://github.com/mongodb/specifications/blob/master/source/server-selection/server-selection.md>):
//!   commands go to the member the client believes primary; the view is refreshed by the
//!   monitor now and then, and at once after a network error or a "not primary" answer, so a
//!   client may keep writing to a deposed primary that has not stepped down yet.
//! * Retryable writes (<https://github.com/mongodb/specifications/blob/master/source/retryable-writes/retryable-writes.md>):
//!   single-statement writes and `update`s without `multi` carry a session and a transaction
//!   number and are retried once, with the same number, after a network error or a retryable
//!   code; `updateMany` is not retryable. Retryable reads retry once too.
//! * Write concern (<https://www.mongodb.com/docs/manual/reference/write-concern/>): `w: 1`
//!   acknowledges once the primary applied the write; `w: "majority"` once the write is
//!   majority-committed, or a `writeConcernError` after `wtimeout`; a primary that steps down
//!   while a write waits interrupts it (InterruptedDueToReplStateChange, 11602).
//! * Faults on each attempt (the seed's draw): the command lost before it reaches the server;
//!   applied but its reply lost; refused with a retryable error (ShutdownInProgress, 91) or a
//!   non-retryable one (OperationFailed, 96) before applying.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use crate::model::error::{code, is_retryable_code};
use crate::model::{execute, Operation, ReadLevel, Request, Response, ServerError, WriteStatus};
use crate::world::{World, WriteConcern};

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

/// A client's options (what a `MongoClient` / `Db` would be configured with).
#[derive(Debug, Clone, Copy)]
pub struct ClientOptions {
    /// The write concern of writes that name none (`None`: the deployment's default).
    pub write_concern: Option<WriteConcern>,
    /// The read concern of reads that name none (`None`: the server's default, `local`).
    pub read_concern: Option<ReadLevel>,
    pub retry_writes: bool,
    pub retry_reads: bool,
}

impl Default for ClientOptions {
    fn default() -> Self {
        Self {
            write_concern: None,
            read_concern: None,
            retry_writes: true,
            retry_reads: true,
        }
    }
}

/// One process's client: its own topology view and session.
pub struct Client {
    pub world: World,
    pub name: String,
    pub options: ClientOptions,
    view: Mutex<Option<usize>>,
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
    /// discovered (the member claiming the newest term) after a failure.
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
            let found = self.world.with(|w| {
                w.cluster
                    .claimed_primaries()
                    .into_iter()
                    .max_by_key(|m| w.cluster.node(*m).term())
            });
            if found.is_some() {
                self.set_view(found);
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
                .or(self.options.read_concern)
                .unwrap_or(ReadLevel::Local),
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

    async fn attempt(
        &self,
        request: &Request,
        write: WriteConcern,
    ) -> Result<Response, DriverError> {
        let member = self.select().await?;
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
                    format!("→ member {member} {db}: {op} [readConcern {rc:?}] {summary}")
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
