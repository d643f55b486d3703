//! Dead letters: documents a trigger cannot number, recorded so that nothing is left
//! unnumbered silently. What is one is decided here, from a plan's notes ([`DeadLetter::of_note`]):
//! a scope value missing or unusable, a period date that is not a date (`Note::Skipped`), a
//! value in the number field that is not an integer (`Note::NotANumber`). The sidecar stores
//! them, retries them, and says when one is resolved; the commands are built here.
//!
//! A dead letter lives in the trigger's state collection, beside its state document:
//! `{_id: {trigger, document: <the document's _id>}, kind: "deadLetter", code, reason, since,
//! lastAttempt, attempts[, resolvedAt, resolution]}`. Recording one again (a replay, a retry
//! that fails again) updates the reason and counts the attempt; `since` stays. A resolved dead
//! letter is kept, with `resolvedAt` and why (`"numbered"`, `"gone"`): the record of how long a
//! document waited is part of the account. Waiting = no `resolvedAt`.

use serde::Serialize;
use serde_json::{json, Value};

use crate::ejson;
use crate::error::SeqError;
use crate::numbering::batch::{BatchReport, Leaseless, NumberBatch, NumberBatchMachine};
use crate::numbering::spec::NumberingSpec;
use crate::protocol::command::{Collection, Command, QueryOptions, ReturnDocument, UpdateOptions};
use crate::protocol::machine::MachinePlan;
use crate::protocol::note::Note;
use crate::protocol::plan::{Plan, Step};
use crate::protocol::reply::Reply;

/// The `kind` of a dead letter in the state collection.
pub const DEAD_LETTER_KIND: &str = "deadLetter";

/// Code of a dead letter whose number field holds something else than an integer.
pub const NOT_A_NUMBER: &str = "NOT_A_NUMBER";

/// A document a trigger cannot number, and why.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DeadLetter {
    /// The document's `_id` (Extended JSON).
    pub id: Value,
    /// The core's error code (`MISSING_SCOPE_FIELD`, `INVALID_DATE`, …) or [`NOT_A_NUMBER`].
    pub code: String,
    pub reason: String,
}

impl DeadLetter {
    /// The dead letter a plan's note reports, if it reports one.
    pub fn of_note(note: &Note) -> Option<Self> {
        match note {
            Note::Skipped { id, error } => Some(Self {
                id: id.clone(),
                code: error.code().to_owned(),
                reason: error.to_string(),
            }),
            Note::NotANumber { id, field, reason } => Some(Self::not_a_number(id, field, reason)),
            _ => None,
        }
    }

    /// The dead letter a delivered document is by its number field alone: a value there that
    /// is not an integer. A batch that first drops the documents numbered meanwhile (after a
    /// restart) drops it without a note, as it drops every document with a value there: the
    /// shell asks this of each document it delivers, so none is left out silently.
    pub fn of_document(numbering: &NumberingSpec, document: &Value) -> Option<Self> {
        let id = document.get("_id")?;
        let reason = ejson::read_i64(numbering.stored(document)?).err()?;
        Some(Self::not_a_number(id, numbering.field(), &reason))
    }

    fn not_a_number(id: &Value, field: &str, reason: &str) -> Self {
        Self {
            id: id.clone(),
            code: NOT_A_NUMBER.to_owned(),
            reason: format!("field `{field}` {reason}"),
        }
    }
}

fn key(trigger: &str, id: &Value) -> Value {
    ejson::object([
        ("trigger", Value::String(trigger.to_owned())),
        ("document", id.clone()),
    ])
}

fn date(ms: i64) -> Value {
    json!({ "$date": ejson::long(ms) })
}

/// Records (or counts another attempt of) `letter` of `trigger` at `now_ms`: an upsert, so a
/// replayed batch records nothing twice. A resolved record that fails again waits again.
pub fn record_dead_letter(trigger: &str, letter: &DeadLetter, now_ms: i64) -> Command {
    Command::FindOneAndUpdate {
        collection: Collection::Leases,
        filter: json!({ "_id": key(trigger, &letter.id) }),
        update: json!({
            "$set": {
                "kind": DEAD_LETTER_KIND,
                "code": letter.code,
                "reason": letter.reason,
                "lastAttempt": date(now_ms),
            },
            "$setOnInsert": { "since": date(now_ms) },
            "$inc": { "attempts": ejson::long(1) },
            "$unset": { "resolvedAt": "", "resolution": "" },
        }),
        options: UpdateOptions {
            upsert: true,
            return_document: ReturnDocument::After,
        },
    }
}

/// Why a dead letter stopped waiting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Resolution {
    /// Its document has a number now (repaired and numbered, or numbered by hand).
    Numbered,
    /// Its document no longer exists, or no longer matches the trigger.
    Gone,
}

impl Resolution {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Numbered => "numbered",
            Self::Gone => "gone",
        }
    }
}

/// Marks the dead letters of `trigger` for the documents `ids` resolved at `now_ms`.
pub fn resolve_dead_letters(
    trigger: &str,
    ids: &[Value],
    resolution: Resolution,
    now_ms: i64,
) -> Command {
    let keys: Vec<Value> = ids.iter().map(|id| key(trigger, id)).collect();
    Command::UpdateMany {
        collection: Collection::Leases,
        filter: json!({ "_id": { "$in": keys }, "resolvedAt": { "$exists": false } }),
        update: json!({ "$set": {
            "resolvedAt": date(now_ms),
            "resolution": resolution.as_str(),
        } }),
    }
}

/// The dead letters of `trigger` still waiting (documents: `_id`, `code`, `reason`, `since`,
/// `attempts`), oldest first.
pub fn waiting_dead_letters(trigger: &str) -> Command {
    Command::Find {
        collection: Collection::Leases,
        filter: json!({
            "_id.trigger": trigger,
            "kind": DEAD_LETTER_KIND,
            "resolvedAt": { "$exists": false },
        }),
        options: QueryOptions {
            sort: Some(json!({ "since": 1 })),
            ..QueryOptions::default()
        },
        after_cluster_time: None,
    }
}

/// The state document of `trigger` and its dead letters still waiting, in one read: a holder
/// learns at the start of a session whether it has dead letters to retry without a command of
/// its own. The state document is the one whose `_id` is the trigger id.
pub fn state_and_waiting_dead_letters(trigger: &str) -> Command {
    Command::Find {
        collection: Collection::Leases,
        filter: json!({ "$or": [
            { "_id": trigger },
            {
                "_id.trigger": trigger,
                "kind": DEAD_LETTER_KIND,
                "resolvedAt": { "$exists": false },
            },
        ] }),
        options: QueryOptions::default(),
        after_cluster_time: None,
    }
}

/// The document `_id` a stored dead letter is for.
pub fn dead_letter_document(stored: &Value) -> Option<&Value> {
    stored.get("_id")?.get("document")
}

/// A retry of dead letters' documents: a batch of a lease holder (`epoch`), or, without a lease
/// (`mongo-seq retry`), a batch like the package's `assign` (every write conditioned on the
/// document still unnumbered, reservations without an epoch): refused for a gapless trigger,
/// whose numbers only its lease holder may give.
#[derive(Debug, Clone)]
pub enum RetryBatch {
    Held(Box<NumberBatch>),
    Leaseless(Box<MachinePlan<NumberBatchMachine<Leaseless>>>),
}

impl RetryBatch {
    /// The documents (as read, Extended JSON) numbered again, as far as they can be: those still
    /// unusable come back as notes (`Skipped`, `NotANumber`), dead letters again.
    pub fn new(
        numbering: &NumberingSpec,
        documents: Vec<Value>,
        epoch: Option<i64>,
    ) -> Result<Self, SeqError> {
        Ok(match epoch {
            Some(epoch) => Self::Held(Box::new(NumberBatch::dated(
                numbering,
                documents,
                &[],
                epoch,
                false,
                None,
            )?)),
            None => Self::Leaseless(Box::new(MachinePlan::build(
                numbering,
                documents,
                &[],
                None,
                false,
                None,
            )?)),
        })
    }
}

impl Plan for RetryBatch {
    type Output = BatchReport;

    fn current_step(&self) -> Result<Step<BatchReport>, SeqError> {
        match self {
            Self::Held(plan) => plan.current_step(),
            Self::Leaseless(plan) => plan.current_step(),
        }
    }

    fn feed(&mut self, reply: Reply) -> Result<Step<BatchReport>, SeqError> {
        match self {
            Self::Held(plan) => plan.feed(reply),
            Self::Leaseless(plan) => plan.feed(reply),
        }
    }

    fn take_step(&mut self) -> Result<Step<BatchReport>, SeqError> {
        match self {
            Self::Held(plan) => plan.take_step(),
            Self::Leaseless(plan) => plan.take_step(),
        }
    }

    fn feed_and_take(&mut self, reply: Reply) -> Result<Step<BatchReport>, SeqError> {
        match self {
            Self::Held(plan) => plan.feed_and_take(reply),
            Self::Leaseless(plan) => plan.feed_and_take(reply),
        }
    }

    fn drain_notes(&mut self) -> Vec<crate::protocol::note::Note> {
        match self {
            Self::Held(plan) => plan.drain_notes(),
            Self::Leaseless(plan) => plan.drain_notes(),
        }
    }

    fn latest_write(&self) -> Option<crate::protocol::concern::ClusterTime> {
        match self {
            Self::Held(plan) => plan.latest_write(),
            Self::Leaseless(plan) => plan.latest_write(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::SeqError;

    #[test]
    fn the_notes_that_leave_a_document_unnumbered_are_dead_letters() {
        let skipped = Note::Skipped {
            id: json!(1),
            error: SeqError::invalid_argument("scope", "missing"),
        };
        assert_eq!(
            DeadLetter::of_note(&skipped).map(|d| d.code),
            Some("INVALID_ARGUMENT".to_owned())
        );
        let nan = Note::NotANumber {
            id: json!(2),
            field: "seq".into(),
            reason: "is a string".into(),
        };
        assert_eq!(
            DeadLetter::of_note(&nan).map(|d| d.reason),
            Some("field `seq` is a string".to_owned())
        );
        let numbering =
            NumberingSpec::from_json(&json!({"sequence": {"name": "s"}, "field": "n"})).unwrap();
        let of = |d: Value| DeadLetter::of_document(&numbering, &d).map(|l| l.reason);
        assert_eq!(
            of(json!({"_id": 1, "n": "x"})),
            Some("field `n` must be an integer, got string \"x\"".to_owned())
        );
        assert_eq!(of(json!({"_id": 1, "n": 5})), None);
        assert_eq!(of(json!({"_id": 1})), None);
        let other = Note::IntentCompleted {
            counter_id: "c".into(),
        };
        assert_eq!(DeadLetter::of_note(&other), None);
    }

    #[test]
    fn a_record_is_an_upsert_keyed_by_trigger_and_document() {
        let letter = DeadLetter {
            id: json!({"$oid": "0123456789abcdef01234567"}),
            code: "X".into(),
            reason: "r".into(),
        };
        let Command::FindOneAndUpdate {
            filter, options, ..
        } = record_dead_letter("t", &letter, 5)
        else {
            panic!("not an update");
        };
        assert!(options.upsert);
        assert_eq!(
            filter,
            json!({"_id": {"trigger": "t", "document": {"$oid": "0123456789abcdef01234567"}}})
        );
    }
}
