//! Notes: what a plan reports while it runs, for the caller's logs and metrics.
//!
//! The protocol's decisions are the core's; saying them is the shell's. A plan that decides
//! something worth a log line or a metric (a document skipped, a number renumbered, a pending
//! intent completed) records a [`Note`]; the caller takes them with
//! [`Plan::drain_notes`](crate::Plan::drain_notes) after constructing the plan and after every
//! `feed`, so they arrive when they happen, also when the plan later fails. The level each
//! deserves is in its docs. Serialized with a `note` tag, camelCase fields.

use serde::Serialize;
use serde_json::Value;

use crate::error::SeqError;

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "note", rename_all = "camelCase")]
pub enum Note {
    /// Warning: a document cannot be numbered (a scope field missing or unusable); it is
    /// skipped and stays unnumbered.
    Skipped { id: Value, error: SeqError },
    /// Warning: a document arrived with a value in the number field that is not an integer;
    /// it is left as it is.
    #[serde(rename_all = "camelCase")]
    NotANumber {
        id: Value,
        field: String,
        reason: String,
    },
    /// Warning: a number a document arrived with could not move its counter (it lies outside
    /// the sequence bounds); the counter is left as it is.
    #[serde(rename_all = "camelCase")]
    SeedRefused {
        counter_id: String,
        value: i64,
        error: SeqError,
    },
    /// Warning: the unique index refused a reserved number (a document inserted with that
    /// number holds it); the document is renumbered (`attempt` = the write that collided).
    #[serde(rename_all = "camelCase")]
    Collision {
        id: Value,
        counter_id: String,
        number: i64,
        attempt: u32,
    },
    /// Info: a gapless intent left pending is being completed, found at the start of a session
    /// (`beforeReserving: false`) or by a reservation of the counter (`true`).
    #[serde(rename_all = "camelCase")]
    CompletingIntent {
        counter_id: String,
        first: i64,
        count: u64,
        epoch: i64,
        before_reserving: bool,
    },
    /// A pending intent (of a [`Note::CompletingIntent`]) was completed: count it.
    #[serde(rename_all = "camelCase")]
    IntentCompleted { counter_id: String },
    /// Info: completing an intent skipped documents deleted or numbered otherwise meanwhile;
    /// the counter is set to the last number used (`seq`).
    #[serde(rename_all = "camelCase")]
    IntentSettled {
        counter_id: String,
        missing: u64,
        foreign: u64,
        seq: i64,
    },
    /// Info (and a metric): numbers written past a document deleted meanwhile move down.
    #[serde(rename_all = "camelCase")]
    Renumbered { counter_id: String, count: u64 },
    /// Warning: a number of a gapless intent is held by another document (inserted with it);
    /// it is skipped.
    #[serde(rename_all = "camelCase")]
    NumberTaken { counter_id: String, number: i64 },
    /// Warning: the intent was already completed by another instance.
    #[serde(rename_all = "camelCase")]
    AlreadyFinished { counter_id: String },
    /// Warning: the trigger's counters carry an epoch (`highest`) at or above the lease's new
    /// `epoch` (the lease document is younger than the counters): the epoch is raised.
    #[serde(rename_all = "camelCase")]
    EpochRaised { epoch: i64, highest: i64 },
}
