//! `insertOptimistic`: the tutorial's optimistic loop, without a counters collection.
//!
//! 1. `findOne` of the largest number in the field, in the document collection (see
//!    [`crate::counter::largest`]).
//! 2. Candidate = found + step (never before `start`), or `start` when nothing was found.
//! 3. `insertDocument`: the caller sets `fields` on its document and inserts it. Duplicate
//!    key → `wait` in the [`Backoff::OPTIMISTIC`] window (exponential, full jitter), then back
//!    to 1; after `maxAttempts` inserts (default [`DEFAULT_MAX_ATTEMPTS`]) `TOO_MANY_RETRIES`.
//!
//! The tutorial's loop never gives up; this one has a budget so a caller is never stuck, and
//! backs off so that processes colliding on one candidate do not collide again at once. The
//! sequence field must be a top-level field (typically `_id`) with a unique index.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::counter::largest::{largest_number_query, read_found};
use crate::ejson;
use crate::error::SeqError;
use crate::insert::backoff::Backoff;
use crate::insert::fields::check_insert_fields;
use crate::protocol::command::{Collection, Command};
use crate::protocol::machine::{Machine, MachinePlan};
use crate::protocol::plan::Step;
use crate::protocol::reply::{unexpected, Reply};
use crate::sequence::options::SequenceSpec;

/// Inserts tried before `TOO_MANY_RETRIES`, unless the caller sets `maxAttempts`.
pub const DEFAULT_MAX_ATTEMPTS: u32 = 100;

/// Largest `maxAttempts` (with the 100 ms cap of the backoff: under 17 minutes of waiting).
pub const MAX_ATTEMPTS_LIMIT: u32 = 10_000;

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
    Wait,
}

/// The optimistic insert plan; see the module docs.
pub type OptimisticInsert = MachinePlan<OptimisticInsertMachine>;

/// The state of an [`OptimisticInsert`].
#[derive(Debug, Clone)]
pub struct OptimisticInsertMachine {
    spec: SequenceSpec,
    field: String,
    format_field: Option<String>,
    find: Command,
    phase: Phase,
    attempts: u32,
    max_attempts: u32,
}

impl OptimisticInsert {
    /// `document` supplies the scope values (required when the sequence is scoped); the
    /// attempt budget is [`DEFAULT_MAX_ATTEMPTS`].
    pub fn new(
        spec: &SequenceSpec,
        field: &str,
        document: Option<&Value>,
        format_field: Option<&str>,
    ) -> Result<Self, SeqError> {
        Self::with_max_attempts(spec, field, document, format_field, &Value::Null)
    }

    /// Like [`OptimisticInsert::new`], with the caller's `maxAttempts` option: an integer from
    /// 1 to [`MAX_ATTEMPTS_LIMIT`] (`null`: the default).
    pub fn with_max_attempts(
        spec: &SequenceSpec,
        field: &str,
        document: Option<&Value>,
        format_field: Option<&str>,
        max_attempts: &Value,
    ) -> Result<Self, SeqError> {
        check_insert_fields(spec, field, format_field)?;
        let max_attempts = read_max_attempts(max_attempts)?;
        let find = largest_number_query(spec, field, document)?;
        let machine = OptimisticInsertMachine {
            spec: spec.clone(),
            field: field.to_owned(),
            format_field: format_field.map(str::to_owned),
            find: find.clone(),
            phase: Phase::Find,
            attempts: 0,
            max_attempts,
        };
        Ok(MachinePlan::begin(machine, Ok(Step::Command(find))))
    }
}

fn read_max_attempts(raw: &Value) -> Result<u32, SeqError> {
    if raw.is_null() {
        return Ok(DEFAULT_MAX_ATTEMPTS);
    }
    let got = match ejson::read_i64(raw) {
        Ok(value) => match u32::try_from(value) {
            Ok(attempts) if (1..=MAX_ATTEMPTS_LIMIT).contains(&attempts) => return Ok(attempts),
            _ => value.to_string(),
        },
        Err(_) => ejson::describe(raw),
    };
    Err(SeqError::InvalidOption {
        option: "maxAttempts".to_owned(),
        reason: format!("must be an integer from 1 to {MAX_ATTEMPTS_LIMIT}, got {got}"),
    })
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
            .and_then(|_| self.spec.format_value(value, None))
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
                if self.attempts >= self.max_attempts {
                    return Err(SeqError::TooManyRetries {
                        operation: "insertOptimistic".to_owned(),
                        counter_id: self.spec.name().to_owned(),
                        attempts: self.attempts,
                    });
                }
                let window = Backoff::OPTIMISTIC.window(self.attempts);
                self.phase = Phase::Wait;
                Ok(Step::Command(Command::Wait {
                    min_ms: window.min_ms,
                    max_ms: window.max_ms,
                }))
            }
            (Phase::Insert(_), other) => Err(unexpected(&other, "insertDocument")),
            (Phase::Wait, Reply::Waited) => {
                self.phase = Phase::Find;
                Ok(Step::Command(self.find.clone()))
            }
            (Phase::Wait, other) => Err(unexpected(&other, "wait")),
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
        self.attempts = self.attempts.saturating_add(1);
        Ok(Step::Command(Command::InsertDocument {
            collection: Collection::Documents,
            fields: Value::Object(fields),
            duplicate_key_on: None,
        }))
    }
}

impl Machine for OptimisticInsertMachine {
    type Output = OptimisticOutcome;

    fn on_reply(&mut self, reply: Reply) -> Result<Step<OptimisticOutcome>, SeqError> {
        self.transition(reply)
    }
}
