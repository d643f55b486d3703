//! Executing one database command on a member, as a server does: reads at the requested read
//! concern, writes applied atomically per document on the primary's data and recorded in its
//! oplog, retryable writes applied at most once per statement.
//!
//! * Single-document atomicity (<https://www.mongodb.com/docs/manual/core/write-operations-atomicity/>):
//!   each statement reads and writes one document in one step; nothing interleaves within it.
//! * `findAndModify` (<https://www.mongodb.com/docs/manual/reference/command/findAndModify/>):
//!   the first match (natural order, or `sort`), updated; `new` returns it after the update;
//!   with `upsert` and no match, inserts the filter's equalities plus the update — a unique
//!   `_id` already taken by a document the filter did not match is a DuplicateKey error.
//! * `update` (<https://www.mongodb.com/docs/manual/reference/command/update/>): statements in
//!   order; a failed statement is a `writeErrors` entry; `ordered: true` stops at the first,
//!   `ordered: false` goes on; `n` counts matched (and upserted), `nModified` changed documents
//!   (a document left as it was is not modified and writes no oplog entry).
//! * Read concern (<https://www.mongodb.com/docs/manual/reference/read-concern/>): `local` reads
//!   the member's newest data, which may later be rolled back; `majority` reads the data as of
//!   the member's majority commit point. With `afterClusterTime` (`Request::after_cluster_time`)
//!   a `majority` read first waits until the member's commit point has reached that time (the
//!   driver's side of the model waits, `client.rs`, as the server blocks the command): a
//!   deposed primary, whose commit point cannot move, or a new primary that has not committed
//!   an entry of its term yet, does not answer from an older snapshot.
//! * Reads and writes go to the primary (read preference `primary`); a member that is not
//!   primary answers NotWritablePrimary (10107) / NotPrimaryNoSecondaryOk (13435). A read sent
//!   with another read preference (`secondaryOk`) is served by a secondary from its own data.
//! * Retryable writes (<https://www.mongodb.com/docs/manual/core/retryable-writes/>): a
//!   statement carrying a session and transaction number the member has a record of returns
//!   the recorded result and is not applied again.

use bson::{oid::ObjectId, Bson, Document};

use super::aggregate;
use super::cluster::Cluster;
use super::collection::IndexSpec;
use super::error::{code, ModelError};
use super::find::{project, sort};
use super::query::matches;
use super::state::{Op, SessionRecord, State, StatementResult, Ts};
use super::update::{apply, apply_inserting, upsert_base};

/// Read concern level.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadLevel {
    Local,
    Majority,
}

/// One `update` statement.
#[derive(Debug, Clone)]
pub struct Statement {
    pub filter: Document,
    pub update: Document,
    pub multi: bool,
    pub upsert: bool,
}

/// A database command.
#[derive(Debug, Clone)]
pub enum Operation {
    FindAndModify {
        collection: String,
        filter: Document,
        update: Document,
        upsert: bool,
        new: bool,
        sort: Option<Document>,
    },
    Find {
        collection: String,
        filter: Document,
        projection: Option<Document>,
        sort: Option<Document>,
        limit: Option<u64>,
    },
    Insert {
        collection: String,
        documents: Vec<Document>,
        ordered: bool,
    },
    Update {
        collection: String,
        statements: Vec<Statement>,
        ordered: bool,
    },
    Delete {
        collection: String,
        filter: Document,
        multi: bool,
    },
    Aggregate {
        collection: String,
        pipeline: Vec<Document>,
    },
    CreateIndex {
        collection: String,
        spec: IndexSpec,
    },
    Drop {
        collection: String,
    },
    Rename {
        from: String,
        to: String,
    },
    DropDatabase,
}

impl Operation {
    pub fn is_write(&self) -> bool {
        !matches!(self, Self::Find { .. } | Self::Aggregate { .. })
    }

    /// The server command's name (for traces).
    pub fn name(&self) -> &'static str {
        match self {
            Self::FindAndModify { .. } => "findAndModify",
            Self::Find { .. } => "find",
            Self::Insert { .. } => "insert",
            Self::Update { .. } => "update",
            Self::Delete { .. } => "delete",
            Self::Aggregate { .. } => "aggregate",
            Self::CreateIndex { .. } => "createIndexes",
            Self::Drop { .. } => "drop",
            Self::Rename { .. } => "renameCollection",
            Self::DropDatabase => "dropDatabase",
        }
    }

    pub fn collection(&self) -> Option<&str> {
        match self {
            Self::FindAndModify { collection, .. }
            | Self::Find { collection, .. }
            | Self::Insert { collection, .. }
            | Self::Update { collection, .. }
            | Self::Delete { collection, .. }
            | Self::Aggregate { collection, .. }
            | Self::CreateIndex { collection, .. }
            | Self::Drop { collection } => Some(collection),
            Self::Rename { from, .. } => Some(from),
            Self::DropDatabase => None,
        }
    }
}

/// A command with its database, read concern and retryable-write session.
#[derive(Debug, Clone)]
pub struct Request {
    pub db: String,
    pub operation: Operation,
    pub read_concern: ReadLevel,
    /// `readConcern.afterClusterTime` (`majority` reads): answer from a snapshot at or after it.
    pub after_cluster_time: Option<Ts>,
    /// A read a secondary may serve (read preference other than `primary`).
    pub secondary_ok: bool,
    /// The command's `maxTimeMS` (how long an `afterClusterTime` read may wait).
    pub max_time_ms: Option<u64>,
    /// `(lsid, txnNumber)` of a retryable write.
    pub session: Option<(u64, u64)>,
}

/// One failed statement.
#[derive(Debug, Clone, PartialEq)]
pub struct WriteError {
    pub index: u64,
    pub code: i32,
    pub message: String,
    /// A duplicate key's: its unique index's key pattern (see [`ServerError::key_pattern`]).
    pub key_pattern: Option<Vec<String>>,
}

/// The server's reply.
#[derive(Debug, Clone, PartialEq)]
pub enum Response {
    /// findAndModify's `value`.
    Value(Option<Document>),
    /// A cursor's documents (all batches).
    Documents(Vec<Document>),
    Write {
        n: u64,
        n_modified: u64,
        write_errors: Vec<WriteError>,
        /// The reply's `operationTime`: the newest entry the command wrote, else the member's
        /// newest (what the server reports for a write that changed nothing).
        operation_time: Option<Ts>,
    },
    Ok,
}

/// What executing a command did on the member.
#[derive(Debug, Clone)]
pub struct Executed {
    pub response: Response,
    /// Time of its newest oplog entry (`None`: it wrote nothing).
    pub last_ts: Option<Ts>,
    /// The member's term when it executed.
    pub term: u64,
    /// The documents it changed: `(entry time, namespace, _id)` (`_id` absent for DDL).
    pub changed: Vec<(Ts, String, Option<Bson>)>,
}

/// ObjectIds the model generates (deterministic).
fn object_id(counter: u64) -> ObjectId {
    let mut bytes = [0u8; 12];
    bytes[4..].copy_from_slice(&counter.to_be_bytes());
    ObjectId::from_bytes(bytes)
}

/// Executes `request` on member `index`. Errors are the server's answer to the command.
pub fn execute(
    cluster: &mut Cluster,
    index: usize,
    request: &Request,
) -> Result<Executed, ModelError> {
    let node = cluster.node(index);
    let serves = node.term().or_else(|| {
        (request.secondary_ok && !request.operation.is_write() && !node.is_arbiter()).then_some(0)
    });
    let Some(term) = serves else {
        return Err(if request.operation.is_write() {
            ModelError::not_writable_primary()
        } else {
            ModelError::server(
                code::NOT_PRIMARY_NO_SECONDARY_OK,
                "NotPrimaryNoSecondaryOk",
                "not primary and secondaryOk=false",
            )
        });
    };
    let ns = |collection: &str| format!("{}.{collection}", request.db);
    if !request.operation.is_write() {
        let state = match request.read_concern {
            ReadLevel::Local => &node.data,
            ReadLevel::Majority => &node.committed,
        };
        let response = read(state, &request.operation, &ns)?;
        return Ok(Executed {
            response,
            last_ts: None,
            term,
            changed: Vec::new(),
        });
    }
    let seed = cluster.clock();
    let node = cluster.node_mut(index);
    let mut writer = Writer {
        state: &mut node.data,
        ops: Vec::new(),
        session: request.session,
        object_ids: seed * 1000,
    };
    let mut response = writer.write(&request.operation, &request.db)?;
    let ops = writer.ops;
    let targets: Vec<(String, Option<Bson>)> = ops.iter().map(|(op, _)| target_of(op)).collect();
    let times = cluster.append(index, ops);
    if let Response::Write { operation_time, .. } = &mut response {
        *operation_time = Some(
            times
                .last()
                .copied()
                .unwrap_or_else(|| cluster.node(index).last_ts()),
        );
    }
    let changed = times
        .iter()
        .zip(targets)
        .map(|(ts, (ns, id))| (*ts, ns, id))
        .collect();
    Ok(Executed {
        response,
        last_ts: times.last().copied(),
        term,
        changed,
    })
}

/// The namespace and `_id` an oplog operation changes.
fn target_of(op: &Op) -> (String, Option<Bson>) {
    match op {
        Op::Put { ns, document, .. } => (ns.clone(), document.get("_id").cloned()),
        Op::Delete { ns, id, .. } => (ns.clone(), Some(id.clone())),
        Op::CreateIndex { ns, .. } | Op::Drop { ns } => (ns.clone(), None),
        Op::Rename { from, .. } => (from.clone(), None),
        Op::DropDatabase { db } => (db.clone(), None),
        Op::Noop => (String::new(), None),
    }
}

fn read(
    state: &State,
    operation: &Operation,
    ns: &dyn Fn(&str) -> String,
) -> Result<Response, ModelError> {
    match operation {
        Operation::Find {
            collection,
            filter,
            projection,
            sort: order,
            limit,
        } => {
            let mut found = Vec::new();
            if let Some(c) = state.collection(&ns(collection)) {
                for document in c.documents() {
                    if matches(document, filter)? {
                        found.push(document.clone());
                    }
                }
            }
            if let Some(order) = order {
                sort(&mut found, order)?;
            }
            if let Some(limit) = limit {
                found.truncate(usize::try_from(*limit).unwrap_or(usize::MAX));
            }
            if let Some(projection) = projection {
                found = found
                    .iter()
                    .map(|d| project(d, projection))
                    .collect::<Result<_, _>>()?;
            }
            Ok(Response::Documents(found))
        }
        Operation::Aggregate {
            collection,
            pipeline,
        } => {
            let documents: Vec<Document> = state
                .collection(&ns(collection))
                .map(|c| c.documents().cloned().collect())
                .unwrap_or_default();
            Ok(Response::Documents(aggregate::run(documents, pipeline)?))
        }
        _ => Err(ModelError::unsupported("a write executed as a read")),
    }
}

/// Applies a write's statements to the primary's data, collecting their oplog operations.
struct Writer<'a> {
    state: &'a mut State,
    ops: Vec<(Op, Option<SessionRecord>)>,
    session: Option<(u64, u64)>,
    object_ids: u64,
}

impl Writer<'_> {
    fn record(
        &mut self,
        op: Op,
        statement: u32,
        result: Option<StatementResult>,
    ) -> Result<(), ModelError> {
        let session = match (self.session, result) {
            (Some((lsid, txn)), Some(result)) => Some(SessionRecord {
                lsid,
                txn,
                statement,
                result,
            }),
            _ => None,
        };
        self.state.apply(&op, session.as_ref())?;
        self.ops.push((op, session));
        Ok(())
    }

    /// The recorded result of statement `statement` when this is a retry.
    fn retried(&self, statement: u32) -> Result<Option<StatementResult>, ModelError> {
        match self.session {
            Some((lsid, txn)) => Ok(self.state.executed(lsid, txn, statement)?.cloned()),
            None => Ok(None),
        }
    }

    fn new_id(&mut self) -> Bson {
        self.object_ids += 1;
        Bson::ObjectId(object_id(self.object_ids))
    }

    fn write(&mut self, operation: &Operation, db: &str) -> Result<Response, ModelError> {
        let ns = |collection: &str| format!("{db}.{collection}");
        match operation {
            Operation::FindAndModify {
                collection,
                filter,
                update,
                upsert,
                new,
                sort: order,
            } => {
                if let Some(StatementResult::Document(document)) = self.retried(0)? {
                    return Ok(Response::Value(document));
                }
                let ns = ns(collection);
                let result = self.modify_one(&ns, filter, update, *upsert, *new, order.as_ref())?;
                Ok(Response::Value(result))
            }
            Operation::Update {
                collection,
                statements,
                ordered,
            } => {
                let ns = ns(collection);
                let (mut n, mut n_modified, mut write_errors) = (0, 0, Vec::new());
                for (index, statement) in statements.iter().enumerate() {
                    let number = u32::try_from(index).unwrap_or(u32::MAX);
                    let outcome = match self.retried(number)? {
                        Some(StatementResult::Updated { n, modified, .. }) => Ok((n, modified)),
                        _ => self.update_statement(&ns, statement, number),
                    };
                    match outcome {
                        Ok((matched, modified)) => {
                            n += matched;
                            n_modified += modified;
                        }
                        Err(ModelError::Server(error)) => {
                            write_errors.push(WriteError {
                                index: index as u64,
                                code: error.code,
                                message: error.message,
                                key_pattern: error.key_pattern,
                            });
                            if *ordered {
                                break;
                            }
                        }
                        Err(unsupported) => return Err(unsupported),
                    }
                }
                Ok(Response::Write {
                    n,
                    n_modified,
                    write_errors,
                    operation_time: None,
                })
            }
            Operation::Insert {
                collection,
                documents,
                ordered,
            } => {
                let ns = ns(collection);
                let (mut n, mut write_errors) = (0, Vec::new());
                for (index, document) in documents.iter().enumerate() {
                    let number = u32::try_from(index).unwrap_or(u32::MAX);
                    if let Some(StatementResult::Inserted) = self.retried(number)? {
                        n += 1;
                        continue;
                    }
                    let mut document = document.clone();
                    if !document.contains_key("_id") {
                        let id = self.new_id();
                        let mut with_id = Document::new();
                        with_id.insert("_id", id);
                        with_id.extend(document);
                        document = with_id;
                    }
                    if self
                        .state
                        .collection(&ns)
                        .and_then(|c| document.get("_id").and_then(|id| c.record_of(id)))
                        .is_some()
                    {
                        write_errors.push(WriteError {
                            index: index as u64,
                            code: code::DUPLICATE_KEY,
                            message: "E11000 duplicate key error index: _id_".to_owned(),
                            key_pattern: Some(vec!["_id".to_owned()]),
                        });
                        if *ordered {
                            break;
                        }
                        continue;
                    }
                    let op = Op::Put {
                        ns: ns.clone(),
                        document,
                        insert: true,
                    };
                    // Applying checks the unique indexes first and changes nothing on failure.
                    match self.record(op, number, Some(StatementResult::Inserted)) {
                        Ok(()) => n += 1,
                        Err(ModelError::Server(error)) => {
                            write_errors.push(WriteError {
                                index: index as u64,
                                code: error.code,
                                message: error.message,
                                key_pattern: error.key_pattern,
                            });
                            if *ordered {
                                break;
                            }
                        }
                        Err(unsupported) => return Err(unsupported),
                    }
                }
                Ok(Response::Write {
                    n,
                    n_modified: 0,
                    write_errors,
                    operation_time: None,
                })
            }
            Operation::Delete {
                collection,
                filter,
                multi,
            } => {
                let ns = ns(collection);
                if let Some(StatementResult::Deleted(n)) = self.retried(0)? {
                    return Ok(Response::Write {
                        n,
                        n_modified: 0,
                        write_errors: Vec::new(),
                        operation_time: None,
                    });
                }
                let ids: Vec<(Bson, Document)> = match self.state.collection(&ns) {
                    Some(c) => {
                        let mut ids = Vec::new();
                        for record in c.matching(filter)? {
                            if let Some(document) = c.get(record) {
                                if let Some(id) = document.get("_id") {
                                    ids.push((id.clone(), document.clone()));
                                }
                            }
                            if !multi {
                                break;
                            }
                        }
                        ids
                    }
                    None => Vec::new(),
                };
                let n = ids.len() as u64;
                for (id, before) in ids {
                    self.record(
                        Op::Delete {
                            ns: ns.clone(),
                            id,
                            before: Some(before),
                        },
                        0,
                        Some(StatementResult::Deleted(n)),
                    )?;
                }
                Ok(Response::Write {
                    n,
                    n_modified: 0,
                    write_errors: Vec::new(),
                    operation_time: None,
                })
            }
            Operation::CreateIndex { collection, spec } => {
                let ns = ns(collection);
                let exists = self
                    .state
                    .collection(&ns)
                    .is_some_and(|c| c.indexes().any(|i| i == spec));
                if !exists {
                    self.record(
                        Op::CreateIndex {
                            ns,
                            spec: spec.clone(),
                        },
                        0,
                        None,
                    )?;
                }
                Ok(Response::Ok)
            }
            Operation::Drop { collection } => {
                let ns = ns(collection);
                if self.state.collection(&ns).is_some() {
                    self.record(Op::Drop { ns }, 0, None)?;
                }
                Ok(Response::Ok)
            }
            Operation::Rename { from, to } => {
                let (from, to) = (ns(from), ns(to));
                if self.state.collection(&from).is_none() {
                    return Err(ModelError::server(
                        code::NAMESPACE_NOT_FOUND,
                        "NamespaceNotFound",
                        "source namespace does not exist",
                    ));
                }
                if self.state.collection(&to).is_some() {
                    return Err(ModelError::server(
                        code::NAMESPACE_EXISTS,
                        "NamespaceExists",
                        "target namespace exists",
                    ));
                }
                self.record(Op::Rename { from, to }, 0, None)?;
                Ok(Response::Ok)
            }
            Operation::DropDatabase => {
                self.record(Op::DropDatabase { db: db.to_owned() }, 0, None)?;
                Ok(Response::Ok)
            }
            Operation::Find { .. } | Operation::Aggregate { .. } => {
                Err(ModelError::unsupported("a read executed as a write"))
            }
        }
    }

    /// An upsert's new document must not take an existing `_id` (a `put` would replace it).
    fn check_new_id(state: &State, ns: &str, document: &Document) -> Result<(), ModelError> {
        let taken = state
            .collection(ns)
            .and_then(|c| document.get("_id").and_then(|id| c.record_of(id)))
            .is_some();
        if taken {
            return Err(ModelError::duplicate_key(
                format!(
                    "E11000 duplicate key error index: _id_ dup key: {{ _id: {} }}",
                    document
                        .get("_id")
                        .map(ToString::to_string)
                        .unwrap_or_default()
                ),
                vec!["_id".to_owned()],
            ));
        }
        Ok(())
    }

    /// findAndModify on one document.
    fn modify_one(
        &mut self,
        ns: &str,
        filter: &Document,
        update: &Document,
        upsert: bool,
        new: bool,
        order: Option<&Document>,
    ) -> Result<Option<Document>, ModelError> {
        let found = match self.state.collection(ns) {
            Some(c) => {
                let mut candidates: Vec<Document> = Vec::new();
                for record in c.matching(filter)? {
                    if let Some(d) = c.get(record) {
                        candidates.push(d.clone());
                    }
                }
                if let Some(order) = order {
                    sort(&mut candidates, order)?;
                }
                candidates.into_iter().next()
            }
            None => None,
        };
        match found {
            Some(before) => {
                let mut after = before.clone();
                apply(&mut after, update)?;
                if after != before {
                    let result = if new { after.clone() } else { before.clone() };
                    let op = Op::Put {
                        ns: ns.to_owned(),
                        document: after.clone(),
                        insert: false,
                    };
                    self.record(op, 0, Some(StatementResult::Document(Some(result))))?;
                }
                Ok(Some(if new { after } else { before }))
            }
            None if upsert => {
                let mut document = upsert_base(filter)?;
                apply_inserting(&mut document, update)?;
                if !document.contains_key("_id") {
                    let id = self.new_id();
                    let mut with_id = Document::new();
                    with_id.insert("_id", id);
                    with_id.extend(document);
                    document = with_id;
                }
                Self::check_new_id(self.state, ns, &document)?;
                let result = if new { Some(document.clone()) } else { None };
                let op = Op::Put {
                    ns: ns.to_owned(),
                    document,
                    insert: true,
                };
                self.record(op, 0, Some(StatementResult::Document(result.clone())))?;
                Ok(result)
            }
            None => Ok(None),
        }
    }

    /// One `update` statement: `(matched, modified)`.
    fn update_statement(
        &mut self,
        ns: &str,
        statement: &Statement,
        number: u32,
    ) -> Result<(u64, u64), ModelError> {
        let records = match self.state.collection(ns) {
            Some(c) => c.matching(&statement.filter)?,
            None => Vec::new(),
        };
        let records: Vec<u64> = if statement.multi {
            records
        } else {
            records.into_iter().take(1).collect()
        };
        if records.is_empty() {
            if !statement.upsert {
                return Ok((0, 0));
            }
            let mut document = upsert_base(&statement.filter)?;
            apply_inserting(&mut document, &statement.update)?;
            if !document.contains_key("_id") {
                let id = self.new_id();
                let mut with_id = Document::new();
                with_id.insert("_id", id);
                with_id.extend(document);
                document = with_id;
            }
            Self::check_new_id(self.state, ns, &document)?;
            let op = Op::Put {
                ns: ns.to_owned(),
                document,
                insert: true,
            };
            self.record(
                op,
                number,
                Some(StatementResult::Updated {
                    n: 1,
                    modified: 0,
                    upserted: true,
                }),
            )?;
            return Ok((1, 0));
        }
        let (mut matched, mut modified) = (0, 0);
        // Compute every change first: a statement either applies or fails as a whole for a
        // single document; for multi, documents before a failure stay updated (as on a server).
        let mut changes = Vec::new();
        for record in records {
            let Some(before) = self
                .state
                .collection(ns)
                .and_then(|c| c.get(record))
                .cloned()
            else {
                continue;
            };
            let mut after = before.clone();
            apply(&mut after, &statement.update)?;
            matched += 1;
            if after != before {
                changes.push(after);
            }
        }
        let total = changes.len();
        for (i, after) in changes.into_iter().enumerate() {
            modified += 1;
            let last = i + 1 == total;
            let result = last.then_some(StatementResult::Updated {
                n: matched,
                modified: total as u64,
                upserted: false,
            });
            let op = Op::Put {
                ns: ns.to_owned(),
                document: after,
                insert: false,
            };
            self.record(op, number, if statement.multi { None } else { result })?;
        }
        Ok((matched, modified))
    }
}
