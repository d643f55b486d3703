//! A case's outcome against its expected `output` or `error` (code, `messageIncludes`).

use mongo_seq_core::SeqError;
use serde_json::Value;

/// Compares an outcome with `expected.output` / `expected.error`.
pub(crate) fn compare(
    label: &str,
    expected: &Value,
    got: &Result<Value, SeqError>,
    problems: &mut Vec<String>,
) {
    match (expected.get("error"), got) {
        (Some(error), Err(actual)) => {
            if error["code"] != actual.code() {
                problems.push(format!(
                    "{label}: expected error {}, got {} ({actual})",
                    error["code"],
                    actual.code()
                ));
            }
            if let Some(fragment) = error.get("messageIncludes").and_then(Value::as_str) {
                if !actual.to_string().contains(fragment) {
                    problems.push(format!(
                        "{label}: message {:?} lacks {fragment:?}",
                        actual.to_string()
                    ));
                }
            }
        }
        (Some(error), Ok(actual)) => problems.push(format!(
            "{label}: expected error {}, got output {actual}",
            error["code"]
        )),
        (None, Err(actual)) => problems.push(format!(
            "{label}: unexpected error {} ({actual})",
            actual.code()
        )),
        (None, Ok(actual)) => {
            let want = expected.get("output").unwrap_or(&Value::Null);
            if want != actual {
                problems.push(format!(
                    "{label}: output differs\n  expected: {}\n  actual:   {}",
                    serde_json::to_string(want).unwrap_or_default(),
                    serde_json::to_string(actual).unwrap_or_default()
                ));
            }
        }
    }
}
