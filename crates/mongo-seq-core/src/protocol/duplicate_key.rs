//! Duplicate keys (server error 11000): which unique index a duplicate key hit, and what that
//! means for the command that hit it. This module is the one home of that rule:
//!
//! * a shell that gets a duplicate-key error passes what the server said about it (its
//!   `errmsg`; its `keyPattern`, which MongoDB sends from 4.2 on) to
//!   [`Command::duplicate_key_reply`], and feeds the plan the reply it returns — or, when it
//!   returns none, raises its driver's error as it is (the error is the caller's own);
//! * a plan fed such a reply ([`Reply::DuplicateKeyOn`] for an index other than `_id`'s) reads
//!   it through `for_command`: where the command's duplicate key can only mean `_id`
//!   (`findOneAndUpdate`, `insertOne`), another unique index ends the plan with
//!   `UNIQUE_INDEX_CONFLICT` (it would be retried forever); elsewhere it is a
//!   [`Reply::DuplicateKey`].
//!
//! ```text
//! command                           index the key broke          reply
//! insertDocument(s) duplicateKeyOn  holds that field, or unknown  duplicateKey / writeResult
//!                                   does not hold it             none: the caller's error
//! any other command                 `_id`'s, or unknown           duplicateKey
//!                                   another one                   duplicateKey {index}
//! ```

use serde_json::Value;

use crate::error::SeqError;
use crate::protocol::command::Command;
use crate::protocol::reply::{Reply, WriteError, WriteResult, DUPLICATE_KEY};

/// What a server said about a duplicate-key error, as a shell's driver hands it over.
#[derive(Debug, Clone, Copy, Default)]
pub struct DuplicateKeyError<'a> {
    /// The error's message: `E11000 duplicate key error collection: <ns> index: <name> dup key:
    /// { <field>: <value>, … }` (servers before 4.2 leave the field names out).
    pub errmsg: Option<&'a str>,
    /// The unique index's key pattern (`{"email": 1}`): MongoDB 4.2 and later send it.
    pub key_pattern: Option<&'a Value>,
    /// For an `insertDocuments`: the position of the refused document within the command's
    /// documents (the ones before it are in).
    pub refused: u64,
}

impl Command {
    /// The reply this command's plan takes for a duplicate-key error (11000) the server gave
    /// it, or `None` when the error is the caller's own: the command sets a number on the
    /// caller's documents (`duplicateKeyOn`) and the unique index the key broke does not hold
    /// that field (an index of the application's, on `email` say). The shell then raises its
    /// driver's error unchanged. See the module docs.
    pub fn duplicate_key_reply(&self, error: &DuplicateKeyError<'_>) -> Option<Reply> {
        match self {
            Self::InsertDocument {
                duplicate_key_on: Some(field),
                ..
            } => index_holds(field, error).then_some(Reply::DuplicateKey),
            Self::InsertDocuments {
                duplicate_key_on: field,
                ..
            } => index_holds(field, error).then(|| {
                Reply::WriteResult(WriteResult {
                    n: error.refused,
                    n_modified: 0,
                    write_errors: vec![WriteError {
                        index: error.refused,
                        code: DUPLICATE_KEY,
                        errmsg: error.errmsg.unwrap_or_default().to_owned(),
                    }],
                    write_concern_error: None,
                })
            }),
            _ => Some(Reply::duplicate_key(error.errmsg, error.key_pattern)),
        }
    }
}

/// Whether the unique index a duplicate key broke holds `field`: its key pattern says so when
/// the server sent one, else its message's `dup key: { <field>: … }` names the first field;
/// when neither tells, it is taken to (the plan renumbers, as for a number already taken).
fn index_holds(field: &str, error: &DuplicateKeyError<'_>) -> bool {
    if let Some(pattern) = error.key_pattern.filter(|pattern| !pattern.is_null()) {
        return match pattern {
            Value::Object(keys) => keys.contains_key(field),
            _ => false,
        };
    }
    error
        .errmsg
        .and_then(first_dup_key_field)
        .map_or(true, |named| named == field)
}

/// The first field a duplicate-key message names: `dup key: { n: 5 }` → `n` (`"n"` quoted
/// too); `None` when it names none (`dup key: { : 5 }`, servers before 4.2).
fn first_dup_key_field(message: &str) -> Option<&str> {
    let (_, rest) = message.split_once("dup key: {")?;
    let rest = rest.strip_prefix(' ').unwrap_or(rest);
    let rest = rest.strip_prefix('"').unwrap_or(rest);
    let end = rest.find(['"', ':'])?;
    let name = rest.get(..end)?.trim();
    (!name.is_empty()).then_some(name)
}

/// What a plan reads in `reply` to `command`: a duplicate key on another unique index than
/// `_id`'s ends a `findOneAndUpdate` or `insertOne` with `UNIQUE_INDEX_CONFLICT`, and is a
/// plain duplicate key for every other command (see the module docs).
pub(crate) fn for_command(command: &Command, reply: Reply) -> Result<Reply, SeqError> {
    let Reply::DuplicateKeyOn { index } = reply else {
        return Ok(reply);
    };
    match command {
        Command::FindOneAndUpdate { collection, .. } | Command::InsertOne { collection, .. } => {
            Err(SeqError::UniqueIndexConflict {
                collection: collection.name().to_owned(),
                index,
            })
        }
        _ => Ok(Reply::DuplicateKey),
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
    pub(crate) fn duplicate_key_on(name: Option<&str>, key_pattern: Option<&Value>) -> Self {
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
