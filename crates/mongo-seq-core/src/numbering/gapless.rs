//! Gapless numbering of a group of documents, built on the intent protocol of
//! [`crate::numbering::intent`] ([`GaplessReserve`], [`FinishIntent`],
//! [`plan_completion`](crate::numbering::intent::plan_completion)).
//!
//! ```text
//! NumberGapless(numbering, counterId, ids, E)          at most PENDING_ROUNDS rounds:
//!   GaplessReserve(ids) ─┬─ reserved {range, intent} ─► update, ordered: true, in intent order:
//!                        │     q {_id, field: {$exists: false}}, u {$set: {field: first + i·step, formatField}}
//!                        │     ├─ every statement matched, none refused ─► FinishIntent(seq = range.last)
//!                        │     └─ otherwise (deleted meanwhile, number taken) ─► CompleteIntent(taken)
//!                        ├─ pending {intent} ─► CompleteIntent(that intent) → find the ids still
//!                        │     unnumbered {_id: {$in: ids}, field: {$exists: false}} → next round
//!                        │     (read causally after the events: see below)
//!                        └─ fenced ─► FENCED
//! CompleteIntent(intent, taken, E)                    at most COMPLETION_ROUNDS rounds:
//!   claim: findAndModify {_id, intent.{first,count,ids,epoch}, epoch ≤ E} $set {epoch: E}
//!     └─ no match → read the counter: epoch > E ─► FENCED; intent gone ─► done (note);
//!                   the same intent (a stale read) → claim again
//!   stamp: updateMany {_id: {$in: intent.ids}} $max {fenceField: E}
//!   find {_id: {$in: intent.ids}[, $or: [{field: {$exists: true}}, condition]]}
//!        projection {_id: 1, field: 1, fenceField: 1}  (with a condition, an unnumbered
//!        document that stopped matching is gone, like a deleted one)
//!   → a stamp > E ─► FENCED (a later holder completes this intent)
//!   → plan_completion(found, taken) ─┬─ nothing to write ─► FinishIntent(seq) ─► done
//!                                    └─ assignments ─► update, ordered: true
//!                                          q {_id, field: previous | {$exists: false},
//!                                             fenceField: ≤ E}, u {$set}
//!                                          11000 on a statement: that number is taken (unless
//!                                          one of the intent's own documents still holds it)
//!                                       → next round
//! CompletePending(numbering, E): find {$or: counters of the sequence, intent: {$exists: true}}
//!   → a counter's epoch > E ─► FENCED
//!   → CompleteIntent each pending intent, in the order found (when a holder takes over)
//! FinishIntent: finished / alreadyFinished (note) / fenced (FENCED)
//! ```
//!
//! Why the claim and the stamp (`fenceField` = `<field>Epoch`): a holder that lost its lease
//! while completing (frozen, then woken) must not move a number of an intent its successor
//! completed; a read of the counter may be stale, and a move touches only the document.
//!
//! The reads that drop documents or find them gone (the recheck, the completion's read) are,
//! for a batch's documents, `majority` reads at or after the newest event's `clusterTime` and
//! the `operationTime` of the plan's own latest write (its numbers, its moves), so whichever
//! member answers has both ([`crate::protocol::concern`]); a new holder completing a pending
//! intent (no events) reads `local`, on the primary, after its own majority-acknowledged claim
//! and stamp.
//!
//! Write replies: `writeConcernError` → `WRITE_CONCERN_FAILED`; a write error other than 11000
//! → `WRITE_FAILED`. Running out of rounds → `TOO_MANY_RETRIES`. Outputs count the documents
//! that received their first number.

use std::collections::BTreeMap;

use serde_json::{json, Value};

use crate::error::SeqError;
use crate::numbering::complete::{
    fenced, finished, ordered_update, out_of_rounds, read_applied, CompleteIntent,
};
use crate::numbering::intent::{
    FinishIntent, FinishOutcome, GaplessReservation, GaplessReserve, Intent,
};
use crate::numbering::sealing::{self, CounterSeal, Issued};
use crate::numbering::spec::{id_key, id_keys, NumberingSpec};
use crate::protocol::command::QueryOptions;
use crate::protocol::concern::{advance_after_write, anchored_find, ClusterTime};
use crate::protocol::machine::{launch, resume, Machine, MachinePlan};
use crate::protocol::note::Note;
use crate::protocol::plan::Step;
use crate::protocol::reply::Reply;
use crate::sequence::period::Period;

/// How many pending intents one group's reservation completes before giving up.
pub const PENDING_ROUNDS: u32 = 5;

// ------------------------------------------------------------------------------ NumberGapless

/// Numbers one group of a counter without gaps; see the module docs. Done with the number of
/// documents that got a number (including those of a pending intent completed on the way).
pub type NumberGapless = MachinePlan<NumberGaplessMachine>;

#[derive(Debug, Clone)]
enum GroupPhase {
    Idle,
    Reserve(Box<GaplessReserve>),
    Write {
        intent: Intent,
        last: i64,
        numbers: Vec<i64>,
        seal: Option<CounterSeal>,
    },
    Finish(Box<FinishIntent>),
    /// Completing an intent: our own (then done) or a pending one (then look again).
    Complete {
        plan: Box<CompleteIntent>,
        pending: bool,
    },
    Recheck,
}

/// The state of a [`NumberGapless`].
#[derive(Debug, Clone)]
pub struct NumberGaplessMachine {
    numbering: NumberingSpec,
    counter_id: String,
    /// The counter's period (a periodic sequence's), for the formatted ids.
    period: Option<Period>,
    ids: Vec<Value>,
    /// A sealed series': the documents as delivered, by `_id` key (their sealed values).
    documents: BTreeMap<String, Value>,
    epoch: i64,
    /// The events' newest cluster time, then its own latest write's: the reads that drop
    /// documents are causally after both.
    after: Option<ClusterTime>,
    rounds: u32,
    numbered: u64,
    notes: Vec<Note>,
    phase: GroupPhase,
}

impl NumberGapless {
    /// Numbers `ids` (in this order) from counter `counter_id` for a holder of `epoch`;
    /// `after`: the newest cluster time of the events that delivered them.
    pub fn new(
        numbering: &NumberingSpec,
        counter_id: &str,
        ids: Vec<Value>,
        epoch: i64,
        after: Option<ClusterTime>,
    ) -> Result<Self, SeqError> {
        Self::with_documents(numbering, counter_id, ids, Vec::new(), epoch, after)
    }

    /// [`NumberGapless::new`] with the documents as the events delivered them: a sealed
    /// series seals their values once their numbers are final.
    pub fn with_documents(
        numbering: &NumberingSpec,
        counter_id: &str,
        ids: Vec<Value>,
        documents: Vec<Value>,
        epoch: i64,
        after: Option<ClusterTime>,
    ) -> Result<Self, SeqError> {
        let documents = documents
            .into_iter()
            .filter_map(|d| Some((id_key(d.get("_id")?), d)))
            .collect();
        let mut machine = NumberGaplessMachine {
            numbering: numbering.clone(),
            counter_id: counter_id.to_owned(),
            period: numbering.sequence().period_of_counter_id(counter_id),
            ids,
            documents,
            epoch,
            after,
            rounds: 0,
            numbered: 0,
            notes: Vec::new(),
            phase: GroupPhase::Idle,
        };
        let first = machine.round();
        Ok(MachinePlan::begin(machine, first))
    }
}

impl NumberGaplessMachine {
    fn round(&mut self) -> Result<Step<u64>, SeqError> {
        if self.rounds >= PENDING_ROUNDS {
            return Err(out_of_rounds(
                "gapless numbering (an intent was pending each time)",
                &self.counter_id,
                self.rounds,
            ));
        }
        if self.ids.is_empty() {
            return Ok(Step::Done(self.numbered));
        }
        self.rounds = self.rounds.saturating_add(1);
        let plan = GaplessReserve::new(
            self.numbering.sequence(),
            &self.counter_id,
            self.ids.clone(),
            self.epoch,
        )?;
        launch(plan, &mut self.notes, |plan| {
            self.phase = GroupPhase::Reserve(plan);
        })?
        .and_then(|reservation| self.on_reservation(reservation))
    }

    fn count(&mut self, numbered: u64) {
        self.numbered = self.numbered.saturating_add(numbered);
    }

    fn on_reservation(&mut self, reservation: GaplessReservation) -> Result<Step<u64>, SeqError> {
        match reservation {
            GaplessReservation::Reserved {
                range,
                intent,
                seal,
            } => {
                let mut numbers = Vec::new();
                let mut updates = Vec::new();
                for (index, id) in (0u64..).zip(&intent.ids) {
                    if let Some(number) = range.get(index) {
                        updates.push(self.numbering.statement(
                            id,
                            number,
                            None,
                            self.period.as_ref(),
                        ));
                        numbers.push(number);
                    }
                }
                // Mutant (simulator only): seals written with numbers that are not final yet.
                if crate::mutants::active(crate::mutants::Mutant::SealBeforeFinal) {
                    self.seal_early(&mut updates, &intent, &numbers, seal.as_ref())?;
                }
                self.phase = GroupPhase::Write {
                    intent,
                    last: range.last,
                    numbers,
                    seal,
                };
                Ok(Step::Command(ordered_update(updates)))
            }
            GaplessReservation::Pending { intent } => {
                self.notes.push(Note::CompletingIntent {
                    counter_id: self.counter_id.clone(),
                    first: intent.first,
                    count: intent.count,
                    epoch: intent.epoch,
                    before_reserving: true,
                });
                self.complete(&intent, Vec::new(), true)
            }
            GaplessReservation::Fenced { counter_epoch } => {
                Err(fenced(&self.counter_id, self.epoch, counter_epoch))
            }
        }
    }

    fn complete(
        &mut self,
        intent: &Intent,
        taken: Vec<i64>,
        pending: bool,
    ) -> Result<Step<u64>, SeqError> {
        let plan = CompleteIntent::new(
            &self.numbering,
            &self.counter_id,
            intent,
            taken,
            self.epoch,
            self.after,
        )?;
        launch(plan, &mut self.notes, |plan| {
            self.phase = GroupPhase::Complete { plan, pending };
        })?
        .and_then(|numbered| self.on_completed(numbered, pending))
    }

    fn on_completed(&mut self, numbered: u64, pending: bool) -> Result<Step<u64>, SeqError> {
        self.count(numbered);
        if !pending {
            return Ok(Step::Done(self.numbered));
        }
        self.notes.push(Note::IntentCompleted {
            counter_id: self.counter_id.clone(),
        });
        // The completed intent may have numbered some of ours (a replayed batch).
        self.phase = GroupPhase::Recheck;
        Ok(Step::Command(anchored_find(
            self.numbering.unnumbered_filter(&self.ids),
            QueryOptions::projection(json!({ "_id": 1 })),
            self.after,
        )))
    }

    fn on_written(
        &mut self,
        reply: Reply,
        intent: Intent,
        last: i64,
        numbers: &[i64],
        seal: Option<CounterSeal>,
    ) -> Result<Step<u64>, SeqError> {
        let applied = read_applied(reply, numbers, &self.counter_id, &mut self.notes)?;
        self.count(applied.modified);
        let all = u64::try_from(numbers.len()).unwrap_or(u64::MAX);
        if applied.matched == all && applied.taken.is_empty() {
            let plan = FinishIntent::sealing(
                &self.numbering,
                &self.counter_id,
                &intent,
                last,
                self.epoch,
                seal,
                self.issued(&intent, numbers)?,
            )?;
            launch(plan, &mut self.notes, |plan| {
                self.phase = GroupPhase::Finish(plan);
            })?
            .and_then(|outcome| self.on_finished(outcome))
        } else {
            // A document was deleted (or numbered otherwise) since we looked, or a number is
            // held by a document inserted with it: settle it now.
            self.complete(&intent, applied.taken, false)
        }
    }

    fn on_finished(&mut self, outcome: FinishOutcome) -> Result<Step<u64>, SeqError> {
        finished(outcome, &self.counter_id, self.epoch, &mut self.notes)?;
        Ok(Step::Done(self.numbered))
    }

    /// The intent's documents with the numbers they now hold, as delivered (a sealed series';
    /// empty otherwise).
    fn issued(&self, intent: &Intent, numbers: &[i64]) -> Result<Vec<Issued>, SeqError> {
        if !self.numbering.sequence().sealed() {
            return Ok(Vec::new());
        }
        intent
            .ids
            .iter()
            .zip(numbers)
            .map(|(id, &number)| {
                let document = self.documents.get(&id_key(id)).cloned().ok_or_else(|| {
                    SeqError::invalid_argument(
                        "documents",
                        "a sealed series' batch needs each document as delivered",
                    )
                })?;
                Ok(Issued {
                    id: id.clone(),
                    number,
                    document,
                })
            })
            .collect()
    }

    /// The mutant's seals, in the numbering statements (see [`Mutant::SealBeforeFinal`]).
    ///
    /// [`Mutant::SealBeforeFinal`]: crate::mutants::Mutant::SealBeforeFinal
    fn seal_early(
        &self,
        updates: &mut [crate::protocol::command::UpdateStatement],
        intent: &Intent,
        numbers: &[i64],
        seal: Option<&CounterSeal>,
    ) -> Result<(), SeqError> {
        let Some(counter) = seal else { return Ok(()) };
        let issued = self.issued(intent, numbers)?;
        let seals = sealing::chain(
            &self.numbering,
            &self.counter_id,
            counter.head.as_deref(),
            &issued,
        )?;
        for (update, pending) in updates.iter_mut().zip(&seals) {
            if let Some(Value::Object(set)) = update.update.get_mut("$set") {
                set.insert(
                    self.numbering.seal_field(),
                    sealing::seal_document(&pending.seal),
                );
            }
        }
        Ok(())
    }
}

impl Machine for NumberGaplessMachine {
    type Output = u64;

    fn on_reply(&mut self, reply: Reply) -> Result<Step<u64>, SeqError> {
        // Its later reads (a completion's, the recheck) see its own writes, a completion's too.
        advance_after_write(&mut self.after, reply.operation_time());
        let notes = &mut self.notes;
        match std::mem::replace(&mut self.phase, GroupPhase::Idle) {
            GroupPhase::Reserve(plan) => resume(plan, reply, notes, |plan| {
                self.phase = GroupPhase::Reserve(plan);
            })?
            .and_then(|reservation| self.on_reservation(reservation)),
            GroupPhase::Write {
                intent,
                last,
                numbers,
                seal,
            } => self.on_written(reply, intent, last, &numbers, seal),
            GroupPhase::Finish(plan) => resume(plan, reply, notes, |plan| {
                self.phase = GroupPhase::Finish(plan);
            })?
            .and_then(|outcome| self.on_finished(outcome)),
            GroupPhase::Complete { plan, pending } => resume(plan, reply, notes, |plan| {
                self.phase = GroupPhase::Complete { plan, pending };
            })?
            .and_then(|numbered| self.on_completed(numbered, pending)),
            GroupPhase::Recheck => {
                let open = id_keys(&reply.into_documents("find")?);
                self.ids.retain(|id| open.contains(&id_key(id)));
                self.round()
            }
            GroupPhase::Idle => Err(SeqError::unexpected_reply("no command is pending")),
        }
    }

    fn drain_notes(&mut self) -> Vec<Note> {
        std::mem::take(&mut self.notes)
    }
}
