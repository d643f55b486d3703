//! Counter documents: reading the last number issued from one.
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

use serde_json::Value;

use crate::ejson;
use crate::error::SeqError;

/// Reads the last number issued (`field`, `seq` by default) from a counter document, checking
/// that `_id` is the expected counter.
pub fn read_counter(document: &Value, counter_id: &str, field: &str) -> Result<i64, SeqError> {
    let Value::Object(map) = document else {
        return Err(SeqError::malformed_counter(
            counter_id,
            format!("expected a document, got {}", ejson::describe(document)),
        ));
    };
    match map.get("_id") {
        Some(Value::String(id)) if id == counter_id => {}
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
