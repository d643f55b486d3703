//! One ledger entry: why a number of a series is held by no document.
//!
//! The ledger is a collection beside the counters (the sidecar's `[mongodb] ledger`, the
//! package's `ledger` option; `mongo_seq_ledger` by default), one document per number:
//!
//! ```text
//! { _id: { counter: "invoices/2026", number: Int64(17) },
//!   sequence: "invoices", kind: "void" | "deleted", reason: "…", at: Date, by: "…",
//!   document: <the deleted document's _id, only for "deleted"> }
//! ```
//!
//! The compound `_id` makes a second entry for one number a duplicate key: a number is voided
//! once, and a trigger that records a deletion again (a replayed change event, after a crash
//! between the record and its resume token) finds its own entry there and is done. Entries are
//! written with `w: "majority"` and read with `readConcern: "majority"`, like counters.
//!
//! Entries are written here ([`LedgerEntry`]) and read back here ([`RecordedEntry`]: what the
//! audit and a refused void need of a stored entry, never trusted).

use serde::Serialize;
use serde_json::{Map, Value};

use crate::ejson;
use crate::error::SeqError;
use crate::numbering::sealing::seal_document;
use crate::seal::link::{Link, LinkKind, Seal};
use crate::sequence::counter_id::CounterKey;

/// The reason of every deletion record.
pub const DELETED_REASON: &str = "document deleted";
/// The longest `reason` and `by` accepted, in bytes (a ledger entry is not a document store).
pub const MAX_TEXT_BYTES: usize = 1_000;

/// What a ledger entry says happened to its number.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum LedgerKind {
    /// Voided on purpose (`mongo-seq void`, the package's `void`): never handed out again.
    Void,
    /// The document holding it was deleted (recorded by a trigger from the change stream).
    Deleted,
}

impl LedgerKind {
    /// Its stored name (`kind`).
    pub fn name(self) -> &'static str {
        match self {
            Self::Void => "void",
            Self::Deleted => "deleted",
        }
    }

    /// The kind of its link in a sealed series.
    pub fn link_kind(self) -> LinkKind {
        match self {
            Self::Void => LinkKind::Void,
            Self::Deleted => LinkKind::Deletion,
        }
    }

    /// The kind a stored `kind` names, if any.
    pub fn from_name(name: &str) -> Option<Self> {
        [Self::Void, Self::Deleted]
            .into_iter()
            .find(|kind| kind.name() == name)
    }
}

/// One entry, ready to be written ([`LedgerEntry::to_document`]).
#[derive(Debug, Clone, PartialEq)]
pub struct LedgerEntry {
    pub counter_id: String,
    pub number: i64,
    /// The sequence's name (the counter id's first segment).
    pub sequence: String,
    pub kind: LedgerKind,
    pub reason: String,
    /// When (ms since the epoch): the void's `now`, a deletion's event time.
    pub at_ms: i64,
    pub by: String,
    /// The deleted document's `_id` (Extended JSON); `None` for a void.
    pub document: Option<Value>,
    /// A sealed series': the entry's own link's seal (see [`crate::numbering::sealing`]).
    pub seal: Option<Seal>,
    /// A sealed series' deletion: the issue link the document held, `{fields, seal}`, so the
    /// chain stays walkable without it.
    pub removed: Option<Value>,
}

impl LedgerEntry {
    /// A void of `number`; `reason` and `by` checked (non-blank, at most [`MAX_TEXT_BYTES`]).
    pub fn void(
        counter_id: &str,
        number: i64,
        reason: &str,
        by: &str,
        at_ms: i64,
    ) -> Result<Self, SeqError> {
        Ok(Self {
            counter_id: counter_id.to_owned(),
            number,
            sequence: sequence_of(counter_id)?,
            kind: LedgerKind::Void,
            reason: check_text("reason", reason)?,
            at_ms,
            by: check_text("by", by)?,
            document: None,
            seal: None,
            removed: None,
        })
    }

    /// The record of the deletion of document `document` (its `_id`), which held `number`.
    pub fn deletion(
        counter_id: &str,
        number: i64,
        document: Value,
        by: &str,
        at_ms: i64,
    ) -> Result<Self, SeqError> {
        Ok(Self {
            counter_id: counter_id.to_owned(),
            number,
            sequence: sequence_of(counter_id)?,
            kind: LedgerKind::Deleted,
            reason: DELETED_REASON.to_owned(),
            at_ms,
            by: check_text("by", by)?,
            document: Some(document),
            seal: None,
            removed: None,
        })
    }

    /// The entry's `_id`: `{counter, number}`, in this order (an embedded document compares
    /// field by field, in order).
    pub fn key(counter_id: &str, number: i64) -> Value {
        ejson::object([
            ("counter", Value::String(counter_id.to_owned())),
            ("number", ejson::long(number)),
        ])
    }

    /// The stored document (canonical Extended JSON: `number` an Int64, `at` a date).
    pub fn to_document(&self) -> Value {
        let mut document = Map::new();
        document.insert("_id".to_owned(), Self::key(&self.counter_id, self.number));
        document.insert("sequence".to_owned(), self.sequence.clone().into());
        document.insert("kind".to_owned(), self.kind.name().into());
        document.insert("reason".to_owned(), self.reason.clone().into());
        document.insert(
            "at".to_owned(),
            ejson::object([("$date", ejson::long(self.at_ms))]),
        );
        document.insert("by".to_owned(), self.by.clone().into());
        if let Some(id) = &self.document {
            document.insert("document".to_owned(), id.clone());
        }
        if let Some(seal) = &self.seal {
            document.insert("seal".to_owned(), seal_document(seal));
        }
        if let Some(removed) = &self.removed {
            document.insert("removed".to_owned(), removed.clone());
        }
        Value::Object(document)
    }

    /// The entry's link in its sealed series: a void seals no field, a deletion the values the
    /// document held (`fields`).
    pub fn link(&self, period: Option<String>, fields: Map<String, Value>) -> Link {
        Link {
            series: self.counter_id.clone(),
            kind: self.kind.link_kind(),
            number: self.number,
            period,
            fields,
        }
    }
}

/// The filter of the ledger's entries of the sequence `sequence` (all its counters').
pub fn entries_of(sequence: &str) -> Value {
    let mut filter = Map::new();
    filter.insert("sequence".to_owned(), Value::String(sequence.to_owned()));
    Value::Object(filter)
}

/// The filter of the ledger's entries of one counter: a range of `_id`s (`{counter, number}`
/// compares field by field, in order), so the `_id` index finds them, every integer `number`
/// of them.
pub fn entries_filed_under(counter_id: &str) -> Value {
    let mut range = Map::new();
    range.insert("$gte".to_owned(), LedgerEntry::key(counter_id, i64::MIN));
    range.insert("$lte".to_owned(), LedgerEntry::key(counter_id, i64::MAX));
    let mut filter = Map::new();
    filter.insert("_id".to_owned(), Value::Object(range));
    Value::Object(filter)
}

/// The counter id a stored entry is filed under (its `_id.counter`), when it has one.
pub fn filed_under(document: &Value) -> Option<&str> {
    document.get("_id")?.get("counter")?.as_str()
}

/// A stored entry, as much as the audit and a refused void need of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordedEntry {
    pub counter_id: String,
    pub number: i64,
    pub kind: LedgerKind,
    pub reason: String,
}

impl RecordedEntry {
    /// Reads a stored entry (Extended JSON); `Err` says what is wrong with it (a phrase for a
    /// report): an entry that cannot be read explains nothing.
    pub fn read(document: &Value) -> Result<Self, String> {
        let id = document.get("_id").ok_or("has no `_id`")?;
        let counter_id = id
            .get("counter")
            .and_then(Value::as_str)
            .ok_or("`_id.counter` is not a string")?
            .to_owned();
        let number = id
            .get("number")
            .ok_or_else(|| "has no `_id.number`".to_owned())
            .and_then(|n| ejson::read_i64(n).map_err(|e| format!("`_id.number` {e}")))?;
        let kind = document
            .get("kind")
            .and_then(Value::as_str)
            .and_then(LedgerKind::from_name)
            .ok_or("`kind` is neither \"void\" nor \"deleted\"")?;
        let reason = document
            .get("reason")
            .and_then(Value::as_str)
            .filter(|r| !r.trim().is_empty())
            .ok_or("has no `reason`")?
            .to_owned();
        Ok(Self {
            counter_id,
            number,
            kind,
            reason,
        })
    }
}

/// The sequence name of a counter id the core wrote (`invoices/2026` → `invoices`).
fn sequence_of(counter_id: &str) -> Result<String, SeqError> {
    CounterKey::parse(counter_id).map(|key| key.name)
}

/// A `reason` or `by`: trimmed, not blank, at most [`MAX_TEXT_BYTES`] bytes.
pub(crate) fn check_text(argument: &str, text: &str) -> Result<String, SeqError> {
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return Err(SeqError::invalid_argument(
            argument,
            match argument {
                "reason" => "must say why the number is voided (a non-blank string)",
                _ => "must be a non-blank string",
            },
        ));
    }
    if trimmed.len() > MAX_TEXT_BYTES {
        return Err(SeqError::invalid_argument(
            argument,
            format!(
                "must be at most {MAX_TEXT_BYTES} bytes, got {}",
                trimmed.len()
            ),
        ));
    }
    Ok(trimmed.to_owned())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn an_entry_is_read_back_by_its_sequence_and_filed_under_its_counter() {
        let entry = LedgerEntry::void("inv/t=a/2026", 3, "typo", "ops", 0).unwrap();
        let document = entry.to_document();
        assert_eq!(entries_of("inv"), json!({"sequence": "inv"}));
        assert_eq!(document.get("sequence"), entries_of("inv").get("sequence"));
        assert_eq!(filed_under(&document), Some("inv/t=a/2026"));
        assert_eq!(filed_under(&json!({"_id": 1})), None);
    }

    #[test]
    fn a_void_and_a_deletion_have_the_documented_shape() {
        let void = LedgerEntry::void("invoices/2026", 17, " typo ", "ops", 1_000).unwrap();
        assert_eq!(
            void.to_document(),
            json!({"_id": {"counter": "invoices/2026", "number": {"$numberLong": "17"}},
                   "sequence": "invoices", "kind": "void", "reason": "typo",
                   "at": {"$date": {"$numberLong": "1000"}}, "by": "ops"})
        );
        let deleted = LedgerEntry::deletion(
            "orders",
            3,
            json!({"$oid": "0123456789abcdef01234567"}),
            "s",
            5,
        )
        .unwrap();
        assert_eq!(deleted.to_document()["reason"], json!(DELETED_REASON));
        assert_eq!(deleted.to_document()["kind"], json!("deleted"));
        assert_eq!(
            deleted.to_document()["document"],
            json!({"$oid": "0123456789abcdef01234567"})
        );
    }

    #[test]
    fn reads_back_what_it_writes_and_refuses_what_explains_nothing() {
        let void =
            LedgerEntry::void("inv/2026", 9_007_199_254_740_993, "printer jam", "ops", 0).unwrap();
        let read = RecordedEntry::read(&void.to_document()).unwrap();
        assert_eq!(
            (
                read.counter_id.as_str(),
                read.number,
                read.kind,
                read.reason.as_str()
            ),
            (
                "inv/2026",
                9_007_199_254_740_993,
                LedgerKind::Void,
                "printer jam"
            )
        );
        for bad in [
            json!({}),
            json!({"_id": "x", "kind": "void", "reason": "r"}),
            json!({"_id": {"counter": "c", "number": "1"}, "kind": "void", "reason": "r"}),
            json!({"_id": {"counter": "c", "number": 1}, "kind": "lost", "reason": "r"}),
            json!({"_id": {"counter": "c", "number": 1}, "kind": "deleted", "reason": " "}),
        ] {
            assert!(RecordedEntry::read(&bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn blank_or_huge_texts_and_foreign_ids_are_refused() {
        let code = |r: Result<LedgerEntry, SeqError>| r.unwrap_err().code();
        assert_eq!(
            code(LedgerEntry::void("a", 1, "  ", "x", 0)),
            "INVALID_ARGUMENT"
        );
        assert_eq!(
            code(LedgerEntry::void("a", 1, "r", "", 0)),
            "INVALID_ARGUMENT"
        );
        let huge = "x".repeat(MAX_TEXT_BYTES + 1);
        assert_eq!(
            code(LedgerEntry::void("a", 1, &huge, "x", 0)),
            "INVALID_ARGUMENT"
        );
        assert_eq!(
            code(LedgerEntry::void("a//b", 1, "r", "x", 0)),
            "INVALID_ARGUMENT"
        );
    }
}
