//! The `counterField` option: which field of a counter document holds the last number issued.
//!
//! It is `seq` by default (the tutorial's), or another plain top-level field so counters other
//! recipes made keep working in place (see the counter documents' docs). `_id`, `epoch` and
//! `intent` (the sidecar's fencing and gapless protocols keep them in the counter document) and
//! `definition` (the options the counter records) are reserved.
//!
//! The `counterId` option: the counter's `_id` when it is not the sequence's name — counters
//! other recipes made keep their `_id` (the Atlas trigger recipe's is the change event's
//! namespace, `{ db, coll }`, field order kept).

use serde_json::Value;

use crate::ejson;
use crate::error::SeqError;
use crate::sequence::name::MAX_COUNTER_ID_BYTES;

/// The counter field when the options name none: the tutorial's.
pub const DEFAULT_COUNTER_FIELD: &str = "seq";

/// Fields of a counter document that `counterField` cannot name.
const RESERVED_COUNTER_FIELDS: [&str; 4] = ["_id", "epoch", "intent", "definition"];

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
const MAX_COUNTER_KEY_BYTES: usize = MAX_COUNTER_ID_BYTES;

/// Checks a `counterId` option: a string or a document (Extended JSON, its values any BSON
/// value), for an unscoped sequence.
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
