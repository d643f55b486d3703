//! Size limits of one call.
//!
//! A reservation, `nextMany` or `insertMany` takes at most [`MAX_COUNT`] numbers, and a block
//! holds at most [`MAX_BLOCK`]. Callers check a count *before* anything is reserved, so a batch
//! never reserves numbers it cannot hand back (a JS array of 1,000,000 numbers is ~8 MB; a
//! billion would exhaust memory after the counter moved), and a typo such as `block: 1e12` is
//! an error instead of a gap of 10^12 numbers.

use serde_json::Value;

use crate::ejson;
use crate::error::SeqError;

/// Most numbers one call (reservation, `nextMany`, `insertMany`) may take.
pub const MAX_COUNT: u64 = 1_000_000;

/// Largest `block` option.
pub const MAX_BLOCK: u64 = MAX_COUNT;

/// Reads a batch size (`count` of `nextMany`, the number of documents of `insertMany`, …):
/// an integer from 0 to [`MAX_COUNT`]. `argument` names it in the error.
pub fn check_count(argument: &str, value: &Value) -> Result<u64, SeqError> {
    let got = match ejson::read_i64(value) {
        Ok(count) => match u64::try_from(count) {
            Ok(count) if count <= MAX_COUNT => return Ok(count),
            _ => count.to_string(),
        },
        Err(_) => ejson::describe(value),
    };
    Err(SeqError::invalid_argument(
        argument,
        format!("must be an integer from 0 to {MAX_COUNT} (split larger batches), got {got}"),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn counts() {
        assert_eq!(check_count("count", &json!(0)), Ok(0));
        assert_eq!(check_count("count", &json!(1_000_000)), Ok(MAX_COUNT));
        for bad in [
            json!(-1),
            json!(1_000_001),
            json!(1.5),
            json!("5"),
            json!(null),
        ] {
            let error = check_count("count", &bad).unwrap_err();
            assert_eq!(error.code(), "INVALID_ARGUMENT");
            assert!(error.to_string().contains("`count`"), "{error}");
        }
    }
}
