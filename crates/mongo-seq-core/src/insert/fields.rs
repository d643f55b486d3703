//! Where an insert writes its number, checked before anything is reserved: `field` gets the
//! number and `formatField` the formatted id. Each is a top-level field name (the number is set
//! on a copy of the caller's document, and the optimistic loop sorts on it); the two differ,
//! `formatField` needs a `format`, and neither may be (or contain) a scope field, which would
//! overwrite the value the counter was chosen by.

use crate::error::SeqError;
use crate::sequence::field::check_number_field;
use crate::sequence::options::SequenceSpec;

/// Checks where an insert numbered by `spec` writes: `field` gets the number, `format_field`
/// (optional) the formatted id.
pub fn check_insert_fields(
    spec: &SequenceSpec,
    field: &str,
    format_field: Option<&str>,
) -> Result<(), SeqError> {
    check_number_field("field", field)?;
    check_not_scope(spec, "field", field)?;
    if let Some(format_field) = format_field {
        check_number_field("formatField", format_field)?;
        if format_field == field {
            return Err(SeqError::invalid_argument(
                "formatField",
                "must differ from `field`",
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

/// A top-level field that is, or holds, a scope field would overwrite a scope value.
fn check_not_scope(spec: &SequenceSpec, argument: &str, field: &str) -> Result<(), SeqError> {
    let clash = spec.scope().iter().find(|scope| {
        scope.as_str() == field
            || scope
                .strip_prefix(field)
                .is_some_and(|rest| rest.starts_with('.'))
    });
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
