//! Duplicate keys (server error 11000): which unique index a duplicate key hit, and what that
//! means for the command that hit it. This module is the one home of that rule:
//!
//! * a shell that gets a duplicate-key error asks the command whether its plan handles it
//!   ([`Command::plan_handles_duplicate_key`], with what the server said about the index: its
//!   `errmsg`, and its `keyPattern`, which MongoDB sends from 4.2 on). When it does not, the
//!   error is the caller's own and the shell raises its driver's error as it is; when it does,
//!   the shell feeds the plan the reply [`Command::duplicate_key_reply`] gives (an
//!   `insertDocuments`: the write result, its one write error at the refused document; the JS
//!   package sends what the server said, which reads back to the same);
//! * a plan reads that reply for the command it sent (`for_command`): where the command's
//!   duplicate key can only mean `_id` (`findOneAndUpdate`, `insertOne`), another unique index
//!   ends the plan with `UNIQUE_INDEX_CONFLICT` (it would be retried forever); elsewhere it is a
//!   [`Reply::DuplicateKey`].
//!
//! ```text
//! command                           the index the key broke        the plan
//! insertDocument(s) duplicateKeyOn  holds that field, or unknown   renumbers (duplicateKey)
//!                                   does not hold it               - : the caller's error
//! findOneAndUpdate, insertOne       `_id`'s, or unknown            retries (a lost race)
//!                                   another one                    UNIQUE_INDEX_CONFLICT
//! any other command (the optimistic  any                            duplicateKey
//! insert loop's, createIndex, …)
//! ```

use serde_json::Value;

use crate::error::SeqError;
use crate::protocol::command::{Collection, Command};
use crate::protocol::reply::Reply;

impl Command {
    /// Whether this command's plan handles a duplicate-key error (11000) the server gave it,
    /// from what the server said about the index (`errmsg`, `key_pattern`). Not when the
    /// command sets a number on the caller's documents (`duplicateKeyOn`) and the unique index
    /// the key broke does not hold that field (an index of the application's, on `email` say):
    /// that error is the caller's own, and the shell raises its driver's error unchanged.
    pub fn plan_handles_duplicate_key(
        &self,
        errmsg: Option<&str>,
        key_pattern: Option<&Value>,
    ) -> bool {
        match self {
            Self::InsertDocument {
                duplicate_key_on: Some(field),
                ..
            }
            | Self::InsertDocuments {
                duplicate_key_on: field,
                ..
            } => index_holds(field, errmsg, key_pattern),
            _ => true,
        }
    }

    /// The reply for a duplicate-key error this command got, from what the server said about
    /// the index, or `None` when it is the caller's own (see
    /// [`Command::plan_handles_duplicate_key`]). A `findOneAndUpdate` or `insertOne` gets what
    /// the server said, for its plan to tell `_id`'s index from another one; every other
    /// command a plain [`Reply::DuplicateKey`] (an `insertDocuments` reports its duplicate key
    /// in its write result instead: use the check above).
    pub fn duplicate_key_reply(
        &self,
        errmsg: Option<&str>,
        key_pattern: Option<&Value>,
    ) -> Option<Reply> {
        if !self.plan_handles_duplicate_key(errmsg, key_pattern) {
            return None;
        }
        Some(match self {
            Self::FindOneAndUpdate { .. } | Self::InsertOne { .. } => {
                Reply::duplicate_key(errmsg, key_pattern)
            }
            _ => Reply::DuplicateKey,
        })
    }
}

/// Whether the unique index a duplicate key broke holds `field`: its key pattern says so when
/// the server sent one, else its message's `dup key: { <field>: …, … }` names the index's
/// fields (a series' index `{ numberPeriod: "2026", number: 2 }` holds `number`, its second);
/// when neither tells, it is taken to (the plan renumbers, as for a number already taken).
fn index_holds(field: &str, errmsg: Option<&str>, key_pattern: Option<&Value>) -> bool {
    match key_pattern {
        Some(Value::Object(keys)) => keys.contains_key(field),
        Some(Value::Null) | None => {
            let named = errmsg.map(dup_key_fields).unwrap_or_default();
            named.is_empty() || named.contains(&field)
        }
        Some(_) => false,
    }
}

/// The fields a duplicate-key message names, in order: `dup key: { p: "a, b: c", n: 5 }` →
/// `p`, `n` (names quoted too; values of any kind skipped, nested or quoted separators
/// included); none when it names none (`dup key: { : 5 }`, servers before 4.2).
fn dup_key_fields(message: &str) -> Vec<&str> {
    let Some((_, rest)) = message.split_once("dup key: {") else {
        return Vec::new();
    };
    let mut fields = Vec::new();
    let mut rest = rest;
    loop {
        let trimmed = rest.trim_start();
        // A name: quoted, or up to its `:`.
        let (name, after) = if let Some(quoted) = trimmed.strip_prefix('"') {
            match quoted.find('"') {
                Some(end) => (
                    quoted.get(..end).unwrap_or(""),
                    quoted.get(end.saturating_add(1)..).unwrap_or(""),
                ),
                None => return fields,
            }
        } else {
            match trimmed.find([':', '}']) {
                Some(end) => (
                    trimmed.get(..end).unwrap_or("").trim(),
                    trimmed.get(end..).unwrap_or(""),
                ),
                None => return fields,
            }
        };
        let Some(value) = after.trim_start().strip_prefix(':') else {
            return fields;
        };
        if !name.is_empty() {
            fields.push(name);
        }
        match value_end(value) {
            Some((',', next)) => rest = next,
            _ => return fields,
        }
    }
}

/// Skips one value of a duplicate-key message: returns the separator that ends it (`,` or the
/// closing `}`) and the text after it; nested brackets and quoted text (with `\` escapes) are
/// part of the value. `None` when the message ends first.
fn value_end(text: &str) -> Option<(char, &str)> {
    let mut depth = 0_usize;
    let mut quote: Option<char> = None;
    let mut escaped = false;
    for (at, c) in text.char_indices() {
        if let Some(open) = quote {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == open {
                quote = None;
            }
            continue;
        }
        match c {
            '"' | '\'' => quote = Some(c),
            '{' | '[' | '(' => depth = depth.saturating_add(1),
            '}' | ']' | ')' if depth > 0 => depth = depth.saturating_sub(1),
            ',' | '}' if depth == 0 => return Some((c, text.get(at.saturating_add(1)..)?)),
            _ => {}
        }
    }
    None
}

/// What a plan reads in `reply` to `command`: a duplicate key on another unique index than
/// `_id`'s ends a `findOneAndUpdate` or `insertOne` with `UNIQUE_INDEX_CONFLICT`, and is a
/// plain duplicate key for every other command (see the module docs).
pub(crate) fn for_command(command: &Command, reply: Reply) -> Result<Reply, SeqError> {
    read_reply(id_only(command), reply)
}

/// What reading a reply needs to know of the command sent (see [`for_command`]), kept by a plan
/// that handed its command over instead of a copy of it.
#[derive(Debug, Clone)]
pub(crate) struct Sent {
    /// The collection of a command whose duplicate key can only mean `_id`'s index.
    id_only: Option<Collection>,
}

impl Sent {
    pub(crate) fn of(command: &Command) -> Self {
        Self {
            id_only: id_only(command),
        }
    }

    /// [`for_command`] for the command this was made of.
    pub(crate) fn read(&self, reply: Reply) -> Result<Reply, SeqError> {
        read_reply(self.id_only, reply)
    }
}

/// The collection of `command` when its duplicate key can only mean `_id`'s index.
fn id_only(command: &Command) -> Option<Collection> {
    match command {
        Command::FindOneAndUpdate { collection, .. } | Command::InsertOne { collection, .. } => {
            Some(*collection)
        }
        _ => None,
    }
}

fn read_reply(id_only: Option<Collection>, reply: Reply) -> Result<Reply, SeqError> {
    let Reply::DuplicateKeyOn { index } = reply else {
        return Ok(reply);
    };
    match id_only {
        Some(collection) => Err(SeqError::UniqueIndexConflict {
            collection: collection.name().to_owned(),
            index,
        }),
        None => Ok(Reply::DuplicateKey),
    }
}

impl Reply {
    /// The reply to a duplicate-key error (11000), from what the server said about it: the
    /// index named by its `keyPattern`, else by its message (`… index: <name> dup key: …`).
    /// [`Reply::DuplicateKey`] when that is `_id`'s index or neither names one;
    /// [`Reply::DuplicateKeyOn`] otherwise. How a `duplicateKey` reply with `errmsg` and
    /// `keyPattern` (the JS package's) reads; [`Command::duplicate_key_reply`] uses it too.
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
    use serde_json::{json, Value};

    use super::Reply;
    use crate::error::SeqError;
    use crate::protocol::command::{Collection, Command, ReturnDocument, UpdateOptions};

    #[test]
    fn a_numbering_insert_handles_a_duplicate_key_only_on_an_index_holding_its_field() {
        let one = Command::InsertDocument {
            collection: Collection::Documents,
            fields: json!({"n": 1}),
            duplicate_key_on: Some("n".to_owned()),
        };
        let many = Command::InsertDocuments {
            collection: Collection::Documents,
            first: 0,
            fields: vec![json!({"n": 1})],
            duplicate_key_on: "n".to_owned(),
        };
        let on_n = "E11000 duplicate key error collection: app.users index: n_1 dup key: { n: 1 }";
        let on_email = "E11000 duplicate key error collection: app.users index: email_1 dup key: { email: \"a@example.com\" }";
        // A series' index: the number is the second field (the embedded server sends no key
        // pattern, a real one does).
        let in_period = "E11000 duplicate key error collection: app.invoices index: mongo_seq_n dup key: { nPeriod: \"2026\", n: 2 }";
        let tricky = r#"E11000 duplicate key error collection: app.users index: email_1_tag_1 dup key: { email: "a, n: 1 \" }", tag: { n: [1, 2] } }"#;
        let cases: [(Option<&str>, Option<Value>, bool); 14] = [
            // The key pattern decides when the server sends one (4.2 and later), whatever the
            // message says; a compound index holds the field anywhere in it.
            (Some(on_email), Some(json!({"n": 1})), true),
            (Some(on_n), Some(json!({"email": 1})), false),
            (None, Some(json!({"tenant": 1, "n": 1})), true),
            // Else the message's first field.
            (Some(on_n), None, true),
            (Some(on_email), Some(Value::Null), false),
            (Some("E11000 … dup key: { \"n\": 1 }"), None, true),
            // Any field the message names, not only the first; values skipped whole.
            (Some(in_period), None, true),
            (Some(in_period), Some(json!({"nPeriod": 1, "n": 1})), true),
            (Some(tricky), None, false),
            (
                Some("E11000 … dup key: { tenant: ObjectId('a1'), \"n\": 3 }"),
                None,
                true,
            ),
            (
                Some("E11000 … dup key: { tenant: \"acme\", nPeriod: \"2026\" }"),
                None,
                false,
            ),
            // Neither says (servers before 4.2: `dup key: { : 1 }`): the plan renumbers.
            (
                Some("E11000 duplicate key error index: n_1 dup key: { : 1 }"),
                None,
                true,
            ),
            (Some("E11000 duplicate key error"), None, true),
            (None, None, true),
        ];
        for (errmsg, key_pattern, handles) in cases {
            for command in [&one, &many] {
                assert_eq!(
                    command.plan_handles_duplicate_key(errmsg, key_pattern.as_ref()),
                    handles,
                    "{errmsg:?} {key_pattern:?}"
                );
            }
        }
        // Commands that number nothing of the caller's handle every duplicate key (the plan
        // tells `_id`'s index from another one).
        let optimistic = Command::InsertDocument {
            collection: Collection::Documents,
            fields: json!({"_id": 1}),
            duplicate_key_on: None,
        };
        let reserve = Command::FindOneAndUpdate {
            collection: Collection::Counters,
            filter: json!({"_id": "a"}),
            update: json!({"$inc": {"seq": 1}}),
            options: UpdateOptions {
                upsert: true,
                return_document: ReturnDocument::After,
            },
        };
        for command in [&optimistic, &reserve] {
            assert!(command.plan_handles_duplicate_key(Some(on_email), Some(&json!({"email": 1}))));
        }
        // The reply a Rust shell feeds: what the server said where the plan tells the index.
        let email = json!({"email": 1});
        assert_eq!(
            reserve.duplicate_key_reply(Some(on_email), Some(&email)),
            Some(Reply::DuplicateKeyOn {
                index: "email_1".to_owned()
            })
        );
        assert_eq!(one.duplicate_key_reply(Some(on_email), Some(&email)), None);
        assert_eq!(
            one.duplicate_key_reply(Some(on_n), None),
            Some(Reply::DuplicateKey)
        );
        let index = Command::CreateIndex {
            collection: Collection::Documents,
            name: "mongo_seq_n".to_owned(),
            keys: json!({"n": 1}),
            unique: true,
            partial_filter_expression: None,
        };
        assert_eq!(
            index.duplicate_key_reply(Some(on_n), None),
            Some(Reply::DuplicateKey)
        );
        // What the plan reads: another index than `_id`'s ends a reservation, not an insert.
        let other = || Reply::DuplicateKeyOn {
            index: "email_1".to_owned(),
        };
        assert!(matches!(
            super::for_command(&reserve, other()),
            Err(SeqError::UniqueIndexConflict { .. })
        ));
        assert_eq!(
            super::for_command(&optimistic, other()),
            Ok(Reply::DuplicateKey)
        );
        assert_eq!(
            super::for_command(&one, Reply::Inserted),
            Ok(Reply::Inserted)
        );
    }

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
