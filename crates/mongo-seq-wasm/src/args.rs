//! The arguments of the exported functions, read as `JsValue` and checked here: a wrong type
//! is a `MongoSeqError` naming the argument and what was expected — never a trap or a coercion
//! in wasm-bindgen's glue (a `&str` parameter given a number reads out of bounds, an `f64`
//! parameter turns `"5"` into 5).

use mongo_seq_core::{ejson, Period, SeqError};
use serde_json::Value;
use wasm_bindgen::prelude::*;

use crate::convert::{describe, read, Unreadable};
use crate::error::{invalid_argument, to_js_error};

/// An array of strings argument.
pub fn strings(argument: &str, value: &JsValue) -> Result<Vec<String>, JsValue> {
    let refused = || {
        invalid_argument(
            argument,
            format!("must be an array of strings, got {}", describe(value)),
        )
    };
    if !js_sys::Array::is_array(value) {
        return Err(refused());
    }
    js_sys::Array::from(value)
        .iter()
        .map(|text| text.as_string().ok_or_else(refused))
        .collect()
}

/// A string argument.
pub fn string(argument: &str, value: &JsValue) -> Result<String, JsValue> {
    value.as_string().ok_or_else(|| {
        invalid_argument(
            argument,
            format!("must be a string, got {}", describe(value)),
        )
    })
}

/// An optional string argument (`undefined`/`null`: none).
pub fn optional_string(argument: &str, value: &JsValue) -> Result<Option<String>, JsValue> {
    if value.is_undefined() || value.is_null() {
        return Ok(None);
    }
    string(argument, value).map(Some)
}

/// An optional period argument (`undefined`/`null`: none): a period's text (`2026`,
/// `2026-05`, `2026-05-17`).
pub fn period(argument: &str, value: &JsValue) -> Result<Option<Period>, JsValue> {
    match optional_string(argument, value)? {
        None => Ok(None),
        Some(text) => Period::from_text(argument, &text)
            .map(Some)
            .map_err(|error| to_js_error(&error)),
    }
}

/// An optional integer argument (`undefined`/`null`: none).
pub fn optional_integer(argument: &str, value: &JsValue) -> Result<Option<i64>, JsValue> {
    if value.is_undefined() || value.is_null() {
        return Ok(None);
    }
    integer(argument, value).map(Some)
}

/// A boolean argument.
pub fn boolean(argument: &str, value: &JsValue) -> Result<bool, JsValue> {
    value.as_bool().ok_or_else(|| {
        invalid_argument(
            argument,
            format!("must be a boolean, got {}", describe(value)),
        )
    })
}

/// A value the core reads with its own rules (options, integers, counts): never fails; what
/// JSON cannot carry is marked for the core's errors to name.
pub fn marked(value: &JsValue) -> Value {
    read(value, Unreadable::Mark).unwrap_or(Value::Null)
}

/// An integer argument (number, BigInt or `{ $numberLong }`).
pub fn integer(argument: &str, value: &JsValue) -> Result<i64, JsValue> {
    ejson::read_i64(&marked(value)).map_err(|reason| invalid_argument(argument, reason))
}

/// A JSON argument read strictly (`expected` says what it should be, for the error).
pub fn json(argument: &str, expected: &str, value: &JsValue) -> Result<Value, JsValue> {
    read(value, Unreadable::Refuse)
        .map_err(|refused| invalid_argument(argument, refused.reason(expected)))
}

/// An optional document (`undefined`/`null`: none): a plain object of JSON values.
pub fn document(argument: &str, value: &JsValue) -> Result<Option<Value>, JsValue> {
    const EXPECTED: &str = "a document (a plain object)";
    if value.is_undefined() || value.is_null() {
        return Ok(None);
    }
    match json(argument, EXPECTED, value)? {
        document @ Value::Object(_) => Ok(Some(document)),
        _ => Err(invalid_argument(
            argument,
            format!("must be {EXPECTED}, got {}", describe(value)),
        )),
    }
}

/// A reply fed to a plan, read strictly; what JSON cannot carry is an `UNEXPECTED_REPLY`.
pub fn reply(value: &JsValue) -> Result<Value, JsValue> {
    read(value, Unreadable::Refuse).map_err(|refused| {
        to_js_error(&SeqError::UnexpectedReply {
            reason: format!("the reply {}", refused.reason("JSON")),
        })
    })
}
