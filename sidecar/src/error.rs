//! The sidecar's errors (anyhow only at the edge, in `cli`).

use mongo_seq_core::error::SeqError;
use mongodb::error::{ErrorKind, WriteFailure};

/// The server error code of a driver error, if it carries one.
pub fn server_code(e: &mongodb::error::Error) -> Option<i32> {
    match e.kind.as_ref() {
        ErrorKind::Command(c) => Some(c.code),
        ErrorKind::Write(WriteFailure::WriteConcernError(w)) => Some(w.code),
        ErrorKind::Write(WriteFailure::WriteError(w)) => Some(w.code),
        _ => None,
    }
}

fn is_network(e: &mongodb::error::Error) -> bool {
    matches!(
        e.kind.as_ref(),
        ErrorKind::Io(_)
            | ErrorKind::ConnectionPoolCleared { .. }
            | ErrorKind::ServerSelection { .. }
    )
}

/// A driver error for humans: its kind's message, without the driver's debug fields
/// (`labels: {}, source: None, server response: None`).
pub fn mongo_message(e: &mongodb::error::Error) -> String {
    without_driver_fields(&e.kind.to_string())
}

/// Removes the driver's debug fields from a message, also where the driver nests another
/// error's `Display` (server selection quotes each server's error).
fn without_driver_fields(text: &str) -> String {
    let mut out = text.replace("Kind: ", "");
    for field in [", source: None", ", server response: None"] {
        out = out.replace(field, "");
    }
    while let Some(start) = out.find(", labels: {") {
        let end = out[start..]
            .find('}')
            .map_or(out.len(), |close| start + close + 1);
        out.replace_range(start..end, "");
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn driver_fields_are_removed() {
        assert_eq!(
            super::without_driver_fields("Server selection timeout: Topology: { Servers: [ { Error: Kind: I/O error: refused, labels: {\"A\", \"B\"}, source: None, server response: None } ] }"),
            "Server selection timeout: Topology: { Servers: [ { Error: I/O error: refused } ] }"
        );
    }
}

#[derive(Debug, thiserror::Error)]
pub enum SidecarError {
    #[error("MongoDB: {}", mongo_message(.0))]
    Mongo(#[from] mongodb::error::Error),
    /// The core refused (options, scope value, malformed counter, exhausted sequence, ...).
    #[error("{0} ({code})", code = .0.code())]
    Core(#[from] SeqError),
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
    /// The server refused to update a counter document (e.g. `seq` is not a number).
    #[error("counter `{counter}` is malformed: {}", mongo_message(.source))]
    MalformedCounter {
        counter: String,
        source: mongodb::error::Error,
    },
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

/// Server error codes that mean "the resume point is gone" (ChangeStreamHistoryLost,
/// ChangeStreamFatalError).
const HISTORY_LOST_CODES: [i32; 2] = [286, 280];

/// Server error codes of elections, stepdowns and shutdowns: retry, resume from the stored token.
const TRANSIENT_CODES: [i32; 16] = [
    6, 7, 89, 91, 189, 262, 9001, 10107, 11600, 11602, 13435, 13436, 63, 150, 133, 43,
];

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
            Self::Mongo(e) if self.is_transient() => format!(
                "TRANSIENT({})",
                server_code(e).map_or("network".to_owned(), |c| c.to_string())
            ),
            Self::Mongo(e) => server_code(e).map_or("MONGO".to_owned(), |c| format!("MONGO({c})")),
            Self::Core(e) => e.code().to_owned(),
            Self::HistoryLost(_) => "HISTORY_LOST".to_owned(),
            Self::Reply(_) => "UNEXPECTED_REPLY".to_owned(),
            Self::MalformedCounter { .. } => "MALFORMED_COUNTER".to_owned(),
            Self::LeaseLost(_) => "LEASE_LOST".to_owned(),
            Self::Fenced(_) => "FENCED".to_owned(),
            Self::DuplicateNumbers(_) => "DUPLICATE_NUMBERS".to_owned(),
        }
    }

    /// Whether this error means "not the lease holder any more".
    pub fn is_lease_loss(&self) -> bool {
        matches!(self, Self::LeaseLost(_) | Self::Fenced(_))
    }

    /// Metric label: one of [`ERROR_KINDS`].
    pub fn kind(&self) -> &'static str {
        match self {
            _ if self.is_transient() => "transient",
            Self::Core(e)
                if matches!(
                    e.code(),
                    "MALFORMED_COUNTER" | "SEQUENCE_EXHAUSTED" | "OVERFLOW"
                ) =>
            {
                "counter"
            }
            Self::Core(_) => "core",
            Self::HistoryLost(_) => "history_lost",
            Self::MalformedCounter { .. } => "counter",
            Self::LeaseLost(_) | Self::Fenced(_) => "lease",
            _ => "other",
        }
    }

    pub fn is_transient(&self) -> bool {
        match self {
            Self::Mongo(e) => {
                is_network(e)
                    || e.contains_label("ResumableChangeStreamError")
                    || e.contains_label("RetryableWriteError")
                    || server_code(e).is_some_and(|c| TRANSIENT_CODES.contains(&c))
            }
            _ => false,
        }
    }

    pub fn from_stream(e: mongodb::error::Error) -> Self {
        match server_code(&e) {
            Some(code) if HISTORY_LOST_CODES.contains(&code) => Self::HistoryLost(e.to_string()),
            _ => Self::Mongo(e),
        }
    }
}
