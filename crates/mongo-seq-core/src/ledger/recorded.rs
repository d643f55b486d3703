//! Ledger entries as the audit reads them back (Extended JSON, as stored): `{_id: {counter,
//! number}, sequence, kind: "void" | "deleted", reason, at, by, document?}`. The writer's side
//! (building and refusing entries) is `void`'s; the audit only needs the number, the kind and
//! the reason, and must not trust what it reads: an entry it cannot read explains nothing.

use serde::Serialize;
use serde_json::Value;

use crate::ejson;

/// Why a number is in the ledger.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum RecordedKind {
    /// Voided on purpose (`mongo-seq void`, the package's `void`), with a reason.
    Void,
    /// The document that held it was deleted (recorded by a gapless trigger).
    Deleted,
}

/// One ledger entry, as much as the audit needs of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordedEntry {
    pub counter_id: String,
    pub number: i64,
    pub kind: RecordedKind,
    pub reason: String,
}

impl RecordedEntry {
    /// Reads a stored entry; `Err` says what is wrong with it (a phrase for a report).
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
        let kind = match document.get("kind").and_then(Value::as_str) {
            Some("void") => RecordedKind::Void,
            Some("deleted") => RecordedKind::Deleted,
            _ => return Err("`kind` is neither \"void\" nor \"deleted\"".to_owned()),
        };
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_entries_as_stored_and_refuses_what_explains_nothing() {
        let entry = json!({"_id": {"counter": "inv/2026", "number": {"$numberLong": "9007199254740993"}},
            "sequence": "inv", "kind": "void", "reason": "printer jam", "at": {"$date": 0}, "by": "ops"});
        let read = RecordedEntry::read(&entry).unwrap();
        assert_eq!(read.number, 9_007_199_254_740_993);
        assert_eq!(read.kind, RecordedKind::Void);
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
}
