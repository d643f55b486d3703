//! Gapless numbering without transactions: the **intent** protocol.
//!
//! The reservation records what it is for in the same atomic single-document update that takes
//! the numbers: the counter becomes
//! `{ _id, seq, epoch, intent: { first, count, ids: [<_id>…], epoch } }`. While an intent is
//! pending no other reservation can take numbers from that counter (their filter requires
//! `intent` to be absent). The caller then writes `first + i·step` to `ids[i]` (only where the
//! document has no number yet, in intent order), and clears the intent with [`FinishIntent`].
//! Whoever holds the trigger next and finds an intent still pending (the previous holder died
//! mid-batch, or a document of the batch was deleted while it was written) completes it with
//! [`plan_completion`]: documents deleted meanwhile are skipped, the surviving ones get
//! `first, first + step, …` in intent order (a number already written moves down when a document
//! before it was deleted before the intent was cleared), and the counter is set to the last
//! number actually used, in one update that also clears the intent. A number is final once its
//! intent is cleared.
//!
//! ```text
//! GaplessReserve:
//! findOne {_id}
//!  ├─ none ───────────────► insertOne {_id, seq: last, epoch: E, intent, definition: D} ─ duplicateKey ─► read again
//!  ├─ another definition ─► SEQUENCE_CONFLICT
//!  ├─ epoch > E ──────────► done: fenced (a later lease holder touched the counter)
//!  ├─ intent pending ─────► done: pending {intent}   (complete it, then reserve again)
//!  ├─ fewer than n left ──► SEQUENCE_EXHAUSTED / OVERFLOW (never a partial batch)
//!  └─ seq S ──────────────► findOneAndUpdate {_id, seq: S, intent: absent, epoch ≤ E, $or: [definition absent, D]}
//!                               {$set: {seq: S + n·step, epoch: E, intent: {first: S+step, …}, definition: D}}
//!                            ├─ document ─► done: reserved {range, intent}
//!                            └─ none ─────► read again (at most 10 times)
//! FinishIntent:
//! findOneAndUpdate {_id, intent.first, intent.count, epoch ≤ E} {$set: {seq, epoch: E}, $unset: {intent}}
//!  ├─ document ─► done: finished
//!  └─ none ─► findOne {_id} ─┬─ epoch > E ─────────────► done: fenced
//!                            ├─ other / no intent ─────► done: alreadyFinished
//!                            └─ still ours ────────────► retry
//! ```
//!
//! The reservation carries the counter's [definition](crate::counter::definition) (with
//! `gapless`): checked on its read, in its write's filter and `$set`, in the inserted counter.
//! Completing and finishing an intent only move numbers a checked reservation took, fenced by
//! its epoch and the intent: they carry no definition.
//!
//! The counter's `seq` is written with `$set` (compare-and-set on the value read), so the intent
//! can name its first number.

use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

use crate::counter::definition::CounterDefinition;
use crate::counter::document::read_spec_counter;
use crate::counter::range::ReservedRange;
use crate::counter::reservation::not_an_array;
use crate::ejson;
use crate::error::SeqError;
use crate::lease::document::epoch_condition;
use crate::protocol::command::{Collection, Command, ReturnDocument, UpdateOptions};
use crate::protocol::machine::{Machine, MachinePlan};
use crate::protocol::plan::{Retries, Step};
use crate::protocol::reply::{unexpected, Reply};
use crate::sequence::options::SequenceSpec;
use crate::sequence::period::Period;

mod finish;
pub use finish::{FinishIntent, FinishIntentMachine, FinishOutcome};
mod reserve;
pub(crate) use reserve::read_command;
pub use reserve::{GaplessReservation, GaplessReserve, GaplessReserveMachine};

/// A pending intent as stored in a counter document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Intent {
    pub first: i64,
    pub count: u64,
    /// The documents' `_id`s (Extended JSON), in the order they get numbers.
    pub ids: Vec<Value>,
    /// Epoch of the holder that recorded it.
    pub epoch: i64,
}

impl Intent {
    /// The stored form (canonical int64s).
    pub fn to_document(&self) -> Value {
        json!({
            "first": ejson::long(self.first),
            "count": ejson::long(i64::try_from(self.count).unwrap_or(i64::MAX)),
            "ids": self.ids,
            "epoch": ejson::long(self.epoch),
        })
    }

    /// Whether `n` is one of the intent's numbers, and its position.
    pub(crate) fn position(&self, n: i64, step: i64) -> Option<u64> {
        let offset = i128::from(n).checked_sub(i128::from(self.first))?;
        let step = i128::from(step);
        if offset.checked_rem(step)? != 0 {
            return None;
        }
        let k = u64::try_from(offset.checked_div(step)?).ok()?;
        (k < self.count).then_some(k)
    }
}

/// The counter's `epoch` (0 when absent: a counter from before leases) and pending intent.
pub fn read_counter_extras(
    document: &Value,
    counter_id: &str,
) -> Result<(i64, Option<Intent>), SeqError> {
    let bad = |reason: String| SeqError::malformed_counter(counter_id, reason);
    let epoch = match document.get("epoch") {
        None | Some(Value::Null) => 0,
        Some(value) => ejson::read_i64(value).map_err(|r| bad(format!("field `epoch` {r}")))?,
    };
    let intent = match document.get("intent") {
        None | Some(Value::Null) => None,
        Some(Value::Object(map)) => Some(parse_intent(map).map_err(|r| {
            bad(format!(
                "malformed intent ({r}); it was left untouched: inspect and repair it by hand"
            ))
        })?),
        Some(other) => {
            return Err(bad(format!(
                "malformed intent: expected a document, got {}; it was left untouched",
                ejson::describe(other)
            )))
        }
    };
    Ok((epoch, intent))
}

fn parse_intent(map: &Map<String, Value>) -> Result<Intent, String> {
    let int = |key: &str| -> Result<i64, String> {
        let value = map.get(key).ok_or_else(|| format!("`{key}` is missing"))?;
        ejson::read_i64(value).map_err(|r| format!("`{key}` {r}"))
    };
    let first = int("first")?;
    let count = u64::try_from(int("count")?).map_err(|_| "`count` is negative".to_owned())?;
    let epoch = int("epoch")?;
    let ids = match map.get("ids") {
        Some(Value::Array(ids)) => ids.clone(),
        Some(other) => {
            return Err(format!(
                "`ids` must be an array, got {}",
                ejson::describe(other)
            ))
        }
        None => return Err("`ids` is missing".to_owned()),
    };
    if ids.len() as u64 != count || count == 0 {
        return Err(format!("`count` {count} does not match {} ids", ids.len()));
    }
    Ok(Intent {
        first,
        count,
        ids,
        epoch,
    })
}

/// One number to write: set `number` (and the formatted id) on document `id` where it has no
/// number yet, or, with `previous`, where it still holds `previous` (a number of the same
/// pending intent that must move down because a document before it was deleted meanwhile).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Assignment {
    pub id: Value,
    pub number: i64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub formatted: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub previous: Option<i64>,
}

/// What one document of an intent holds now, in the field its trigger numbers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Holds {
    /// No value: it waits for its number.
    Nothing,
    /// A number of the intent's own counter (the series its scope values and, for a series
    /// that resets, its period beside the number name).
    Number(i64),
    /// A number of another series (another period or scope values: numbered otherwise
    /// meanwhile, by an event placed in another period), or a value that is not a number.
    Elsewhere,
}

/// What completing an intent does.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Completion {
    /// Numbers still to write, in intent order.
    pub assignments: Vec<Assignment>,
    /// The counter's value once the intent is cleared: the last number used (or the number
    /// before `first` when none was).
    pub seq: i64,
    /// Intent documents that already carry their final number.
    pub already: u64,
    /// Intent documents that no longer exist (deleted before their number was final: skipped).
    pub missing: u64,
    /// Intent documents numbered otherwise meanwhile (a number outside the intent): left alone.
    pub foreign: u64,
    /// Assignments that move a number of this intent down (a document before it was deleted
    /// while the batch was being written).
    pub renumbered: u64,
}

/// Decides how to complete `intent`, given what its documents look like now: `found` lists the
/// documents that still exist as `(_id, what it holds)`; ids of the intent not in `found` were
/// deleted. The surviving documents, in intent order, get `first`,
/// `first + step`, … — those holding another number of this intent are moved to theirs, those
/// without one get theirs, documents holding a number outside the intent are left alone.
/// `taken` are numbers the unique index refused (another document holds them): they are
/// skipped, which leaves no gap since that document holds them. Apply the assignments in order
/// (`ordered: true`) and call again with what the documents look like then; when there is
/// nothing left to write, clear the intent with `seq` ([`FinishIntent`]). `period`: the
/// counter's (a periodic sequence's), for the formatted ids.
pub fn plan_completion(
    spec: &SequenceSpec,
    period: Option<&Period>,
    intent: &Intent,
    found: &[(Value, Holds)],
    taken: &[i64],
) -> Result<Completion, SeqError> {
    let step = spec.step();
    let mut completion = Completion {
        assignments: Vec::new(),
        seq: 0,
        already: 0,
        missing: 0,
        foreign: 0,
        renumbered: 0,
    };
    let mut next = intent.first;
    let advance = |n: i64| -> Result<i64, SeqError> {
        n.checked_add(step)
            .ok_or_else(|| SeqError::overflow("completing an intent"))
    };
    for id in &intent.ids {
        let Some((_, number)) = found.iter().find(|(found_id, _)| found_id == id) else {
            completion.missing = completion.missing.saturating_add(1);
            continue;
        };
        let current = match number {
            Holds::Nothing => None,
            Holds::Number(n) if intent.position(*n, step).is_some() => Some(*n),
            Holds::Number(_) | Holds::Elsewhere => {
                completion.foreign = completion.foreign.saturating_add(1);
                continue;
            }
        };
        while taken.contains(&next) {
            next = advance(next)?;
        }
        if !spec.in_bounds(next) {
            return Err(spec.exhausted("intent completion", Some(next), 1));
        }
        if current == Some(next) {
            completion.already = completion.already.saturating_add(1);
        } else {
            if current.is_some() {
                completion.renumbered = completion.renumbered.saturating_add(1);
            }
            completion.assignments.push(Assignment {
                id: id.clone(),
                number: next,
                formatted: spec.format_value(next, period),
                previous: current,
            });
        }
        next = advance(next)?;
    }
    completion.seq = next
        .checked_sub(step)
        .ok_or_else(|| SeqError::overflow("completing an intent"))?;
    completion.assignments = vacate_first(completion.assignments);
    Ok(completion)
}

/// Orders `assignments` so that a document holding a number moves before another takes that
/// number (an ordered `update` stops at the unique index's refusal otherwise, and the next round
/// plans the same). Numbers move down when a document of the intent is gone, and up when one
/// counted gone is back: an unnumbered document that stopped matching its trigger's condition
/// and matches again. Otherwise the intent's order is kept.
fn vacate_first(assignments: Vec<Assignment>) -> Vec<Assignment> {
    // Who holds each number that moves: assignment `holder[n]` vacates `n`.
    let holder: std::collections::BTreeMap<i64, usize> = assignments
        .iter()
        .enumerate()
        .filter_map(|(i, a)| Some((a.previous?, i)))
        .collect();
    let mut placed = vec![false; assignments.len()];
    let mut order = Vec::with_capacity(assignments.len());
    for start in 0..assignments.len() {
        // The chain start → the one vacating its number → …, placed from its far end.
        let mut chain = Vec::new();
        let mut at = Some(start);
        while let Some(i) = at.filter(|&i| placed.get(i) == Some(&false) && !chain.contains(&i)) {
            chain.push(i);
            at = assignments
                .get(i)
                .and_then(|a| holder.get(&a.number).copied());
        }
        for &i in chain.iter().rev() {
            if let Some(slot) = placed.get_mut(i) {
                *slot = true;
            }
            order.push(i);
        }
    }
    let mut slots: Vec<Option<Assignment>> = assignments.into_iter().map(Some).collect();
    order
        .into_iter()
        .filter_map(|i| slots.get_mut(i).and_then(Option::take))
        .collect()
}
