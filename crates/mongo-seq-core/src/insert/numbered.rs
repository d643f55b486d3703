//! `insertOne` / `insertMany` of the package: the caller's documents, numbered from a
//! sequence's counters, inserted; a number already taken in the collection is replaced.
//!
//! ```text
//! take: per counter the documents use (first appearance order; one when unscoped) ─▶ numbers
//!   ─▶ insertDocument (one) / insertDocuments (many, ordered): `field` = the number (int64),
//!      `formatField` = its formatted id
//!        ├─ inserted ─▶ done { values, formatted }
//!        └─ duplicate key on `field` (the number is taken, e.g. by an imported document):
//!           the documents before it are in; it and the ones after take fresh numbers
//!           (back to take) — at most MAX_RETRIES inserts, then TOO_MANY_RETRIES
//! ```
//!
//! Numbers come from the caller's [`BlockCounter`](crate::BlockCounter)s through `take`
//! commands, so inserts share the block (and its round trips) with `next()`. Every counter id
//! is computed when the plan is built: a document without its scope fields is refused before
//! any number is taken. A duplicate key on another unique index is not the plan's to retry:
//! `duplicateKeyOn` tells the executor to raise it as the caller's error.

use std::collections::VecDeque;

use serde::Serialize;
use serde_json::{Map, Value};

use crate::ejson;
use crate::error::SeqError;
use crate::insert::fields::check_insert_fields;
use crate::protocol::command::{Collection, Command};
use crate::protocol::machine::{Machine, MachinePlan};
use crate::protocol::plan::{Step, MAX_RETRIES};
use crate::protocol::reply::{unexpected, Reply, DUPLICATE_KEY};
use crate::sequence::limits::MAX_COUNT;
use crate::sequence::options::SequenceSpec;

/// The number of each document, in input order, and its formatted id when a `formatField` was
/// given.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct InsertOutcome {
    pub values: Vec<i64>,
    pub formatted: Option<Vec<String>>,
}

/// The insert plan; see the module docs.
pub type InsertNumbered = MachinePlan<InsertMachine>;

#[derive(Debug, Clone)]
enum Phase {
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
    /// Distinct counter ids, in first appearance order.
    counters: Vec<String>,
    /// Per document, its counter (index into `counters`).
    counter_of: Vec<usize>,
    values: Vec<i64>,
    /// Documents before it are inserted.
    first: usize,
    /// Takes still to run before the next insert.
    takes: VecDeque<(usize, Vec<usize>)>,
    phase: Phase,
    attempts: u32,
}

impl InsertNumbered {
    /// `insertOne`: `document` supplies the scope values (required when the sequence is scoped).
    pub fn one(
        spec: &SequenceSpec,
        field: &str,
        format_field: Option<&str>,
        document: Option<&Value>,
    ) -> Result<Self, SeqError> {
        check_insert_fields(spec, field, format_field)?;
        let counter_id = spec.counter_id(document)?;
        Ok(InsertMachine::begin(
            spec,
            field,
            format_field,
            true,
            vec![counter_id],
            vec![0],
        ))
    }

    /// `insertMany` of `count` documents (0 to [`MAX_COUNT`]); `documents` supplies their scope
    /// values, required when the sequence is scoped (one per document).
    pub fn many(
        spec: &SequenceSpec,
        field: &str,
        format_field: Option<&str>,
        count: u64,
        documents: Option<&[Value]>,
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
        let mut counters = Vec::new();
        let mut counter_of = Vec::with_capacity(count);
        if spec.scope().is_empty() {
            counters.push(spec.counter_id(None)?);
            counter_of.resize(count, 0);
        } else {
            let documents = documents
                .filter(|documents| documents.len() == count)
                .ok_or_else(|| {
                    SeqError::invalid_argument(
                        "docs",
                        format!("the scope values of each of the {count} documents are needed (sequence `{}` is scoped)", spec.name()),
                    )
                })?;
            for document in documents {
                let id = spec.counter_id(Some(document))?;
                let index = match counters.iter().position(|known| *known == id) {
                    Some(index) => index,
                    None => {
                        counters.push(id);
                        counters.len().saturating_sub(1)
                    }
                };
                counter_of.push(index);
            }
        }
        Ok(InsertMachine::begin(
            spec,
            field,
            format_field,
            false,
            counters,
            counter_of,
        ))
    }
}

impl InsertMachine {
    fn begin(
        spec: &SequenceSpec,
        field: &str,
        format_field: Option<&str>,
        single: bool,
        counters: Vec<String>,
        counter_of: Vec<usize>,
    ) -> InsertNumbered {
        let mut machine = Self {
            spec: spec.clone(),
            field: field.to_owned(),
            format_field: format_field.map(str::to_owned),
            single,
            counters,
            values: vec![0; counter_of.len()],
            counter_of,
            first: 0,
            takes: VecDeque::new(),
            phase: Phase::Insert,
            attempts: 0,
        };
        let first = machine.take_pending();
        MachinePlan::begin(machine, first)
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

    fn fields(&self, value: i64) -> Value {
        let mut fields = Map::new();
        fields.insert(self.field.clone(), ejson::long(value));
        if let (Some(format_field), Some(formatted)) =
            (&self.format_field, self.spec.format_value(value))
        {
            fields.insert(format_field.clone(), Value::String(formatted));
        }
        Value::Object(fields)
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
                fields: self.fields(pending.first().copied().unwrap_or_default()),
                duplicate_key_on: Some(self.field.clone()),
            }
        } else {
            Command::InsertDocuments {
                collection: Collection::Documents,
                first: u64::try_from(self.first).unwrap_or(u64::MAX),
                fields: pending.iter().map(|&value| self.fields(value)).collect(),
                duplicate_key_on: self.field.clone(),
            }
        }))
    }

    fn outcome(&self) -> InsertOutcome {
        InsertOutcome {
            formatted: self.format_field.as_ref().map(|_| {
                self.values
                    .iter()
                    .filter_map(|&value| self.spec.format_value(value))
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
mod tests {
    use super::*;
    use crate::protocol::plan::Plan;
    use serde_json::json;

    fn spec(options: Value) -> SequenceSpec {
        SequenceSpec::parse(&options).unwrap()
    }

    fn command(step: Result<Step<InsertOutcome>, SeqError>) -> Value {
        match step.unwrap() {
            Step::Command(command) => serde_json::to_value(command).unwrap(),
            Step::Done(done) => panic!("done early: {done:?}"),
        }
    }

    fn numbers(values: &[i64]) -> Reply {
        Reply::Numbers {
            values: values.to_vec(),
        }
    }

    #[test]
    fn one_retries_a_taken_number_with_the_next() {
        let spec = spec(json!({ "name": "users", "format": "U{seq}" }));
        let mut plan = InsertNumbered::one(&spec, "_id", Some("code"), None).unwrap();
        assert_eq!(
            command(plan.current_step()),
            json!({ "op": "take", "counterId": "users", "count": 1 })
        );
        let insert = command(plan.feed(numbers(&[1])));
        assert_eq!(
            insert["fields"],
            json!({ "_id": { "$numberLong": "1" }, "code": "U1" })
        );
        assert_eq!(insert["duplicateKeyOn"], "_id");
        command(plan.feed(Reply::DuplicateKey));
        command(plan.feed(numbers(&[2])));
        let Ok(Step::Done(done)) = plan.feed(Reply::Inserted) else {
            panic!("done")
        };
        assert_eq!(done.values, [2]);
        assert_eq!(done.formatted, Some(vec!["U2".to_owned()]));
    }

    #[test]
    fn many_groups_by_scope_and_renumbers_from_the_refused_document() {
        let spec = spec(json!({ "name": "inv", "scope": ["t"] }));
        let docs = [
            json!({ "t": "a" }),
            json!({ "t": "b" }),
            json!({ "t": "a" }),
        ];
        let mut plan = InsertNumbered::many(&spec, "n", None, 3, Some(&docs)).unwrap();
        assert_eq!(command(plan.current_step())["counterId"], "inv/t=a");
        assert_eq!(command(plan.feed(numbers(&[1, 2])))["counterId"], "inv/t=b");
        let insert = command(plan.feed(numbers(&[1])));
        assert_eq!(insert["first"], 0);
        assert_eq!(insert["fields"][2], json!({ "n": { "$numberLong": "2" } }));
        let refused = Reply::WriteResult(crate::WriteResult {
            n: 1,
            write_errors: vec![crate::WriteError {
                index: 1,
                code: 11000,
                errmsg: "dup".to_owned(),
            }],
            ..Default::default()
        });
        let take = command(plan.feed(refused));
        assert_eq!(take["counterId"], "inv/t=b", "the first document is in");
        let take = command(plan.feed(numbers(&[2])));
        assert_eq!(
            (take["counterId"].clone(), take["count"].clone()),
            (json!("inv/t=a"), json!(1))
        );
        let insert = command(plan.feed(numbers(&[3])));
        assert_eq!(insert["first"], 1);
        let Ok(Step::Done(done)) = plan.feed(Reply::WriteResult(crate::WriteResult {
            n: 2,
            ..Default::default()
        })) else {
            panic!("done")
        };
        assert_eq!(done.values, [1, 2, 3]);
        assert_eq!(done.formatted, None);
    }

    #[test]
    fn gives_up_after_max_retries_and_checks_before_taking() {
        let spec_ = spec(json!({ "name": "users" }));
        let mut plan = InsertNumbered::one(&spec_, "_id", None, None).unwrap();
        let mut step = plan.current_step();
        for attempt in 1..=MAX_RETRIES {
            command(step);
            command(plan.feed(numbers(&[i64::from(attempt)])));
            step = plan.feed(Reply::DuplicateKey);
        }
        assert_eq!(step.unwrap_err().code(), "TOO_MANY_RETRIES");
        let scoped = spec(json!({ "name": "inv", "scope": ["t"] }));
        let docs = [json!({ "t": "a" }), json!({})];
        let error = InsertNumbered::many(&scoped, "n", None, 2, Some(&docs)).unwrap_err();
        assert_eq!(error.code(), "MISSING_SCOPE_FIELD");
        let Ok(Step::Done(done)) = InsertNumbered::many(&spec_, "n", None, 0, None)
            .unwrap()
            .current_step()
        else {
            panic!("nothing to insert")
        };
        assert!(done.values.is_empty());
    }
}
