//! MongoDB Extended JSON v2 integers.
//!
//! The core *emits* canonical int64 (`{"$numberLong": "5"}`) so both drivers send exact
//! 64-bit values, and *accepts* every form a driver may hand back: plain JSON numbers
//! (relaxed), `$numberInt`, `$numberLong`, and `$numberDouble` when integral and within
//! ±2^53 (legacy shells store counters as doubles such as `0.0`).

use serde_json::{Map, Value};

/// Largest magnitude a double can hold while every integer up to it is exact.
pub const MAX_SAFE_DOUBLE_INTEGER: i64 = 9_007_199_254_740_992; // 2^53

/// Canonical Extended JSON for an int64.
pub fn long(value: i64) -> Value {
    let mut map = Map::new();
    map.insert("$numberLong".to_owned(), Value::String(value.to_string()));
    Value::Object(map)
}

/// The key of [`unrepresentable`] markers.
const UNREPRESENTABLE: &str = "$unrepresentable";

/// Marks a value the caller's language has and JSON lacks (a JS `NaN`, a function, a JS number
/// beyond 2^53 that may not be the integer written): `{"$unrepresentable": "<description>"}`.
/// No reader of the core accepts it, and error messages show the description ("must be an
/// integer, got NaN"), so the core's own errors name the option and what it expected.
pub fn unrepresentable(description: &str) -> Value {
    let mut map = Map::new();
    map.insert(
        UNREPRESENTABLE.to_owned(),
        Value::String(description.to_owned()),
    );
    Value::Object(map)
}

/// Whether `value` is an [`unrepresentable`] marker.
pub fn is_unrepresentable(value: &Value) -> bool {
    matches!(value, Value::Object(map) if map.len() == 1 && map.contains_key(UNREPRESENTABLE))
}

/// Whether a value is stored as a BSON double (`{"$numberDouble": …}`, or a relaxed JSON number
/// with a fraction or exponent), as opposed to int32/int64.
pub fn is_double(value: &Value) -> bool {
    match value {
        Value::Number(number) => number.is_f64(),
        Value::Object(map) => map.len() == 1 && map.contains_key("$numberDouble"),
        _ => false,
    }
}

/// Reads an integer in any accepted form. The error is a reason phrase ("is a string ...")
/// which callers wrap into the error variant that names the field.
pub fn read_i64(value: &Value) -> Result<i64, String> {
    match value {
        Value::Number(number) => {
            if let Some(int) = number.as_i64() {
                Ok(int)
            } else if number.is_u64() {
                Err(format!("{number} does not fit in a signed 64-bit integer"))
            } else {
                from_double(number.as_f64().unwrap_or(f64::NAN), &number.to_string())
            }
        }
        Value::Object(map) => read_wrapper(map),
        other => Err(format!("must be an integer, got {}", describe(other))),
    }
}

fn read_wrapper(map: &Map<String, Value>) -> Result<i64, String> {
    const WRAPPERS: [&str; 4] = [
        "$numberInt",
        "$numberLong",
        "$numberDouble",
        "$numberDecimal",
    ];
    let mut entries = map.iter();
    let (Some((key, inner)), None) = (entries.next(), entries.next()) else {
        return Err(format!("must be an integer, got {}", describe_object(map)));
    };
    if !WRAPPERS.contains(&key.as_str()) {
        return Err(format!("must be an integer, got {}", describe_object(map)));
    }
    let Value::String(text) = inner else {
        return Err(format!("{key} must hold a string, got {}", describe(inner)));
    };
    match key.as_str() {
        "$numberInt" => text
            .parse::<i32>()
            .map(i64::from)
            .map_err(|_| format!("$numberInt {text:?} is not a 32-bit integer")),
        "$numberLong" => text
            .parse::<i64>()
            .map_err(|_| format!("$numberLong {text:?} is not a 64-bit integer")),
        "$numberDouble" => match text.parse::<f64>() {
            Ok(double) => from_double(double, text),
            Err(_) => Err(format!("$numberDouble {text:?} is not a number")),
        },
        _ => Err(format!("decimal128 {text:?} is not supported, store int64")),
    }
}

/// Doubles are accepted only when they are exact integers no larger than 2^53 in magnitude.
fn from_double(double: f64, text: &str) -> Result<i64, String> {
    if !double.is_finite() {
        return Err(format!("double {text} is not finite"));
    }
    if double.fract() != 0.0 {
        return Err(format!("double {text} is not an integer"));
    }
    // Exact by construction: integral and |double| <= 2^53 < i64::MAX.
    let limit = 9_007_199_254_740_992.0_f64;
    if double.abs() > limit {
        return Err(format!(
            "double {text} exceeds 2^53 and may have lost precision"
        ));
    }
    #[allow(clippy::cast_possible_truncation)]
    Ok(double as i64)
}

/// Short human description of a JSON value for error messages ("string \"5\"", "null").
pub(crate) fn describe(value: &Value) -> String {
    match value {
        Value::Null => "null".to_owned(),
        Value::Bool(b) => format!("boolean {b}"),
        Value::Number(n) => format!("number {n}"),
        Value::String(s) => format!("string {}", truncate(&format!("{s:?}"))),
        Value::Array(_) => "an array".to_owned(),
        Value::Object(map) => describe_object(map),
    }
}

fn describe_object(map: &Map<String, Value>) -> String {
    if let (1, Some(Value::String(description))) = (map.len(), map.get(UNREPRESENTABLE)) {
        return description.clone();
    }
    match map.keys().next() {
        Some(key) if key.starts_with('$') => format!("an object with {key}"),
        _ => "an object".to_owned(),
    }
}

/// Keeps messages bounded however large the input is.
pub(crate) fn truncate(text: &str) -> String {
    truncate_to(text, 60)
}

/// `text` cut to at most `limit` bytes (on a character boundary), `…` marking a cut.
pub fn truncate_to(text: &str, limit: usize) -> String {
    if text.len() <= limit {
        return text.to_owned();
    }
    let cut = (0..=limit)
        .rev()
        .find(|&i| text.is_char_boundary(i))
        .unwrap_or(0);
    format!("{}…", text.get(..cut).unwrap_or(""))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn accepts_all_integer_forms() {
        assert_eq!(read_i64(&json!(5)), Ok(5));
        assert_eq!(read_i64(&json!(-5)), Ok(-5));
        assert_eq!(read_i64(&json!(5.0)), Ok(5));
        assert_eq!(read_i64(&json!({"$numberInt": "7"})), Ok(7));
        assert_eq!(
            read_i64(&json!({"$numberLong": "9223372036854775807"})),
            Ok(i64::MAX)
        );
        assert_eq!(read_i64(&json!({"$numberDouble": "0.0"})), Ok(0));
        assert_eq!(
            read_i64(&json!({"$numberDouble": "9007199254740992"})),
            Ok(1 << 53)
        );
    }

    #[test]
    fn rejects_everything_else() {
        for bad in [
            json!("5"),
            json!(null),
            json!(true),
            json!([1]),
            json!({}),
            json!(1.5),
            json!(9007199254740994.0),
            json!(18446744073709551615u64),
            json!({"$numberInt": "3000000000"}),
            json!({"$numberLong": 5}),
            json!({"$numberLong": "5", "x": 1}),
            json!({"$numberDouble": "NaN"}),
            json!({"$numberDouble": "Infinity"}),
            json!({"$numberDouble": "-Infinity"}),
            json!({"$numberDouble": "0.5"}),
            json!({"$numberDecimal": "5"}),
        ] {
            assert!(read_i64(&bad).is_err(), "{bad} accepted");
        }
    }

    #[test]
    fn unrepresentable_values_are_named_in_errors() {
        let nan = unrepresentable("NaN");
        assert_eq!(
            read_i64(&nan),
            Err("must be an integer, got NaN".to_owned())
        );
        assert_eq!(describe(&nan), "NaN");
    }

    #[test]
    fn truncates_on_char_boundary() {
        let long_text = "é".repeat(100);
        assert!(truncate(&long_text).len() <= 64);
    }
}
