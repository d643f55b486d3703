//! The canonical encoding of a link: one byte string per link, the same from every shell and
//! every driver, short enough to re-implement in a few lines of any language (the module docs
//! of [`crate::seal`] specify it; `docs/sealed-series.md` has a Python check).
//!
//! Values are encoded by what they are, not by how a driver typed them: MongoDB drivers do not
//! agree on types (the Node driver reads an int32 and an integral double alike as a JS number),
//! so every integral number within the signed 64-bit range is `{"int": "<decimal>"}` whether it
//! is stored as int32, int64 or double, and any other double is its IEEE-754 bits (`{"double":
//! "<16 hex digits>"}`): exact, with no float formatting to agree on.

use serde_json::{Map, Value};

use crate::ejson;
use crate::sequence::instant::read_date;

/// Why a value cannot be sealed: a description of it (a JS `NaN` marked unrepresentable, a
/// malformed Extended JSON wrapper).
pub type Unsealable = String;

/// The canonical form of one field's value (see the module docs of [`crate::seal`]).
pub fn canonical_value(value: &Value) -> Result<Value, Unsealable> {
    match value {
        Value::Null | Value::Bool(_) | Value::String(_) => Ok(value.clone()),
        Value::Number(number) => Ok(match number.as_i64() {
            Some(int) => int_value(int),
            None => number_value(number.as_f64().unwrap_or(f64::NAN)),
        }),
        Value::Array(items) => items
            .iter()
            .map(canonical_value)
            .collect::<Result<_, _>>()
            .map(Value::Array),
        Value::Object(map) => canonical_object(map),
    }
}

fn tagged(tag: &str, value: Value) -> Value {
    ejson::object([(tag, value)])
}

fn int_value(int: i64) -> Value {
    tagged("int", Value::String(int.to_string()))
}

/// A double: `int` when integral within the signed 64-bit range (so a driver's type does not
/// matter), else its bits.
fn number_value(double: f64) -> Value {
    // Within ±2^63 a cast is exact for integral values; 2^63 itself is out of range.
    const LIMIT: f64 = 9_223_372_036_854_775_808.0;
    if double.fract() == 0.0 && (-LIMIT..LIMIT).contains(&double) {
        return int_value(integral(double));
    }
    tagged(
        "double",
        Value::String(format!("{:016x}", double.to_bits())),
    )
}

/// An integral double within ±2^63 as the integer it is.
#[allow(clippy::cast_possible_truncation)] // integral and in range (the caller's check): exact
fn integral(double: f64) -> i64 {
    double as i64
}

/// An Extended JSON wrapper read as its value, or a document (`{"doc": …}`, so a user's
/// document `{"int": "5"}` never reads as a number).
fn canonical_object(map: &Map<String, Value>) -> Result<Value, Unsealable> {
    let whole = || Value::Object(map.clone());
    if ejson::is_unrepresentable(&whole()) {
        return Err(ejson::describe(&whole()));
    }
    let mut entries = map.iter();
    if let (Some((key, inner)), None) = (entries.next(), entries.next()) {
        if let Some(value) = wrapper(key, inner)? {
            return Ok(value);
        }
    }
    if map.keys().any(|key| key.starts_with('$')) && map.keys().all(|key| key.starts_with('$')) {
        // Another BSON type's canonical Extended JSON (`$binary`, `$timestamp`, …): kept as it is
        // written, keys sorted.
        return Ok(tagged("ejson", sorted(map)?));
    }
    Ok(tagged("doc", sorted(map)?))
}

fn sorted(map: &Map<String, Value>) -> Result<Value, Unsealable> {
    sorted_canonical(map)
        .map(Value::Object)
        .map_err(|(key, reason)| format!("at `{key}`: {reason}"))
}

/// `map`'s entries in key order, each value in its canonical form, or the key whose value cannot
/// be sealed and why.
pub fn sorted_canonical(
    map: &Map<String, Value>,
) -> Result<Map<String, Value>, (String, Unsealable)> {
    let mut entries: Vec<(&String, &Value)> = map.iter().collect();
    entries.sort_unstable_by(|a, b| a.0.cmp(b.0));
    let mut out = Map::new();
    for (key, value) in entries {
        let canonical = canonical_value(value).map_err(|reason| (key.clone(), reason))?;
        out.insert(key.clone(), canonical);
    }
    Ok(out)
}

/// The canonical value of a one-key Extended JSON wrapper, `None` when `key` is not one.
fn wrapper(key: &str, inner: &Value) -> Result<Option<Value>, Unsealable> {
    let text = || match inner {
        Value::String(text) => Ok(text.as_str()),
        other => Err(format!(
            "{key} must hold a string, got {}",
            ejson::describe(other)
        )),
    };
    Ok(Some(match key {
        "$numberInt" | "$numberLong" => {
            let text = text()?;
            int_value(
                text.parse::<i64>()
                    .map_err(|_| format!("{key} {} is not an integer", ejson::quoted(text)))?,
            )
        }
        "$numberDouble" => number_value(double(text()?)?),
        "$numberDecimal" => tagged("decimal", Value::String(text()?.to_owned())),
        "$oid" => tagged("oid", Value::String(text()?.to_ascii_lowercase())),
        "$date" => tagged("date", Value::String(date_ms(inner)?.to_string())),
        _ => return Ok(None),
    }))
}

/// `$numberDouble`'s text: a decimal, or Extended JSON's `Infinity`, `-Infinity`, `NaN`.
fn double(text: &str) -> Result<f64, Unsealable> {
    match text {
        "Infinity" => Ok(f64::INFINITY),
        "-Infinity" => Ok(f64::NEG_INFINITY),
        "NaN" => Ok(f64::NAN),
        _ => text
            .parse::<f64>()
            .map_err(|_| format!("$numberDouble {} is not a number", ejson::quoted(text))),
    }
}

/// A `$date`'s milliseconds since the epoch, in any form a date is read in
/// ([`read_date`]: canonical, relaxed RFC 3339, legacy integer).
fn date_ms(inner: &Value) -> Result<i64, Unsealable> {
    read_date(&tagged("$date", inner.clone()))
}

/// The encoding of a JSON value as the seal hashes it: compact, keys in the order the value
/// holds them (every object this module builds is sorted), strings escaped as JSON requires
/// (non-ASCII as UTF-8). Python's `json.dumps(v, separators=(",", ":"), ensure_ascii=False,
/// sort_keys=True)` writes the same bytes.
pub fn compact_json(value: &Value) -> String {
    value.to_string()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn canonical(value: Value) -> Value {
        canonical_value(&value).expect("sealable")
    }

    #[test]
    fn integers_are_one_kind_whatever_the_driver_typed() {
        let five = json!({"int": "5"});
        for value in [
            json!(5),
            json!(5.0),
            json!({"$numberInt": "5"}),
            json!({"$numberLong": "5"}),
            json!({"$numberDouble": "5.0"}),
        ] {
            assert_eq!(canonical(value), five);
        }
        assert_eq!(
            canonical(json!({"$numberLong": "-9223372036854775808"})),
            json!({"int": "-9223372036854775808"})
        );
        assert_eq!(canonical(json!(-0.0)), json!({"int": "0"}));
    }

    #[test]
    fn other_doubles_are_their_bits() {
        assert_eq!(canonical(json!(0.1)), json!({"double": "3fb999999999999a"}));
        assert_eq!(
            canonical(json!({"$numberDouble": "0.1"})),
            json!({"double": "3fb999999999999a"})
        );
        assert_eq!(
            canonical(json!({"$numberDouble": "Infinity"})),
            json!({"double": "7ff0000000000000"})
        );
        // 2^63 is integral but beyond int64: its bits.
        assert_eq!(
            canonical(json!(9_223_372_036_854_775_808.0)),
            json!({"double": "43e0000000000000"})
        );
    }

    #[test]
    fn documents_are_sorted_and_tagged_so_no_document_reads_as_a_number() {
        assert_eq!(
            canonical(json!({"int": "5", "b": [1, "x", null], "a": true})),
            json!({"doc": {"a": true, "b": [{"int": "1"}, "x", null], "int": "5"}})
        );
        assert_eq!(
            compact_json(&canonical(json!({"z": 1, "a": 2}))),
            r#"{"doc":{"a":{"int":"2"},"z":{"int":"1"}}}"#
        );
    }

    #[test]
    fn dates_object_ids_decimals_and_other_types() {
        assert_eq!(
            canonical(json!({"$date": {"$numberLong": "1767225600000"}})),
            json!({"date": "1767225600000"})
        );
        assert_eq!(
            canonical(json!({"$oid": "65A1B2C3D4E5F60718293A4B"})),
            json!({"oid": "65a1b2c3d4e5f60718293a4b"})
        );
        assert_eq!(
            canonical(json!({"$numberDecimal": "10.50"})),
            json!({"decimal": "10.50"})
        );
        assert_eq!(
            canonical(json!({"$binary": {"subType": "00", "base64": "AQI="}})),
            json!({"ejson": {"$binary": {"doc": {"base64": "AQI=", "subType": "00"}}}})
        );
    }

    #[test]
    fn what_cannot_be_sealed_is_said() {
        for value in [
            ejson::unrepresentable("NaN"),
            json!({"$numberLong": "x"}),
            json!({"$numberDouble": 1}),
            json!({"$date": "2026-01-01"}),
        ] {
            assert!(canonical_value(&value).is_err(), "{value}");
        }
    }
}
