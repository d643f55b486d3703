//! The `counterField` option: which field of a counter document holds the last number issued.
//!
//! It is `seq` by default (the tutorial's), or another plain top-level field so counters other
//! recipes made keep working in place (see the counter documents' docs). `_id`, and `epoch`
//! and `intent` (the sidecar's fencing and gapless protocols keep them in the counter document)
//! are reserved.

use crate::ejson;
use crate::error::SeqError;

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
