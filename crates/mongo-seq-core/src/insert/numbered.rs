//! `insertOne` / `insertMany` of the package: the caller's documents, numbered from a
//! sequence's counters, inserted; a number already taken in the collection is replaced.
//!
//! ```text
//! [a sequence that resets] localDates {timeZone, instants}: each document's `dateField`, or
//!   the caller's "now" for the whole call ─▶ the period of each document
//! take: per counter (scope, period) the documents use (first appearance order) ─▶ numbers
//!   ─▶ insertDocument (one) / insertDocuments (many, ordered): `field` = the number (int64),
//!      `formatField` = its formatted id, `<field>Period` = its period (a sequence that resets)
//!        ├─ inserted ─▶ done { values, formatted }
//!        └─ duplicate key on `field` (the number is taken, e.g. by an imported document):
//!           the documents before it are in; it and the ones after take fresh numbers
//!           (back to take) — at most MAX_RETRIES inserts, then TOO_MANY_RETRIES
//! ```
//!
//! Numbers come from the caller's [`BlockCounter`](crate::BlockCounter)s through `take`
//! commands, so inserts share the block (and its round trips) with `next()`. Every scope and
//! every `dateField` is read when the plan is built: a document without its scope fields, or
//! whose date field is missing, null, not a date or out of range, is refused (`INVALID_DATE`
//! naming `dateField` and the document's index) before any number is taken. A duplicate key on
//! another unique index is not the plan's to retry: `duplicateKeyOn` tells the executor to
//! raise it as the caller's error.

use std::collections::VecDeque;

use serde::Serialize;
use serde_json::{Map, Value};

use crate::counter::dated;
use crate::ejson;
use crate::error::SeqError;
use crate::insert::fields::check_insert_fields;
use crate::protocol::command::{Collection, Command};
use crate::protocol::machine::{Machine, MachinePlan};
use crate::protocol::plan::{Step, MAX_RETRIES};
use crate::protocol::reply::{unexpected, Reply, DUPLICATE_KEY};
use crate::sequence::limits::MAX_COUNT;
use crate::sequence::options::SequenceSpec;
use crate::sequence::period::period_field;
use crate::sequence::scope::in_period;

// Where each document's period comes from: its `dateField`, or the caller's now.
mod dates;
use dates::instants;
pub use dates::InsertDates;

/// The number of each document, in input order, its formatted id when a `formatField` was
/// given, and its period when the sequence resets (left out when it never does).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct InsertOutcome {
    pub values: Vec<i64>,
    pub formatted: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub periods: Option<Vec<String>>,
}

/// The insert plan; see the module docs.
pub type InsertNumbered = MachinePlan<InsertMachine>;

#[derive(Debug, Clone)]
enum Phase {
    /// Waiting for the local dates of the instants.
    Dates,
    /// Waiting for the numbers of `documents` (indexes).
    Take {
        documents: Vec<usize>,
    },
    Insert,
}

/// The state of an [`InsertNumbered`].
#[derive(Debug, Clone)]
pub struct InsertMachine {
    spec: SequenceSpec,
    field: String,
    format_field: Option<String>,
    /// `insertDocument` (one document) rather than `insertDocuments`.
    single: bool,
    /// Distinct counter ids, in first appearance order (before the dates: the scopes' ids).
    counters: Vec<String>,
    /// Per document, its counter (index into `counters`).
    counter_of: Vec<usize>,
    /// The instants whose dates place the documents: one per document (`dateField`), or one
    /// for the call; empty when the sequence never resets.
    instants: Vec<i64>,
    /// The instants are the documents' `dateField`s (else the caller's "now").
    by_date_field: bool,
    values: Vec<i64>,
    /// Documents before it are inserted.
    first: usize,
    /// Takes still to run before the next insert.
    takes: VecDeque<(usize, Vec<usize>)>,
    phase: Phase,
    attempts: u32,
}

/// Per document, the index of its scope's counter id among the distinct ones (first appearance
/// order).
fn group_ids(ids: Vec<String>) -> (Vec<String>, Vec<usize>) {
    let mut distinct: Vec<String> = Vec::new();
    let mut index_of = Vec::with_capacity(ids.len());
    for id in ids {
        let index = match distinct.iter().position(|known| *known == id) {
            Some(index) => index,
            None => {
                distinct.push(id);
                distinct.len().saturating_sub(1)
            }
        };
        index_of.push(index);
    }
    (distinct, index_of)
}

impl InsertNumbered {
    /// `insertOne`: `document` supplies the scope values (required when the sequence is
    /// scoped) and the `dateField` of `dates`.
    pub fn one(
        spec: &SequenceSpec,
        field: &str,
        format_field: Option<&str>,
        document: Option<&Value>,
        dates: &InsertDates,
    ) -> Result<Self, SeqError> {
        check_insert_fields(spec, field, format_field)?;
        let instants = instants(spec, field, dates, 1, document.map(std::slice::from_ref))?;
        let counter_id = scoped_id(spec, document)?;
        InsertMachine::begin(
            spec,
            field,
            format_field,
            true,
            (vec![counter_id], vec![0]),
            instants,
            dates.date_field.is_some(),
        )
    }

    /// `insertMany` of `count` documents (0 to [`MAX_COUNT`]); `documents` supplies their scope
    /// values and `dateField`s, required when the sequence is scoped or `dates` names a field
    /// (one per document).
    pub fn many(
        spec: &SequenceSpec,
        field: &str,
        format_field: Option<&str>,
        count: u64,
        documents: Option<&[Value]>,
        dates: &InsertDates,
    ) -> Result<Self, SeqError> {
        if count > MAX_COUNT {
            return Err(SeqError::invalid_argument(
                "docs.length",
                format!(
                    "must be an integer from 0 to {MAX_COUNT} (split larger batches), got {count}"
                ),
            ));
        }
        check_insert_fields(spec, field, format_field)?;
        let count = usize::try_from(count).unwrap_or(usize::MAX);
        let needs_documents =
            !spec.scope().is_empty() || (spec.reset().is_periodic() && dates.date_field.is_some());
        let documents = documents.filter(|documents| documents.len() == count);
        if needs_documents && documents.is_none() {
            return Err(SeqError::invalid_argument(
                "docs",
                format!(
                    "the scope values and dates of each of the {count} documents are needed (sequence `{}` is scoped or dated)",
                    spec.name()
                ),
            ));
        }
        let instants = instants(spec, field, dates, count, documents)?;
        let groups = if spec.scope().is_empty() {
            (vec![scoped_id(spec, None)?], vec![0; count])
        } else {
            let mut ids = Vec::with_capacity(count);
            for (index, document) in (0_u64..).zip(documents.unwrap_or_default()) {
                ids.push(scoped_id(spec, Some(document)).map_err(|error| in_batch(error, index))?);
            }
            group_ids(ids)
        };
        InsertMachine::begin(
            spec,
            field,
            format_field,
            false,
            groups,
            instants,
            dates.date_field.is_some(),
        )
    }
}

/// A scope error of the document `at` of a batch: `MISSING_SCOPE_FIELD` and
/// `INVALID_SCOPE_VALUE` name it; any other error as it is.
fn in_batch(error: SeqError, at: u64) -> SeqError {
    match error {
        SeqError::MissingScopeField { field, .. } => SeqError::MissingScopeField {
            field,
            index: Some(at),
        },
        SeqError::InvalidScopeValue {
            field,
            value,
            reason,
            ..
        } => SeqError::InvalidScopeValue {
            field,
            value,
            reason,
            index: Some(at),
        },
        other => other,
    }
}

/// The counter id of `document`'s scope (the whole id of a sequence that never resets; the
/// period follows for one that does).
fn scoped_id(spec: &SequenceSpec, document: Option<&Value>) -> Result<String, SeqError> {
    crate::sequence::scope::counter_id(spec.name(), spec.scope(), document, None)
}

impl InsertMachine {
    fn begin(
        spec: &SequenceSpec,
        field: &str,
        format_field: Option<&str>,
        single: bool,
        (counters, counter_of): (Vec<String>, Vec<usize>),
        instants: Vec<i64>,
        dates_by_field: bool,
    ) -> Result<InsertNumbered, SeqError> {
        let mut machine = Self {
            spec: spec.clone(),
            field: field.to_owned(),
            format_field: format_field.map(str::to_owned),
            single,
            counters,
            values: vec![0; counter_of.len()],
            counter_of,
            by_date_field: !instants.is_empty() && dates_by_field,
            instants,
            first: 0,
            takes: VecDeque::new(),
            phase: Phase::Insert,
            attempts: 0,
        };
        let first = if machine.instants.is_empty() {
            machine.take_pending()
        } else {
            machine.phase = Phase::Dates;
            Ok(Step::Command(dated::local_dates(
                spec,
                machine.instants.clone(),
            )))
        };
        Ok(MachinePlan::begin(machine, first))
    }

    /// The documents' periods are known: each gets the counter of its scope in its period.
    fn on_dates(&mut self, reply: Reply) -> Result<Step<InsertOutcome>, SeqError> {
        let (argument, index_of): (&str, fn(usize) -> Option<u64>) = if self.by_date_field {
            ("dateField", |i| u64::try_from(i).ok())
        } else {
            ("date", |_| None)
        };
        let periods =
            dated::periods_of(&self.spec, reply, self.instants.len(), argument, index_of)?;
        let mut ids = Vec::with_capacity(self.counter_of.len());
        for (document, &scope) in self.counter_of.iter().enumerate() {
            let period = match periods.get(document).or_else(|| periods.first()) {
                Some(Ok(period)) => period,
                Some(Err(error)) => return Err(error.clone()),
                None => return Err(SeqError::unexpected_reply("no date for a document")),
            };
            ids.push(in_period(self.counter_id(scope), period)?);
        }
        (self.counters, self.counter_of) = group_ids(ids);
        self.take_pending()
    }
    /// Groups the documents not inserted yet by counter and asks for the first group's numbers
    /// (done at once when there is nothing to insert).
    fn take_pending(&mut self) -> Result<Step<InsertOutcome>, SeqError> {
        let mut groups: Vec<(usize, Vec<usize>)> = Vec::new();
        for (index, &counter) in self.counter_of.iter().enumerate().skip(self.first) {
            match groups.iter_mut().find(|(c, _)| *c == counter) {
                Some((_, documents)) => documents.push(index),
                None => groups.push((counter, vec![index])),
            }
        }
        self.takes = groups.into();
        self.next_take()
    }

    fn next_take(&mut self) -> Result<Step<InsertOutcome>, SeqError> {
        let Some((counter, documents)) = self.takes.pop_front() else {
            return self.insert();
        };
        let command = Command::Take {
            counter_id: self.counter_id(counter).to_owned(),
            count: u64::try_from(documents.len()).unwrap_or(u64::MAX),
        };
        self.phase = Phase::Take { documents };
        Ok(Step::Command(command))
    }

    fn counter_id(&self, counter: usize) -> &str {
        self.counters.get(counter).map_or("", String::as_str)
    }

    /// The formatted id of document `document` numbered `value` (in its counter's period).
    fn formatted(&self, document: usize, value: i64) -> Option<String> {
        let counter = self.counter_of.get(document).copied().unwrap_or(0);
        self.spec.format_in(self.counter_id(counter), value)
    }

    fn fields(&self, document: usize, value: i64) -> Value {
        let mut fields = Map::new();
        fields.insert(self.field.clone(), ejson::long(value));
        if let (Some(format_field), Some(formatted)) =
            (&self.format_field, self.formatted(document, value))
        {
            fields.insert(format_field.clone(), Value::String(formatted));
        }
        if let Some(period) = self.period(document) {
            fields.insert(period_field(&self.field), Value::String(period));
        }
        Value::Object(fields)
    }

    /// The period of document `document`'s number (`None`: the sequence never resets).
    fn period(&self, document: usize) -> Option<String> {
        let counter = self.counter_of.get(document).copied().unwrap_or(0);
        self.spec
            .period_of_counter_id(self.counter_id(counter))
            .map(|period| period.text())
    }

    fn insert(&mut self) -> Result<Step<InsertOutcome>, SeqError> {
        if self.first >= self.values.len() {
            return Ok(Step::Done(self.outcome()));
        }
        self.phase = Phase::Insert;
        self.attempts = self.attempts.saturating_add(1);
        let pending = self.values.get(self.first..).unwrap_or_default();
        Ok(Step::Command(if self.single {
            Command::InsertDocument {
                collection: Collection::Documents,
                fields: self.fields(0, pending.first().copied().unwrap_or_default()),
                duplicate_key_on: Some(self.field.clone()),
            }
        } else {
            Command::InsertDocuments {
                collection: Collection::Documents,
                first: u64::try_from(self.first).unwrap_or(u64::MAX),
                fields: (self.first..)
                    .zip(pending)
                    .map(|(document, &value)| self.fields(document, value))
                    .collect(),
                duplicate_key_on: self.field.clone(),
            }
        }))
    }

    fn outcome(&self) -> InsertOutcome {
        InsertOutcome {
            formatted: self.format_field.as_ref().map(|_| {
                self.values
                    .iter()
                    .enumerate()
                    .filter_map(|(document, &value)| self.formatted(document, value))
                    .collect()
            }),
            periods: self.spec.reset().is_periodic().then(|| {
                (0..self.values.len())
                    .filter_map(|document| self.period(document))
                    .collect()
            }),
            values: self.values.clone(),
        }
    }

    fn on_numbers(
        &mut self,
        documents: &[usize],
        values: Vec<i64>,
    ) -> Result<Step<InsertOutcome>, SeqError> {
        if values.len() != documents.len() {
            return Err(SeqError::unexpected_reply(format!(
                "`take` of {} number(s) answered with {}",
                documents.len(),
                values.len()
            )));
        }
        for (&document, value) in documents.iter().zip(values) {
            if let Some(slot) = self.values.get_mut(document) {
                *slot = value;
            }
        }
        self.next_take()
    }

    /// The document at `self.first + refused` holds a taken number: the ones before it are in.
    fn retry_from(&mut self, refused: usize) -> Result<Step<InsertOutcome>, SeqError> {
        self.first = self.first.saturating_add(refused);
        if self.attempts >= MAX_RETRIES {
            let counter = self.counter_of.get(self.first).copied().unwrap_or(0);
            return Err(SeqError::TooManyRetries {
                operation: "insert".to_owned(),
                counter_id: self.counter_id(counter).to_owned(),
                attempts: self.attempts,
            });
        }
        self.take_pending()
    }

    fn on_insert_result(&mut self, reply: Reply) -> Result<Step<InsertOutcome>, SeqError> {
        let result = reply.into_write_result("insertDocuments")?;
        let Some(error) = result.write_errors.into_iter().next() else {
            self.first = self.values.len();
            return Ok(Step::Done(self.outcome()));
        };
        let pending = self.values.len().saturating_sub(self.first);
        let refused = usize::try_from(error.index).unwrap_or(usize::MAX);
        if refused >= pending {
            return Err(SeqError::unexpected_reply(format!(
                "write error at index {} of {pending} document(s)",
                error.index
            )));
        }
        if error.code != DUPLICATE_KEY {
            return Err(error.into());
        }
        self.retry_from(refused)
    }
}

impl Machine for InsertMachine {
    type Output = InsertOutcome;

    fn on_reply(&mut self, reply: Reply) -> Result<Step<InsertOutcome>, SeqError> {
        match (std::mem::replace(&mut self.phase, Phase::Insert), reply) {
            (Phase::Dates, reply) => self.on_dates(reply),
            (Phase::Take { documents }, Reply::Numbers { values }) => {
                self.on_numbers(&documents, values)
            }
            (Phase::Take { .. }, other) => Err(unexpected(&other, "take")),
            (Phase::Insert, Reply::Inserted) if self.single => {
                self.first = self.values.len();
                Ok(Step::Done(self.outcome()))
            }
            (Phase::Insert, Reply::DuplicateKey) if self.single => self.retry_from(0),
            (Phase::Insert, other) if self.single => Err(unexpected(&other, "insertDocument")),
            (Phase::Insert, reply) => self.on_insert_result(reply),
        }
    }
}

#[cfg(test)]
mod tests;
