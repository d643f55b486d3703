//! Which counters a sequence's numbers live in: the `scope` option, the counter ids (the
//! scope's values, then the period when the sequence resets), and the check that an id is one.

use serde_json::Value;

use super::{invalid, SequenceSpec};
use crate::ejson;
use crate::error::SeqError;
use crate::sequence::period::Period;
use crate::sequence::scope::{self, MAX_SCOPE_FIELDS};

impl SequenceSpec {
    /// The counter `_id` for a document (see [`crate::sequence::scope`]); the name when
    /// unscoped. A periodic sequence's ids need a period: see [`SequenceSpec::counter_id_in`].
    pub fn counter_id(&self, document: Option<&Value>) -> Result<String, SeqError> {
        self.counter_id_in(document, None)
    }

    /// The counter `_id` for a document in `period` (the period of a number of a sequence that
    /// resets; `None` for one that never does): the scope's id, then `/` and the period; the
    /// `counterId` option's when it is a string (every name reported for a counter is its `_id`).
    /// `INVALID_ARGUMENT` naming `period` when it is missing or of another kind.
    pub fn counter_id_in(
        &self,
        document: Option<&Value>,
        period: Option<&Period>,
    ) -> Result<String, SeqError> {
        self.check_period(period)?;
        if let Some(Value::String(id)) = &self.counter_id {
            return Ok(id.clone());
        }
        scope::counter_id(&self.name, &self.scope, document, period)
    }

    /// Checks that a counter id belongs to this sequence (guards against mixing sequences):
    /// its name, a scope when scoped, a period of its kind when periodic.
    pub(crate) fn check_counter_id(&self, counter_id: &str) -> Result<(), SeqError> {
        let without_period = if self.reset.is_periodic() {
            counter_id
                .rsplit_once('/')
                .filter(|(_, last)| {
                    Period::parse(last).is_some_and(|period| period.reset() == self.reset)
                })
                .map(|(rest, _)| rest)
        } else {
            Some(counter_id)
        };
        // The `counterId` option's string is the counter's id; its name still names it.
        let own = matches!(&self.counter_id, Some(Value::String(id)) if id == counter_id);
        let belongs = own
            || without_period.is_some_and(|id| {
                if self.scope.is_empty() {
                    id == self.name
                } else {
                    // Every segment after the name a scope field's (a period is only last).
                    id.strip_prefix(self.name.as_str())
                        .and_then(|rest| rest.strip_prefix('/'))
                        .is_some_and(|scope| scope.split('/').all(|segment| segment.contains('=')))
                }
            });
        if !belongs || counter_id.len() > crate::sequence::name::MAX_COUNTER_ID_BYTES {
            return Err(SeqError::invalid_argument(
                "counterId",
                format!(
                    "{} is not a counter id of sequence `{}` (use counterId())",
                    ejson::quoted(&ejson::truncate(counter_id)),
                    self.name
                ),
            ));
        }
        Ok(())
    }
}

pub(super) fn parse_scope(raw: Option<&Value>) -> Result<Vec<String>, SeqError> {
    let items = match raw {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(Value::Array(items)) => items,
        Some(other) => {
            return Err(invalid(
                "scope",
                format!(
                    "must be an array of field names, got {}",
                    ejson::describe(other)
                ),
            ))
        }
    };
    if items.len() > MAX_SCOPE_FIELDS {
        return Err(invalid(
            "scope",
            format!("at most {MAX_SCOPE_FIELDS} fields, got {}", items.len()),
        ));
    }
    let mut fields: Vec<String> = Vec::with_capacity(items.len());
    for item in items {
        let Value::String(field) = item else {
            return Err(invalid(
                "scope",
                format!("entries must be strings, got {}", ejson::describe(item)),
            ));
        };
        scope::validate_field_path(field)?;
        if fields.contains(field) {
            return Err(SeqError::InvalidScope {
                field: field.clone(),
                reason: "listed twice".to_owned(),
            });
        }
        fields.push(field.clone());
    }
    Ok(fields)
}
