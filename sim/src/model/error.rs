//! Errors of the model: what a server answers (a code and its name, as in
//! <https://www.mongodb.com/docs/manual/reference/error-codes/>), and what the model refuses to
//! interpret (`Unsupported`: a command outside the subset the product emits fails loudly, it is
//! never silently ignored).

use std::fmt;

/// An error of the model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModelError {
    /// The server's answer.
    Server(ServerError),
    /// A command, operator or stage the model does not interpret.
    Unsupported(String),
}

/// A server error: its code, name and message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerError {
    pub code: i32,
    pub name: &'static str,
    pub message: String,
    /// A duplicate key's: the fields of the unique index's key pattern (`keyPattern`, which
    /// servers send from 4.2 on; its values left out).
    pub key_pattern: Option<Vec<String>>,
}

impl fmt::Display for ModelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Server(e) => write!(f, "{} ({}): {}", e.name, e.code, e.message),
            Self::Unsupported(what) => write!(f, "outside the model: {what}"),
        }
    }
}

impl std::error::Error for ModelError {}

/// Error codes the model answers with.
pub mod code {
    pub const BAD_VALUE: i32 = 2;
    pub const FAILED_TO_PARSE: i32 = 9;
    pub const TYPE_MISMATCH: i32 = 14;
    pub const PATH_NOT_VIABLE: i32 = 28;
    pub const CONFLICTING_UPDATE_OPERATORS: i32 = 40;
    pub const NAMESPACE_NOT_FOUND: i32 = 26;
    pub const NAMESPACE_EXISTS: i32 = 48;
    pub const WRITE_CONCERN_FAILED: i32 = 64;
    pub const IMMUTABLE_FIELD: i32 = 66;
    pub const SHUTDOWN_IN_PROGRESS: i32 = 91;
    pub const CANNOT_INDEX_PARALLEL_ARRAYS: i32 = 171;
    pub const PRIMARY_STEPPED_DOWN: i32 = 189;
    pub const TRANSACTION_TOO_OLD: i32 = 225;
    pub const CHANGE_STREAM_HISTORY_LOST: i32 = 286;
    pub const DUPLICATE_KEY: i32 = 11000;
    pub const INTERRUPTED_DUE_TO_REPL_STATE_CHANGE: i32 = 11602;
    pub const NOT_WRITABLE_PRIMARY: i32 = 10107;
    pub const NOT_PRIMARY_NO_SECONDARY_OK: i32 = 13435;
    pub const INTERNAL_ERROR: i32 = 1;
    pub const OPERATION_FAILED: i32 = 96;
    pub const MAX_TIME_MS_EXPIRED: i32 = 50;
}

/// Codes after which a driver retries a retryable write once (retryable writes specification,
/// "Determining Retryable Errors",
/// <https://github.com/mongodb/specifications/blob/master/source/retryable-writes/retryable-writes.md>);
/// the same set makes reads retryable and change streams resumable.
pub const RETRYABLE_CODES: [i32; 12] = [
    11600, 11602, 10107, 13435, 13436, 189, 91, 7, 6, 89, 9001, 262,
];

pub fn is_retryable_code(code: i32) -> bool {
    RETRYABLE_CODES.contains(&code)
}

impl ModelError {
    pub fn server(code: i32, name: &'static str, message: impl Into<String>) -> Self {
        Self::Server(ServerError {
            code,
            name,
            message: message.into(),
            key_pattern: None,
        })
    }
    pub fn unsupported(what: impl Into<String>) -> Self {
        Self::Unsupported(what.into())
    }
    pub fn bad_value(message: impl Into<String>) -> Self {
        Self::server(code::BAD_VALUE, "BadValue", message)
    }
    pub fn type_mismatch(message: impl Into<String>) -> Self {
        Self::server(code::TYPE_MISMATCH, "TypeMismatch", message)
    }
    /// A duplicate key on the unique index of `key_pattern`'s fields.
    pub fn duplicate_key(message: impl Into<String>, key_pattern: Vec<String>) -> Self {
        Self::Server(ServerError {
            code: code::DUPLICATE_KEY,
            name: "DuplicateKey",
            message: message.into(),
            key_pattern: Some(key_pattern),
        })
    }
    pub fn not_writable_primary() -> Self {
        Self::server(
            code::NOT_WRITABLE_PRIMARY,
            "NotWritablePrimary",
            "not primary",
        )
    }
    pub fn code(&self) -> Option<i32> {
        match self {
            Self::Server(e) => Some(e.code),
            Self::Unsupported(_) => None,
        }
    }
}
