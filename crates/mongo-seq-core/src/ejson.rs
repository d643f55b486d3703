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

/// A JSON object of `entries`, built directly: `serde_json::json!` passes every leaf through
/// `to_value(..).unwrap()`, a serializer and a panic path per use in the Wasm module. The work
/// is done once for every size, by inserting (a `Map` collected from an iterator sorts first).
pub fn object<const N: usize>(entries: [(&str, Value); N]) -> Value {
    fill(&mut entries.into_iter())
}

fn fill(entries: &mut dyn Iterator<Item = (&str, Value)>) -> Value {
    let mut map = Map::new();
    for (key, value) in entries {
        map.insert(key.to_owned(), value);
    }
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
            .map_err(|_| format!("$numberInt {} is not a 32-bit integer", quoted(text))),
        "$numberLong" => text
            .parse::<i64>()
            .map_err(|_| format!("$numberLong {} is not a 64-bit integer", quoted(text))),
        "$numberDouble" => match double_text_integer(text) {
            Ok(int) => Ok(int),
            Err(DoubleText::NotANumber) => {
                Err(format!("$numberDouble {} is not a number", quoted(text)))
            }
            Err(DoubleText::NotFinite) => Err(format!("double {text} is not finite")),
            Err(DoubleText::Fraction) => Err(format!("double {text} is not an integer")),
            Err(DoubleText::TooLarge) => Err(format!(
                "double {text} exceeds 2^53 and may have lost precision"
            )),
        },
        _ => Err(format!(
            "decimal128 {} is not supported, store int64",
            quoted(text)
        )),
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

/// Why a `$numberDouble` text is not an accepted integer.
#[derive(Debug, PartialEq, Eq)]
enum DoubleText {
    NotANumber,
    NotFinite,
    Fraction,
    TooLarge,
}

/// The integer a `$numberDouble` text (Rust's and EJSON's float grammar: `[+-]`, then
/// `Infinity`/`inf`/`NaN` in any case, or `digits[.digits][e[+-]digits]`) denotes, read exactly
/// in decimal: accepted when the decimal value itself is an integer within ±2^53, the range
/// where a double holds every integer, so the double the text names is that integer. Not
/// through `str::parse::<f64>`, whose correctly rounded parser (tables included) is the largest
/// single piece of the Wasm module otherwise; reading the decimal exactly is also stricter:
/// a text that only rounds to an integer (`1e-400`, `4503599627370496.5`) is not one.
fn double_text_integer(text: &str) -> Result<i64, DoubleText> {
    // No indexing (`&text[1..]`): its panic path would bring `char` formatting into the module.
    let (negative, body) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text.strip_prefix('+').unwrap_or(text)),
    };
    if ["inf", "infinity", "nan"]
        .iter()
        .any(|word| body.eq_ignore_ascii_case(word))
    {
        return Err(DoubleText::NotFinite);
    }
    let (mantissa, exponent) = match body.split_once(['e', 'E']) {
        Some((mantissa, exponent)) => (mantissa, Some(exponent)),
        None => (body, None),
    };
    let exponent: i64 = match exponent {
        None => 0,
        Some(exponent) => {
            let (negative_exponent, digits) = match exponent.strip_prefix('-') {
                Some(rest) => (true, rest),
                None => (false, exponent.strip_prefix('+').unwrap_or(exponent)),
            };
            if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
                return Err(DoubleText::NotANumber);
            }
            // Saturated far beyond any exponent that matters (a double ends near 1e308).
            let magnitude = digits.bytes().fold(0_i64, |exp, digit| {
                exp.saturating_mul(10)
                    .saturating_add(i64::from(digit.saturating_sub(b'0')))
                    .min(1_000_000)
            });
            if negative_exponent {
                magnitude.saturating_neg()
            } else {
                magnitude
            }
        }
    };
    let (whole, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    if (whole.is_empty() && fraction.is_empty())
        || !whole
            .bytes()
            .chain(fraction.bytes())
            .all(|b| b.is_ascii_digit())
    {
        return Err(DoubleText::NotANumber);
    }
    // The value is `digits × 10^scale`, with the digits' leading and trailing zeros dropped.
    let digits = format!("{whole}{fraction}");
    let significant = digits.trim_start_matches('0');
    let kept = significant.trim_end_matches('0');
    if kept.is_empty() {
        return Ok(0);
    }
    let length = |text: &str| i64::try_from(text.len()).unwrap_or(i64::MAX);
    let scale = exponent
        .saturating_sub(length(fraction))
        .saturating_add(length(significant).saturating_sub(length(kept)));
    if scale < 0 {
        return Err(DoubleText::Fraction);
    }
    // 2^53 has 16 digits: anything longer is beyond it.
    if length(kept).saturating_add(scale) > 16 {
        return Err(DoubleText::TooLarge);
    }
    let magnitude = u32::try_from(scale)
        .ok()
        .and_then(|scale| 10_i64.checked_pow(scale))
        .zip(kept.parse::<i64>().ok())
        .and_then(|(power, kept)| kept.checked_mul(power))
        .filter(|magnitude| *magnitude <= MAX_SAFE_DOUBLE_INTEGER)
        .ok_or(DoubleText::TooLarge)?;
    Ok(if negative {
        magnitude.saturating_neg()
    } else {
        magnitude
    })
}

/// Short human description of a JSON value for error messages ("string \"5\"", "null").
pub(crate) fn describe(value: &Value) -> String {
    match value {
        Value::Null => "null".to_owned(),
        Value::Bool(b) => format!("boolean {b}"),
        Value::Number(n) => format!("number {n}"),
        Value::String(s) => format!("string {}", truncate(&quoted(s))),
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

/// `text` in double quotes as messages show it, escaped like Rust's `{:?}` for quotes,
/// backslashes and control characters (`"a\\nb"`), every other character as is. Not through
/// `Debug`, whose Unicode printability tables would be in the Wasm module for messages only.
pub fn quoted(text: &str) -> String {
    let mut out = String::with_capacity(text.len().saturating_add(2));
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\0' => out.push_str("\\0"),
            c if c.is_control() => out.push_str(&format!("\\u{{{:x}}}", u32::from(c))),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Texts as `{:?}` shows a list of them: `["a", "b"]`.
pub fn quoted_list(texts: &[&str]) -> String {
    let quoted: Vec<String> = texts.iter().map(|text| quoted(text)).collect();
    format!("[{}]", quoted.join(", "))
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
    fn quotes_like_debug() {
        for text in [
            "",
            "a",
            "a\"b",
            "a\\b",
            "\n\r\t\0",
            "\u{1b}[0m",
            "\u{7f}\u{85}",
            "é ü 日本",
        ] {
            assert_eq!(quoted(text), format!("{text:?}"), "{text:?}");
        }
        for texts in [&[][..], &["a"], &["a", "b\"c"]] {
            assert_eq!(quoted_list(texts), format!("{texts:?}"));
        }
    }

    #[test]
    fn double_texts_are_read_exactly() {
        for (text, int) in [
            ("0", 0),
            ("-0.0", 0),
            ("+5", 5),
            ("5.", 5),
            ("2024.0", 2024),
            ("1.5e1", 15),
            ("1.5E+2", 150),
            ("1500e-2", 15),
            ("000123.4500e2", 12345),
            ("0e999999999999999999", 0),
            ("9007199254740992", 1 << 53),
            ("-9.007199254740992e15", -(1 << 53)),
        ] {
            assert_eq!(double_text_integer(text), Ok(int), "{text}");
        }
        for (text, why) in [
            ("", DoubleText::NotANumber),
            (".", DoubleText::NotANumber),
            ("-", DoubleText::NotANumber),
            ("1e", DoubleText::NotANumber),
            ("1e+", DoubleText::NotANumber),
            ("1.2.3", DoubleText::NotANumber),
            (" 1", DoubleText::NotANumber),
            ("0x10", DoubleText::NotANumber),
            ("five", DoubleText::NotANumber),
            ("NaN", DoubleText::NotFinite),
            ("-Infinity", DoubleText::NotFinite),
            ("inf", DoubleText::NotFinite),
            (".5", DoubleText::Fraction),
            ("1e-400", DoubleText::Fraction),
            ("4503599627370496.5", DoubleText::Fraction),
            ("9007199254740993", DoubleText::TooLarge),
            ("1e300", DoubleText::TooLarge),
            ("1e999999999999999999999", DoubleText::TooLarge),
            ("12345678901234567", DoubleText::TooLarge),
        ] {
            assert_eq!(double_text_integer(text), Err(why), "{text}");
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
