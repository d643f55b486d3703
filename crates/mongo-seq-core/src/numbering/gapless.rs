//! Gapless numbering of a group of documents, built on the intent protocol of
//! [`crate::numbering::intent`] ([`GaplessReserve`], [`FinishIntent`], [`plan_completion`]).
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
//!   find {_id: {$in: intent.ids}} projection {_id: 1, field: 1, fenceField: 1}
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
//! for a batch's documents, `majority` reads at or after the newest event's `clusterTime`
//! ([`crate::protocol::concern`]); a new holder completing a pending intent (no events) reads `local`,
//! after its own majority-acknowledged claim and stamp.
//!
//! Write replies: `writeConcernError` → `WRITE_CONCERN_FAILED`; a write error other than 11000
//! → `WRITE_FAILED`. Running out of rounds → `TOO_MANY_RETRIES`. Outputs count the documents
//! that received their first number.

use std::collections::VecDeque;

use serde::Serialize;
use serde_json::{json, Map, Value};

use crate::ejson;
use crate::error::SeqError;
use crate::lease::document::epoch_condition;
use crate::numbering::intent::{
    plan_completion, read_command, read_counter_extras, FinishIntent, FinishOutcome,
    GaplessReservation, GaplessReserve, Intent,
};
use crate::numbering::spec::{id_key, id_keys, stored_value, NumberingSpec};
use crate::protocol::command::{
    Collection, Command, QueryOptions, ReturnDocument, UpdateOptions, UpdateStatement,
};
use crate::protocol::concern::{anchored_find, ClusterTime};
use crate::protocol::machine::{launch, resume, Machine, MachinePlan};
use crate::protocol::note::Note;
use crate::protocol::plan::Step;
use crate::protocol::reply::{unexpected, Reply, DUPLICATE_KEY};

/// How many times a completion writes and looks again before giving up (each round settles
/// what the previous one could not: a deletion, a number taken by another document).
pub const COMPLETION_ROUNDS: u32 = 8;
/// How many pending intents one group's reservation completes before giving up.
pub const PENDING_ROUNDS: u32 = 5;

/// What one ordered `update` did.
struct Applied {
    matched: u64,
    modified: u64,
    /// Numbers the unique index refused (another document holds them).
    taken: Vec<i64>,
}

/// The `update` writing `statements` in order.
fn ordered_update(updates: Vec<UpdateStatement>) -> Command {
    Command::Update {
        collection: Collection::Documents,
        updates,
        ordered: true,
    }
}

/// Reads the reply to [`ordered_update`]; `numbers[i]` is the number statement `i` writes.
fn read_applied(
    reply: Reply,
    numbers: &[i64],
    counter_id: &str,
    notes: &mut Vec<Note>,
) -> Result<Applied, SeqError> {
    let result = reply.into_write_result("update")?;
    let mut taken = Vec::new();
    for error in result.write_errors {
        let number = usize::try_from(error.index)
            .ok()
            .and_then(|index| numbers.get(index));
        match number {
            Some(&number) if error.code == DUPLICATE_KEY => {
                notes.push(Note::NumberTaken {
                    counter_id: counter_id.to_owned(),
                    number,
                });
                taken.push(number);
            }
            _ => return Err(error.into()),
        }
    }
    Ok(Applied {
        matched: result.n,
        modified: result.n_modified,
        taken,
    })
}

/// What the end of a [`FinishIntent`] means for the holder.
fn finished(
    outcome: FinishOutcome,
    counter_id: &str,
    epoch: i64,
    notes: &mut Vec<Note>,
) -> Result<(), SeqError> {
    match outcome {
        FinishOutcome::Finished => Ok(()),
        FinishOutcome::AlreadyFinished => {
            notes.push(Note::AlreadyFinished {
                counter_id: counter_id.to_owned(),
            });
            Ok(())
        }
        FinishOutcome::Fenced { counter_epoch } => Err(fenced(counter_id, epoch, counter_epoch)),
    }
}

fn fenced(counter_id: &str, epoch: i64, counter_epoch: i64) -> SeqError {
    SeqError::Fenced {
        counter_id: counter_id.to_owned(),
        epoch,
        counter_epoch: Some(counter_epoch),
    }
}

/// Counts one more of a completion's rounds, or fails once [`COMPLETION_ROUNDS`] are spent.
fn spend_round(rounds: &mut u32, operation: &str, counter_id: &str) -> Result<(), SeqError> {
    if *rounds >= COMPLETION_ROUNDS {
        return Err(out_of_rounds(operation, counter_id, *rounds));
    }
    *rounds = rounds.saturating_add(1);
    Ok(())
}

fn out_of_rounds(operation: &str, counter_id: &str, rounds: u32) -> SeqError {
    SeqError::TooManyRetries {
        operation: operation.to_owned(),
        counter_id: counter_id.to_owned(),
        attempts: rounds,
    }
}

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
    ids: Vec<Value>,
    epoch: i64,
    /// The events' newest cluster time: the reads that drop documents are causally after it.
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
        let mut machine = NumberGaplessMachine {
            numbering: numbering.clone(),
            counter_id: counter_id.to_owned(),
            ids,
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
            GaplessReservation::Reserved { range, intent } => {
                let mut numbers = Vec::new();
                let mut updates = Vec::new();
                for (index, id) in (0u64..).zip(&intent.ids) {
                    if let Some(number) = range.get(index) {
                        updates.push(self.numbering.statement(id, number, None));
                        numbers.push(number);
                    }
                }
                self.phase = GroupPhase::Write {
                    intent,
                    last: range.last,
                    numbers,
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
    ) -> Result<Step<u64>, SeqError> {
        let applied = read_applied(reply, numbers, &self.counter_id, &mut self.notes)?;
        self.count(applied.modified);
        let all = u64::try_from(numbers.len()).unwrap_or(u64::MAX);
        if applied.matched == all && applied.taken.is_empty() {
            let plan = FinishIntent::new(
                self.numbering.sequence(),
                &self.counter_id,
                &intent,
                last,
                self.epoch,
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
}

impl Machine for NumberGaplessMachine {
    type Output = u64;

    fn on_reply(&mut self, reply: Reply) -> Result<Step<u64>, SeqError> {
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
            } => self.on_written(reply, intent, last, &numbers),
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

// ----------------------------------------------------------------------------- CompleteIntent

/// Completes a pending intent; see the module docs. Done with the number of documents that
/// got their first number.
pub type CompleteIntent = MachinePlan<CompleteIntentMachine>;

#[derive(Debug, Clone)]
enum CompletionPhase {
    Idle,
    Claim,
    /// The claim matched nothing: is the intent gone, or are we fenced?
    Check,
    Stamp,
    Read,
    Write {
        found: Vec<(Value, Option<Value>)>,
        numbers: Vec<i64>,
        renumbered: u64,
    },
    Finish(Box<FinishIntent>),
}

/// The state of a [`CompleteIntent`].
#[derive(Debug, Clone)]
pub struct CompleteIntentMachine {
    numbering: NumberingSpec,
    counter_id: String,
    intent: Intent,
    epoch: i64,
    /// The cluster time its reads of the documents are causally after (`None`: a pending
    /// intent completed by a new holder, read `local` right after its own claim and stamp).
    after: Option<ClusterTime>,
    taken: Vec<i64>,
    claims: u32,
    rounds: u32,
    modified: u64,
    notes: Vec<Note>,
    phase: CompletionPhase,
}

impl CompleteIntent {
    /// Completes `intent` of counter `counter_id`; `taken`: numbers already known to be held
    /// by other documents; `after`: the cluster time of the events that delivered the intent's
    /// documents, when the completion is a batch's.
    pub fn new(
        numbering: &NumberingSpec,
        counter_id: &str,
        intent: &Intent,
        taken: Vec<i64>,
        epoch: i64,
        after: Option<ClusterTime>,
    ) -> Result<Self, SeqError> {
        let mut machine = CompleteIntentMachine {
            numbering: numbering.clone(),
            counter_id: counter_id.to_owned(),
            intent: intent.clone(),
            epoch,
            after,
            taken,
            claims: 0,
            rounds: 0,
            modified: 0,
            notes: Vec::new(),
            phase: CompletionPhase::Idle,
        };
        let first = machine.claim();
        Ok(MachinePlan::begin(machine, first))
    }
}

impl CompleteIntentMachine {
    /// Claims the intent on the counter: a compare-and-set (not a read, which may be stale)
    /// that matches only while this very intent is pending and no later holder has written
    /// the counter, and raises the counter's epoch to ours.
    fn claim(&mut self) -> Result<Step<u64>, SeqError> {
        // Mutant (simulator only): complete on a possibly stale view, moves unfenced.
        if crate::mutants::active(crate::mutants::Mutant::UnfencedCompletion) {
            return self.round();
        }
        spend_round(
            &mut self.claims,
            "claiming a gapless intent",
            &self.counter_id,
        )?;
        self.phase = CompletionPhase::Claim;
        let mut filter = self.numbering.sequence().id_filter(&self.counter_id);
        if let Value::Object(intent) = self.intent.to_document() {
            for (key, value) in intent {
                filter.insert(format!("intent.{key}"), value);
            }
        }
        filter.insert("epoch".to_owned(), epoch_condition(self.epoch));
        Ok(Step::Command(Command::FindOneAndUpdate {
            collection: Collection::Counters,
            filter: Value::Object(filter),
            update: json!({ "$set": { "epoch": ejson::long(self.epoch) } }),
            options: UpdateOptions {
                upsert: false,
                return_document: ReturnDocument::After,
            },
        }))
    }

    /// The claim matched nothing: a later holder wrote the counter (fenced), or the intent
    /// was completed by someone else (nothing to do), or our read was stale (claim again).
    fn on_check(&mut self, reply: Reply) -> Result<Step<u64>, SeqError> {
        let document = match reply {
            Reply::Document { document } => document,
            Reply::None => {
                return Err(SeqError::malformed_counter(
                    &self.counter_id,
                    "the counter was deleted while an intent was pending",
                ))
            }
            other => return Err(unexpected(&other, "a counter read")),
        };
        let (counter_epoch, pending) = read_counter_extras(&document, &self.counter_id)?;
        if counter_epoch > self.epoch {
            return Err(fenced(&self.counter_id, self.epoch, counter_epoch));
        }
        if pending.as_ref() == Some(&self.intent) {
            return self.claim();
        }
        self.notes.push(Note::AlreadyFinished {
            counter_id: self.counter_id.clone(),
        });
        Ok(Step::Done(self.modified))
    }

    /// Stamps the intent's documents with our epoch, so a holder before us that is still
    /// completing this intent can no longer move their numbers.
    fn stamp(&mut self) -> Step<u64> {
        self.phase = CompletionPhase::Stamp;
        let mut stamp = Map::new();
        stamp.insert(self.numbering.fence_field(), ejson::long(self.epoch));
        Step::Command(Command::UpdateMany {
            collection: Collection::Documents,
            filter: json!({ "_id": { "$in": self.intent.ids } }),
            update: json!({ "$max": stamp }),
        })
    }

    /// Looks at the intent's documents (again).
    fn round(&mut self) -> Result<Step<u64>, SeqError> {
        spend_round(
            &mut self.rounds,
            "completing a gapless intent",
            &self.counter_id,
        )?;
        self.phase = CompletionPhase::Read;
        let mut projection = Map::new();
        projection.insert("_id".to_owned(), json!(1));
        projection.insert(self.numbering.field().to_owned(), json!(1));
        projection.insert(self.numbering.fence_field(), json!(1));
        Ok(Step::Command(anchored_find(
            json!({ "_id": { "$in": self.intent.ids } }),
            QueryOptions::projection(Value::Object(projection)),
            self.after,
        )))
    }

    fn on_read(&mut self, reply: Reply) -> Result<Step<u64>, SeqError> {
        let documents = reply.into_documents("find")?;
        let fence = self.numbering.fence_field();
        let stamped = documents
            .iter()
            .filter_map(|d| stored_value(d, &fence).and_then(|v| ejson::read_i64(v).ok()))
            .max();
        if let Some(stamp) = stamped.filter(|stamp| *stamp > self.epoch) {
            return Err(fenced(&self.counter_id, self.epoch, stamp));
        }
        let found: Vec<(Value, Option<Value>)> = documents
            .iter()
            .filter_map(|d| Some((d.get("_id")?.clone(), self.numbering.stored(d).cloned())))
            .collect();
        let completion =
            plan_completion(self.numbering.sequence(), &self.intent, &found, &self.taken)?;
        if completion.assignments.is_empty() {
            if completion.missing > 0 || completion.foreign > 0 {
                self.notes.push(Note::IntentSettled {
                    counter_id: self.counter_id.clone(),
                    missing: completion.missing,
                    foreign: completion.foreign,
                    seq: completion.seq,
                });
            }
            let plan = FinishIntent::new(
                self.numbering.sequence(),
                &self.counter_id,
                &self.intent,
                completion.seq,
                self.epoch,
            )?;
            return launch(plan, &mut self.notes, |plan| {
                self.phase = CompletionPhase::Finish(plan);
            })?
            .and_then(|outcome| self.on_finished(outcome));
        }
        if completion.renumbered > 0 {
            self.notes.push(Note::Renumbered {
                counter_id: self.counter_id.clone(),
                count: completion.renumbered,
            });
        }
        let updates = completion
            .assignments
            .iter()
            .map(|a| {
                self.numbering
                    .fenced_statement(&a.id, a.number, a.previous, self.epoch)
            })
            .collect();
        self.phase = CompletionPhase::Write {
            found,
            numbers: completion.assignments.iter().map(|a| a.number).collect(),
            renumbered: completion.renumbered,
        };
        Ok(Step::Command(ordered_update(updates)))
    }

    fn on_written(
        &mut self,
        reply: Reply,
        found: &[(Value, Option<Value>)],
        numbers: &[i64],
        renumbered: u64,
    ) -> Result<Step<u64>, SeqError> {
        let applied = read_applied(reply, numbers, &self.counter_id, &mut self.notes)?;
        // Modified counts documents that got their first number only.
        self.modified = self.modified.saturating_add(
            applied
                .modified
                .saturating_sub(renumbered.min(applied.modified)),
        );
        // A number refused because one of the intent's own documents still holds it (it moves
        // in a later statement) is not taken by someone else.
        let ours = |n: &i64| {
            found
                .iter()
                .any(|(_, v)| v.as_ref().and_then(|v| ejson::read_i64(v).ok()) == Some(*n))
        };
        self.taken
            .extend(applied.taken.into_iter().filter(|n| !ours(n)));
        self.round()
    }

    fn on_finished(&mut self, outcome: FinishOutcome) -> Result<Step<u64>, SeqError> {
        finished(outcome, &self.counter_id, self.epoch, &mut self.notes)?;
        Ok(Step::Done(self.modified))
    }
}

impl Machine for CompleteIntentMachine {
    type Output = u64;

    fn on_reply(&mut self, reply: Reply) -> Result<Step<u64>, SeqError> {
        match std::mem::replace(&mut self.phase, CompletionPhase::Idle) {
            CompletionPhase::Claim => match reply {
                Reply::Document { .. } => Ok(self.stamp()),
                Reply::None => {
                    self.phase = CompletionPhase::Check;
                    Ok(Step::Command(read_command(
                        self.numbering.sequence(),
                        &self.counter_id,
                    )))
                }
                other => Err(unexpected(&other, "claiming a gapless intent")),
            },
            CompletionPhase::Check => self.on_check(reply),
            CompletionPhase::Stamp => {
                reply.into_write_result("update")?;
                self.round()
            }
            CompletionPhase::Read => self.on_read(reply),
            CompletionPhase::Write {
                found,
                numbers,
                renumbered,
            } => self.on_written(reply, &found, &numbers, renumbered),
            CompletionPhase::Finish(plan) => resume(plan, reply, &mut self.notes, |plan| {
                self.phase = CompletionPhase::Finish(plan);
            })?
            .and_then(|outcome| self.on_finished(outcome)),
            CompletionPhase::Idle => Err(SeqError::unexpected_reply("no command is pending")),
        }
    }

    fn drain_notes(&mut self) -> Vec<Note> {
        std::mem::take(&mut self.notes)
    }
}

// ---------------------------------------------------------------------------- CompletePending

/// What [`CompletePending`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PendingReport {
    /// Intents completed.
    pub completed: u64,
    /// Documents that got their first number while completing them.
    pub numbered: u64,
}

/// Completes every intent left pending on the sequence's counters (`name` and `name/…`), in
/// the order found; see the module docs. Run it before numbering anything as a new holder.
pub type CompletePending = MachinePlan<CompletePendingMachine>;

#[derive(Debug, Clone)]
enum PendingPhase {
    Idle,
    Find,
    Complete(Box<CompleteIntent>),
}

/// The state of a [`CompletePending`].
#[derive(Debug, Clone)]
pub struct CompletePendingMachine {
    numbering: NumberingSpec,
    epoch: i64,
    counters: VecDeque<Value>,
    /// The counter whose intent is being completed.
    completing: String,
    report: PendingReport,
    notes: Vec<Note>,
    phase: PendingPhase,
}

impl CompletePending {
    pub fn new(numbering: &NumberingSpec, epoch: i64) -> Result<Self, SeqError> {
        let machine = CompletePendingMachine {
            numbering: numbering.clone(),
            epoch,
            counters: VecDeque::new(),
            completing: String::new(),
            report: PendingReport::default(),
            notes: Vec::new(),
            phase: PendingPhase::Find,
        };
        let find = Command::Find {
            collection: Collection::Counters,
            filter: json!({
                "$or": numbering.sequence().counters_of(),
                "intent": { "$exists": true },
            }),
            options: QueryOptions::default(),
            after_cluster_time: None,
        };
        Ok(MachinePlan::begin(machine, Ok(Step::Command(find))))
    }
}

impl CompletePendingMachine {
    /// Completes the next counter's pending intent, or finishes.
    fn next(&mut self) -> Result<Step<PendingReport>, SeqError> {
        while let Some(counter) = self.counters.pop_front() {
            // The counter id: the `_id` (or the name, for the `counterId` option's document).
            let Some(counter_id) = self.numbering.sequence().counter_id_of(counter.get("_id"))
            else {
                continue;
            };
            let (counter_epoch, intent) = read_counter_extras(&counter, &counter_id)?;
            let unfenced = crate::mutants::active(crate::mutants::Mutant::UnfencedCompletion);
            if counter_epoch > self.epoch && !unfenced {
                return Err(fenced(&counter_id, self.epoch, counter_epoch));
            }
            let Some(intent) = intent else { continue };
            self.notes.push(Note::CompletingIntent {
                counter_id: counter_id.clone(),
                first: intent.first,
                count: intent.count,
                epoch: intent.epoch,
                before_reserving: false,
            });
            let plan = CompleteIntent::new(
                &self.numbering,
                &counter_id,
                &intent,
                Vec::new(),
                self.epoch,
                None,
            )?;
            self.completing = counter_id;
            let step = launch(plan, &mut self.notes, |plan| {
                self.phase = PendingPhase::Complete(plan);
            })?;
            if let Step::Command(command) =
                step.and_then(|numbered| Ok(self.completed(numbered)))?
            {
                return Ok(Step::Command(command));
            }
        }
        Ok(Step::Done(self.report.clone()))
    }

    fn completed(&mut self, numbered: u64) -> Step<()> {
        self.report.completed = self.report.completed.saturating_add(1);
        self.report.numbered = self.report.numbered.saturating_add(numbered);
        self.notes.push(Note::IntentCompleted {
            counter_id: std::mem::take(&mut self.completing),
        });
        Step::Done(())
    }
}

impl Machine for CompletePendingMachine {
    type Output = PendingReport;

    fn on_reply(&mut self, reply: Reply) -> Result<Step<PendingReport>, SeqError> {
        match std::mem::replace(&mut self.phase, PendingPhase::Idle) {
            PendingPhase::Find => {
                self.counters = reply.into_documents("find")?.into();
                self.next()
            }
            PendingPhase::Complete(plan) => resume(plan, reply, &mut self.notes, |plan| {
                self.phase = PendingPhase::Complete(plan);
            })?
            .and_then(|numbered| Ok(self.completed(numbered)))?
            .and_then(|()| self.next()),
            PendingPhase::Idle => Err(SeqError::unexpected_reply("no command is pending")),
        }
    }

    fn drain_notes(&mut self) -> Vec<Note> {
        std::mem::take(&mut self.notes)
    }
}
