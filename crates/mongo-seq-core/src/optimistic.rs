//! `insertOptimistic`: the tutorial's optimistic loop, without a counters collection.
//!
//! 1. `findOne({field: {$gte: i64::MIN, $lte: i64::MAX}, …scope values}, {sort: {field: -1},
//!    projection: {field: 1}})` in the document collection (`sort: 1` when counting down).
//!    The range condition keeps only numbers (MongoDB compares within a type bracket), so
//!    strings or ObjectIds in the field cannot hide the largest number.
//! 2. Candidate = found + step (never before `start`), or `start` when nothing was found.
//! 3. `insertDocument`: the caller sets `fields` on its document and inserts it. Duplicate
//!    key → back to 1, capped by [`MAX_RETRIES`](crate::command::MAX_RETRIES).
//!
//! The sequence field must be a top-level field (typically `_id`) with a unique index.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::command::{
    operator, unexpected, Collection, Command, FindOptions, Plan, PlanState, Reply, Retries, Step,
};
use crate::ejson;
use crate::error::SeqError;
use crate::options::SequenceSpec;
use crate::scope;

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
#[derive(Debug, Clone)]
pub struct OptimisticInsert {
    spec: SequenceSpec,
    field: String,
    format_field: Option<String>,
    find: Command,
    phase: Phase,
    retries: Retries,
    state: PlanState<OptimisticOutcome>,
}

fn check_top_level(argument: &str, field: &str) -> Result<(), SeqError> {
    if field.is_empty()
        || field.starts_with('$')
        || field.contains('.')
        || field.chars().any(char::is_control)
    {
        return Err(SeqError::invalid_argument(
            argument,
            format!("{field:?} must be a non-empty top-level field name"),
        ));
    }
    Ok(())
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
        let mut filter = Map::new();
        for scope_field in spec.scope() {
            let value = match document {
                Some(document) => scope::required_value(document, scope_field)?,
                None => {
                    return Err(SeqError::MissingScopeField {
                        field: scope_field.clone(),
                    })
                }
            };
            filter.insert(scope_field.clone(), value.clone());
        }
        let mut numbers = Map::new();
        numbers.insert("$gte".to_owned(), ejson::long(i64::MIN));
        numbers.insert("$lte".to_owned(), ejson::long(i64::MAX));
        filter.insert(field.to_owned(), Value::Object(numbers));
        let direction = if spec.step() > 0 { -1 } else { 1 };
        let find = Command::FindOne {
            collection: Collection::Documents,
            filter: Value::Object(filter),
            options: Some(FindOptions {
                sort: operator(field, Value::from(direction)),
                projection: operator(field, Value::from(1)),
            }),
        };
        Ok(Self {
            spec: spec.clone(),
            field: field.to_owned(),
            format_field: format_field.map(str::to_owned),
            state: PlanState::Waiting(find.clone()),
            find,
            phase: Phase::Find,
            retries: Retries::default(),
        })
    }

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
                let raw = scope::lookup(&document, &self.field)
                    .ok()
                    .flatten()
                    .ok_or_else(|| SeqError::MalformedDocument {
                        field: self.field.clone(),
                        reason: "is missing".to_owned(),
                    })?;
                let found = ejson::read_i64(raw).map_err(|reason| SeqError::MalformedDocument {
                    field: self.field.clone(),
                    reason,
                })?;
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

impl Plan for OptimisticInsert {
    type Output = OptimisticOutcome;

    fn start(&self) -> Result<Step<OptimisticOutcome>, SeqError> {
        self.state.step()
    }

    fn feed(&mut self, reply: Reply) -> Result<Step<OptimisticOutcome>, SeqError> {
        self.state.ensure_waiting()?;
        let next = self.transition(reply);
        self.state.settle(next)
    }
}
