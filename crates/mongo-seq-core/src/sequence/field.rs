//! Field paths: the rules shared by scope fields and number fields.
//!
//! * Every path: 1..=200 bytes, no control characters, no empty segment, no segment starting
//!   with `$` (an operator, not a field).
//! * A field path the sidecar writes a number to (and `waitForNumber` reads) may be nested.
//! * A **number field** of an insert is a top-level field name (see
//!   [`crate::insert::fields`] for the rest of an insert's rules).

use serde_json::Value;

use crate::error::SeqError;

/// Longest field path, in UTF-8 bytes.
pub const MAX_FIELD_BYTES: usize = 200;

/// Why `field` is not a usable path, if it is not; `dotted` allows nested paths (`a.b`).
pub(crate) fn path_problem(field: &str, dotted: bool) -> Option<&'static str> {
    if field.is_empty() || field.len() > MAX_FIELD_BYTES {
        return Some("must be 1..=200 bytes");
    }
    if field.chars().any(char::is_control) {
        return Some("must not contain control characters");
    }
    if !dotted && field.contains('.') {
        return Some("must be a top-level field name, without '.'");
    }
    for segment in field.split('.') {
        if segment.is_empty() {
            return Some("must not have an empty path segment");
        }
        if segment.starts_with('$') {
            return Some("must not start with '$' (that is an operator, not a field)");
        }
    }
    None
}

/// Checks a number field: a top-level field name (`argument` names it in the error).
pub fn check_number_field(argument: &str, field: &str) -> Result<(), SeqError> {
    check(argument, field, false)
}

fn check(argument: &str, field: &str, dotted: bool) -> Result<(), SeqError> {
    match path_problem(field, dotted) {
        None => Ok(()),
        Some(reason) => Err(SeqError::invalid_argument(
            argument,
            format!(
                "{} {reason}",
                crate::ejson::quoted(&crate::ejson::truncate(field))
            ),
        )),
    }
}

/// Checks a field path that may be nested (`meta.seq`): where the sidecar writes a number, and
/// where `waitForNumber` reads it (`argument` names it in the error).
pub fn check_field_path(argument: &str, field: &str) -> Result<(), SeqError> {
    check(argument, field, true)
}

/// The value at a dotted `path` (any value, `null` included), following embedded documents
/// only: absent when a segment is missing or the path crosses anything else (an array too).
pub fn stored_value<'a>(document: &'a Value, path: &str) -> Option<&'a Value> {
    path.split('.')
        .try_fold(document, |current, part| match current {
            Value::Object(map) => map.get(part),
            _ => None,
        })
}

/// `paths` sorted and deduplicated, without those inside another (`a.b` beside `a`): what a
/// projection takes (the server refuses overlapping paths, a "path collision").
pub fn outermost_paths<'a>(paths: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    let mut sorted: Vec<&str> = paths.into_iter().collect();
    sorted.sort_unstable();
    sorted.dedup();
    let mut outermost: Vec<String> = Vec::new();
    for path in sorted {
        // Sorted, so a path's ancestors come before it.
        let inside = outermost.iter().any(|outer| {
            path.strip_prefix(outer.as_str())
                .is_some_and(|rest| rest.starts_with('.'))
        });
        if !inside {
            outermost.push(path.to_owned());
        }
    }
    outermost
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn stored_values_follow_documents_only() {
        let doc = json!({"a": {"b": 5}, "c": null, "d": [{"b": 1}], "e": {"$numberLong": "7"}});
        assert_eq!(stored_value(&doc, "a.b"), Some(&json!(5)));
        assert_eq!(stored_value(&doc, "c"), Some(&Value::Null));
        assert_eq!(stored_value(&doc, "d.b"), None);
        assert_eq!(stored_value(&doc, "a.x"), None);
        assert_eq!(stored_value(&doc, "e"), Some(&json!({"$numberLong": "7"})));
    }

    #[test]
    fn number_fields() {
        for good in ["_id", "n", "seq", "ünïcode", "a-b c"] {
            assert_eq!(check_number_field("field", good), Ok(()), "{good:?}");
        }
        assert_eq!(check_field_path("field", "meta.seq"), Ok(()));
        assert!(check_field_path("field", "meta.$seq").is_err());
        let long = "x".repeat(201);
        for bad in [
            "",
            "$n",
            "a.b",
            ".a",
            "a.",
            "a\u{0}b",
            "a\nb",
            long.as_str(),
        ] {
            let error = check_number_field("field", bad).unwrap_err();
            assert_eq!(error.code(), "INVALID_ARGUMENT", "{bad:?}");
            assert!(error.to_string().contains("`field`"), "{error}");
        }
    }

    #[test]
    fn a_projection_takes_the_outermost_paths() {
        assert_eq!(
            outermost_paths(["customer.name", "_id", "customer", "no", "customerId", "no"]),
            ["_id", "customer", "customerId", "no"]
        );
    }
}
