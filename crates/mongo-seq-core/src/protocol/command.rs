//! Commands: the database operations a plan asks its caller to run, as data.
//!
//! Documents, filters and updates are MongoDB Extended JSON v2; integers are emitted canonical.
//! Commands are data (serde, canonical Extended JSON), so each shell has one executor that runs
//! any of them — the JS package with the Node driver, the sidecar with the `mongodb` crate, a
//! simulator against its model of MongoDB — and every protocol stays in the core.
//!
//! **Read and write concerns** are the core's too ([`crate::protocol::concern`]): every write carries
//! `writeConcern: {w: "majority"}` and every read `readConcern: {level: "majority"}` beside the
//! command's other fields; an executor sends them as they are, whatever its client's defaults.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

// A command as JSON and back: written out, not derived (see `to_json`).
mod json;

/// Which collection a command targets: the counters collection, the caller's document
/// collection (only the optimistic insert loop uses it), the collection holding lease
/// documents (only the lease plan uses it; the sidecar's state collection), or the ledger
/// beside the counters (voided numbers, deleted documents' numbers: [`crate::ledger`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Collection {
    Counters,
    Documents,
    Leases,
    Ledger,
}

impl Collection {
    /// Its name in commands and messages.
    pub fn name(self) -> &'static str {
        match self {
            Self::Counters => "counters",
            Self::Documents => "documents",
            Self::Leases => "leases",
            Self::Ledger => "ledger",
        }
    }
}

/// `returnDocument` of findOneAndUpdate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum ReturnDocument {
    Before,
    After,
}

/// Options of [`Command::FindOneAndUpdate`], shaped like the Node driver's options object.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UpdateOptions {
    pub upsert: bool,
    pub return_document: ReturnDocument,
}

/// Options of [`Command::FindOne`], shaped like the Node driver's options object.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FindOptions {
    pub sort: Value,
    pub projection: Value,
}

/// One database operation to execute. Serialized with an `op` tag:
///
/// * `findOneAndUpdate` → `collection.findOneAndUpdate(filter, update, options)`;
///   reply `document` or `none`; a duplicate-key error (11000) → `duplicateKey`.
/// * `findOne` → `collection.findOne(filter, options)`; reply `document` or `none`.
/// * `insertOne` → `collection.insertOne(document)`; reply `inserted`, or `duplicateKey` on 11000.
/// * `insertDocument` → set `fields` (top-level keys) on the caller's own document, then
///   `insertOne` it into the document collection; reply `inserted` or `duplicateKey`. With
///   `duplicateKeyOn`, only a duplicate key on a unique index holding that field is the reply
///   `duplicateKey`; one on another index is the caller's error.
/// * `insertDocuments` → set `fields[i]` on the caller's document `first + i` (of the
///   documents it gave) and insert them in order (`insertMany`, ordered); reply `writeResult`
///   with `n` inserted and, when a duplicate key on a unique index holding `duplicateKeyOn`
///   stopped it, that one write error (`index` within this command's documents). Any other
///   error is the caller's.
/// * `take` → take `count` numbers of the counter `counterId` from the caller's own
///   [`BlockCounter`](crate::BlockCounter) (which may reserve them on the server first); reply
///   `numbers`.
/// * `find` → `collection.find(filter, options)` (`projection`, `sort`, `limit` when given),
///   every batch of the cursor; reply `documents`.
/// * `update` → the `update` command with one statement `{q: filter, u: update}` per entry of
///   `updates`, and `ordered`; reply `writeResult` (its `writeErrors` and `writeConcernError`
///   as the server sent them: the plan reads them, the executor does not turn them into errors).
/// * `updateMany` → `collection.updateMany(filter, update)` (an `update` command with
///   `multi: true`); reply `writeResult`.
/// * `aggregate` → `collection.aggregate(pipeline)`, every batch; reply `documents`.
/// * `createIndex` → `collection.createIndex(keys, {name, unique, partialFilterExpression})`
///   (the server's `createIndexes`); reply `none` (created, or there already), or
///   `duplicateKey` when documents already break a unique index (11000).
/// * `dropIndex` → `collection.dropIndex(name)` (the server's `dropIndexes`); reply `none`,
///   also when there was no such index (IndexNotFound, code 27).
/// * `wait` → sleep a duration drawn uniformly from `minMs..=maxMs` (the backoff after a lost
///   race; the core reads no clock and draws no random numbers), then reply `waited`.
/// * `localDates` → the local date in the IANA zone `timeZone` of each instant of `instants`
///   (milliseconds since the epoch, each within
///   [`MIN_INSTANT_MS`](crate::sequence::instant::MIN_INSTANT_MS)..=[`MAX_INSTANT_MS`](crate::sequence::instant::MAX_INSTANT_MS)),
///   with the host's time-zone data (the core has none); reply `localDates` with the dates as
///   `YYYY-MM-DD`, in the same order. Sends nothing to the server.
///
/// Any other driver error is the caller's to surface; the plan is then abandoned.
///
/// Every command that writes also carries `writeConcern` and every read `readConcern`, chosen by
/// the core ([`crate::protocol::concern`]); reading a command back ignores those two keys.
#[derive(Debug, Clone, PartialEq, Deserialize)]
// The derived deserializer becomes `Command::deserialize`; the trait impl (`json.rs`) drops the
// concerns before it. Serialized by `Command::to_json`.
#[serde(remote = "Self")]
#[serde(tag = "op", rename_all = "camelCase")]
pub enum Command {
    FindOneAndUpdate {
        collection: Collection,
        filter: Value,
        update: Value,
        options: UpdateOptions,
    },
    FindOne {
        collection: Collection,
        filter: Value,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        options: Option<FindOptions>,
    },
    InsertOne {
        collection: Collection,
        document: Value,
    },
    #[serde(rename_all = "camelCase")]
    InsertDocument {
        collection: Collection,
        fields: Value,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        duplicate_key_on: Option<String>,
    },
    #[serde(rename_all = "camelCase")]
    InsertDocuments {
        collection: Collection,
        first: u64,
        fields: Vec<Value>,
        duplicate_key_on: String,
    },
    #[serde(rename_all = "camelCase")]
    Take { counter_id: String, count: u64 },
    #[serde(rename_all = "camelCase")]
    Find {
        collection: Collection,
        filter: Value,
        #[serde(default, skip_serializing_if = "QueryOptions::is_empty")]
        options: QueryOptions,
        /// Read causally after this cluster time (`readConcern: {level: "majority",
        /// afterClusterTime}`, see [`crate::protocol::concern`]); serialized in `readConcern`
        /// only.
        #[serde(default)]
        after_cluster_time: Option<crate::protocol::cluster_time::ClusterTime>,
    },
    Update {
        collection: Collection,
        updates: Vec<UpdateStatement>,
        ordered: bool,
    },
    UpdateMany {
        collection: Collection,
        filter: Value,
        update: Value,
    },
    Aggregate {
        collection: Collection,
        pipeline: Vec<Value>,
    },
    #[serde(rename_all = "camelCase")]
    CreateIndex {
        collection: Collection,
        name: String,
        keys: Value,
        unique: bool,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        partial_filter_expression: Option<Value>,
    },
    DropIndex {
        collection: Collection,
        name: String,
    },
    #[serde(rename_all = "camelCase")]
    Wait { min_ms: u64, max_ms: u64 },
    #[serde(rename_all = "camelCase")]
    LocalDates {
        time_zone: String,
        instants: Vec<i64>,
    },
}

impl Command {
    /// The collection the command runs on (`None` for a `wait`, a `take` or `localDates`).
    pub fn collection(&self) -> Option<Collection> {
        match self {
            Self::FindOneAndUpdate { collection, .. }
            | Self::FindOne { collection, .. }
            | Self::InsertOne { collection, .. }
            | Self::InsertDocument { collection, .. }
            | Self::InsertDocuments { collection, .. }
            | Self::Find { collection, .. }
            | Self::Update { collection, .. }
            | Self::UpdateMany { collection, .. }
            | Self::Aggregate { collection, .. }
            | Self::CreateIndex { collection, .. }
            | Self::DropIndex { collection, .. } => Some(*collection),
            Self::Wait { .. } | Self::Take { .. } | Self::LocalDates { .. } => None,
        }
    }

    /// The server command it becomes (`findAndModify`, `find`, `insert`, `update`,
    /// `aggregate`, `createIndexes`): what command monitoring sees, for accounting (`None` for a
    /// `wait`, a `take` or `localDates`, which send nothing themselves).
    pub fn server_command(&self) -> Option<&'static str> {
        Some(match self {
            Self::FindOneAndUpdate { .. } => "findAndModify",
            Self::FindOne { .. } | Self::Find { .. } => "find",
            Self::InsertOne { .. } | Self::InsertDocument { .. } | Self::InsertDocuments { .. } => {
                "insert"
            }
            Self::Update { .. } | Self::UpdateMany { .. } => "update",
            Self::Aggregate { .. } => "aggregate",
            Self::CreateIndex { .. } => "createIndexes",
            Self::DropIndex { .. } => "dropIndexes",
            Self::Wait { .. } | Self::Take { .. } | Self::LocalDates { .. } => return None,
        })
    }
}

/// Options of [`Command::Find`]; each only when given.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct QueryOptions {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub projection: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sort: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<u64>,
    /// Read the documents `majority` (on the primary) rather than `local`: a decision that no
    /// document holds a number must not rest on a deletion that may still roll back (a void,
    /// seed 867). Sent as the command's `readConcern`, never in `options`.
    #[serde(skip)]
    pub majority: bool,
}

impl QueryOptions {
    /// No option set (the `options` key is then left out).
    pub fn is_empty(&self) -> bool {
        self.projection.is_none() && self.sort.is_none() && self.limit.is_none()
    }

    /// Only a projection.
    pub fn projection(projection: Value) -> Self {
        Self {
            projection: Some(projection),
            ..Self::default()
        }
    }
}

/// One statement of [`Command::Update`]: the server's `{q, u}` (single-document, no upsert).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct UpdateStatement {
    pub filter: Value,
    pub update: Value,
}

/// `{ _id: counter_id }` plus extra entries.
pub(crate) fn id_filter(counter_id: &str) -> Map<String, Value> {
    let mut filter = Map::new();
    filter.insert("_id".to_owned(), Value::String(counter_id.to_owned()));
    filter
}

/// `{ "$op": value }` as a Value, e.g. `{ "$lte": {"$numberLong": "5"} }`.
pub(crate) fn operator(op: &str, value: Value) -> Value {
    let mut map = Map::new();
    map.insert(op.to_owned(), value);
    Value::Object(map)
}
