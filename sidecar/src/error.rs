//! The sidecar's errors (anyhow only at the edge, in `cli`). Nothing here knows the driver: a
//! failed database operation arrives as a [`MongoFailure`], already classified by whoever
//! implements the [`Mongo`](crate::mongo::Mongo) interface (the binary's `connection`, through
//! the executor's `classify`, or a simulator), so the trigger decides retries and reports from
//! data.

use mongo_seq_core::error::SeqError;

use mongo_seq::executor::ExecuteError;
pub use mongo_seq::executor::MongoFailure;

#[derive(Debug, thiserror::Error)]
pub enum SidecarError {
    #[error("MongoDB: {}", .0.message)]
    Mongo(MongoFailure),
    /// The core refused (options, scope value, malformed counter, exhausted sequence, ...).
    #[error("{0} ({code})", code = .0.code())]
    Core(SeqError),
    /// The stored resume token is no longer in the oplog, or the stream was invalidated.
    #[error("change stream history lost: {0}")]
    HistoryLost(String),
    #[error("unexpected reply from MongoDB: {0}")]
    Reply(String),
    /// This instance no longer holds the trigger's lease (expired by its own clock, or taken
    /// over): it stops numbering and becomes a standby.
    #[error("lease lost: {0}")]
    LeaseLost(String),
    /// A write was refused because a later lease holder (higher epoch) touched the document.
    #[error("fenced: {0}")]
    Fenced(String),
    /// The unique index on the numbered field cannot be built: documents already share a
    /// number.
    #[error(transparent)]
    DuplicateNumbers(Box<DuplicateNumbers>),
    /// The trigger's `unique_index` does not fit its collection: `true` on a collection sharded
    /// on a key the index cannot start with (`UNIQUE_INDEX_REFUSED`), or `false` where the
    /// index is possible (`UNIQUE_INDEX_POSSIBLE`). Retried: resharding, or the config, fixes it.
    #[error("{message}")]
    UniqueIndex { code: &'static str, message: String },
    /// The server refused to update a counter document (e.g. `seq` is not a number).
    #[error("counter `{counter}` is malformed: {message}")]
    MalformedCounter { counter: String, message: String },
    /// Another live sidecar process runs with this instance id and holds a lease of it: the two
    /// cannot share one id (the core's `TwinWatch` decided this one stops).
    #[error("another running sidecar has this instance id `{instance_id}`: it holds the lease of trigger `{trigger}` (epoch {epoch}{holder}) and keeps renewing it, so this process stops; give each sidecar its own `[lease].instance_id` (or MONGO_SEQ_INSTANCE_ID), or leave it unset for `<hostname>:<pid>`")]
    DuplicateInstance {
        instance_id: String,
        trigger: String,
        epoch: i64,
        /// `, process …` (the holder's, as its lease records it), or empty.
        holder: String,
    },
}

/// A core error keeps its variant: a later holder's fence is the sidecar's `Fenced` (the
/// trigger stands by), everything else stays the core's.
impl From<SeqError> for SidecarError {
    fn from(error: SeqError) -> Self {
        match error {
            SeqError::Fenced { .. } => Self::Fenced(error.to_string()),
            other => Self::Core(other),
        }
    }
}

/// What the executor reports, as the interface reports it.
impl From<ExecuteError> for SidecarError {
    fn from(error: ExecuteError) -> Self {
        match error {
            ExecuteError::Mongo(error) => Self::Mongo(error.into()),
            ExecuteError::MalformedCounter { counter, message } => {
                Self::MalformedCounter { counter, message }
            }
            ExecuteError::Invalid(reason) => Self::Reply(reason),
            ExecuteError::Reply(error) => error.into(),
            other => Self::Reply(other.to_string()),
        }
    }
}

/// Documents that share a number, found when the unique index cannot be built.
#[derive(Debug, thiserror::Error)]
#[error("cannot create the unique index `{index}` on {namespace}: {count} documents already hold `{field}` = {value}{scope}; give them distinct numbers (`mongo-seq check` lists the duplicates), the sidecar retries by itself")]
pub struct DuplicateNumbers {
    pub index: String,
    pub namespace: String,
    pub field: String,
    /// The shared number, as relaxed Extended JSON.
    pub value: String,
    /// ` in scope {…}` for scoped triggers, else empty.
    pub scope: String,
    pub count: u64,
}

/// Every value of [`SidecarError::kind`] (the `kind` label of `mongo_seq_errors_total`).
pub const ERROR_KINDS: [&str; 6] = [
    "transient",
    "counter",
    "core",
    "history_lost",
    "lease",
    "other",
];

impl SidecarError {
    /// A stable code for logs, health and metrics.
    pub fn code(&self) -> String {
        match self {
            Self::Mongo(MongoFailure {
                code,
                transient: true,
                ..
            }) => format!(
                "TRANSIENT({})",
                code.map_or("network".to_owned(), |c| c.to_string())
            ),
            Self::Mongo(MongoFailure { code, .. }) => {
                code.map_or("MONGO".to_owned(), |c| format!("MONGO({c})"))
            }
            Self::Core(e) => e.code().to_owned(),
            Self::HistoryLost(_) => "HISTORY_LOST".to_owned(),
            Self::Reply(_) => "UNEXPECTED_REPLY".to_owned(),
            Self::MalformedCounter { .. } => "MALFORMED_COUNTER".to_owned(),
            Self::LeaseLost(_) => "LEASE_LOST".to_owned(),
            Self::Fenced(_) => "FENCED".to_owned(),
            Self::DuplicateNumbers(_) => "DUPLICATE_NUMBERS".to_owned(),
            Self::UniqueIndex { code, .. } => (*code).to_owned(),
            Self::DuplicateInstance { .. } => "DUPLICATE_INSTANCE".to_owned(),
        }
    }

    /// Whether this error means "not the lease holder any more".
    pub fn is_lease_loss(&self) -> bool {
        matches!(self, Self::LeaseLost(_) | Self::Fenced(_))
    }

    /// Metric label: one of [`ERROR_KINDS`].
    pub fn kind(&self) -> &'static str {
        match self {
            Self::Mongo(MongoFailure {
                transient: true, ..
            }) => "transient",
            Self::Core(
                SeqError::MalformedCounter { .. }
                | SeqError::SequenceExhausted { .. }
                | SeqError::Overflow { .. }
                | SeqError::UniqueIndexConflict { .. },
            )
            | Self::MalformedCounter { .. } => "counter",
            Self::Core(_) => "core",
            Self::HistoryLost(_) => "history_lost",
            Self::LeaseLost(_) | Self::Fenced(_) | Self::DuplicateInstance { .. } => "lease",
            Self::Mongo(_)
            | Self::Reply(_)
            | Self::DuplicateNumbers(_)
            | Self::UniqueIndex { .. } => "other",
        }
    }
}
