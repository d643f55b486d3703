//! `insertOptimistic`: the tutorial's optimistic loop, without a counters collection.
//!
//! 1. `findOne` of the largest number in the field, in the document collection (see
//!    [`crate::largest`]).
//! 2. Candidate = found + step (never before `start`), or `start` when nothing was found.
//! 3. `insertDocument`: the caller sets `fields` on its document and inserts it. Duplicate
//!    key → back to 1, capped by [`MAX_RETRIES`](crate::command::MAX_RETRIES).
//!
//! The sequence field must be a top-level field (typically `_id`) with a unique index.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::command::{unexpected, Collection, Command, Reply, Retries, Step};
use crate::driver::{Driver, Machine};
use crate::ejson;
use crate::error::SeqError;
use crate::largest::{check_top_level, largest_number_query, read_found};
use crate::options::SequenceSpec;

/// The number inserted and, when the sequence has a `format` and a `formatField` was given,
/// the formatted id stored beside it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OptimisticOutcome {
    pub value: i64,
    pub formatted: Option<String>,
}

#[derive(Debug, Clone, Copy)]
enum Phase {
    Find,
    Insert(i64),
}

/// The optimistic insert plan; see the module docs.
pub type OptimisticInsert = Driver<OptimisticInsertMachine>;

/// The state of an [`OptimisticInsert`].
#[derive(Debug, Clone)]
pub struct OptimisticInsertMachine {
    spec: SequenceSpec,
    field: String,
    format_field: Option<String>,
    find: Command,
    phase: Phase,
    retries: Retries,
}

impl OptimisticInsert {
    /// `document` supplies the scope values (required when the sequence is scoped).
    pub fn new(
        spec: &SequenceSpec,
        field: &str,
        document: Option<&Value>,
        format_field: Option<&str>,
    ) -> Result<Self, SeqError> {
        check_top_level("field", field)?;
        if let Some(format_field) = format_field {
            check_top_level("formatField", format_field)?;
            if format_field == field {
                return Err(SeqError::invalid_argument(
                    "formatField",
                    "must differ from field",
                ));
            }
            if spec.format().is_none() {
                return Err(SeqError::invalid_argument(
                    "formatField",
                    "the sequence has no format",
                ));
            }
        }
        let find = largest_number_query(spec, field, document)?;
        let machine = OptimisticInsertMachine {
            spec: spec.clone(),
            field: field.to_owned(),
            format_field: format_field.map(str::to_owned),
            find: find.clone(),
            phase: Phase::Find,
            retries: Retries::default(),
        };
        Ok(Driver::begin(machine, Ok(Step::Command(find))))
    }
}

impl OptimisticInsertMachine {
    fn candidate(&self, found: Option<i64>) -> Result<i64, SeqError> {
        let Some(found) = found else {
            return Ok(self.spec.start());
        };
        let next = found
            .checked_add(self.spec.step())
            .filter(|next| self.spec.in_bounds(*next));
        let Some(next) = next else {
            return Err(self.spec.exhausted(self.spec.name(), Some(found), 1));
        };
        Ok(if self.spec.step() > 0 {
            next.max(self.spec.start())
        } else {
            next.min(self.spec.start())
        })
    }

    fn formatted(&self, value: i64) -> Option<String> {
        self.format_field
            .as_ref()
            .and_then(|_| self.spec.format_value(value))
    }

    fn transition(&mut self, reply: Reply) -> Result<Step<OptimisticOutcome>, SeqError> {
        match (self.phase, reply) {
            (Phase::Find, Reply::Document { document }) => {
                let found = read_found(&document, &self.field)?;
                self.insert(Some(found))
            }
            (Phase::Find, Reply::None) => self.insert(None),
            (Phase::Find, other) => Err(unexpected(&other, "findOne")),
            (Phase::Insert(value), Reply::Inserted) => Ok(Step::Done(OptimisticOutcome {
                value,
                formatted: self.formatted(value),
            })),
            (Phase::Insert(_), Reply::DuplicateKey) => {
                self.retries.bump("insertOptimistic", self.spec.name())?;
                self.phase = Phase::Find;
                Ok(Step::Command(self.find.clone()))
            }
            (Phase::Insert(_), other) => Err(unexpected(&other, "insertDocument")),
        }
    }

    fn insert(&mut self, found: Option<i64>) -> Result<Step<OptimisticOutcome>, SeqError> {
        let value = self.candidate(found)?;
        let mut fields = Map::new();
        fields.insert(self.field.clone(), ejson::long(value));
        if let (Some(format_field), Some(formatted)) = (&self.format_field, self.formatted(value)) {
            fields.insert(format_field.clone(), Value::String(formatted));
        }
        self.phase = Phase::Insert(value);
        Ok(Step::Command(Command::InsertDocument {
            collection: Collection::Documents,
            fields: Value::Object(fields),
        }))
    }
}

impl Machine for OptimisticInsertMachine {
    type Output = OptimisticOutcome;

    fn on_reply(&mut self, reply: Reply) -> Result<Step<OptimisticOutcome>, SeqError> {
        self.transition(reply)
    }
}
