//! Completing a gapless intent: [`CompleteIntent`] (claim, stamp, read, move, finish; the
//! diagram is in [`crate::numbering::gapless`]'s docs), and what the gapless plans' writes
//! share: the ordered `update`, the reading of its reply, the end of a [`FinishIntent`], rounds.

use serde_json::{json, Map, Value};

use crate::ejson;
use crate::error::SeqError;
use crate::lease::document::epoch_condition;
use crate::numbering::intent::{
    plan_completion, read_command, read_counter_extras, FinishIntent, FinishOutcome, Holds, Intent,
};
use crate::numbering::sealing::{CounterSeal, Issued};
use crate::numbering::series::{holding, Holding};
use crate::numbering::spec::NumberingSpec;
use crate::protocol::command::{
    Collection, Command, QueryOptions, ReturnDocument, UpdateOptions, UpdateStatement,
};
use crate::protocol::concern::{advance_after_write, anchored_find, ClusterTime};
use crate::protocol::machine::{launch, resume, Machine, MachinePlan};
use crate::protocol::note::Note;
use crate::protocol::plan::Step;
use crate::protocol::reply::{unexpected, Reply, DUPLICATE_KEY};
use crate::sequence::field::stored_value;
use crate::sequence::period::Period;

/// How many times a completion writes and looks again before giving up (each round settles
/// what the previous one could not: a deletion, a number taken by another document).
pub const COMPLETION_ROUNDS: u32 = 8;
/// What one ordered `update` did.
pub(crate) struct Applied {
    pub(crate) matched: u64,
    pub(crate) modified: u64,
    /// Numbers the unique index refused (another document holds them).
    pub(crate) taken: Vec<i64>,
}

/// The `update` writing `statements` in order.
pub(crate) fn ordered_update(updates: Vec<UpdateStatement>) -> Command {
    Command::Update {
        collection: Collection::Documents,
        updates,
        ordered: true,
    }
}

/// Reads the reply to [`ordered_update`]; `numbers[i]` is the number statement `i` writes.
pub(crate) fn read_applied(
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
pub(crate) fn finished(
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

pub(crate) fn fenced(counter_id: &str, epoch: i64, counter_epoch: i64) -> SeqError {
    SeqError::Fenced {
        counter_id: counter_id.to_owned(),
        epoch,
        counter_epoch: Some(counter_epoch),
    }
}

/// Counts one more of a completion's rounds, or fails once [`COMPLETION_ROUNDS`] are spent.
pub(crate) fn spend_round(
    rounds: &mut u32,
    operation: &str,
    counter_id: &str,
) -> Result<(), SeqError> {
    if *rounds >= COMPLETION_ROUNDS {
        return Err(out_of_rounds(operation, counter_id, *rounds));
    }
    *rounds = rounds.saturating_add(1);
    Ok(())
}

pub(crate) fn out_of_rounds(operation: &str, counter_id: &str, rounds: u32) -> SeqError {
    SeqError::TooManyRetries {
        operation: operation.to_owned(),
        counter_id: counter_id.to_owned(),
        attempts: rounds,
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
        found: Vec<(Value, Holds)>,
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
    /// The counter's period (a periodic sequence's), for the formatted ids.
    period: Option<Period>,
    intent: Intent,
    epoch: i64,
    /// The cluster time its reads of the documents are causally after: the events', then its
    /// own latest write's (`None`: a pending intent completed by a new holder, read `local` on
    /// the primary right after its own claim and stamp).
    after: Option<ClusterTime>,
    taken: Vec<i64>,
    /// A sealed series' counter seal, as the claim returned it.
    seal: Option<CounterSeal>,
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
            period: numbering.sequence().period_of_counter_id(counter_id),
            intent: intent.clone(),
            epoch,
            after,
            taken,
            seal: None,
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

    /// What document `d` holds: a number counts as this intent's only when it is held in this
    /// intent's counter (the one series rule): a document numbered meanwhile in another period,
    /// by an event placed there, holds nothing of this counter.
    fn holds(&self, d: &Value) -> Holds {
        let (spec, field) = (self.numbering.sequence(), self.numbering.field());
        match holding(spec, field, d) {
            Holding::Nothing => Holds::Nothing,
            Holding::Number {
                number,
                counter: Ok(counter),
                ..
            } if counter == self.counter_id => Holds::Number(number),
            Holding::Number { .. } | Holding::WithoutPeriod | Holding::NotANumber(_) => {
                Holds::Elsewhere
            }
        }
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
        // What names the series a number is held in: the period beside it, the scope values.
        if self.numbering.sequence().reset().is_periodic() {
            projection.insert(self.numbering.period_field(), json!(1));
        }
        for scope in self.numbering.sequence().scope() {
            projection.insert(scope.clone(), json!(1));
        }
        // A sealed series' values, sealed once the numbers are final.
        for path in self.numbering.sequence().seal_fields() {
            projection.insert(path.clone(), json!(1));
        }
        Ok(Step::Command(anchored_find(
            self.numbering.present_filter(&self.intent.ids),
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
        let found: Vec<(Value, Holds)> = documents
            .iter()
            .filter_map(|d| Some((d.get("_id")?.clone(), self.holds(d))))
            .collect();
        let completion = plan_completion(
            self.numbering.sequence(),
            self.period.as_ref(),
            &self.intent,
            &found,
            &self.taken,
        )?;
        if completion.assignments.is_empty() {
            if completion.missing > 0 || completion.foreign > 0 {
                self.notes.push(Note::IntentSettled {
                    counter_id: self.counter_id.clone(),
                    missing: completion.missing,
                    foreign: completion.foreign,
                    seq: completion.seq,
                });
            }
            let plan = FinishIntent::sealing(
                &self.numbering,
                &self.counter_id,
                &self.intent,
                completion.seq,
                self.epoch,
                self.seal.take(),
                self.issued(&documents),
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
                self.numbering.fenced_statement(
                    &a.id,
                    a.number,
                    a.previous,
                    self.period.as_ref(),
                    self.epoch,
                )
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
        found: &[(Value, Holds)],
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
        let ours = |n: &i64| found.iter().any(|(_, h)| *h == Holds::Number(*n));
        self.taken
            .extend(applied.taken.into_iter().filter(|n| !ours(n)));
        self.round()
    }

    fn on_finished(&mut self, outcome: FinishOutcome) -> Result<Step<u64>, SeqError> {
        finished(outcome, &self.counter_id, self.epoch, &mut self.notes)?;
        Ok(Step::Done(self.modified))
    }

    /// The documents holding the intent's final numbers, as just read (a sealed series';
    /// empty otherwise).
    fn issued(&self, documents: &[Value]) -> Vec<Issued> {
        if !self.numbering.sequence().sealed() {
            return Vec::new();
        }
        let step = self.numbering.sequence().step();
        documents
            .iter()
            .filter_map(|d| match self.holds(d) {
                Holds::Number(number) if self.intent.position(number, step).is_some() => {
                    Some(Issued {
                        id: d.get("_id")?.clone(),
                        number,
                        document: d.clone(),
                    })
                }
                _ => None,
            })
            .collect()
    }
}

impl Machine for CompleteIntentMachine {
    type Output = u64;

    fn on_reply(&mut self, reply: Reply) -> Result<Step<u64>, SeqError> {
        // Its next read of the documents sees its own stamp and moves.
        advance_after_write(&mut self.after, reply.operation_time());
        match std::mem::replace(&mut self.phase, CompletionPhase::Idle) {
            CompletionPhase::Claim => match reply {
                Reply::Document { document } => {
                    if self.numbering.sequence().sealed() {
                        self.seal = Some(CounterSeal::read(&document, &self.counter_id)?);
                    }
                    Ok(self.stamp())
                }
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
