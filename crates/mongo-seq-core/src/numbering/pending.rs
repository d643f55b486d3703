//! [`CompletePending`]: a new holder completes every intent left pending on a sequence's
//! counters before it numbers anything (the diagram is in [`crate::numbering::gapless`]'s docs).

use std::collections::{BTreeSet, VecDeque};

use serde::Serialize;
use serde_json::{json, Value};

use crate::error::SeqError;
use crate::numbering::complete::{fenced, CompleteIntent};
use crate::numbering::intent::read_counter_extras;
use crate::numbering::sealing::{self, CounterSeal, WriteSeals};
use crate::numbering::spec::NumberingSpec;
use crate::protocol::command::{Collection, Command, QueryOptions};
use crate::protocol::machine::{launch, resume, Machine, MachinePlan};
use crate::protocol::note::Note;
use crate::protocol::plan::Step;
use crate::protocol::reply::{unexpected, Reply};

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
    /// Writing the seals a counter recorded (a sealed series).
    WriteSeals(Box<WriteSeals>),
    /// Writing a crashed appender's ledger entries (their links moved the head): the rest.
    InsertRecords {
        counter_id: String,
        rest: VecDeque<Value>,
        keys: Vec<Value>,
        /// The deleted documents the records are about (their orphan seals go with them).
        documents: Vec<Value>,
    },
    PullRecords,
    Complete(Box<CompleteIntent>),
}

/// The state of a [`CompletePending`].
#[derive(Debug, Clone)]
pub struct CompletePendingMachine {
    numbering: NumberingSpec,
    epoch: i64,
    counters: VecDeque<Value>,
    /// The counters whose records, then recorded seals, were written.
    records_done: BTreeSet<String>,
    seals_done: BTreeSet<String>,
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
            records_done: BTreeSet::new(),
            seals_done: BTreeSet::new(),
            completing: String::new(),
            report: PendingReport::default(),
            notes: Vec::new(),
            phase: PendingPhase::Find,
        };
        let filter = if numbering.sequence().sealed() {
            // Also the counters whose last batch's seals may not be on their documents yet.
            json!({ "$and": [
                { "$or": numbering.sequence().counters_of() },
                { "$or": [
                    { "intent": { "$exists": true } },
                    { format!("{}.pending.0", sealing::FIELD): { "$exists": true } },
                    { format!("{}.records.0", sealing::FIELD): { "$exists": true } },
                ] },
            ] })
        } else {
            json!({
                "$or": numbering.sequence().counters_of(),
                "intent": { "$exists": true },
            })
        };
        let find = Command::Find {
            collection: Collection::Counters,
            filter,
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
            // A crashed appender's records, then the seals the last finish recorded (the
            // intent's finish replaces them), then the intent.
            if self.numbering.sequence().sealed() {
                let seal = CounterSeal::read(&counter, &counter_id)?;
                if self.records_done.insert(counter_id.clone()) && !seal.records.is_empty() {
                    let field = |name: &str| -> Vec<Value> {
                        seal.records
                            .iter()
                            .filter_map(|r| r.get(name).cloned())
                            .collect()
                    };
                    let (keys, documents) = (field("_id"), field("document"));
                    self.phase = PendingPhase::InsertRecords {
                        counter_id,
                        rest: seal.records.into(),
                        keys,
                        documents,
                    };
                    self.counters.push_front(counter);
                    return self.insert_record();
                }
                if self.seals_done.insert(counter_id.clone()) {
                    if let Some(plan) =
                        WriteSeals::new(&self.numbering, &counter_id, seal.pending, self.epoch)
                    {
                        self.counters.push_front(counter);
                        return launch(plan, &mut self.notes, |plan| {
                            self.phase = PendingPhase::WriteSeals(plan);
                        })?
                        .and_then(|()| self.next());
                    }
                }
            }
            let Some(intent) = intent else { continue };
            return self.complete(counter_id, intent);
        }
        Ok(Step::Done(self.report.clone()))
    }

    /// Completes `counter_id`'s pending `intent`.
    fn complete(
        &mut self,
        counter_id: String,
        intent: crate::numbering::intent::Intent,
    ) -> Result<Step<PendingReport>, SeqError> {
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
        match step.and_then(|numbered| Ok(self.completed(numbered)))? {
            Step::Command(command) => Ok(Step::Command(command)),
            Step::Done(()) => self.next(),
        }
    }

    /// The next record's entry (insertOne; a duplicate key: written already), then the pull.
    fn insert_record(&mut self) -> Result<Step<PendingReport>, SeqError> {
        let PendingPhase::InsertRecords {
            counter_id,
            rest,
            keys,
            documents,
        } = &mut self.phase
        else {
            return Err(SeqError::unexpected_reply("no record is being written"));
        };
        match rest.pop_front() {
            Some(record) => Ok(Step::Command(Command::InsertOne {
                collection: Collection::Ledger,
                document: record,
            })),
            None => {
                let pull = sealing::pull_command(
                    self.numbering.sequence(),
                    counter_id,
                    keys.clone(),
                    documents.clone(),
                );
                self.phase = PendingPhase::PullRecords;
                Ok(Step::Command(pull))
            }
        }
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
            PendingPhase::WriteSeals(plan) => resume(plan, reply, &mut self.notes, |plan| {
                self.phase = PendingPhase::WriteSeals(plan);
            })?
            .and_then(|()| self.next()),
            phase @ PendingPhase::InsertRecords { .. } => {
                // A record's insert.
                match reply {
                    Reply::Inserted | Reply::DuplicateKey => {}
                    other => return Err(unexpected(&other, "insertOne")),
                }
                self.phase = phase;
                self.insert_record()
            }
            PendingPhase::PullRecords => self.next(),
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
