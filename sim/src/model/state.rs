//! The data of one node and the oplog entries that change it.
//!
//! Every write the primary applies becomes oplog entries carrying the document as it is after
//! the write (inserts and updates) or its `_id` (deletes), so applying an entry is idempotent
//! and secondaries reach exactly the primary's data ("Replica Set Oplog",
//! <https://www.mongodb.com/docs/manual/core/replica-set-oplog/>: each operation in the oplog
//! is idempotent). A retryable write's entry also records its session, transaction number,
//! statement and result, so the record replicates, survives failover, and rolls back with the
//! write (retryable writes, <https://www.mongodb.com/docs/manual/core/retryable-writes/>).

use std::collections::{BTreeMap, HashMap};

use bson::{Bson, Document};

use super::collection::{Collection, IndexSpec};
use super::error::ModelError;

/// A cluster time: one number, unique per oplog entry, increasing across terms.
pub type Ts = u64;

/// What an oplog entry does.
#[derive(Debug, Clone, PartialEq)]
pub enum Op {
    /// A document inserted (`insert`) or updated: the document as it is now.
    Put {
        ns: String,
        document: Document,
        insert: bool,
    },
    Delete {
        ns: String,
        id: Bson,
        /// The document before (its pre-image, `changeStreamPreAndPostImages`).
        before: Option<Document>,
    },
    CreateIndex {
        ns: String,
        spec: IndexSpec,
    },
    Drop {
        ns: String,
    },
    Rename {
        from: String,
        to: String,
    },
    DropDatabase {
        db: String,
    },
    /// A new primary's first entry.
    Noop,
}

/// The result of one statement of a retryable write, kept for its retry.
#[derive(Debug, Clone, PartialEq)]
pub enum StatementResult {
    /// findAndModify: the document returned.
    Document(Option<Document>),
    /// One `update` statement: matched and modified.
    Updated {
        n: u64,
        modified: u64,
        upserted: bool,
    },
    Inserted,
    Deleted(u64),
}

/// The retryable-write record an entry carries.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionRecord {
    pub lsid: u64,
    pub txn: u64,
    pub statement: u32,
    pub result: StatementResult,
}

/// One oplog entry.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    pub ts: Ts,
    /// The primary's wall clock when it wrote the entry (simulated ms; a change event's
    /// `wallTime`, [`super::stream::WALL_ORIGIN_MS`] later).
    pub wall_ms: u64,
    pub term: u64,
    pub op: Op,
    pub session: Option<SessionRecord>,
}

/// The statements of one transaction number a session has executed.
#[derive(Debug, Clone, Default)]
pub struct SessionState {
    pub txn: u64,
    pub statements: HashMap<u32, StatementResult>,
}

/// A node's data: collections by namespace (`db.coll`) and the retryable-write table.
#[derive(Debug, Clone, Default)]
pub struct State {
    pub collections: BTreeMap<String, Collection>,
    pub sessions: HashMap<u64, SessionState>,
}

impl State {
    pub fn collection(&self, ns: &str) -> Option<&Collection> {
        self.collections.get(ns)
    }

    /// The collection, created implicitly by a first write
    /// (<https://www.mongodb.com/docs/manual/core/databases-and-collections/#create-a-collection>).
    pub fn collection_mut(&mut self, ns: &str) -> &mut Collection {
        self.collections.entry(ns.to_owned()).or_default()
    }

    /// Applies one operation (as the primary does when it writes, and every node when it
    /// replays the oplog).
    pub fn apply(&mut self, op: &Op, session: Option<&SessionRecord>) -> Result<(), ModelError> {
        match op {
            Op::Put { ns, document, .. } => self.collection_mut(ns).put(document.clone())?,
            Op::Delete { ns, id, .. } => {
                if let Some(collection) = self.collections.get_mut(ns) {
                    if let Some(record) = collection.record_of(id) {
                        collection.remove(record);
                    }
                }
            }
            Op::CreateIndex { ns, spec } => {
                self.collection_mut(ns).create_index(spec.clone())?;
            }
            Op::Drop { ns } => {
                self.collections.remove(ns);
            }
            Op::Rename { from, to } => {
                if let Some(collection) = self.collections.remove(from) {
                    self.collections.insert(to.clone(), collection);
                }
            }
            Op::DropDatabase { db } => {
                let prefix = format!("{db}.");
                self.collections.retain(|ns, _| !ns.starts_with(&prefix));
            }
            Op::Noop => {}
        }
        if let Some(record) = session {
            let state = self.sessions.entry(record.lsid).or_default();
            if state.txn != record.txn {
                state.txn = record.txn;
                state.statements.clear();
            }
            state
                .statements
                .insert(record.statement, record.result.clone());
        }
        Ok(())
    }

    /// The recorded result of a retried statement, or the error for an old transaction.
    pub fn executed(
        &self,
        lsid: u64,
        txn: u64,
        statement: u32,
    ) -> Result<Option<&StatementResult>, ModelError> {
        match self.sessions.get(&lsid) {
            Some(state) if state.txn > txn => Err(ModelError::server(
                super::error::code::TRANSACTION_TOO_OLD,
                "TransactionTooOld",
                format!(
                    "txnNumber {txn} is less than last txnNumber {} seen in session",
                    state.txn
                ),
            )),
            Some(state) if state.txn == txn => Ok(state.statements.get(&statement)),
            _ => Ok(None),
        }
    }
}
