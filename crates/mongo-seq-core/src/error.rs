//! The one error type of the crate.
//!
//! Every variant has a stable [`SeqError::code`] (SCREAMING_SNAKE_CASE) that callers match on;
//! messages are for humans and may be reworded. [`SeqError::info`] gives the serializable
//! `{code, message, details}` form the Wasm shim turns into a JS `Error` with `code`.

use serde::Serialize;
use serde_json::Value;

use crate::ejson::{object, quoted, truncate};

mod definition_conflict; // SEQUENCE_CONFLICT's details, how a definition reads
use definition_conflict::fmt_option;
mod codes; // every code, listed with its meaning
pub use codes::ErrorCode;
mod wording; // pieces of messages: bounds, epochs, the peers' unique indexes
pub use definition_conflict::{describe_definition, DefinitionConflict};
use wording::{fmt_bound, fmt_epoch, unique_index_remedy};

/// Everything that can go wrong in the core. No variant is ever produced by a panic path.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SeqError {
    /// An options object had a key the core does not know.
    #[error("unknown option `{}` (known options: {known})", truncate(key))]
    UnknownOption { key: String, known: String },

    /// An option had the wrong type or an unusable value.
    #[error("invalid option `{option}`: {reason}")]
    InvalidOption { option: String, reason: String },

    /// `step` was zero.
    #[error("invalid option `step`: must be a non-zero integer, got {value}")]
    InvalidStep { value: i64 },

    /// `min`/`max`/`start` contradict each other.
    #[error("invalid bounds: {reason}")]
    InvalidBounds { reason: String },

    /// The sequence name breaks the naming rules (`name` is `None` when it is not a string).
    #[error("invalid sequence name{}: {reason}", name.as_ref().map_or_else(String::new, |name| format!(" {}", quoted(&truncate(name)))))]
    InvalidName {
        name: Option<String>,
        reason: String,
    },

    /// A `scope` entry is not a usable field path.
    #[error("invalid scope field {}: {reason}", quoted(&truncate(field)))]
    InvalidScope { field: String, reason: String },

    /// The `format` template does not follow the grammar.
    #[error(
        "invalid format template {} at byte {position}: {reason}",
        quoted(&truncate(template))
    )]
    InvalidFormat {
        template: String,
        position: usize,
        reason: String,
    },

    /// A document lacks (or has null at) a scope field. `index`: the document's, in a batch.
    #[error("document{} has no value for scope field `{field}`", index.map_or_else(String::new, |index| format!(" {index} of the batch")))]
    MissingScopeField { field: String, index: Option<u64> },

    /// A scope field holds a value that cannot name a counter. `index`: the document's, in a
    /// batch.
    #[error("scope field `{field}`{} has unsupported value {value}: {reason}", index.map_or_else(String::new, |index| format!(" of document {index} of the batch")))]
    InvalidScopeValue {
        field: String,
        value: String,
        reason: String,
        index: Option<u64>,
    },

    /// An operation argument (count, counter id, range, extras, ...) is unusable.
    #[error("invalid argument `{argument}`: {reason}")]
    InvalidArgument { argument: String, reason: String },

    /// A date cannot place a number in a period: a document's `dateField` missing, null or not a
    /// date, an instant out of range, a local date that is not one or whose (fiscal) year is
    /// not 1..=9999. `index`: the document's, when the date is a document's.
    #[error("invalid {argument}{}: {reason}", index.map_or_else(String::new, |index| format!(" of document {index}")))]
    InvalidDate {
        argument: String,
        index: Option<u64>,
        reason: String,
    },

    /// The sequence cannot issue the requested numbers without passing its bound.
    #[error("sequence `{counter_id}` is exhausted: {requested} number(s) requested, {available} left before bound {bound}")]
    SequenceExhausted {
        counter_id: String,
        last: Option<i64>,
        requested: u64,
        available: u64,
        bound: i64,
    },

    /// A value given to setNext/seedFromMax/insertOptimistic lies outside `[min, max]`.
    #[error("{argument} {value} is outside the sequence bounds [{}, {}]", fmt_bound(*.min), fmt_bound(*.max))]
    OutOfBounds {
        argument: String,
        value: i64,
        min: Option<i64>,
        max: Option<i64>,
    },

    /// Signed 64-bit arithmetic would overflow.
    #[error("64-bit integer overflow: {what}")]
    Overflow { what: String },

    /// A counter document (in a reply) is not `{ _id: <id>, seq: <integer> }`.
    #[error("malformed counter `{counter_id}`: {reason}")]
    MalformedCounter { counter_id: String, reason: String },

    /// A target-collection document read by the optimistic loop has a non-integer number field.
    #[error("malformed document: field `{field}` {reason}")]
    MalformedDocument { field: String, reason: String },

    /// A reply does not fit the command it answers (or the plan is already finished).
    #[error("unexpected reply: {reason}")]
    UnexpectedReply { reason: String },

    /// setNext without force would move the counter backwards.
    #[error("refusing to move counter `{counter_id}` backwards: last issued is {last}, next would become {next}; use force to override")]
    BackwardsRefused {
        counter_id: String,
        last: i64,
        next: i64,
    },

    /// A plan kept losing races and gave up.
    #[error(
        "{operation} on `{counter_id}` gave up after {attempts} attempts (concurrent changes)"
    )]
    TooManyRetries {
        operation: String,
        counter_id: String,
        attempts: u32,
    },

    /// A lease document (see `lease`) is not `{ lease: { owner, epoch, expiresAt } }`; it is
    /// left untouched.
    #[error(
        "malformed lease `{lease_id}`: {reason} (left untouched: inspect and repair it by hand)"
    )]
    MalformedLease { lease_id: String, reason: String },

    /// A counter exists but the caller's extra filter conditions did not match it.
    #[error("counter `{counter_id}` exists but does not match the extra filter conditions")]
    ConditionNotMet { counter_id: String },

    /// A later lease holder touched the counter (its epoch is above ours): this holder must
    /// stop; nothing more was written to the counter. `counter_epoch` when the plan read it.
    #[error("counter `{counter_id}` carries {} above {epoch}: another instance holds the trigger", fmt_epoch(*.counter_epoch))]
    Fenced {
        counter_id: String,
        epoch: i64,
        counter_epoch: Option<i64>,
    },

    /// A statement of a write command failed with a server error the plan does not handle.
    #[error("write statement {index} failed: {message} (code {code})")]
    WriteFailed {
        index: u64,
        code: i64,
        message: String,
    },

    /// The server could not satisfy the write concern of a write command.
    #[error("write concern error: {message} (code {code})")]
    WriteConcernFailed { code: i64, message: String },

    /// A unique index other than `_id` refused a write the plan makes on `_id` alone: the
    /// collection holds another tool's documents and their index (mongoose-sequence's counters
    /// have a unique index on `{id, reference_value}`, which every counter without those fields
    /// collides on). Not a lost race: retrying cannot help. Nothing was written.
    #[error("the {collection} collection has a unique index other than `_id`, `{index}`, which refused the write (a duplicate key, not a lost race): {}", unique_index_remedy(collection, index))]
    UniqueIndexConflict { collection: String, index: String },

    /// `rewindAll` found counters it may not set back without force (a gapless sequence's, one
    /// with a pending intent, or one a sidecar trigger keeps when the mode is unknown).
    #[error("sequence `{name}`: not rewound: {reason}; nothing was written ({counters} counter(s) found; pass force to rewind them anyway, after stopping whatever numbers from them)")]
    RewindRefused {
        name: String,
        counters: u64,
        reason: String,
    },

    /// A number would be taken outside a sidecar's gapless numbering from a sequence whose
    /// counters it keeps (see `crate::counter::kept`), without force.
    #[error("sequence `{name}`: no number taken: {reason}; nothing was reserved or written ({counters} counter(s) found; pass force to take one anyway, outside the sidecar's numbering)")]
    GaplessRefused {
        name: String,
        counters: u64,
        reason: String,
    },

    /// The counters collection (or the sidecar's state collection) is sharded on a key other
    /// than `_id`: every write there finds its document by `_id` alone, and an upsert needs the
    /// whole shard key (see [`crate::counter::shard_key`]). Nothing was written.
    #[error("the collection {collection} is sharded on {key}: mongo-seq writes each counter by its `_id` alone, and a sharded collection takes an upsert only with the whole shard key in its filter; keep the counters in an unsharded collection (the package's `collection` option, the sidecar's `mongodb.counters`), or shard it on {{ _id: 1 }} or {{ _id: \"hashed\" }} (reshardCollection; unshardCollection from MongoDB 8.0)")]
    UnsupportedShardKey { collection: String, key: String },
    /// The counter records another definition than the caller's options: two
    /// processes with different options would interleave numbers. Nothing was reserved.
    #[error("counter `{counter_id}` was defined with other options: `{}` is {} there and {} here (stored definition {}, ours {}); nothing was reserved: use the same options, or adopt the new definition on purpose", conflict.option, fmt_option(&conflict.stored_value), fmt_option(&conflict.our_value), describe_definition(&conflict.stored), describe_definition(&conflict.ours))]
    SequenceConflict {
        counter_id: String,
        conflict: Box<DefinitionConflict>,
    },
    /// A void the ledger's rules refuse (`code`: ALREADY_VOIDED, INTENT_PENDING, NUMBER_HELD,
    /// NUMBER_NOT_ISSUED; see `crate::ledger::void`). Nothing more was written; `voided`: the
    /// numbers this call had recorded before (each number is voided on its own: only an
    /// ALREADY_VOIDED from a race with another writer has any).
    #[error("{message}")]
    VoidRefused {
        code: &'static str,
        counter_id: String,
        number: i64,
        voided: Vec<i64>,
        message: String,
    },
}

/// Serializable form of an error: what crosses into JS.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ErrorInfo {
    pub code: &'static str,
    pub message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub details: Option<Value>,
}

impl SeqError {
    /// Stable machine-readable code.
    pub fn code(&self) -> &'static str {
        match self {
            Self::UnknownOption { .. } => "UNKNOWN_OPTION",
            Self::InvalidOption { .. } => "INVALID_OPTION",
            Self::InvalidStep { .. } => "INVALID_STEP",
            Self::InvalidBounds { .. } => "INVALID_BOUNDS",
            Self::InvalidName { .. } => "INVALID_NAME",
            Self::InvalidScope { .. } => "INVALID_SCOPE",
            Self::InvalidFormat { .. } => "INVALID_FORMAT",
            Self::MissingScopeField { .. } => "MISSING_SCOPE_FIELD",
            Self::InvalidScopeValue { .. } => "INVALID_SCOPE_VALUE",
            Self::InvalidArgument { .. } => "INVALID_ARGUMENT",
            Self::InvalidDate { .. } => "INVALID_DATE",
            Self::SequenceExhausted { .. } => "SEQUENCE_EXHAUSTED",
            Self::OutOfBounds { .. } => "OUT_OF_BOUNDS",
            Self::Overflow { .. } => "OVERFLOW",
            Self::MalformedCounter { .. } => "MALFORMED_COUNTER",
            Self::MalformedDocument { .. } => "MALFORMED_DOCUMENT",
            Self::UnexpectedReply { .. } => "UNEXPECTED_REPLY",
            Self::BackwardsRefused { .. } => "BACKWARDS_REFUSED",
            Self::TooManyRetries { .. } => "TOO_MANY_RETRIES",
            Self::ConditionNotMet { .. } => "CONDITION_NOT_MET",
            Self::MalformedLease { .. } => "MALFORMED_LEASE",
            Self::Fenced { .. } => "FENCED",
            Self::WriteFailed { .. } => "WRITE_FAILED",
            Self::WriteConcernFailed { .. } => "WRITE_CONCERN_FAILED",
            Self::UniqueIndexConflict { .. } => "UNIQUE_INDEX_CONFLICT",
            Self::RewindRefused { .. } => "REWIND_REFUSED",
            Self::GaplessRefused { .. } => "GAPLESS_REFUSED",
            Self::UnsupportedShardKey { .. } => "UNSUPPORTED_SHARD_KEY",
            Self::SequenceConflict { .. } => "SEQUENCE_CONFLICT",
            Self::VoidRefused { code, .. } => code,
        }
    }

    /// Every code with what it means, in the order of the variants: the one list of codes (the
    /// READMEs' error tables are generated from it).
    pub const ERROR_CODES: &'static [ErrorCode] = codes::ERROR_CODES;

    /// Every code, in the order of [`Self::ERROR_CODES`].
    pub fn codes() -> impl Iterator<Item = &'static str> {
        Self::ERROR_CODES.iter().map(|entry| entry.code)
    }

    /// Structured fields of the error (camelCase keys), `None` when there are none worth giving.
    pub fn details(&self) -> Option<Value> {
        let details = match self {
            Self::UnknownOption { key, .. } => object([("key", key.as_str().into())]),
            Self::InvalidOption { option, .. } => object([("option", option.as_str().into())]),
            Self::InvalidStep { value } => object([("value", (*value).into())]),
            Self::InvalidBounds { .. } => return None,
            Self::InvalidName { name, .. } => object([("name", name.as_deref().into())]),
            Self::InvalidScope { field, .. } => object([("field", field.as_str().into())]),
            Self::InvalidFormat {
                template, position, ..
            } => object([
                ("template", template.as_str().into()),
                ("position", (*position).into()),
            ]),
            Self::MissingScopeField { field, index }
            | Self::InvalidScopeValue { field, index, .. } => match index {
                Some(index) => {
                    object([("field", field.as_str().into()), ("index", (*index).into())])
                }
                None => object([("field", field.as_str().into())]),
            },
            Self::InvalidArgument { argument, .. } => {
                object([("argument", argument.as_str().into())])
            }
            Self::InvalidDate {
                argument, index, ..
            } => match index {
                Some(index) => object([
                    ("argument", argument.as_str().into()),
                    ("index", (*index).into()),
                ]),
                None => object([("argument", argument.as_str().into())]),
            },
            Self::SequenceExhausted {
                counter_id,
                last,
                requested,
                available,
                bound,
            } => object([
                ("counterId", counter_id.as_str().into()),
                ("last", (*last).into()),
                ("requested", (*requested).into()),
                ("available", (*available).into()),
                ("bound", (*bound).into()),
            ]),
            Self::OutOfBounds {
                argument,
                value,
                min,
                max,
            } => object([
                ("argument", argument.as_str().into()),
                ("value", (*value).into()),
                ("min", (*min).into()),
                ("max", (*max).into()),
            ]),
            Self::Overflow { .. } => return None,
            Self::MalformedCounter { counter_id, .. } => {
                object([("counterId", counter_id.as_str().into())])
            }
            Self::MalformedDocument { field, .. } => object([("field", field.as_str().into())]),
            Self::UnexpectedReply { .. } => return None,
            Self::BackwardsRefused {
                counter_id,
                last,
                next,
            } => object([
                ("counterId", counter_id.as_str().into()),
                ("last", (*last).into()),
                ("next", (*next).into()),
            ]),
            Self::TooManyRetries {
                operation,
                counter_id,
                attempts,
            } => object([
                ("operation", operation.as_str().into()),
                ("counterId", counter_id.as_str().into()),
                ("attempts", (*attempts).into()),
            ]),
            Self::ConditionNotMet { counter_id } => {
                object([("counterId", counter_id.as_str().into())])
            }
            Self::MalformedLease { lease_id, .. } => {
                object([("leaseId", lease_id.as_str().into())])
            }
            Self::Fenced {
                counter_id,
                epoch,
                counter_epoch,
            } => object([
                ("counterId", counter_id.as_str().into()),
                ("epoch", (*epoch).into()),
                ("counterEpoch", (*counter_epoch).into()),
            ]),
            Self::WriteFailed { index, code, .. } => {
                object([("index", (*index).into()), ("code", (*code).into())])
            }
            Self::WriteConcernFailed { code, .. } => object([("code", (*code).into())]),
            Self::UniqueIndexConflict { collection, index } => object([
                ("collection", collection.as_str().into()),
                ("index", index.as_str().into()),
            ]),
            Self::RewindRefused { name, counters, .. }
            | Self::GaplessRefused { name, counters, .. } => object([
                ("name", name.as_str().into()),
                ("counters", (*counters).into()),
            ]),
            Self::UnsupportedShardKey { collection, key } => object([
                ("collection", collection.as_str().into()),
                ("key", key.as_str().into()),
            ]),
            Self::SequenceConflict {
                counter_id,
                conflict,
            } => conflict.details(counter_id),
            Self::VoidRefused {
                counter_id,
                number,
                voided,
                ..
            } => object([
                ("counterId", counter_id.as_str().into()),
                ("number", (*number).into()),
                ("voided", voided.clone().into()),
            ]),
        };
        Some(details)
    }

    /// The option or argument the error is about (`step`, `scope`, `formatField`, …), when
    /// it names one: lets a shell point at its own key (a TOML key, a CLI flag) without
    /// matching codes.
    pub fn option_name(&self) -> Option<&str> {
        match self {
            Self::UnknownOption { key, .. } => Some(key),
            Self::InvalidOption { option, .. } => Some(option),
            Self::InvalidStep { .. } => Some("step"),
            Self::InvalidName { .. } => Some("name"),
            Self::InvalidScope { .. } => Some("scope"),
            Self::InvalidFormat { .. } => Some("format"),
            Self::InvalidArgument { argument, .. } | Self::InvalidDate { argument, .. } => {
                Some(argument)
            }
            _ => None,
        }
    }

    /// `{code, message, details}` for crossing into JS.
    pub fn info(&self) -> ErrorInfo {
        ErrorInfo {
            code: self.code(),
            message: self.to_string(),
            details: self.details(),
        }
    }

    pub(crate) fn overflow(what: impl Into<String>) -> Self {
        Self::Overflow { what: what.into() }
    }

    pub(crate) fn invalid_argument(argument: &str, reason: impl Into<String>) -> Self {
        Self::InvalidArgument {
            argument: argument.to_owned(),
            reason: reason.into(),
        }
    }

    pub(crate) fn invalid_date(
        argument: &str,
        index: Option<u64>,
        reason: impl Into<String>,
    ) -> Self {
        Self::InvalidDate {
            argument: argument.to_owned(),
            index,
            reason: reason.into(),
        }
    }

    pub(crate) fn unexpected_reply(reason: impl Into<String>) -> Self {
        Self::UnexpectedReply {
            reason: reason.into(),
        }
    }

    pub(crate) fn malformed_counter(counter_id: &str, reason: impl Into<String>) -> Self {
        Self::MalformedCounter {
            counter_id: counter_id.to_owned(),
            reason: reason.into(),
        }
    }
}

impl Serialize for SeqError {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.info().serialize(serializer)
    }
}
