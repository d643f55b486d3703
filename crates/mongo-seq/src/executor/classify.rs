//! What a driver error means, decided once for every caller of the executor: the server's code,
//! whether a pause and a retry may get past it ([`MongoFailure::transient`]), a lost change
//! stream history, a duplicate key (a reply the core reads, not an error), and the message for
//! humans without the driver's debug fields.

use mongo_seq_core::Reply;
use mongodb::error::{Error, ErrorKind, WriteFailure};

/// A database operation that failed (the server refused it, or could not be reached).
///
/// ```no_run
/// # async fn example(db: mongodb::Database) {
/// use mongo_seq::executor::MongoFailure;
/// use mongodb::bson::{doc, Document};
///
/// if let Err(error) = db.collection::<Document>("orders").insert_one(doc! {}).await {
///     let failure = MongoFailure::from(error);
///     if failure.transient {
///         // an election, a network error: pause and try again
///     }
///     eprintln!("{} (server code {:?})", failure.message, failure.code);
/// }
/// # }
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MongoFailure {
    /// The server's error code, when it sent one.
    pub code: Option<i32>,
    /// Whether the same work may succeed after a pause: a network error, an election, a
    /// stepdown, a shutdown (the trigger retries from its stored resume token either way;
    /// this only labels the error).
    pub transient: bool,
    /// For humans: what the driver or server said, without the driver's debug fields.
    pub message: String,
}

impl From<Error> for MongoFailure {
    fn from(e: Error) -> Self {
        Self {
            code: server_code(&e),
            transient: is_transient(&e),
            message: mongo_message(&e),
        }
    }
}

/// Server error codes of elections, stepdowns and shutdowns, and of a `mongos` whose routing
/// table is behind a chunk migration (StaleShardVersion 63, StaleEpoch 150, StaleConfig 13388,
/// StaleDbVersion 249: it refreshes and the retry goes through): retry, resume from the stored
/// token. And MaxTimeMSExpired (50): a read causally after an event that the member serving it
/// had not reached in time (`ANCHORED_READ_MAX_TIME_MS`).
const TRANSIENT_CODES: [i32; 19] = [
    6, 7, 89, 91, 189, 262, 9001, 10107, 11600, 11602, 13435, 13436, 63, 150, 13388, 249, 133, 43,
    50,
];

/// Server error codes that mean "the resume point is gone" (ChangeStreamHistoryLost,
/// ChangeStreamFatalError).
const HISTORY_LOST_CODES: [i32; 2] = [286, 280];

/// NoMatchingDocument: in a change stream, an event whose required pre- or post-image is not
/// there (never made, or expired).
const IMAGE_MISSING: i32 = 47;

/// TypeMismatch: `$inc` on a counter whose `seq` is not a number.
pub(super) const TYPE_MISMATCH: i32 = 14;

/// The server error code of a driver error, if it carries one.
///
/// ```no_run
/// # async fn example(db: mongodb::Database) {
/// use mongo_seq::executor::classify::server_code;
/// use mongodb::bson::{doc, Document};
///
/// let users = db.collection::<Document>("users");
/// if let Err(error) = users.insert_one(doc! { "_id": 1 }).await {
///     if server_code(&error) == Some(11000) {
///         println!("user 1 exists");
///     }
/// }
/// # }
/// ```
pub fn server_code(e: &Error) -> Option<i32> {
    match e.kind.as_ref() {
        ErrorKind::Command(c) => Some(c.code),
        ErrorKind::Write(WriteFailure::WriteConcernError(w)) => Some(w.code),
        ErrorKind::Write(WriteFailure::WriteError(w)) => Some(w.code),
        _ => None,
    }
}

fn is_transient(e: &Error) -> bool {
    matches!(
        e.kind.as_ref(),
        ErrorKind::Io(_)
            | ErrorKind::ConnectionPoolCleared { .. }
            | ErrorKind::ServerSelection { .. }
    ) || e.contains_label("ResumableChangeStreamError")
        || e.contains_label("RetryableWriteError")
        || server_code(e).is_some_and(|c| TRANSIENT_CODES.contains(&c))
}

/// Whether a change stream's error means its resume point is gone.
///
/// ```no_run
/// # async fn example(db: mongodb::Database) -> mongodb::error::Result<()> {
/// use mongo_seq::executor::classify::is_history_lost;
/// use mongodb::bson::Document;
///
/// match db.collection::<Document>("orders").watch().await {
///     Err(error) if is_history_lost(&error) => println!("the resume point is gone: rescan"),
///     other => drop(other?),
/// }
/// # Ok(()) }
/// ```
pub fn is_history_lost(e: &Error) -> bool {
    server_code(e).is_some_and(|code| HISTORY_LOST_CODES.contains(&code))
}

/// A change stream's read failed on an event whose required post-image (or pre-image) is not
/// there: never made (the collection's `changeStreamPreAndPostImages` was off at the update) or
/// expired. Images are not made after the fact, so the stream can never read past that event
/// from where it is: as with lost history, a reader starts again from now. Meaningful for a
/// change stream's errors only (other commands use the code for other things).
pub fn is_stream_image_missing(e: &Error) -> bool {
    server_code(e) == Some(IMAGE_MISSING)
}

pub(super) fn is_duplicate_key(e: &Error) -> bool {
    server_code(e) == Some(11000)
}

/// A duplicate-key error as the core reads it: what the server said, its message naming the
/// index (the driver keeps no `keyPattern`). The core decides what it means for the command
/// (`mongo_seq_core::protocol::duplicate_key`): a lost race, or another unique index than
/// `_id`'s, which no retry can get past.
pub(super) fn duplicate_key_reply(e: &Error) -> Reply {
    Reply::duplicate_key(duplicate_key_message(e).as_deref(), None)
}

/// The server's message of a duplicate-key error (`… index: email_1 dup key: { … }`).
pub(super) fn duplicate_key_message(e: &Error) -> Option<String> {
    match e.kind.as_ref() {
        ErrorKind::Command(c) => Some(c.message.clone()),
        ErrorKind::Write(WriteFailure::WriteError(w)) => Some(w.message.clone()),
        _ => None,
    }
}

/// A driver error for humans: its kind's message, without the driver's debug fields
/// (`labels: {}, source: None, server response: None`).
///
/// ```no_run
/// # async fn example(db: mongodb::Database) {
/// use mongo_seq::executor::mongo_message;
/// use mongodb::bson::{doc, Document};
///
/// if let Err(error) = db.collection::<Document>("orders").insert_one(doc! {}).await {
///     eprintln!("could not insert: {}", mongo_message(&error));
/// }
/// # }
/// ```
pub fn mongo_message(e: &Error) -> String {
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
pub(crate) mod tests {
    use mongodb::bson::doc;
    use mongodb::error::{CommandError, Error, ErrorKind};

    use super::*;

    /// The driver's error for a server reply `{ok: 0, code, codeName, errmsg}`, as `mongos`
    /// sends one (no sharded cluster runs here: these are the replies the manual documents).
    pub(crate) fn server_error(code: i32, code_name: &str, errmsg: &str) -> Error {
        let reply = doc! { "ok": 0, "code": code, "codeName": code_name, "errmsg": errmsg };
        let command: CommandError = mongodb::bson::from_document(reply).expect("a command error");
        Error::from(ErrorKind::Command(command))
    }

    #[test]
    fn a_mongos_behind_a_migration_is_transient_as_an_election_is() {
        for (code, name) in [
            (13388, "StaleConfig"),
            (63, "StaleShardVersion"),
            (150, "StaleEpoch"),
            (249, "StaleDbVersion"),
        ] {
            let e = server_error(code, name, "version mismatch detected for app.orders");
            let failure = MongoFailure::from(e.clone());
            assert!(failure.transient, "{name}");
            assert_eq!(failure.code, Some(code));
            assert!(!is_history_lost(&e), "{name}");
        }
    }

    #[test]
    fn a_required_post_image_missing_is_told_apart() {
        let e = server_error(
            47,
            "NoMatchingDocument",
            "Change stream was configured to require a post-image for all update events, but the post-image was not found for event: {}",
        );
        assert!(is_stream_image_missing(&e) && !is_history_lost(&e));
        assert!(!is_stream_image_missing(&server_error(
            286,
            "ChangeStreamHistoryLost",
            "gone"
        )));
    }

    #[test]
    fn history_lost_on_one_shard_through_mongos_is_history_lost() {
        for (code, name) in [
            (286, "ChangeStreamHistoryLost"),
            (280, "ChangeStreamFatalError"),
        ] {
            let e = server_error(
                code,
                name,
                "Error on remote shard shard02:27018 :: caused by :: Resume of change stream was not possible, as the resume point may no longer be in the oplog.",
            );
            assert!(is_history_lost(&e), "{name}");
            assert!(!MongoFailure::from(e).transient, "{name}");
        }
    }

    #[test]
    fn driver_fields_are_removed() {
        assert_eq!(
            super::without_driver_fields("Server selection timeout: Topology: { Servers: [ { Error: Kind: I/O error: refused, labels: {\"A\", \"B\"}, source: None, server response: None } ] }"),
            "Server selection timeout: Topology: { Servers: [ { Error: I/O error: refused } ] }"
        );
    }
}
