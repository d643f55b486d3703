//! Where an insert writes its number, checked before anything is reserved: `field` gets the
//! number and `formatField` the formatted id. Each is a top-level field name (the number is set
//! on a copy of the caller's document, and the optimistic loop sorts on it); the two differ,
//! `formatField` needs a `format`, and neither may be (or contain) a scope field, which would
//! overwrite the value the counter was chosen by. A periodic series also writes each number's
//! period in `<field>Period`, which must be free as well.

use crate::error::SeqError;
use crate::sequence::field::{check_field_path, check_number_field};
use crate::sequence::options::SequenceSpec;
use crate::sequence::period::period_field;

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
    let check = |argument: &str, path: &str| {
        if dotted {
            check_field_path(argument, path)
        } else {
            check_number_field(argument, path)
        }
    };
    check("field", field)?;
    check_not_scope(spec, "field", field)?;
    if let Some(format_field) = format_field {
        check("formatField", format_field)?;
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
    if spec.reset().is_periodic() {
        let period = period_field(field);
        if format_field == Some(period.as_str()) {
            return Err(SeqError::invalid_argument(
                "formatField",
                format!("must differ from `{period}`: a periodic series writes the period there"),
            ));
        }
        check_not_scope(spec, "field", &period)?;
    }
    Ok(())
}

/// MongoDB's limit on one document, in bytes of BSON.
pub const MAX_DOCUMENT_BYTES: u64 = 16 * 1024 * 1024;

/// Room for what an insert adds to a document: its number and its formatted id (field names of
/// at most 200 bytes, a formatted id of a few dozen).
pub const ADDED_FIELDS_BYTES: u64 = 1024;

/// Checks that a caller's document of `bytes` bytes of BSON can still be stored once numbered
/// (done before a number is reserved for it): `INVALID_ARGUMENT` naming `argument` otherwise.
pub fn check_document_size(argument: &str, bytes: u64) -> Result<(), SeqError> {
    if bytes.saturating_add(ADDED_FIELDS_BYTES) <= MAX_DOCUMENT_BYTES {
        return Ok(());
    }
    Err(SeqError::invalid_argument(
        argument,
        format!("is {bytes} bytes of BSON: with its number it would exceed MongoDB's 16 MiB document limit"),
    ))
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
    fn a_document_must_leave_room_for_its_number() {
        assert_eq!(check_document_size("doc", 100), Ok(()));
        assert_eq!(
            check_document_size("doc", MAX_DOCUMENT_BYTES - ADDED_FIELDS_BYTES),
            Ok(())
        );
        let error = check_document_size("docs[3]", MAX_DOCUMENT_BYTES).unwrap_err();
        assert_eq!(error.option_name(), Some("docs[3]"));
        assert!(error.to_string().contains("16 MiB"), "{error}");
    }

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
