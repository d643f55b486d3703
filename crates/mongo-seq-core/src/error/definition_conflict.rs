//! [`DefinitionConflict`]: how a counter's stored definition differs from the caller's
//! (`SEQUENCE_CONFLICT`), and how a definition reads in messages and tools.

use serde_json::Value;

use crate::ejson::{object, truncate};

/// How a stored counter definition differs from the caller's ([`SeqError::SequenceConflict`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DefinitionConflict {
    /// The first option that differs.
    pub option: String,
    /// Its value in the caller's definition and in the stored one (`None`: not set).
    pub our_value: Option<Value>,
    pub stored_value: Option<Value>,
    /// Both definitions (the stored one `null` when it is not there).
    pub ours: Value,
    pub stored: Value,
}

impl DefinitionConflict {
    /// `SEQUENCE_CONFLICT`'s details: `{counterId, option, ours, stored}`.
    pub(super) fn details(&self, counter_id: &str) -> Value {
        object([
            ("counterId", counter_id.into()),
            ("option", self.option.as_str().into()),
            ("ours", self.ours.clone()),
            ("stored", self.stored.clone()),
        ])
    }
}

pub(super) fn fmt_option(value: &Option<Value>) -> String {
    value
        .as_ref()
        .map_or_else(|| "not set".to_owned(), |value| truncate(&fmt_value(value)))
}

/// A counter definition for people, `{start: 1, step: 2}` (integers as numbers, not Extended
/// JSON), `none` for `null`: the conflict's message, and the tools that list counters.
pub fn describe_definition(definition: &Value) -> String {
    match definition {
        Value::Object(map) => format!(
            "{{{}}}",
            map.iter()
                .map(|(key, value)| format!("{}: {}", truncate(key), truncate(&fmt_value(value))))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Value::Null => "none".to_owned(),
        other => truncate(&other.to_string()),
    }
}

fn fmt_value(value: &Value) -> String {
    crate::ejson::read_i64(value).map_or_else(|_| value.to_string(), |n| n.to_string())
}
