//! The sans-I/O protocol vocabulary: commands the caller executes with its driver, replies it
//! feeds back, and the [`Plan`] trait every multi-step operation implements.
//!
//! Caller loop (identical for every plan):
//!
//! ```text
//! let mut step = plan.start()?;
//! while let Step::Command(command) = step {
//!     let reply = execute(command);          // driver call, see Command docs
//!     step = plan.feed(reply)?;
//!     report(plan.drain_notes());            // logs and metrics, as they happen
//! }
//! // step is Step::Done(output)
//! ```
//!
//! Documents, filters and updates are MongoDB Extended JSON v2; integers are emitted canonical.
//!
//! Commands are data (serde, canonical Extended JSON), so each shell has one executor that runs
//! any of them — the JS package with the Node driver, the sidecar with the `mongodb` crate, a
//! simulator against its model of MongoDB — and every protocol stays in the core.
//!
//! **Read and write concerns** are the core's too ([`crate::concern`]): every write carries
//! `writeConcern: {w: "majority"}` and every read `readConcern: {level: "majority"}` beside the
//! command's other fields; an executor sends them as they are, whatever its client's defaults.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::ejson;
use crate::error::SeqError;
use crate::note::Note;

/// Which collection a command targets: the counters collection, the caller's document
/// collection (only the optimistic insert loop uses it), or the collection holding lease
/// documents (only the lease plan uses it; the sidecar's state collection).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Collection {
    Counters,
    Documents,
    Leases,
}

impl Collection {
    /// Its name in commands and messages.
    pub fn name(self) -> &'static str {
        match self {
            Self::Counters => "counters",
            Self::Documents => "documents",
            Self::Leases => "leases",
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
///
/// Any other driver error is the caller's to surface; the plan is then abandoned.
///
/// Every command that writes also carries `writeConcern` and every read `readConcern`, chosen by
/// the core ([`crate::concern`]); reading a command back ignores those two keys.
#[derive(Debug, Clone, PartialEq, Deserialize)]
// The derived deserializer becomes `Command::deserialize`; the trait impl below drops the
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
    Find {
        collection: Collection,
        filter: Value,
        #[serde(default, skip_serializing_if = "QueryOptions::is_empty")]
        options: QueryOptions,
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
}

impl Command {
    /// The collection the command runs on (`None` for a `wait` or a `take`).
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
            Self::Wait { .. } | Self::Take { .. } => None,
        }
    }

    /// The server command it becomes (`findAndModify`, `find`, `insert`, `update`,
    /// `aggregate`, `createIndexes`): what command monitoring sees, for accounting (`None` for a
    /// `wait` or a `take`, which send nothing themselves).
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
            Self::Wait { .. } | Self::Take { .. } => return None,
        })
    }
}

impl Serialize for Command {
    /// The command's own fields, then its concerns, written straight to `serializer` (no
    /// intermediate `Value`: this runs once per round trip of every plan).
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = serializer.serialize_map(None)?;
        let mut failed = None;
        self.for_each_field(&mut |key, value| {
            if failed.is_none() {
                failed = map.serialize_entry(key, &value).err();
            }
        });
        match failed {
            Some(error) => Err(error),
            None => map.end(),
        }
    }
}

/// A value of [`Command::for_each_field`]: borrowed from the command where it can be.
enum Field<'a> {
    Value(&'a Value),
    List(&'a [Value]),
    Statements(&'a [UpdateStatement]),
    Owned(Value),
}

impl Serialize for Field<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Value(value) => value.serialize(serializer),
            Self::List(values) => values.serialize(serializer),
            Self::Statements(statements) => statements.serialize(serializer),
            Self::Owned(value) => value.serialize(serializer),
        }
    }
}

impl Field<'_> {
    fn into_value(self) -> Value {
        match self {
            Self::Value(value) => value.clone(),
            Self::List(values) => Value::Array(values.to_vec()),
            Self::Statements(statements) => statements
                .iter()
                .map(|statement| {
                    ejson::object([
                        ("filter", statement.filter.clone()),
                        ("update", statement.update.clone()),
                    ])
                })
                .collect(),
            Self::Owned(value) => value,
        }
    }
}

impl Command {
    /// The command as JSON (see [`Command::for_each_field`]).
    pub fn to_json(&self) -> Value {
        let mut fields = Map::new();
        self.for_each_field(&mut |key, value| {
            fields.insert(key.to_owned(), value.into_value());
        });
        Value::Object(fields)
    }

    /// Calls `put` with each key and value of the command as JSON: the `op` tag, its fields in
    /// declaration order, then the concerns. Written out rather than derived: a derived
    /// serializer is one more copy of serde's machinery (and its error path) in the Wasm
    /// module; borrowed values let [`Serialize`] write the command without copying it.
    fn for_each_field(&self, put: &mut dyn FnMut(&'static str, Field<'_>)) {
        fn number(value: u64) -> Field<'static> {
            Field::Owned(Value::from(value))
        }
        fn text(value: &str) -> Field<'static> {
            Field::Owned(Value::from(value))
        }
        let collection = |collection: &Collection| text(collection.name());
        match self {
            Self::FindOneAndUpdate {
                collection: on,
                filter,
                update,
                options,
            } => {
                put("op", text("findOneAndUpdate"));
                put("collection", collection(on));
                put("filter", Field::Value(filter));
                put("update", Field::Value(update));
                put(
                    "options",
                    Field::Owned(ejson::object([
                        ("upsert", Value::Bool(options.upsert)),
                        (
                            "returnDocument",
                            match options.return_document {
                                ReturnDocument::Before => "before",
                                ReturnDocument::After => "after",
                            }
                            .into(),
                        ),
                    ])),
                );
            }
            Self::FindOne {
                collection: on,
                filter,
                options,
            } => {
                put("op", text("findOne"));
                put("collection", collection(on));
                put("filter", Field::Value(filter));
                if let Some(options) = options {
                    put(
                        "options",
                        Field::Owned(ejson::object([
                            ("sort", options.sort.clone()),
                            ("projection", options.projection.clone()),
                        ])),
                    );
                }
            }
            Self::InsertOne {
                collection: on,
                document,
            } => {
                put("op", text("insertOne"));
                put("collection", collection(on));
                put("document", Field::Value(document));
            }
            Self::InsertDocument {
                collection: on,
                fields: set,
                duplicate_key_on,
            } => {
                put("op", text("insertDocument"));
                put("collection", collection(on));
                put("fields", Field::Value(set));
                if let Some(field) = duplicate_key_on {
                    put("duplicateKeyOn", text(field));
                }
            }
            Self::InsertDocuments {
                collection: on,
                first,
                fields: set,
                duplicate_key_on,
            } => {
                put("op", text("insertDocuments"));
                put("collection", collection(on));
                put("first", number(*first));
                put("fields", Field::List(set));
                put("duplicateKeyOn", text(duplicate_key_on));
            }
            Self::Take { counter_id, count } => {
                put("op", text("take"));
                put("counterId", text(counter_id));
                put("count", number(*count));
            }
            Self::Find {
                collection: on,
                filter,
                options,
            } => {
                put("op", text("find"));
                put("collection", collection(on));
                put("filter", Field::Value(filter));
                if !options.is_empty() {
                    let mut map = Map::new();
                    if let Some(projection) = &options.projection {
                        map.insert("projection".to_owned(), projection.clone());
                    }
                    if let Some(sort) = &options.sort {
                        map.insert("sort".to_owned(), sort.clone());
                    }
                    if let Some(limit) = options.limit {
                        map.insert("limit".to_owned(), Value::from(limit));
                    }
                    put("options", Field::Owned(Value::Object(map)));
                }
            }
            Self::Update {
                collection: on,
                updates,
                ordered,
            } => {
                put("op", text("update"));
                put("collection", collection(on));
                put("updates", Field::Statements(updates));
                put("ordered", Field::Owned(Value::Bool(*ordered)));
            }
            Self::UpdateMany {
                collection: on,
                filter,
                update,
            } => {
                put("op", text("updateMany"));
                put("collection", collection(on));
                put("filter", Field::Value(filter));
                put("update", Field::Value(update));
            }
            Self::Aggregate {
                collection: on,
                pipeline,
            } => {
                put("op", text("aggregate"));
                put("collection", collection(on));
                put("pipeline", Field::List(pipeline));
            }
            Self::CreateIndex {
                collection: on,
                name,
                keys,
                unique,
                partial_filter_expression,
            } => {
                put("op", text("createIndex"));
                put("collection", collection(on));
                put("name", text(name));
                put("keys", Field::Value(keys));
                put("unique", Field::Owned(Value::Bool(*unique)));
                if let Some(expression) = partial_filter_expression {
                    put("partialFilterExpression", Field::Value(expression));
                }
            }
            Self::DropIndex {
                collection: on,
                name,
            } => {
                put("op", text("dropIndex"));
                put("collection", collection(on));
                put("name", text(name));
            }
            Self::Wait { min_ms, max_ms } => {
                put("op", text("wait"));
                put("minMs", number(*min_ms));
                put("maxMs", number(*max_ms));
            }
        }
        if let Some(concern) = self.write_concern() {
            put(
                "writeConcern",
                Field::Owned(ejson::object([("w", concern.w)])),
            );
        }
        if let Some(concern) = self.read_concern() {
            put(
                "readConcern",
                Field::Owned(ejson::object([("level", concern.level.into())])),
            );
        }
    }
}

impl<'de> Deserialize<'de> for Command {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        let mut value = Value::deserialize(deserializer)?;
        if let Value::Object(fields) = &mut value {
            // Derived from the command itself: whatever the text said is not kept.
            fields.remove("writeConcern");
            fields.remove("readConcern");
        }
        Command::deserialize(value).map_err(D::Error::custom)
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

/// The outcome of a command, as fed back to a plan. Serialized with a `kind` tag:
/// `{"kind":"document","document":{…}}`, `{"kind":"none"}`, `{"kind":"inserted"}`,
/// `{"kind":"duplicateKey","errmsg"?:…,"keyPattern"?:{…}}`, `{"kind":"documents","documents":[…]}`,
/// `{"kind":"writeResult","n":…,"nModified":…,"writeErrors"?:[{index, code, errmsg}],
/// "writeConcernError"?:{code, errmsg}}` (see [`WriteResult`]), `{"kind":"waited"}`,
/// `{"kind":"numbers","values":[…]}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "camelCase", try_from = "Value")]
pub enum Reply {
    /// A find returned this document (Extended JSON, canonical or relaxed).
    Document { document: Value },
    /// A find returned null (or an index was created: nothing to say).
    None,
    /// An insert succeeded.
    Inserted,
    /// The server answered with a duplicate-key error (code 11000) on `_id`'s index, or one
    /// that does not say which index.
    DuplicateKey,
    /// A duplicate-key error on a unique index other than `_id` (`index`: its name, or its key
    /// pattern). Sent as `duplicateKey` with what the server said (`errmsg`, `keyPattern`; or
    /// the `index` name, as this variant serializes);
    /// [`Reply::duplicate_key`] tells the two apart. Plans never see it: where a command's
    /// duplicate key can only mean `_id` (`findOneAndUpdate`, `insertOne`) it ends the plan with
    /// `UNIQUE_INDEX_CONFLICT`, elsewhere it is a `DuplicateKey` (see `driver`).
    #[serde(rename = "duplicateKey")]
    DuplicateKeyOn { index: String },
    /// A `find` or `aggregate` returned these documents (every batch, in order).
    Documents { documents: Vec<Value> },
    /// What an `update`/`updateMany` did.
    WriteResult(WriteResult),
    /// A `wait` is over.
    Waited,
    /// The numbers a `take` got, in order.
    Numbers { values: Vec<i64> },
}

/// The reply to a write command, as the server gives it: `n` statements matched, `nModified`
/// documents changed, the statements that failed and a write concern failure. Integers may be
/// in any Extended JSON form; keys of the server's error documents other than `index`, `code`
/// and `errmsg` (`errInfo`, `keyPattern`, …) are ignored.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WriteResult {
    pub n: u64,
    pub n_modified: u64,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub write_errors: Vec<WriteError>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_concern_error: Option<WriteConcernError>,
}

/// One failed statement of a write command (`index` into its statements).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WriteError {
    pub index: u64,
    pub code: i64,
    pub errmsg: String,
}

/// The write concern could not be satisfied (the writes may or may not persist).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WriteConcernError {
    pub code: i64,
    pub errmsg: String,
}

/// Server error code of a duplicate key (unique index) violation.
pub const DUPLICATE_KEY: i64 = 11000;

impl Reply {
    /// Parses a raw reply with a typed error (`UNEXPECTED_REPLY`) instead of a serde error.
    pub fn from_json(raw: &Value) -> Result<Self, SeqError> {
        let Value::Object(map) = raw else {
            return Err(SeqError::unexpected_reply(format!(
                "a reply must be an object, got {}",
                ejson::describe(raw)
            )));
        };
        let kind = match map.get("kind") {
            Some(Value::String(kind)) => kind.as_str(),
            _ => return Err(SeqError::unexpected_reply("a reply needs a string `kind`")),
        };
        let expect_keys = |keys: &[&str]| -> Result<(), SeqError> {
            match map
                .keys()
                .find(|k| k.as_str() != "kind" && !keys.contains(&k.as_str()))
            {
                Some(extra) => Err(SeqError::unexpected_reply(format!(
                    "unknown key `{extra}` in a `{kind}` reply"
                ))),
                None => Ok(()),
            }
        };
        match kind {
            "document" => {
                expect_keys(&["document"])?;
                match map.get("document") {
                    Some(document @ Value::Object(_)) => Ok(Self::Document {
                        document: document.clone(),
                    }),
                    Some(other) => Err(SeqError::unexpected_reply(format!(
                        "`document` must be an object, got {}",
                        ejson::describe(other)
                    ))),
                    None => Err(SeqError::unexpected_reply(
                        "a `document` reply needs `document`",
                    )),
                }
            }
            "none" => expect_keys(&[]).map(|()| Self::None),
            "inserted" => expect_keys(&[]).map(|()| Self::Inserted),
            "duplicateKey" => {
                expect_keys(&["errmsg", "keyPattern", "index"])?;
                let text = |key: &str| match map.get(key) {
                    None | Some(Value::Null) => Ok(None),
                    Some(Value::String(text)) => Ok(Some(text.as_str())),
                    Some(other) => Err(SeqError::unexpected_reply(format!(
                        "`{key}` must be a string, got {}",
                        ejson::describe(other)
                    ))),
                };
                let key_pattern = map.get("keyPattern").filter(|pattern| !pattern.is_null());
                // `index`: the name, as this reply serializes (an executor sends `errmsg`).
                Ok(match text("index")? {
                    Some(index) => Self::duplicate_key_on(Some(index), key_pattern),
                    None => Self::duplicate_key(text("errmsg")?, key_pattern),
                })
            }
            "waited" => expect_keys(&[]).map(|()| Self::Waited),
            "documents" => {
                expect_keys(&["documents"])?;
                match map.get("documents") {
                    Some(Value::Array(items)) => {
                        if let Some(bad) = items.iter().find(|item| !item.is_object()) {
                            return Err(SeqError::unexpected_reply(format!(
                                "`documents` must hold objects, got {}",
                                ejson::describe(bad)
                            )));
                        }
                        Ok(Self::Documents {
                            documents: items.clone(),
                        })
                    }
                    Some(other) => Err(SeqError::unexpected_reply(format!(
                        "`documents` must be an array, got {}",
                        ejson::describe(other)
                    ))),
                    None => Err(SeqError::unexpected_reply(
                        "a `documents` reply needs `documents`",
                    )),
                }
            }
            "writeResult" => {
                expect_keys(&["n", "nModified", "writeErrors", "writeConcernError"])?;
                WriteResult::from_json(map).map(Self::WriteResult)
            }
            "numbers" => {
                expect_keys(&["values"])?;
                let Some(Value::Array(items)) = map.get("values") else {
                    return Err(SeqError::unexpected_reply(
                        "a `numbers` reply needs an array `values`",
                    ));
                };
                // A loop rather than collecting into a `Result`: the adapter for that is one
                // more generic instance in the Wasm module.
                let mut values = Vec::with_capacity(items.len());
                for item in items {
                    values.push(ejson::read_i64(item).map_err(|reason| {
                        SeqError::unexpected_reply(format!("`values` {reason}"))
                    })?);
                }
                Ok(Self::Numbers { values })
            }
            other => Err(SeqError::unexpected_reply(format!(
                "unknown reply kind {} (expected document, none, inserted, duplicateKey, documents, writeResult, waited, numbers)",
                ejson::quoted(&ejson::truncate(other))
            ))),
        }
    }

    pub(crate) fn name(&self) -> &'static str {
        match self {
            Self::Document { .. } => "document",
            Self::None => "none",
            Self::Inserted => "inserted",
            Self::DuplicateKey | Self::DuplicateKeyOn { .. } => "duplicateKey",
            Self::Documents { .. } => "documents",
            Self::WriteResult(_) => "writeResult",
            Self::Waited => "waited",
            Self::Numbers { .. } => "numbers",
        }
    }
}

impl Reply {
    /// The reply to a duplicate-key error (11000), from what the server said about it: the
    /// index named by its `keyPattern`, else by its message (`… index: <name> dup key: …`).
    /// [`Reply::DuplicateKey`] when that is `_id`'s index or neither names one;
    /// [`Reply::DuplicateKeyOn`] otherwise. Every executor builds its reply with this.
    pub fn duplicate_key(errmsg: Option<&str>, key_pattern: Option<&Value>) -> Self {
        let named = errmsg.and_then(|message| {
            let (_, rest) = message.split_once("index: ")?;
            let name = rest.split_whitespace().next()?;
            // Servers before 3.4 wrote `index: <db>.<collection>.$<name>`.
            Some(name.rsplit_once('$').map_or(name, |(_, name)| name))
        });
        Self::duplicate_key_on(named, key_pattern)
    }

    /// [`Reply::duplicate_key`] with the index's name already known (or not).
    fn duplicate_key_on(name: Option<&str>, key_pattern: Option<&Value>) -> Self {
        let on_id = match key_pattern {
            Some(Value::Object(pattern)) => pattern.len() == 1 && pattern.contains_key("_id"),
            _ => name.map_or(true, |name| name == "_id_"),
        };
        if on_id {
            return Self::DuplicateKey;
        }
        let index = match (name, key_pattern) {
            (Some(name), _) => name.to_owned(),
            (None, Some(pattern)) => serde_json::to_string(pattern).unwrap_or_default(),
            (None, None) => String::new(),
        };
        Self::DuplicateKeyOn { index }
    }

    /// The documents of the reply to a `find` or `aggregate` (`command` names it in the error).
    pub(crate) fn into_documents(self, command: &str) -> Result<Vec<Value>, SeqError> {
        match self {
            Self::Documents { documents } => Ok(documents),
            other => Err(unexpected(&other, command)),
        }
    }

    /// The result of an `update` or `updateMany`; a write concern error fails it
    /// (`WRITE_CONCERN_FAILED`).
    pub(crate) fn into_write_result(self, command: &str) -> Result<WriteResult, SeqError> {
        let result = match self {
            Self::WriteResult(result) => result,
            other => return Err(unexpected(&other, command)),
        };
        match result.write_concern_error {
            Some(error) => Err(SeqError::WriteConcernFailed {
                code: error.code,
                message: error.errmsg,
            }),
            None => Ok(result),
        }
    }
}

impl From<WriteError> for SeqError {
    fn from(error: WriteError) -> Self {
        Self::WriteFailed {
            index: error.index,
            code: error.code,
            message: error.errmsg,
        }
    }
}

impl WriteResult {
    fn from_json(map: &Map<String, Value>) -> Result<Self, SeqError> {
        let count = |key: &str| -> Result<u64, SeqError> {
            match map.get(key) {
                None | Some(Value::Null) => Ok(0),
                Some(value) => unsigned(value, key),
            }
        };
        let write_errors = match map.get("writeErrors") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(items)) => {
                let mut errors = Vec::with_capacity(items.len());
                for item in items {
                    errors.push(WriteError::from_json(item)?);
                }
                errors
            }
            Some(other) => {
                return Err(SeqError::unexpected_reply(format!(
                    "`writeErrors` must be an array, got {}",
                    ejson::describe(other)
                )))
            }
        };
        let write_concern_error = match map.get("writeConcernError") {
            None | Some(Value::Null) => None,
            Some(Value::Object(error)) => Some(WriteConcernError {
                code: code_of(error, "writeConcernError")?,
                errmsg: errmsg_of(error),
            }),
            Some(other) => {
                return Err(SeqError::unexpected_reply(format!(
                    "`writeConcernError` must be an object, got {}",
                    ejson::describe(other)
                )))
            }
        };
        Ok(Self {
            n: count("n")?,
            n_modified: count("nModified")?,
            write_errors,
            write_concern_error,
        })
    }
}

impl WriteError {
    fn from_json(raw: &Value) -> Result<Self, SeqError> {
        let Value::Object(error) = raw else {
            return Err(SeqError::unexpected_reply(format!(
                "`writeErrors` entries must be objects, got {}",
                ejson::describe(raw)
            )));
        };
        let index = error
            .get("index")
            .ok_or_else(|| SeqError::unexpected_reply("a write error needs `index`"))?;
        Ok(Self {
            index: unsigned(index, "writeErrors.index")?,
            code: code_of(error, "writeErrors")?,
            errmsg: errmsg_of(error),
        })
    }
}

fn unsigned(value: &Value, key: &str) -> Result<u64, SeqError> {
    ejson::read_i64(value)
        .ok()
        .and_then(|int| u64::try_from(int).ok())
        .ok_or_else(|| {
            SeqError::unexpected_reply(format!(
                "`{key}` must be a non-negative integer, got {}",
                ejson::describe(value)
            ))
        })
}

fn code_of(error: &Map<String, Value>, what: &str) -> Result<i64, SeqError> {
    let code = error
        .get("code")
        .ok_or_else(|| SeqError::unexpected_reply(format!("a `{what}` entry needs `code`")))?;
    ejson::read_i64(code).map_err(|reason| {
        SeqError::unexpected_reply(format!("`{what}` code {}", ejson::truncate(&reason)))
    })
}

fn errmsg_of(error: &Map<String, Value>) -> String {
    match error.get("errmsg") {
        Some(Value::String(message)) => ejson::truncate_to(message, 1000),
        _ => String::new(),
    }
}

impl TryFrom<Value> for Reply {
    type Error = SeqError;
    fn try_from(raw: Value) -> Result<Self, SeqError> {
        Self::from_json(&raw)
    }
}

/// What a plan wants next: run a command, or it is done. Serialized externally tagged:
/// `{"command": {…}}` or `{"done": …}`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Step<T> {
    Command(Command),
    Done(T),
}

/// A multi-step operation driven by the caller (see the module docs for the loop).
pub trait Plan {
    type Output;
    /// The pending step: the first command before any reply, the result once done, or the
    /// error that ended the plan.
    fn start(&self) -> Result<Step<Self::Output>, SeqError>;
    /// Feeds the reply to the last command and returns the next step.
    fn feed(&mut self, reply: Reply) -> Result<Step<Self::Output>, SeqError>;
    /// The command waiting for its reply, borrowed (what `start()` gives as a copy), for shells
    /// that only serialize it; `None` when done or failed, or when the plan cannot lend it.
    fn pending_command(&self) -> Option<&Command> {
        None
    }
    /// What happened since the last call that the caller may want to log or count (see
    /// [`Note`]); call it after constructing the plan and after every `feed`. Most plans
    /// have none.
    fn drain_notes(&mut self) -> Vec<Note> {
        Vec::new()
    }
}

impl<T> Step<T> {
    /// The same command, or what `then` makes of the output.
    pub fn and_then<U>(
        self,
        then: impl FnOnce(T) -> Result<Step<U>, SeqError>,
    ) -> Result<Step<U>, SeqError> {
        match self {
            Self::Command(command) => Ok(Step::Command(command)),
            Self::Done(output) => then(output),
        }
    }
}

/// Most restarts (lost races) a plan tolerates before `TOO_MANY_RETRIES`.
pub const MAX_RETRIES: u32 = 10;

/// Counts restarts and fails with `TOO_MANY_RETRIES` past [`MAX_RETRIES`].
#[derive(Debug, Clone, Default)]
pub(crate) struct Retries(u32);

impl Retries {
    pub(crate) fn bump(&mut self, operation: &str, counter_id: &str) -> Result<(), SeqError> {
        self.0 = self.0.saturating_add(1);
        if self.0 > MAX_RETRIES {
            return Err(SeqError::TooManyRetries {
                operation: operation.to_owned(),
                counter_id: counter_id.to_owned(),
                attempts: self.0,
            });
        }
        Ok(())
    }
}

pub(crate) fn unexpected(reply: &Reply, command: &str) -> SeqError {
    SeqError::unexpected_reply(format!(
        "`{}` is not a valid reply to {command}",
        reply.name()
    ))
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

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::Reply;

    #[test]
    fn a_duplicate_key_names_its_index_by_message_or_key_pattern() {
        let on = |index: &str| Reply::DuplicateKeyOn {
            index: index.to_owned(),
        };
        let message = |text: &str| Reply::duplicate_key(Some(text), None);
        assert_eq!(
            message("E11000 duplicate key error collection: a.counters index: _id_ dup key: { _id: \"x\" }"),
            Reply::DuplicateKey
        );
        assert_eq!(
            message("E11000 duplicate key error collection: a.counters index: id_1_reference_value_1 dup key: { id: null, reference_value: null }"),
            on("id_1_reference_value_1")
        );
        // Servers before 3.4: `index: <db>.<collection>.$<name>`.
        assert_eq!(
            message("E11000 duplicate key error index: a.counters.$_id_  dup key: { : \"x\" }"),
            Reply::DuplicateKey
        );
        assert_eq!(
            message("E11000 duplicate key error"),
            Reply::DuplicateKey,
            "no index named: as before"
        );
        assert_eq!(
            Reply::duplicate_key(None, Some(&json!({"_id": 1}))),
            Reply::DuplicateKey
        );
        assert_eq!(
            Reply::duplicate_key(None, Some(&json!({"id": 1, "reference_value": 1}))),
            on(r#"{"id":1,"reference_value":1}"#)
        );
        // Which index: the key pattern when given; its name: the message. The serialized form reads back.
        let reply = Reply::duplicate_key(Some("… index: _id_ …"), Some(&json!({"email": 1})));
        assert_eq!(reply, on("_id_"));
        let text = serde_json::to_value(on("email_1")).unwrap();
        assert_eq!(Reply::from_json(&text).unwrap(), on("email_1"));
    }
}
