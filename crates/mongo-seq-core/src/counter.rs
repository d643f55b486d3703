//! Counter documents and the read-only `current()` plan.
//!
//! A counter is `{ _id: <counter id>, seq: <last value issued> }`, exactly the document
//! MongoDB's auto-increment tutorial creates, so counters made by its `getNextSequence()`
//! keep working. A fresh counter holds `start - step` (the tutorial's `seq: 0` for the
//! defaults). `seq` may be any BSON integer type or an integral double up to 2^53.
//!
//! The sequence option `counterField` names that field otherwise, so counters other recipes
//! made keep working in place: `{ _id, sequence }` (the Go block-allocation article),
//! `{ _id: "<db>.<collection>", seq_value }` (the Atlas trigger recipe). It is a plain
//! top-level field; `_id`, and `epoch` and `intent` (the sidecar's fencing and gapless
//! protocols keep them in the counter document) are reserved.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::command::{unexpected, Collection, Command, Reply, Step};
use crate::driver::{Driver, Machine};
use crate::ejson;
use crate::error::SeqError;
use crate::options::SequenceSpec;

/// The counter field when the options name none: the tutorial's.
pub const DEFAULT_COUNTER_FIELD: &str = "seq";

/// Fields of a counter document that `counterField` cannot name.
const RESERVED_COUNTER_FIELDS: [&str; 3] = ["_id", "epoch", "intent"];

/// Longest `counterField`, in UTF-8 bytes.
const MAX_COUNTER_FIELD_BYTES: usize = 200;

/// Checks a `counterField` option: a plain top-level field name, not a reserved one.
pub(crate) fn check_counter_field(field: &str) -> Result<String, SeqError> {
    let reason = if field.is_empty() {
        "must not be empty".to_owned()
    } else if field.len() > MAX_COUNTER_FIELD_BYTES {
        format!("must be at most {MAX_COUNTER_FIELD_BYTES} bytes")
    } else if field.starts_with('$') || field.contains('.') || field.contains('\0') {
        format!(
            "must be a plain top-level field name (no leading '$', no '.', no NUL), got {}",
            ejson::quoted(&ejson::truncate(field))
        )
    } else if RESERVED_COUNTER_FIELDS.contains(&field) {
        format!(
            "`{field}` is reserved in counter documents (reserved: {})",
            RESERVED_COUNTER_FIELDS.join(", ")
        )
    } else {
        return Ok(field.to_owned());
    };
    Err(SeqError::InvalidOption {
        option: "counterField".to_owned(),
        reason,
    })
}

/// Longest `counterId` document, as JSON text (the scoped ids' limit).
const MAX_COUNTER_KEY_BYTES: usize = crate::name::MAX_COUNTER_ID_BYTES;

/// Checks a `counterId` option: a string or a document (Extended JSON, its values any BSON
/// value), for an unscoped sequence. Counters other recipes made keep their `_id`: the Atlas
/// trigger recipe's is the change event's namespace, `{ db, coll }` (field order kept).
pub(crate) fn check_counter_key(value: &Value, scope: &[String]) -> Result<Value, SeqError> {
    let invalid = |reason: String| SeqError::InvalidOption {
        option: "counterId".to_owned(),
        reason,
    };
    if !scope.is_empty() {
        return Err(invalid(
            "names one counter: a scoped sequence has one per scope value (drop `scope`, or `counterId`)".to_owned(),
        ));
    }
    match value {
        Value::String(id) if id.is_empty() || id.len() > MAX_COUNTER_KEY_BYTES => Err(invalid(
            format!("must be 1..={MAX_COUNTER_KEY_BYTES} bytes"),
        )),
        Value::String(_) => Ok(value.clone()),
        Value::Object(map) if !ejson::is_unrepresentable(value) => {
            if map.is_empty() {
                return Err(invalid("must not be an empty document".to_owned()));
            }
            if let Some(key) = map.keys().find(|k| k.starts_with('$')) {
                return Err(invalid(format!(
                    "must be a document of fields, got one with `{}` (an operator or an Extended JSON wrapper cannot be a counter's `_id`)",
                    ejson::truncate(key)
                )));
            }
            let bytes = serde_json::to_string(value).map_or(usize::MAX, |text| text.len());
            if bytes > MAX_COUNTER_KEY_BYTES {
                return Err(invalid(format!(
                    "must be at most {MAX_COUNTER_KEY_BYTES} bytes as JSON, got {bytes}"
                )));
            }
            Ok(value.clone())
        }
        other => Err(invalid(format!(
            "must be a string or a document (the counter's `_id`), got {}",
            ejson::describe(other)
        ))),
    }
}

/// Reads the last number issued (`field`, `seq` by default) from a counter document, checking
/// that `_id` is the expected counter.
pub fn read_counter(document: &Value, counter_id: &str, field: &str) -> Result<i64, SeqError> {
    read_counter_of(
        document,
        counter_id,
        &Value::String(counter_id.to_owned()),
        field,
    )
}

/// [`read_counter`] of a counter whose `_id` is `id` (the `counterId` option's document).
pub(crate) fn read_counter_of(
    document: &Value,
    counter_id: &str,
    id: &Value,
    field: &str,
) -> Result<i64, SeqError> {
    let Value::Object(map) = document else {
        return Err(SeqError::malformed_counter(
            counter_id,
            format!("expected a document, got {}", ejson::describe(document)),
        ));
    };
    match map.get("_id") {
        // The filter matched the `_id` exactly (documents in field order); the reply is checked
        // to be that counter's.
        Some(found) if found == id => {}
        Some(other) => {
            return Err(SeqError::malformed_counter(
                counter_id,
                format!(
                    "reply is for another counter (_id {})",
                    ejson::describe(other)
                ),
            ))
        }
        None => {
            return Err(SeqError::malformed_counter(
                counter_id,
                "document has no `_id`",
            ))
        }
    }
    let seq = map.get(field).ok_or_else(|| {
        SeqError::malformed_counter(counter_id, format!("document has no `{field}` field"))
    })?;
    ejson::read_i64(seq).map_err(|reason| {
        SeqError::malformed_counter(counter_id, format!("field `{field}` {reason}"))
    })
}

/// Where a counter stands: the last number issued (`null` when the counter does not exist)
/// and the number the next reservation would start with (`null` when exhausted).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CounterState {
    pub last: Option<i64>,
    pub next: Option<i64>,
}

impl CounterState {
    pub(crate) fn of(spec: &SequenceSpec, last: Option<i64>) -> Self {
        let next = match last {
            Some(last) => spec.next_after(last),
            None => Some(spec.start()),
        };
        Self { last, next }
    }
}

/// `current()`: one `findOne({_id})`, no writes.
pub type CurrentValue = Driver<CurrentValueMachine>;

/// The state of a [`CurrentValue`].
#[derive(Debug, Clone)]
pub struct CurrentValueMachine {
    spec: SequenceSpec,
    counter_id: String,
}

impl CurrentValue {
    pub fn new(spec: &SequenceSpec, counter_id: &str) -> Result<Self, SeqError> {
        spec.check_counter_id(counter_id)?;
        let command = Command::FindOne {
            collection: Collection::Counters,
            filter: Value::Object(spec.id_filter(counter_id)),
            options: None,
        };
        let machine = CurrentValueMachine {
            spec: spec.clone(),
            counter_id: counter_id.to_owned(),
        };
        Ok(Driver::begin(machine, Ok(Step::Command(command))))
    }
}

impl Machine for CurrentValueMachine {
    type Output = CounterState;

    fn on_reply(&mut self, reply: Reply) -> Result<Step<CounterState>, SeqError> {
        match reply {
            Reply::Document { document } => self
                .spec
                .read_counter(&document, &self.counter_id)
                .and_then(|last| self.spec.check_counter(&self.counter_id, last))
                .map(|last| Step::Done(CounterState::of(&self.spec, Some(last)))),
            Reply::None => Ok(Step::Done(CounterState::of(&self.spec, None))),
            other => Err(unexpected(&other, "findOne")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::command::Plan;
    use crate::{Reservation, ReserveRequest};
    use serde_json::json;

    #[test]
    fn a_counter_key_document_is_the_counters_id_in_order() {
        let spec = SequenceSpec::parse(&json!({
            "name": "students", "counterField": "seq_value",
            "counterId": {"db": "school", "coll": "students"}
        }))
        .unwrap();
        assert_eq!(
            spec.counter_document_id("students"),
            json!({"db": "school", "coll": "students"})
        );
        let plan = Reservation::new(&spec, &ReserveRequest::new("students", 1)).unwrap();
        let Ok(Step::Command(command)) = plan.start() else {
            panic!()
        };
        let text = serde_json::to_string(&command).unwrap();
        assert!(
            text.contains(r#""_id":{"db":"school","coll":"students"}"#),
            "{text}"
        );
        let reply = |id: Value| Reply::Document {
            document: json!({"_id": id, "seq_value": 7}),
        };
        let ours = plan
            .clone()
            .feed(reply(json!({"db": "school", "coll": "students"})));
        assert!(matches!(ours, Ok(Step::Done(_))), "{ours:?}");
        let mut plan = plan;
        let other = plan.feed(reply(json!({"db": "school", "coll": "teachers"})));
        assert_eq!(other.unwrap_err().code(), "MALFORMED_COUNTER");
    }

    #[test]
    fn counter_key_rules() {
        let code = |options: Value| {
            SequenceSpec::parse(&options)
                .err()
                .map(|e| (e.code(), e.option_name().map(str::to_owned)))
        };
        assert_eq!(code(json!({"name": "a", "counterId": "shop.orders"})), None);
        assert_eq!(code(json!({"name": "a", "counterId": null})), None);
        for bad in [
            json!({"name": "a", "counterId": {"db": "x"}, "scope": ["t"]}),
            json!({"name": "a", "counterId": {}}),
            json!({"name": "a", "counterId": {"$in": [1]}}),
            json!({"name": "a", "counterId": ""}),
            json!({"name": "a", "counterId": 5}),
            json!({"name": "a", "counterId": [1]}),
            json!({"name": "a", "counterId": {"x": "y".repeat(1001)}}),
        ] {
            assert_eq!(
                code(bad.clone()),
                Some(("INVALID_OPTION", Some("counterId".to_owned()))),
                "{bad}"
            );
        }
    }
}
