//! A sealed series' deletion records: each a link of the chain that keeps the issue link the
//! document held (`removed`), appended by moving the head before the entry is written
//! ([`crate::ledger::sealed_records`]).

use serde_json::{json, Map, Value};

use super::{DeletionReport, Phase, Record, RecordDeletionsMachine};
use crate::error::SeqError;
use crate::ledger::entry::LedgerEntry;
use crate::ledger::sealed_records;
use crate::numbering::sealing::{self, seal_document, CounterSeal};
use crate::protocol::command::{Collection, Command, UpdateStatement};
use crate::protocol::plan::Step;
use crate::seal::link::Link;
use crate::sequence::field::stored_value;

impl RecordDeletionsMachine {
    /// A sealed series: the deletion's link after the head, with the issue link the document
    /// held (`removed`: its values and its seal, from the document, else from the seals its
    /// counter recorded and had not written yet).
    pub(super) fn append(&mut self, record: &Record) -> Result<Step<DeletionReport>, SeqError> {
        let Some(counter) = self.sealed.clone() else {
            return Ok(self.insert(record));
        };
        let counter_id = record.entry.counter_id.clone();
        let sequence = self.spec.sequence();
        // A document that held no sealed number held none that was final: nothing to record.
        let Some((fields, removed)) = self.removed(record, &counter) else {
            return Ok(self.next(|r| &mut r.not_final));
        };
        let mut entry = record.entry.clone();
        entry.removed = Some(removed);
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

    /// The issue link the deleted document held: its sealed values, and `{fields, seal}` (the
    /// seal from the document, else from the seals its counter recorded and had not written);
    /// `None` when it held no seal: its number was not final (a replayed event of a document
    /// deleted before a completion moved another document's number down into it).
    fn removed(
        &self,
        record: &Record,
        counter: &CounterSeal,
    ) -> Option<(Map<String, Value>, Value)> {
        let sequence = self.spec.sequence();
        let counter_id = &record.entry.counter_id;
        let period = sequence.period_of_counter_id(counter_id).map(|p| p.text());
        let fields = Link::issued(
            counter_id,
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
            .filter(|seal| !seal.is_null())?;
        let removed = json!({ "fields": fields.clone(), "seal": held });
        Some((fields, removed))
    }

    /// The number was voided before its deletion was recorded (a void races the record): the
    /// void's entry (`found`, or the one just written from the counter's record) takes the
    /// issue link the document held, so the chain stays whole; then the record is pulled.
    pub(super) fn keep_removed(
        &mut self,
        record: &Record,
        found: Option<&Value>,
    ) -> Step<DeletionReport> {
        let recorded = found.is_some_and(|f| f.get("removed").is_some());
        let Some(counter) = self.sealed.clone().filter(|_| !recorded) else {
            return self.next(|r| &mut r.recorded);
        };
        let Some((_, removed)) = self.removed(record, &counter) else {
            return match found {
                Some(_) => self.next(|r| &mut r.recorded),
                None => self.pull(record),
            };
        };
        let key = LedgerEntry::key(&record.entry.counter_id, record.entry.number);
        // After a found entry, done; after a record written from the counter, its pull.
        self.phase = if found.is_some() {
            Phase::Pull
        } else {
            Phase::KeepRemoved
        };
        Step::Command(Command::Update {
            collection: Collection::Ledger,
            updates: vec![UpdateStatement {
                filter: json!({ "_id": key, "kind": "void", "removed": { "$exists": false } }),
                update: json!({ "$set": { "removed": removed } }),
            }],
            ordered: true,
        })
    }

    /// Drops the record (and the document's orphan seal) from the counter.
    pub(super) fn pull(&mut self, record: &Record) -> Step<DeletionReport> {
        self.phase = Phase::Pull;
        let key = LedgerEntry::key(&record.entry.counter_id, record.entry.number);
        Step::Command(sealing::pull_command(
            self.spec.sequence(),
            &record.entry.counter_id,
            vec![key],
            record.entry.document.iter().cloned().collect(),
        ))
    }
}
