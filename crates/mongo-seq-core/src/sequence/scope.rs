//! Scoped counters: one counter per combination of document field values (e.g. per tenant).
//!
//! Counter id encoding, designed to be injective and readable:
//!
//! ```text
//! id      = name { "/" field "=" value } [ "/" period ]  ; fields in the order given in `scope`
//! value   = string | "#" integer | "#true" | "#false" | "#oid:" 24 lowercase hex digits
//! period  = YYYY | YYYY-MM | YYYY-MM-DD                  ; a periodic sequence's, always
//! ```
//!
//! * `orders/tenantId=acme`, `orders/tenantId=acme/year=#2024`, `tickets/org=#oid:65a1…`.
//! * A sequence that resets ([`crate::sequence::period`]) has one counter per period, the
//!   period last: `invoices/2026`, `invoices/tenantId=acme/2026`, `tickets/2026-05`. A segment
//!   without `=` can only be the period (a field path has no `=`).
//! * Strings appear as-is except that `%`, `/`, control characters and a *leading* `#` are
//!   percent-encoded (`%25`, `%2F`, `%0A`, `%23`), so a string can never look like a typed
//!   value or contain a separator: `a/b` → `a%2Fb`, `#1` → `%231`.
//! * Integers of every BSON type (int32, int64, integral double) encode the same way, because
//!   MongoDB treats `2024`, `NumberLong(2024)` and `2024.0` as equal; non-integral numbers are
//!   rejected. Strings and numbers never collide: `"2024"` → `2024`, `2024` → `#2024`.
//! * Names cannot contain `/` and field paths cannot contain `/` or `=`, so the id splits
//!   unambiguously. Dotted paths (`customer.region`) read nested documents.
//! * A missing or null field is `MISSING_SCOPE_FIELD`; arrays, embedded documents and other
//!   BSON types are `INVALID_SCOPE_VALUE`.

use serde_json::Value;

use crate::ejson;
use crate::error::SeqError;
use crate::sequence::field::path_problem;
use crate::sequence::name::MAX_COUNTER_ID_BYTES;

/// `$or` branches matching the counters of sequence `name`: `_id == name`, or `name/…`
/// (`0` is the character after `/`, so the range is exactly the ids starting with `name/`).
pub fn counters_of(name: &str) -> Value {
    Value::Array(vec![
        ejson::object([("_id", Value::String(name.to_owned()))]),
        ejson::object([(
            "_id",
            ejson::object([
                ("$gte", Value::String(format!("{name}/"))),
                ("$lt", Value::String(format!("{name}0"))),
            ]),
        )]),
    ])
}

/// Most scope fields a sequence may have.
pub const MAX_SCOPE_FIELDS: usize = 16;

/// Checks one `scope` entry (a field path; see [`crate::sequence::field`]). `/` and `=` are refused
/// too: they separate the parts of a counter id.
pub fn validate_field_path(field: &str) -> Result<(), SeqError> {
    let fail = |reason: &str| SeqError::InvalidScope {
        field: field.to_owned(),
        reason: reason.to_owned(),
    };
    if let Some(reason) = path_problem(field, true) {
        return Err(fail(reason));
    }
    if field.contains(['/', '=']) {
        return Err(fail("must not contain '/' or '='"));
    }
    Ok(())
}

/// Looks up a dotted path in a document; `Ok(None)` when absent or null.
pub(crate) fn lookup<'a>(document: &'a Value, field: &str) -> Result<Option<&'a Value>, SeqError> {
    let mut current = document;
    for part in field.split('.') {
        current = match current {
            Value::Object(map) => match map.get(part) {
                Some(next) => next,
                None => return Ok(None),
            },
            Value::Array(_) => {
                return Err(invalid_value(
                    field,
                    current,
                    "paths through arrays are not supported",
                ))
            }
            _ => return Ok(None),
        };
    }
    Ok(if current.is_null() {
        None
    } else {
        Some(current)
    })
}

fn invalid_value(field: &str, value: &Value, reason: &str) -> SeqError {
    SeqError::InvalidScopeValue {
        field: field.to_owned(),
        value: ejson::describe(value),
        reason: reason.to_owned(),
        index: None,
    }
}

/// Reads a scope field that must be present and usable; returns the raw value.
pub(crate) fn required_value<'a>(document: &'a Value, field: &str) -> Result<&'a Value, SeqError> {
    let value = lookup(document, field)?.ok_or_else(|| SeqError::MissingScopeField {
        field: field.to_owned(),
        index: None,
    })?;
    encode_value(field, value)?;
    Ok(value)
}

/// Encodes one scope value per the grammar above.
pub(crate) fn encode_value(field: &str, value: &Value) -> Result<String, SeqError> {
    match value {
        Value::String(text) => Ok(escape_string(text)),
        Value::Bool(flag) => Ok(format!("#{flag}")),
        Value::Number(_) => integer(field, value),
        Value::Object(map) => {
            if let Some(Value::String(hex)) = map.get("$oid").filter(|_| map.len() == 1) {
                if hex.len() == 24 && hex.bytes().all(|b| b.is_ascii_hexdigit()) {
                    return Ok(format!("#oid:{}", hex.to_ascii_lowercase()));
                }
                return Err(invalid_value(field, value, "$oid must be 24 hex digits"));
            }
            let numeric = [
                "$numberInt",
                "$numberLong",
                "$numberDouble",
                "$numberDecimal",
            ];
            if map.len() == 1 && map.keys().any(|k| numeric.contains(&k.as_str())) {
                return integer(field, value);
            }
            Err(invalid_value(
                field,
                value,
                "only strings, integers, booleans and ObjectIds can scope a counter",
            ))
        }
        Value::Array(_) => Err(invalid_value(field, value, "arrays cannot scope a counter")),
        Value::Null => Err(SeqError::MissingScopeField {
            field: field.to_owned(),
            index: None,
        }),
    }
}

fn integer(field: &str, value: &Value) -> Result<String, SeqError> {
    ejson::read_i64(value)
        .map(|int| format!("#{int}"))
        .map_err(|reason| invalid_value(field, value, &format!("number {reason}")))
}

fn escape_string(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for (index, ch) in text.char_indices() {
        let needs_escape = ch == '%' || ch == '/' || ch.is_control() || (index == 0 && ch == '#');
        if needs_escape {
            let mut buf = [0u8; 4];
            for byte in ch.encode_utf8(&mut buf).bytes() {
                out.push_str(&format!("%{byte:02X}"));
            }
        } else {
            out.push(ch);
        }
    }
    out
}

/// Builds the counter `_id` for `name` scoped by `fields` read from `document`, in `period`
/// (a periodic sequence's; the caller checked its kind).
pub fn counter_id(
    name: &str,
    fields: &[String],
    document: Option<&Value>,
    period: Option<&crate::sequence::period::Period>,
) -> Result<String, SeqError> {
    let mut id = name.to_owned();
    for field in fields {
        let value = match document {
            Some(document) => lookup(document, field)?,
            None => None,
        };
        let value = value.ok_or_else(|| SeqError::MissingScopeField {
            field: field.clone(),
            index: None,
        })?;
        id.push('/');
        id.push_str(field);
        id.push('=');
        id.push_str(&encode_value(field, value)?);
        if id.len() > MAX_COUNTER_ID_BYTES {
            return Err(invalid_value(
                field,
                value,
                "the counter id would exceed 1000 bytes",
            ));
        }
    }
    match period {
        Some(period) => in_period(&id, period),
        None => Ok(id),
    }
}

/// The counter id of the scope's id `scoped` (see [`counter_id`]) in `period`.
pub(crate) fn in_period(
    scoped: &str,
    period: &crate::sequence::period::Period,
) -> Result<String, SeqError> {
    let mut id = String::with_capacity(scoped.len().saturating_add(11));
    id.push_str(scoped);
    id.push('/');
    id.push_str(&period.text());
    if id.len() > MAX_COUNTER_ID_BYTES {
        return Err(SeqError::invalid_argument(
            "period",
            "the counter id would exceed 1000 bytes with its period",
        ));
    }
    Ok(id)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn id(fields: &[&str], doc: Value) -> Result<String, &'static str> {
        let fields: Vec<String> = fields.iter().map(|s| (*s).to_owned()).collect();
        counter_id("orders", &fields, Some(&doc), None).map_err(|e| e.code())
    }

    #[test]
    fn encodes() {
        assert_eq!(id(&[], json!({})).as_deref(), Ok("orders"));
        assert_eq!(
            id(&["t"], json!({"t": "acme"})).as_deref(),
            Ok("orders/t=acme")
        );
        assert_eq!(
            id(&["t"], json!({"t": "a/b%#"})).as_deref(),
            Ok("orders/t=a%2Fb%25#")
        );
        assert_eq!(
            id(&["t"], json!({"t": "#1"})).as_deref(),
            Ok("orders/t=%231")
        );
        assert_eq!(id(&["t"], json!({"t": 1})).as_deref(), Ok("orders/t=#1"));
        assert_eq!(
            id(&["t"], json!({"t": {"$numberDouble": "1.0"}})).as_deref(),
            Ok("orders/t=#1")
        );
        assert_eq!(
            id(&["a.b"], json!({"a": {"b": true}})).as_deref(),
            Ok("orders/a.b=#true")
        );
        assert_eq!(
            id(&["t"], json!({"t": "\n"})).as_deref(),
            Ok("orders/t=%0A")
        );
    }

    #[test]
    fn rejects() {
        assert_eq!(id(&["t"], json!({})), Err("MISSING_SCOPE_FIELD"));
        assert_eq!(id(&["t"], json!({"t": null})), Err("MISSING_SCOPE_FIELD"));
        assert_eq!(id(&["t"], json!({"t": 1.5})), Err("INVALID_SCOPE_VALUE"));
        assert_eq!(id(&["t"], json!({"t": [1]})), Err("INVALID_SCOPE_VALUE"));
        assert_eq!(
            id(&["t"], json!({"t": {"x": 1}})),
            Err("INVALID_SCOPE_VALUE")
        );
        assert_eq!(
            id(&["a.b"], json!({"a": [{"b": 1}]})),
            Err("INVALID_SCOPE_VALUE")
        );
        assert_eq!(
            id(&["t"], json!({"t": "x".repeat(1000)})),
            Err("INVALID_SCOPE_VALUE")
        );
    }

    #[test]
    fn field_paths() {
        assert!(validate_field_path("customer.region").is_ok());
        for bad in ["", "a..b", ".a", "$x", "a.$b", "a/b", "a=b", "a\tb"] {
            assert!(validate_field_path(bad).is_err(), "{bad:?}");
        }
    }
}
