//! Field paths: the rules shared by scope fields and number fields, and the check of where an
//! insert writes its number, made before anything is reserved.
//!
//! * Every path: 1..=200 bytes, no control characters, no empty segment, no segment starting
//!   with `$` (an operator, not a field).
//! * A field path the sidecar writes a number to (and `waitForNumber` reads) may be nested.
//! * A **number field** of an insert (`field`, `formatField`) is a top-level field name: the
//!   number is set on a copy of the caller's document, and the optimistic loop sorts on it.
//!   The two differ, `formatField` needs a `format`, and neither may be (or contain) a scope
//!   field, which would overwrite the value the counter was chosen by.

use crate::error::SeqError;
use crate::options::SequenceSpec;

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

/// Checks where an insert numbered by `spec` writes: `field` gets the number, `format_field`
/// (optional) the formatted id.
pub fn check_insert_fields(
    spec: &SequenceSpec,
    field: &str,
    format_field: Option<&str>,
) -> Result<(), SeqError> {
    check_fields(spec, field, format_field, false)
}

/// Checks where a document numbered in place (the mongoose plugin sets the values on the
/// application's own document) gets its number: as [`check_insert_fields`], but either path may
/// be nested (`parent.nested`), and neither may lie inside the other or a scope field.
pub fn check_document_fields(
    spec: &SequenceSpec,
    field: &str,
    format_field: Option<&str>,
) -> Result<(), SeqError> {
    check_fields(spec, field, format_field, true)
}

fn check_fields(
    spec: &SequenceSpec,
    field: &str,
    format_field: Option<&str>,
    dotted: bool,
) -> Result<(), SeqError> {
    check("field", field, dotted)?;
    check_not_scope(spec, "field", field)?;
    if let Some(format_field) = format_field {
        check("formatField", format_field, dotted)?;
        if format_field == field {
            return Err(SeqError::invalid_argument(
                "formatField",
                "must differ from `field`",
            ));
        }
        if within(format_field, field) || within(field, format_field) {
            return Err(SeqError::invalid_argument(
                "formatField",
                format!("`{format_field}` and `field` `{field}` must not lie inside each other"),
            ));
        }
        if spec.format().is_none() {
            return Err(SeqError::invalid_argument(
                "formatField",
                format!("sequence `{}` has no format", spec.name()),
            ));
        }
        check_not_scope(spec, "formatField", format_field)?;
    }
    Ok(())
}

/// Whether `path` lies inside `parent` (`a.b` inside `a`).
fn within(path: &str, parent: &str) -> bool {
    path.strip_prefix(parent)
        .is_some_and(|rest| rest.starts_with('.'))
}

/// A field that is, holds, or lies inside a scope field would overwrite a scope value.
fn check_not_scope(spec: &SequenceSpec, argument: &str, field: &str) -> Result<(), SeqError> {
    let clash = spec
        .scope()
        .iter()
        .find(|scope| scope.as_str() == field || within(scope, field) || within(field, scope));
    match clash {
        None => Ok(()),
        Some(scope) => Err(SeqError::invalid_argument(
            argument,
            format!(
                "{} would overwrite the scope field `{scope}` of the document",
                crate::ejson::quoted(field)
            ),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn document_fields_may_be_nested() {
        let spec = SequenceSpec::parse(&serde_json::json!({
            "name": "o", "scope": ["tenant"], "format": "O{seq}"
        }))
        .unwrap();
        let code = |field: &str, format_field: Option<&str>| {
            check_document_fields(&spec, field, format_field).map_err(|e| e.code())
        };
        assert_eq!(code("parent.nested", Some("parent.ref")), Ok(()));
        assert_eq!(code("a.b", Some("a")), Err("INVALID_ARGUMENT"));
        assert_eq!(code("a", Some("a.b")), Err("INVALID_ARGUMENT"));
        assert_eq!(code("tenant.n", None), Err("INVALID_ARGUMENT"));
        assert_eq!(code("a.$b", None), Err("INVALID_ARGUMENT"));
        assert_eq!(
            check_insert_fields(&spec, "a.b", None).map_err(|e| e.code()),
            Err("INVALID_ARGUMENT")
        );
    }
    use serde_json::json;

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
    fn insert_fields() {
        let spec = SequenceSpec::parse(
            &json!({"name": "inv", "format": "I{seq}", "scope": ["tenant", "customer.region"]}),
        )
        .unwrap();
        let code = |field: &str, format_field: Option<&str>| {
            check_insert_fields(&spec, field, format_field).map_err(|e| e.code())
        };
        assert_eq!(code("_id", Some("code")), Ok(()));
        assert_eq!(code("n", Some("n")), Err("INVALID_ARGUMENT"));
        assert_eq!(code("tenant", None), Err("INVALID_ARGUMENT"));
        assert_eq!(code("customer", None), Err("INVALID_ARGUMENT"));
        assert_eq!(code("cust", None), Ok(()));
        assert_eq!(code("n", Some("tenant")), Err("INVALID_ARGUMENT"));
        assert_eq!(code("n", Some("$c")), Err("INVALID_ARGUMENT"));
        let plain = SequenceSpec::parse(&json!({"name": "plain"})).unwrap();
        assert_eq!(
            check_insert_fields(&plain, "n", Some("code")).map_err(|e| e.code()),
            Err("INVALID_ARGUMENT")
        );
    }
}
