//! Recording deleted documents' numbers: [`RecordDeletions`], run by a gapless trigger for the
//! `delete` events of a batch before the batch's resume token is stored, so a crash between a
//! deletion and its record replays the event and records it then (the entry's compound `_id`
//! makes the replay's insert a no-op).
//!
//! A `delete` event carries the document's `_id` only; its number comes from the event's
//! pre-image (`fullDocumentBeforeChange`, MongoDB 6.0+, with `changeStreamPreAndPostImages`
//! enabled on the collection). Per deleted document that held a number:
//!
//! ```text
//! findOne counters {_id}                                              (majority)
//!  ├─ none, beyond its seq, or an intent pending  ─► not recorded: not final (a completion
//!  │  whose numbers include it                      moves a later number down into it, or
//!  │                                                gave it back to the counter)
//!  └─ find documents {<scope>, <field>Period, <field>: n} limit 1   (majority, on the primary)
//!      ├─ one ────────────────────────────────────► not recorded: held again (a completion
//!      │                                              moved a number down into it)
//!      └─ insertOne ledger {_id: {counter, number}, kind: "deleted", …}   (w: majority)
//!          └─ inserted, or a duplicate key (recorded already) ─► the next one
//! ```
//!
//! A counter read with no intent pending covering the number, and the number within its `seq`,
//! means the number is final: later reservations only take numbers above the counter, so
//! nothing fills it after.

use serde::Serialize;
use serde_json::{json, Value};

use crate::counter::document::read_spec_counter;
use crate::ejson;
use crate::error::SeqError;
use crate::ledger::entry::LedgerEntry;
use crate::ledger::sealed_records;
use crate::numbering::intent::{read_command, read_counter_extras, Intent};
use crate::numbering::sealing::{self, seal_document, CounterSeal};
use crate::numbering::series::{holders, holding, Holding};
use crate::numbering::spec::NumberingSpec;
use crate::protocol::command::{Command, QueryOptions};
use crate::protocol::concern::{anchored_find, ClusterTime};
use crate::protocol::machine::{Machine, MachinePlan};
use crate::protocol::plan::Retries;
use crate::protocol::plan::Step;
use crate::protocol::reply::{unexpected, Reply};
use crate::seal::link::Link;
use crate::sequence::counter_id::CounterKey;
use crate::sequence::field::stored_value;

/// One `delete` event: the document's `_id`, its pre-image when the event had one, when.
#[derive(Debug, Clone, PartialEq)]
pub struct Deletion {
    pub id: Value,
    /// The document as it was before the deletion (`fullDocumentBeforeChange`).
    pub before: Option<Value>,
    /// The event's time (its `wallTime`, else its cluster time), else now.
    pub at_ms: i64,
    /// The event's cluster time. The read of the documents no longer anchors at it (it goes to
    /// the primary, `majority`: see [`RecordDeletions`]); kept for the hosts that fill it.
    pub cluster_time: Option<ClusterTime>,
}

/// What a [`RecordDeletions`] did with a batch's deletions.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DeletionReport {
    /// Numbers recorded (or found recorded already: a replayed event).
    pub recorded: u64,
    /// Deleted documents that held no number of the sequence (unnumbered, another value, a
    /// scope or period that names no counter).
    pub unnumbered: u64,
    /// Events without a pre-image: the number is unknown, nothing recorded.
    pub without_pre_image: u64,
    /// Numbers not final (a pending intent's) or held again (moved down into): nothing to record.
    pub not_final: u64,
}

/// A deleted document's number and where it goes.
#[derive(Debug, Clone)]
struct Record {
    entry: LedgerEntry,
    key: CounterKey,
    /// The document as it was (a sealed series' deletion seals its values).
    before: Value,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    ReadCounter,
    FindHeld,
    /// A sealed series: whether the deletion is recorded already (a replayed event), before
    /// its link moves the head.
    FindRecorded,
    /// A sealed series: moving the head over the deletion's link.
    Append,
    Insert,
    /// A sealed series: the entry written, its record dropped from the counter.
    Pull,
}

/// The deletion records plan; see the module docs.
pub type RecordDeletions = MachinePlan<RecordDeletionsMachine>;

/// The state of a [`RecordDeletions`].
#[derive(Debug, Clone)]
pub struct RecordDeletionsMachine {
    spec: NumberingSpec,
    records: Vec<Record>,
    index: usize,
    /// A sealed series: the counter's seal as read for the current record.
    sealed: Option<CounterSeal>,
    retries: Retries,
    phase: Phase,
    report: DeletionReport,
}

impl RecordDeletions {
    /// The records of `deletions` (in event order), by `by` (the instance id).
    pub fn new(spec: &NumberingSpec, deletions: &[Deletion], by: &str) -> Result<Self, SeqError> {
        let mut report = DeletionReport::default();
        let mut records = Vec::new();
        for deletion in deletions {
            let Some(before) = &deletion.before else {
                report.without_pre_image = report.without_pre_image.saturating_add(1);
                continue;
            };
            match record_of(spec, deletion, before, by)? {
                Some(record) => records.push(record),
                None => report.unnumbered = report.unnumbered.saturating_add(1),
            }
        }
        let mut machine = RecordDeletionsMachine {
            spec: spec.clone(),
            records,
            index: 0,
            sealed: None,
            retries: Retries::default(),
            phase: Phase::ReadCounter,
            report,
        };
        let first = machine.start(0);
        Ok(MachinePlan::begin(machine, Ok(first)))
    }
}

/// The record of a deleted document's number, `None` when it held none of this sequence's.
/// Only `by` can make it fail (blank or too long).
fn record_of(
    spec: &NumberingSpec,
    deletion: &Deletion,
    before: &Value,
    by: &str,
) -> Result<Option<Record>, SeqError> {
    let Holding::Number {
        number,
        counter: Ok(counter_id),
        ..
    } = holding(spec.sequence(), spec.field(), before)
    else {
        return Ok(None);
    };
    let Ok(key) = CounterKey::parse(&counter_id) else {
        return Ok(None);
    };
    let mut entry =
        LedgerEntry::deletion(&counter_id, number, deletion.id.clone(), by, deletion.at_ms)?;
    // The sequence's name, also where the counter's id is the `counterId` option's.
    entry.sequence = spec.sequence().name().to_owned();
    Ok(Some(Record {
        entry,
        key,
        before: before.clone(),
    }))
}

/// Whether `n` is one of `intent`'s numbers (`first, first + step, …`, `count` of them).
fn in_intent(intent: &Intent, n: i64, step: i64) -> bool {
    let offset = i128::from(n).saturating_sub(i128::from(intent.first));
    let step = i128::from(step);
    match (offset.checked_rem(step), offset.checked_div(step)) {
        (Some(0), Some(k)) => k >= 0 && k < i128::from(intent.count),
        _ => false,
    }
}

impl RecordDeletionsMachine {
    /// The first command for record `index`, or done.
    fn start(&mut self, index: usize) -> Step<DeletionReport> {
        self.index = index;
        self.phase = Phase::ReadCounter;
        match self.records.get(index) {
            Some(record) => {
                Step::Command(read_command(self.spec.sequence(), &record.entry.counter_id))
            }
            None => Step::Done(self.report.clone()),
        }
    }

    fn next(&mut self, counted: fn(&mut DeletionReport) -> &mut u64) -> Step<DeletionReport> {
        let count = counted(&mut self.report);
        *count = count.saturating_add(1);
        self.start(self.index.saturating_add(1))
    }

    fn held_command(&self, record: &Record) -> Command {
        let filter = holders(
            self.spec.field(),
            &record.key,
            ejson::long(record.entry.number),
        );
        let projection = ejson::object([("_id", 1.into())]);
        anchored_find(
            filter,
            QueryOptions {
                projection: Some(projection),
                sort: None,
                limit: Some(1),
                majority: true,
            },
            // On the primary, `majority`: a secondary's snapshot after the event can predate
            // the trigger's own later writes (a number given back and issued again: seeds
            // 9,203,735 and 9,211,885), and the change stream only shows majority-committed
            // deletions, so the primary's majority snapshot has this one.
            None,
        )
    }

    /// A sealed series: the deletion's link after the head, with the issue link the document
    /// held (`removed`: its values and its seal, from the document, else from the seals its
    /// counter recorded and had not written yet).
    fn append(&mut self, record: &Record) -> Result<Step<DeletionReport>, SeqError> {
        let Some(counter) = self.sealed.clone() else {
            return Ok(self.insert(record));
        };
        let counter_id = record.entry.counter_id.clone();
        let sequence = self.spec.sequence();
        let period = sequence.period_of_counter_id(&counter_id).map(|p| p.text());
        let fields = Link::issued(
            &counter_id,
            record.entry.number,
            period.as_deref(),
            &record.before,
            sequence.seal_fields(),
        )
        .fields;
        let held = stored_value(&record.before, &self.spec.seal_field())
            .cloned()
            .or_else(|| {
                let id = record.entry.document.as_ref()?;
                counter
                    .recorded_seal(id, record.entry.number)
                    .map(seal_document)
            })
            .unwrap_or(Value::Null);
        let mut entry = record.entry.clone();
        entry.removed = Some(json!({ "fields": fields.clone(), "seal": held }));
        let mut entries = [entry];
        sealed_records::seal_entries(
            sequence,
            &counter_id,
            counter.head.as_deref(),
            &mut entries,
            &[fields],
        )?;
        let [entry] = entries;
        let command = sealed_records::append_command(
            sequence,
            &counter_id,
            &counter,
            std::slice::from_ref(&entry),
        );
        if let Some(sealed) = self.records.get_mut(self.index) {
            sealed.entry = entry;
        }
        self.phase = Phase::Append;
        Ok(Step::Command(command))
    }

    fn insert(&mut self, record: &Record) -> Step<DeletionReport> {
        self.phase = Phase::Insert;
        Step::Command(Command::InsertOne {
            collection: crate::protocol::command::Collection::Ledger,
            document: record.entry.to_document(),
        })
    }

    fn transition(&mut self, reply: Reply) -> Result<Step<DeletionReport>, SeqError> {
        let Some(record) = self.records.get(self.index).cloned() else {
            return Err(unexpected(&reply, "a finished plan"));
        };
        match (self.phase, reply) {
            (Phase::ReadCounter, Reply::Document { document }) => {
                let counter_id = &record.entry.counter_id;
                let sequence = self.spec.sequence();
                let last = read_spec_counter(sequence, &document, counter_id)?;
                let (_, intent) = read_counter_extras(&document, counter_id)?;
                let (n, step) = (record.entry.number, sequence.step());
                // Not final: a pending intent's (its completion may move a later number down
                // into it), or beyond the counter (a completion gave it back: seed 639).
                let beyond = if step > 0 { n > last } else { n < last };
                if beyond || intent.is_some_and(|intent| in_intent(&intent, n, step)) {
                    return Ok(self.next(|r| &mut r.not_final));
                }
                self.sealed = None;
                if sequence.sealed() {
                    let counter = CounterSeal::read(&document, counter_id)?;
                    // Its link moved the head already (a replayed event): write its entry.
                    let key = LedgerEntry::key(counter_id, n);
                    if let Some(stored) =
                        counter.records.iter().find(|r| r.get("_id") == Some(&key))
                    {
                        self.phase = Phase::Insert;
                        return Ok(Step::Command(Command::InsertOne {
                            collection: crate::protocol::command::Collection::Ledger,
                            document: stored.clone(),
                        }));
                    }
                    self.sealed = Some(counter);
                }
                self.phase = Phase::FindHeld;
                Ok(Step::Command(self.held_command(&record)))
            }
            // No counter: the number was never issued.
            (Phase::ReadCounter, Reply::None) => Ok(self.next(|r| &mut r.not_final)),
            (Phase::ReadCounter, other) => Err(unexpected(&other, "findOne")),
            (Phase::FindHeld, reply) => {
                if !reply.into_documents("find")?.is_empty() {
                    return Ok(self.next(|r| &mut r.not_final));
                }
                // Mutant (simulator only): the deletion is not recorded.
                if crate::mutants::active(crate::mutants::Mutant::SkipDeletionRecord) {
                    return Ok(self.next(|r| &mut r.recorded));
                }
                if self.sealed.is_some() {
                    self.phase = Phase::FindRecorded;
                    let key = LedgerEntry::key(&record.entry.counter_id, record.entry.number);
                    return Ok(Step::Command(Command::FindOne {
                        collection: crate::protocol::command::Collection::Ledger,
                        filter: json!({ "_id": key }),
                        options: None,
                    }));
                }
                Ok(self.insert(&record))
            }
            (Phase::FindRecorded, Reply::Document { .. }) => Ok(self.next(|r| &mut r.recorded)),
            (Phase::FindRecorded, Reply::None) => self.append(&record),
            (Phase::FindRecorded, other) => Err(unexpected(&other, "findOne")),
            (Phase::Append, Reply::Document { .. }) => {
                let record = self.records.get(self.index).cloned().unwrap_or(record);
                Ok(self.insert(&record))
            }
            // The head moved, or an intent started: every check again.
            (Phase::Append, Reply::None) => {
                self.retries
                    .bump("deletion record (sealed)", &record.entry.counter_id)?;
                self.phase = Phase::ReadCounter;
                Ok(Step::Command(read_command(
                    self.spec.sequence(),
                    &record.entry.counter_id,
                )))
            }
            (Phase::Append, other) => Err(unexpected(&other, "findAndModify")),
            (Phase::Insert, Reply::Inserted | Reply::DuplicateKey) => {
                if self.spec.sequence().sealed() {
                    self.phase = Phase::Pull;
                    let key = LedgerEntry::key(&record.entry.counter_id, record.entry.number);
                    return Ok(Step::Command(sealing::pull_command(
                        self.spec.sequence(),
                        &record.entry.counter_id,
                        vec![key],
                        record.entry.document.iter().cloned().collect(),
                    )));
                }
                Ok(self.next(|r| &mut r.recorded))
            }
            (Phase::Insert, other) => Err(unexpected(&other, "insertOne")),
            (Phase::Pull, _) => Ok(self.next(|r| &mut r.recorded)),
        }
    }
}

impl Machine for RecordDeletionsMachine {
    type Output = DeletionReport;

    fn on_reply(&mut self, reply: Reply) -> Result<Step<DeletionReport>, SeqError> {
        self.transition(reply)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_intent_s_numbers_counting_up_and_down() {
        let intent = |first, count| Intent {
            first,
            count,
            ids: Vec::new(),
            epoch: 1,
        };
        assert!(in_intent(&intent(5, 3), 5, 1) && in_intent(&intent(5, 3), 7, 1));
        assert!(!in_intent(&intent(5, 3), 8, 1) && !in_intent(&intent(5, 3), 4, 1));
        assert!(in_intent(&intent(10, 2), 8, -2) && !in_intent(&intent(10, 2), 9, -2));
        assert!(!in_intent(&intent(10, 2), 12, -2));
    }
}
