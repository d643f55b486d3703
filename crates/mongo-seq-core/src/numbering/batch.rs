//! Batch numbering: the documents a change stream (or a backfill page) delivered get their
//! numbers, in the order delivered, with a constant handful of commands per batch.
//!
//! ```text
//! NumberBatch(numbering, documents, [times], epoch E, verify):
//! [verify, or gapless]  find {_id: {$in: ids}, field: {$exists: false}[, $and: [condition]]}
//!                        projection {_id: 1}
//!                          readConcern {level: majority, afterClusterTime: newest event's}
//!                        └─ drop the documents numbered meanwhile, gone, or that stopped
//!                           matching the condition (already)
//! [a sequence that resets] each document's instant: its dateField (a BSON date), else its
//!   time from the shell (an event's commit time), else its ObjectId _id's; none or a bad one:
//!   skipped (note, INVALID_DATE) ─▶ localDates {timeZone, instants} ─▶ each one's period
//! walk the documents in order:
//!   no _id ─────────────────────────── ignored
//!   scope field missing / unusable ──── skipped (note)
//!   no number ───────────────────────── waits in its counter's group
//!   a number of its own (prenumbered) ─ its counter's waiting group is numbered first, then
//!                                        SeedFromMax moves the counter past the number
//!                                        (a value that is not an integer: left as it is)
//! then every group still waiting, by counter id.
//! A group, default mode:
//!   Reservation {count: ids, extraFilter: {epoch: ≤ E}, extraSet: {epoch: E}}
//!     (CONDITION_NOT_MET: a later holder stamped the counter → FENCED)
//!   → one statement per document: q {_id, field: {$exists: false}[, $and: [condition]]},
//!     u {$set: {field: n, formatField, fieldPeriod}}
//! A group, gapless mode: NumberGapless (crate::numbering::gapless), right away.
//! Default mode, once every group is reserved:
//!   update {statements, ordered: false} → writeResult
//!     numbered += nModified; writeConcernError → WRITE_CONCERN_FAILED
//!     writeErrors: 11000 on a statement → its document is renumbered (collision): reserve
//!                  again for those documents, per counter, and write again
//!                  anything else → WRITE_FAILED
//!   at most COLLISION_ATTEMPTS writes, then TOO_MANY_RETRIES
//! ```
//!
//! Normally that is one `findAndModify` per counter and one `update` for the whole batch. The
//! statements only apply where the document has no number, so a replayed batch changes
//! nothing; `verify` (after a restart) drops already numbered documents first, so a replay
//! wastes no numbers either. The output ([`BatchReport`]) has the counts; the per-document
//! details (skipped, collisions, …) are [`Note`]s.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use serde_json::{json, Value};

use crate::counter::range::ReservedRange;
use crate::counter::reservation::{Reservation, ReserveRequest};
use crate::counter::seed::SeedFromMax;
use crate::ejson;
use crate::error::SeqError;
use crate::lease::document::epoch_condition;
use crate::numbering::spec::{id_key, id_keys, NumberingSpec};
use crate::protocol::command::{Collection, Command, QueryOptions, UpdateStatement};
use crate::protocol::concern::{advance_after_write, anchored_find, ClusterTime};
use crate::protocol::machine::{launch, resume, Machine, MachinePlan};
use crate::protocol::note::Note;
use crate::protocol::plan::Step;
use crate::protocol::reply::{Reply, DUPLICATE_KEY};
use crate::sequence::period::Period;

/// Most `update` commands one batch sends: each renumbers the documents whose number another
/// document (inserted with it) holds; past that, `TOO_MANY_RETRIES`.
pub const COLLISION_ATTEMPTS: u32 = 5;

mod groups;
mod periods;
mod report;

pub use groups::{GaplessGroups, Leaseless, NoGaplessPlan, WithGapless};
use periods::instants_of;
pub use report::BatchReport;

#[cfg(test)]
mod tests;

/// The batch numbering plan; see the module docs.
pub type NumberBatch = MachinePlan<NumberBatchMachine>;

#[derive(Debug, Clone)]
enum Action {
    Reserve { counter_id: String, ids: Vec<Value> },
    Gapless { counter_id: String, ids: Vec<Value> },
    Seed { counter_id: String, value: i64 },
}

/// One statement's document and number, to read its write error.
#[derive(Debug, Clone)]
struct NumberedWrite {
    counter_id: String,
    id: Value,
    number: i64,
    period: Option<Period>,
}

#[derive(Debug, Clone)]
enum Phase<G: GaplessGroups> {
    Idle,
    Verify,
    Dates,
    Reserve(Box<Reservation>),
    Gapless(Box<G::Plan>),
    Seed(Box<SeedFromMax>),
    Write(Vec<NumberedWrite>),
}

/// The state of a [`NumberBatch`].
#[derive(Debug, Clone)]
pub struct NumberBatchMachine<G: GaplessGroups = WithGapless> {
    numbering: NumberingSpec,
    /// The lease epoch that fences the counters; `None`: an `assign`, which holds no lease.
    epoch: Option<i64>,
    /// The newest cluster time of the events that delivered the documents, then of the
    /// batch's own latest write: every read that decides a document needs no number (a later
    /// gapless group's too) is causally after both.
    after: Option<ClusterTime>,
    /// A periodic sequence's: per document `_id` (its key), the instant that places it in a
    /// period, or why it has none.
    instants: BTreeMap<String, Result<i64, SeqError>>,
    /// The `_id` keys whose dates `localDates` was asked for, in order.
    dating: Vec<String>,
    /// Per document `_id` key, its period.
    periods: BTreeMap<String, Period>,
    /// Documents not walked yet, in stream order.
    documents: VecDeque<Value>,
    /// Unnumbered documents per counter, waiting for their reservation.
    waiting: BTreeMap<String, Vec<Value>>,
    /// A sealed series': the waiting documents by `_id` key, whose values their seals take.
    sealed_documents: BTreeMap<String, Value>,
    actions: VecDeque<Action>,
    /// The group whose reservation is running.
    reserving: (String, Vec<Value>),
    statements: Vec<UpdateStatement>,
    pending_writes: Vec<NumberedWrite>,
    writes: u32,
    report: BatchReport,
    notes: Vec<Note>,
    phase: Phase<G>,
}

impl NumberBatch {
    /// Numbers `documents` (as delivered, Extended JSON) for a holder of lease epoch `epoch`.
    /// `verify`: first drop the documents numbered meanwhile (always done in gapless mode,
    /// which also drops repeated `_id`s). `after`: the newest `clusterTime` of the change
    /// events that delivered them (`None` for a backfill page): the reads that drop a document
    /// are `majority` reads at or after it ([`crate::protocol::concern`]).
    pub fn new(
        numbering: &NumberingSpec,
        documents: Vec<Value>,
        epoch: i64,
        verify: bool,
        after: Option<ClusterTime>,
    ) -> Result<Self, SeqError> {
        Self::dated(numbering, documents, &[], epoch, verify, after)
    }

    /// [`NumberBatch::new`] with `times`: per document (in order), the instant the shell knows
    /// for it (a change event's commit time, in milliseconds), which places it in a period when
    /// the numbering has no `dateField` (a sequence that resets; ignored otherwise).
    pub fn dated(
        numbering: &NumberingSpec,
        documents: Vec<Value>,
        times: &[Option<i64>],
        epoch: i64,
        verify: bool,
        after: Option<ClusterTime>,
    ) -> Result<Self, SeqError> {
        Self::build(numbering, documents, times, Some(epoch), verify, after)
    }
}

impl<G: GaplessGroups> MachinePlan<NumberBatchMachine<G>> {
    pub(crate) fn build(
        numbering: &NumberingSpec,
        documents: Vec<Value>,
        times: &[Option<i64>],
        epoch: Option<i64>,
        verify: bool,
        after: Option<ClusterTime>,
    ) -> Result<Self, SeqError> {
        if epoch.is_none() && numbering.gapless() {
            return Err(SeqError::invalid_argument(
                "gapless",
                "gapless numbering runs under a trigger's lease (the sidecar), not in an assign",
            ));
        }
        let instants = if numbering.sequence().reset().is_periodic() {
            instants_of(numbering, &documents, times)
        } else {
            BTreeMap::new()
        };
        let mut documents = documents;
        if numbering.gapless() {
            let mut seen = BTreeSet::new();
            documents.retain(|d| d.get("_id").is_some_and(|id| seen.insert(id_key(id))));
        }
        let verify = (verify || numbering.gapless()) && !documents.is_empty();
        let mut machine = NumberBatchMachine {
            numbering: numbering.clone(),
            epoch,
            after,
            instants,
            dating: Vec::new(),
            periods: BTreeMap::new(),
            documents: documents.into(),
            waiting: BTreeMap::new(),
            sealed_documents: BTreeMap::new(),
            actions: VecDeque::new(),
            reserving: (String::new(), Vec::new()),
            statements: Vec::new(),
            pending_writes: Vec::new(),
            writes: 0,
            report: BatchReport::default(),
            notes: Vec::new(),
            phase: Phase::Idle,
        };
        let first = if verify {
            machine.phase = Phase::Verify;
            let ids: Vec<Value> = machine
                .documents
                .iter()
                .filter_map(|d| d.get("_id").cloned())
                .collect();
            Ok(Step::Command(anchored_find(
                numbering.unnumbered_filter(&ids),
                QueryOptions::projection(json!({ "_id": 1 })),
                after,
            )))
        } else {
            machine.date()
        };
        Ok(MachinePlan::begin(machine, first))
    }
}

impl<G: GaplessGroups> NumberBatchMachine<G> {
    /// Runs the walk and the actions until a command is needed or the batch is done.
    fn advance(&mut self) -> Result<Step<BatchReport>, SeqError> {
        loop {
            if let Some(action) = self.actions.pop_front() {
                if let Some(command) = self.begin(action)? {
                    return Ok(Step::Command(command));
                }
            } else if let Some(document) = self.documents.pop_front() {
                self.walk(document);
            } else if !self.waiting.is_empty() {
                for (counter_id, ids) in std::mem::take(&mut self.waiting) {
                    let group = self.group(counter_id, ids);
                    self.actions.push_back(group);
                }
            } else {
                return self.write();
            }
        }
    }

    fn walk(&mut self, document: Value) {
        let Some(id) = document.get("_id").cloned() else {
            return;
        };
        let counter_id = match self.counter_id_of(&document, &id) {
            Ok(counter_id) => counter_id,
            Err(error) => {
                self.report.skipped = self.report.skipped.saturating_add(1);
                self.report.passed.push((id.clone(), error.clone()));
                self.notes.push(Note::Skipped { id, error });
                return;
            }
        };
        let Some(stored) = self.numbering.stored(&document) else {
            if self.numbering.sequence().sealed() {
                self.sealed_documents.insert(id_key(&id), document);
            }
            self.waiting.entry(counter_id).or_default().push(id);
            return;
        };
        self.report.prenumbered = self.report.prenumbered.saturating_add(1);
        match ejson::read_i64(stored) {
            Ok(value) => {
                // Everything waiting for this counter gets numbers below this one.
                if let Some(ids) = self.waiting.remove(&counter_id) {
                    let group = self.group(counter_id.clone(), ids);
                    self.actions.push_back(group);
                }
                self.actions.push_back(Action::Seed { counter_id, value });
            }
            Err(reason) => self.notes.push(Note::NotANumber {
                id,
                field: self.numbering.field().to_owned(),
                reason,
            }),
        }
    }

    /// Starts an action; `Some(command)` when it waits for a reply.
    fn begin(&mut self, action: Action) -> Result<Option<Command>, SeqError> {
        let step = match action {
            Action::Reserve { counter_id, ids } => {
                let count = u64::try_from(ids.len()).unwrap_or(u64::MAX);
                let mut request = ReserveRequest::new(&counter_id, count);
                if let Some(epoch) = self.epoch {
                    request
                        .extra_filter
                        .insert("epoch".to_owned(), epoch_condition(epoch));
                    request
                        .extra_set
                        .insert("epoch".to_owned(), ejson::long(epoch));
                }
                let plan = Reservation::new(self.numbering.sequence(), &request)?;
                self.reserving = (counter_id, ids);
                launch(plan, &mut self.notes, |plan| {
                    self.phase = Phase::Reserve(plan);
                })
                .map_err(|e| self.fenced(e))?
                .and_then(|range| self.reserved(range))?
            }
            Action::Gapless { counter_id, ids } => {
                let documents = self.take_sealed(&ids);
                let plan = G::start(
                    &self.numbering,
                    &counter_id,
                    ids,
                    documents,
                    self.epoch,
                    self.after,
                )?;
                launch(plan, &mut self.notes, |plan| {
                    self.phase = Phase::Gapless(plan);
                })?
                .and_then(|numbered| Ok(self.count_numbered(numbered)))?
            }
            Action::Seed { counter_id, value } => {
                match SeedFromMax::new(self.numbering.sequence(), &counter_id, value) {
                    Ok(plan) => launch(plan, &mut self.notes, |plan| {
                        self.phase = Phase::Seed(plan);
                    })?
                    .and_then(|_| Ok(Step::Done(())))?,
                    Err(error) => {
                        self.notes.push(Note::SeedRefused {
                            counter_id,
                            value,
                            error,
                        });
                        Step::Done(())
                    }
                }
            }
        };
        Ok(match step {
            Step::Command(command) => Some(command),
            Step::Done(()) => None,
        })
    }

    fn count_numbered(&mut self, numbered: u64) -> Step<()> {
        self.report.numbered = self.report.numbered.saturating_add(numbered);
        Step::Done(())
    }

    /// One statement per document of the group just reserved.
    fn reserved(&mut self, range: ReservedRange) -> Result<Step<()>, SeqError> {
        let (counter_id, ids) = std::mem::take(&mut self.reserving);
        let period = self.numbering.sequence().period_of_counter_id(&counter_id);
        for (index, id) in (0u64..).zip(ids) {
            let number = range.get(index).ok_or_else(|| {
                SeqError::unexpected_reply("the reserved range is shorter than the request")
            })?;
            self.statements
                .push(self.numbering.statement(&id, number, None, period.as_ref()));
            self.pending_writes.push(NumberedWrite {
                counter_id: counter_id.clone(),
                id,
                number,
                period,
            });
        }
        Ok(Step::Done(()))
    }

    /// Every group is reserved: write the statements (or finish).
    fn write(&mut self) -> Result<Step<BatchReport>, SeqError> {
        if self.statements.is_empty() {
            return Ok(Step::Done(self.report.clone()));
        }
        if self.writes >= COLLISION_ATTEMPTS {
            let counter_id = self
                .pending_writes
                .first()
                .map(|t| t.counter_id.clone())
                .unwrap_or_default();
            return Err(SeqError::TooManyRetries {
                operation: "numbering a batch (numbers held by other documents)".to_owned(),
                counter_id,
                attempts: self.writes,
            });
        }
        self.writes = self.writes.saturating_add(1);
        self.phase = Phase::Write(std::mem::take(&mut self.pending_writes));
        Ok(Step::Command(Command::Update {
            collection: Collection::Documents,
            updates: std::mem::take(&mut self.statements),
            ordered: false,
        }))
    }

    /// Reads the write's result; documents whose number was taken are reserved again.
    fn written(&mut self, reply: Reply, targets: &[NumberedWrite]) -> Result<(), SeqError> {
        let result = reply.into_write_result("update")?;
        self.count_numbered(result.n_modified);
        let mut again: BTreeMap<String, Vec<Value>> = BTreeMap::new();
        let refused: BTreeSet<u64> = result.write_errors.iter().map(|e| e.index).collect();
        for (index, target) in (0u64..).zip(targets) {
            if !refused.contains(&index) {
                self.report
                    .written
                    .push((target.id.clone(), target.number, target.period));
            }
        }
        for error in result.write_errors {
            let target = usize::try_from(error.index)
                .ok()
                .and_then(|index| targets.get(index));
            match target {
                Some(target) if error.code == DUPLICATE_KEY => {
                    self.report.collisions = self.report.collisions.saturating_add(1);
                    self.notes.push(Note::Collision {
                        id: target.id.clone(),
                        counter_id: target.counter_id.clone(),
                        number: target.number,
                        attempt: self.writes,
                    });
                    again
                        .entry(target.counter_id.clone())
                        .or_default()
                        .push(target.id.clone());
                }
                _ => return Err(error.into()),
            }
        }
        self.actions.extend(
            again
                .into_iter()
                .map(|(counter_id, ids)| Action::Reserve { counter_id, ids }),
        );
        Ok(())
    }

    fn on_verified(&mut self, reply: Reply) -> Result<Step<BatchReport>, SeqError> {
        let unnumbered = id_keys(&reply.into_documents("find")?);
        let before = self.documents.len();
        self.documents.retain(|d| {
            d.get("_id")
                .is_some_and(|id| unnumbered.contains(&id_key(id)))
        });
        let dropped = before.saturating_sub(self.documents.len());
        self.report.already = u64::try_from(dropped).unwrap_or(u64::MAX);
        self.date()
    }
}

impl<G: GaplessGroups> Machine for NumberBatchMachine<G> {
    type Output = BatchReport;

    fn on_reply(&mut self, reply: Reply) -> Result<Step<BatchReport>, SeqError> {
        // A gapless group started after another one wrote (a batch spanning two periods or
        // scopes) reads causally after those writes too, not at the events alone: a secondary
        // may otherwise answer from before them (seed 5 focused on stale incarnations).
        advance_after_write(&mut self.after, reply.operation_time());
        let notes = &mut self.notes;
        let step = match std::mem::replace(&mut self.phase, Phase::Idle) {
            Phase::Verify => return self.on_verified(reply),
            Phase::Dates => return self.on_dates(reply),
            Phase::Reserve(plan) => resume(plan, reply, notes, |plan| {
                self.phase = Phase::Reserve(plan);
            })
            .map_err(|e| self.fenced(e))?
            .and_then(|range| self.reserved(range))?,
            Phase::Gapless(plan) => resume(plan, reply, notes, |plan| {
                self.phase = Phase::Gapless(plan);
            })?
            .and_then(|numbered| Ok(self.count_numbered(numbered)))?,
            Phase::Seed(plan) => resume(plan, reply, notes, |plan| {
                self.phase = Phase::Seed(plan);
            })?
            .and_then(|_| Ok(Step::Done(())))?,
            Phase::Write(targets) => {
                self.written(reply, &targets)?;
                Step::Done(())
            }
            Phase::Idle => return Err(SeqError::unexpected_reply("no command is pending")),
        };
        step.and_then(|()| self.advance())
    }

    fn drain_notes(&mut self) -> Vec<Note> {
        std::mem::take(&mut self.notes)
    }
}
