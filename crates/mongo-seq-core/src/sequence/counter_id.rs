//! Reading counter ids back: the inverse of [`crate::sequence::scope::counter_id`] (the grammar is in
//! [`crate::sequence::scope`]).
//!
//! `orders/tenantId=acme/year=#2024` → sequence `orders`, scope
//! `[("tenantId", "acme"), ("year", 2024)]`; `invoices/tenantId=acme/2026` → sequence
//! `invoices`, scope `[("tenantId", "acme")]`, period `2026` (the last segment, without `=`). Only ids in the exact form the core writes parse
//! (`parse(id).id() == id`): a non-canonical spelling (`%2f`, `#007`, `#oid:` in capitals, an
//! escape that was not needed) would name a counter the core never creates, so it is refused.
//! The id names a sequence, not its options: a caller finds those (step, bounds, …) where the
//! sequence is defined and checks the id against them with [`CounterKey::belongs_to`].

use serde::Serialize;
use serde_json::Value;

use crate::ejson;
use crate::error::SeqError;
use crate::sequence::name::{validate_name, MAX_COUNTER_ID_BYTES};
use crate::sequence::options::SequenceSpec;
use crate::sequence::period::Period;
use crate::sequence::scope::{encode_value, validate_field_path, MAX_SCOPE_FIELDS};

/// One scope value of a counter id.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "type", content = "value", rename_all = "camelCase")]
pub enum ScopeValue {
    String(String),
    /// Any integer type (int32, int64 and integral doubles name the same counter).
    Integer(i64),
    Boolean(bool),
    /// 24 lowercase hex digits.
    ObjectId(String),
}

impl ScopeValue {
    /// The value as canonical Extended JSON (integers as int64).
    pub fn to_json(&self) -> Value {
        match self {
            Self::String(text) => Value::String(text.clone()),
            Self::Integer(int) => ejson::long(*int),
            Self::Boolean(flag) => Value::Bool(*flag),
            Self::ObjectId(hex) => ejson::object([("$oid", hex.as_str().into())]),
        }
    }
}

/// A counter id, parsed: the sequence name, the scope fields with their values, in order, and
/// the period of a sequence that resets (serialized only when there is one).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CounterKey {
    pub name: String,
    pub scope: Vec<(String, ScopeValue)>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub period: Option<Period>,
}

fn invalid(id: &str, reason: impl std::fmt::Display) -> SeqError {
    SeqError::invalid_argument(
        "counterId",
        format!(
            "{} is not a counter id: {reason}",
            ejson::quoted(&ejson::truncate(id))
        ),
    )
}

impl CounterKey {
    /// Parses a counter id written by the core; anything else is `INVALID_ARGUMENT`.
    pub fn parse(id: &str) -> Result<Self, SeqError> {
        if id.len() > MAX_COUNTER_ID_BYTES {
            return Err(invalid(id, "longer than 1000 bytes"));
        }
        let mut segments = id.split('/');
        let name = segments.next().unwrap_or_default();
        validate_name(name).map_err(|e| invalid(id, e))?;
        let mut scope: Vec<(String, ScopeValue)> = Vec::new();
        let mut period = None;
        let mut segments = segments.peekable();
        while let Some(segment) = segments.next() {
            let Some((field, raw)) = segment.split_once('=') else {
                // The last segment may be a period; no other segment lacks `=`.
                match Period::parse(segment) {
                    Some(found) if segments.peek().is_none() => {
                        period = Some(found);
                        continue;
                    }
                    _ => {
                        return Err(invalid(
                            id,
                            format!(
                                "segment {} is neither a scope field `field=value` nor, last, a period (YYYY, YYYY-MM or YYYY-MM-DD)",
                                ejson::quoted(segment)
                            ),
                        ))
                    }
                }
            };
            validate_field_path(field).map_err(|e| invalid(id, e))?;
            if scope.iter().any(|(seen, _)| seen == field) {
                return Err(invalid(id, format!("scope field `{field}` appears twice")));
            }
            if scope.len() >= MAX_SCOPE_FIELDS {
                return Err(invalid(id, "more than 16 scope fields"));
            }
            let value = decode(raw).map_err(|reason| invalid(id, reason))?;
            scope.push((field.to_owned(), value));
        }
        let key = Self {
            name: name.to_owned(),
            scope,
            period,
        };
        if key.id().as_deref() != Ok(id) {
            return Err(invalid(id, "not in the form the core writes"));
        }
        Ok(key)
    }

    /// The counter id (the inverse of [`CounterKey::parse`]).
    pub fn id(&self) -> Result<String, SeqError> {
        let mut id = self.name.clone();
        for (field, value) in &self.scope {
            id.push('/');
            id.push_str(field);
            id.push('=');
            id.push_str(&encode_value(field, &value.to_json())?);
        }
        if let Some(period) = &self.period {
            id.push('/');
            id.push_str(&period.text());
        }
        Ok(id)
    }

    /// Checks that the id is a counter of `spec`: its name, its scope fields in order, and a
    /// period of the sequence's kind exactly when it resets.
    pub fn belongs_to(&self, spec: &SequenceSpec) -> Result<(), SeqError> {
        let fields: Vec<&str> = self.scope.iter().map(|(field, _)| field.as_str()).collect();
        let expected: Vec<&str> = spec.scope().iter().map(String::as_str).collect();
        let id = self.id().unwrap_or_else(|_| self.name.clone());
        if self.name != spec.name() {
            return Err(invalid(
                &id,
                format!(
                    "it belongs to sequence `{}`, not `{}`",
                    self.name,
                    spec.name()
                ),
            ));
        }
        if fields != expected {
            return Err(invalid(
                &id,
                format!(
                    "sequence `{}` is scoped by {}, the id by {}",
                    spec.name(),
                    ejson::quoted_list(&expected),
                    ejson::quoted_list(&fields)
                ),
            ));
        }
        spec.check_period(self.period.as_ref())
            .map_err(|error| match error {
                SeqError::InvalidArgument { reason, .. } => invalid(&id, reason),
                other => other,
            })
    }
}

/// One encoded scope value.
fn decode(raw: &str) -> Result<ScopeValue, String> {
    if let Some(typed) = raw.strip_prefix('#') {
        return match typed {
            "true" => Ok(ScopeValue::Boolean(true)),
            "false" => Ok(ScopeValue::Boolean(false)),
            _ => match typed.strip_prefix("oid:") {
                Some(hex) if hex.len() == 24 && hex.bytes().all(|b| b.is_ascii_hexdigit()) => {
                    Ok(ScopeValue::ObjectId(hex.to_owned()))
                }
                Some(_) => Err("`#oid:` needs 24 hex digits".to_owned()),
                None => typed.parse::<i64>().map(ScopeValue::Integer).map_err(|_| {
                    format!(
                        "{} is neither #true, #false, #oid:… nor #<integer>",
                        ejson::quoted(raw)
                    )
                }),
            },
        };
    }
    let mut bytes = Vec::with_capacity(raw.len());
    let mut rest = raw.as_bytes();
    while let Some((&byte, tail)) = rest.split_first() {
        if byte == b'%' {
            let escape = tail
                .get(..2)
                .and_then(|hex| std::str::from_utf8(hex).ok())
                .and_then(|hex| u8::from_str_radix(hex, 16).ok())
                .ok_or_else(|| "`%` must start a two-digit hex escape".to_owned())?;
            bytes.push(escape);
            rest = tail.get(2..).unwrap_or_default();
        } else {
            bytes.push(byte);
            rest = tail;
        }
    }
    String::from_utf8(bytes)
        .map(ScopeValue::String)
        .map_err(|_| "the escapes do not spell UTF-8".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse(id: &str) -> Result<CounterKey, SeqError> {
        CounterKey::parse(id)
    }

    #[test]
    fn parses_what_the_core_writes() {
        let key = parse("orders/tenantId=a%2Fb%25=/year=#2024/ok=#true/org=#oid:65a1b2c3d4e5f60718293a4b/s=%231").unwrap();
        assert_eq!(key.name, "orders");
        assert_eq!(
            key.scope,
            vec![
                (
                    "tenantId".to_owned(),
                    ScopeValue::String("a/b%=".to_owned())
                ),
                ("year".to_owned(), ScopeValue::Integer(2024)),
                ("ok".to_owned(), ScopeValue::Boolean(true)),
                (
                    "org".to_owned(),
                    ScopeValue::ObjectId("65a1b2c3d4e5f60718293a4b".to_owned())
                ),
                ("s".to_owned(), ScopeValue::String("#1".to_owned())),
            ]
        );
        assert_eq!(parse("orders").unwrap().scope, vec![]);
        assert_eq!(
            parse("o/t=").unwrap().scope,
            vec![("t".to_owned(), ScopeValue::String(String::new()))]
        );
        assert_eq!(
            ScopeValue::Integer(5).to_json(),
            json!({"$numberLong": "5"})
        );
    }

    #[test]
    fn refuses_other_spellings() {
        for bad in [
            "",
            "/t=x",
            "o/t",
            "o/=x",
            "o/t=x/t=y",
            "o/t=%2f",
            "o/t=%41",
            "o/t=%",
            "o/t=%zz",
            "o/t=#007",
            "o/t=#+7",
            "o/t=#-0",
            "o/t=#x",
            "o/t=#oid:65A1B2C3D4E5F60718293A4B",
            "o/t=#oid:12",
            "o/t=a#b%",
            "o/a..b=1",
            "o/$a=1",
            "o/t=\n",
            "o/t=%FF",
            " o",
        ] {
            assert_eq!(
                parse(bad).map_err(|e| e.code()),
                Err("INVALID_ARGUMENT"),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn reads_a_period_last() {
        let key = parse("inv/t=acme/2026").unwrap();
        assert_eq!(key.period.map(Period::text).as_deref(), Some("2026"));
        assert_eq!(key.scope.len(), 1);
        assert_eq!(
            serde_json::to_value(&key).unwrap(),
            json!({"name": "inv", "scope": [["t", {"type": "string", "value": "acme"}]], "period": "2026"})
        );
        assert_eq!(
            parse("x/a=#1/2026-05-17")
                .unwrap()
                .period
                .map(Period::text)
                .as_deref(),
            Some("2026-05-17")
        );
        assert_eq!(parse("tickets/2026-05").unwrap().scope, vec![]);
        for bad in [
            "inv/2026/t=a",
            "inv/2026/2027",
            "inv/26",
            "inv/2026-13",
            "inv/0000",
            "inv/2026-5",
        ] {
            assert_eq!(
                parse(bad).map_err(|e| e.code()),
                Err("INVALID_ARGUMENT"),
                "{bad:?}"
            );
        }
        let yearly =
            SequenceSpec::parse(&json!({"name": "inv", "scope": ["t"], "reset": "yearly"}))
                .unwrap();
        assert!(parse("inv/t=a/2026").unwrap().belongs_to(&yearly).is_ok());
        assert!(parse("inv/t=a/2026-01")
            .unwrap()
            .belongs_to(&yearly)
            .is_err());
        assert!(parse("inv/t=a").unwrap().belongs_to(&yearly).is_err());
        let plain = SequenceSpec::parse(&json!({"name": "inv", "scope": ["t"]})).unwrap();
        assert!(parse("inv/t=a/2026").unwrap().belongs_to(&plain).is_err());
    }

    #[test]
    fn checks_the_sequence() {
        let spec = SequenceSpec::parse(&json!({"name": "o", "scope": ["t", "y"]})).unwrap();
        assert!(parse("o/t=a/y=#1").unwrap().belongs_to(&spec).is_ok());
        assert!(parse("o/y=#1/t=a").unwrap().belongs_to(&spec).is_err());
        assert!(parse("p/t=a/y=#1").unwrap().belongs_to(&spec).is_err());
        assert!(parse("o").unwrap().belongs_to(&spec).is_err());
    }
}
