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
//! }
//! // step is Step::Done(output)
//! ```
//!
//! Documents, filters and updates are MongoDB Extended JSON v2; integers are emitted canonical.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::ejson;
use crate::error::SeqError;

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
///   `insertOne` it into the document collection; reply `inserted` or `duplicateKey`.
/// * `wait` → sleep a duration drawn uniformly from `minMs..=maxMs` (the backoff after a lost
///   race; the core reads no clock and draws no random numbers), then reply `waited`.
///
/// Any other driver error is the caller's to surface; the plan is then abandoned.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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
    InsertDocument {
        collection: Collection,
        fields: Value,
    },
    #[serde(rename_all = "camelCase")]
    Wait { min_ms: u64, max_ms: u64 },
}

/// The outcome of a command, as fed back to a plan. Serialized with a `kind` tag:
/// `{"kind":"document","document":{…}}`, `{"kind":"none"}`, `{"kind":"inserted"}`,
/// `{"kind":"duplicateKey"}`, `{"kind":"waited"}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "camelCase", try_from = "Value")]
pub enum Reply {
    /// A find returned this document (Extended JSON, canonical or relaxed).
    Document { document: Value },
    /// A find returned null.
    None,
    /// An insert succeeded.
    Inserted,
    /// The server answered with a duplicate-key error (code 11000).
    DuplicateKey,
    /// A `wait` is over.
    Waited,
}

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
            "duplicateKey" => expect_keys(&[]).map(|()| Self::DuplicateKey),
            "waited" => expect_keys(&[]).map(|()| Self::Waited),
            other => Err(SeqError::unexpected_reply(format!(
                "unknown reply kind {:?} (expected document, none, inserted, duplicateKey, waited)",
                ejson::truncate(other)
            ))),
        }
    }

    pub(crate) fn name(&self) -> &'static str {
        match self {
            Self::Document { .. } => "document",
            Self::None => "none",
            Self::Inserted => "inserted",
            Self::DuplicateKey => "duplicateKey",
            Self::Waited => "waited",
        }
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
}

/// Most restarts (lost races) a plan tolerates before `TOO_MANY_RETRIES`.
pub const MAX_RETRIES: u32 = 10;

/// Shared plan bookkeeping: the pending command or final state, and the retry counter.
#[derive(Debug, Clone)]
pub(crate) enum PlanState<T> {
    Waiting(Command),
    Done(T),
    Failed(SeqError),
}

impl<T: Clone> PlanState<T> {
    /// A placeholder for plans whose first command is computed by a method of the plan itself;
    /// their constructor replaces it before the plan is handed out.
    pub(crate) fn unstarted() -> Self {
        Self::Waiting(Command::FindOne {
            collection: Collection::Counters,
            filter: Value::Null,
            options: None,
        })
    }

    pub(crate) fn step(&self) -> Result<Step<T>, SeqError> {
        match self {
            Self::Waiting(command) => Ok(Step::Command(command.clone())),
            Self::Done(output) => Ok(Step::Done(output.clone())),
            Self::Failed(error) => Err(error.clone()),
        }
    }

    /// Records the outcome of a transition so `start()` can report it later.
    pub(crate) fn settle(&mut self, next: Result<Step<T>, SeqError>) -> Result<Step<T>, SeqError> {
        *self = match &next {
            Ok(Step::Command(command)) => Self::Waiting(command.clone()),
            Ok(Step::Done(output)) => Self::Done(output.clone()),
            Err(error) => Self::Failed(error.clone()),
        };
        next
    }

    pub(crate) fn ensure_waiting(&self) -> Result<(), SeqError> {
        match self {
            Self::Waiting(_) => Ok(()),
            _ => Err(SeqError::unexpected_reply("the plan is already finished")),
        }
    }
}

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
