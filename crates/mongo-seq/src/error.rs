//! The one error type of the crate, with the stable codes of the npm package.

use std::time::Duration;

use mongo_seq_core::{SeqError, Spelling};
use serde_json::Value;

use crate::executor::{mongo_message, ExecuteError};

mod details;
mod kind;
pub use kind::ErrorKind;

/// What [`Error`] results hold.
///
/// ```
/// use mongo_seq::{Sequence, Sequences};
///
/// fn orders(seqs: &Sequences) -> mongo_seq::Result<Sequence> {
///     seqs.sequence("orders", None)
/// }
/// # let _ = orders;
/// ```
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong, with a stable [`code`](Error::code) (the npm package's
/// `MongoSeqError` codes): match on its [`kind`](Error::kind) (one flat [`ErrorKind`]), read
/// its fields with the typed accessors ([`counter_id`](Error::counter_id),
/// [`requested`](Error::requested), [`available`](Error::available), [`option`](Error::option),
/// …), or match the core's [`SeqError`] inside [`Error::Sequence`] for every field.
///
/// Messages name options and arguments as Rust spells them (`time_zone`, `max_block`,
/// `format_field`: the builder methods), where the npm package says `timeZone`.
///
/// Bad input (options, names, scope values, documents, field names, counts) is refused before
/// any command is sent: such an error means nothing was written.
///
/// ```
/// # async fn example(seqs: mongo_seq::Sequences) -> mongo_seq::Result<()> {
/// use mongo_seq::{ErrorKind, SequenceOptions};
///
/// let small = seqs.sequence("small", SequenceOptions::new().max(3))?;
/// match small.next().await {
///     Ok(number) => println!("{number}"),
///     Err(error) if error.kind() == ErrorKind::SequenceExhausted => {
///         println!("{} left before {:?}", error.available().unwrap_or(0), error.bound())
///     }
///     Err(error) if error.kind() == ErrorKind::MalformedCounter => println!("repair: {error}"),
///     Err(error) => return Err(error),
/// }
/// # Ok(()) }
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A rule of the sequence refused (the core's error: an option, a name, a bound, a
    /// malformed counter, a lost race retried too often, …). Its message names options in
    /// Rust's spelling.
    #[error("{}", .0.message_in(Spelling::Snake))]
    Sequence(#[from] SeqError),
    /// [`Sequences::sequence`](crate::Sequences::sequence) with a name already defined with
    /// other options (`SEQUENCE_CONFLICT`, like the core's for a counter that records another
    /// definition: [`SeqError::SequenceConflict`]).
    #[error("sequence `{name}` was already defined with other options")]
    SequenceConflict {
        /// The sequence name.
        name: String,
    },
    /// [`Sequences::wait_for_number`](crate::Sequences::wait_for_number) saw no number in time
    /// (`WAIT_TIMEOUT`).
    #[error("no number in `{field}` of document {id} after {} ms", timeout.as_millis())]
    WaitTimeout {
        /// The field waited for.
        field: String,
        /// The document's `_id`, as relaxed Extended JSON.
        id: String,
        /// How long it waited.
        timeout: Duration,
        /// Whether the document exists.
        found: bool,
    },
    /// The driver failed or the server refused, as the driver raised it: a network error, an
    /// authorization failure, a duplicate key on another unique index of your documents (no
    /// `code`: these are the driver's errors, as the npm package passes the Node driver's on).
    #[error("MongoDB: {}", mongo_message(.0))]
    Mongo(#[source] mongodb::error::Error),
}

impl Error {
    /// The stable code (`"SEQUENCE_EXHAUSTED"`, `"INVALID_OPTION"`, …; the table is in the crate
    /// docs), or `None` for an error of the driver ([`Error::Mongo`]).
    ///
    /// ```
    /// use mongo_seq::{Error, SequenceOptions, Sequences};
    /// # async fn example(db: mongodb::Database) {
    /// let seqs = Sequences::new(&db);
    /// let error = seqs.sequence("orders", SequenceOptions::new().step(0)).unwrap_err();
    /// assert_eq!(error.code(), Some("INVALID_STEP"));
    /// # }
    /// ```
    pub fn code(&self) -> Option<&'static str> {
        self.code_text()
    }

    /// What went wrong, as one flat enum ([`ErrorKind::Mongo`] for a driver error).
    ///
    /// ```
    /// use mongo_seq::{ErrorKind, SequenceOptions, Sequences};
    /// # async fn example(db: mongodb::Database) {
    /// let error = Sequences::new(&db)
    ///     .sequence("orders", SequenceOptions::new().block(0))
    ///     .unwrap_err();
    /// assert_eq!(error.kind(), ErrorKind::InvalidOption);
    /// assert_eq!(error.option(), Some("block"));
    /// # }
    /// ```
    pub fn kind(&self) -> ErrorKind {
        self.code_text()
            .and_then(ErrorKind::of_code)
            .unwrap_or(ErrorKind::Mongo)
    }

    fn code_text(&self) -> Option<&'static str> {
        match self {
            Self::Sequence(error) => Some(error.code()),
            Self::SequenceConflict { .. } => Some("SEQUENCE_CONFLICT"),
            Self::WaitTimeout { .. } => Some("WAIT_TIMEOUT"),
            Self::Mongo(_) => None,
        }
    }

    /// Structured fields of the error as the npm package gives them (its `details`: camelCase
    /// keys and option names), when it has any. The typed accessors ([`option`](Self::option),
    /// [`counter_id`](Self::counter_id), …) read the common ones, in Rust's spelling.
    ///
    /// ```
    /// use mongo_seq::{SequenceOptions, Sequences};
    /// # async fn example(db: mongodb::Database) {
    /// let error = Sequences::new(&db)
    ///     .sequence("orders", SequenceOptions::new().block(0))
    ///     .unwrap_err();
    /// assert_eq!(error.details().unwrap()["option"], "block");
    /// # }
    /// ```
    pub fn details(&self) -> Option<Value> {
        match self {
            Self::Sequence(error) => error.details(),
            Self::SequenceConflict { name } => Some(serde_json::json!({ "name": name })),
            Self::WaitTimeout {
                field,
                timeout,
                found,
                ..
            } => Some(serde_json::json!({
                "field": field,
                "timeoutMs": u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX),
                "found": found,
            })),
            Self::Mongo(_) => None,
        }
    }

    /// Every code [`Error::code`] can return.
    ///
    /// ```
    /// let codes: Vec<&str> = mongo_seq::Error::codes().collect();
    /// assert!(codes.contains(&"SEQUENCE_EXHAUSTED") && codes.contains(&"WAIT_TIMEOUT"));
    /// ```
    pub fn codes() -> impl Iterator<Item = &'static str> {
        // `SEQUENCE_CONFLICT` is the core's too (a counter recording another definition), so
        // it is listed once, with the core's.
        SeqError::codes().chain(["WAIT_TIMEOUT"])
    }
}

impl From<mongodb::error::Error> for Error {
    fn from(error: mongodb::error::Error) -> Self {
        Self::Mongo(error)
    }
}

/// What the executor reports, as this crate reports it: a driver error as it is, a counter the
/// server refused to update as `MALFORMED_COUNTER`, a command or reply that cannot be read as
/// `UNEXPECTED_REPLY` (internal: should not happen).
impl From<ExecuteError> for Error {
    fn from(error: ExecuteError) -> Self {
        match error {
            ExecuteError::Mongo(error) => Self::Mongo(error),
            ExecuteError::MalformedCounter { counter, message } => {
                Self::Sequence(SeqError::MalformedCounter {
                    counter_id: counter,
                    reason: message,
                })
            }
            ExecuteError::Reply(error) => Self::Sequence(error),
            ExecuteError::Invalid(reason) => Self::Sequence(SeqError::UnexpectedReply { reason }),
        }
    }
}
