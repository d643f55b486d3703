//! Values crossing the Wasm boundary.
//!
//! JS → Rust: serde-wasm-bindgen reads any JS value into `serde_json::Value` (safe integers and
//! BigInt become i64, other numbers f64); the core then reads integers in every accepted form,
//! including Extended JSON wrappers such as `{ $numberLong: "…" }`.
//!
//! Rust → JS: every output is first serialized to `serde_json::Value`, then built as plain JS
//! objects and arrays where integers within ±(2^53 - 1) become numbers and larger ones BigInt,
//! so no value ever loses precision (serde-wasm-bindgen can only do all-or-nothing BigInt).

use js_sys::{Array, BigInt, Object, Reflect};
use serde::Serialize;
use serde_json::Value;
use wasm_bindgen::prelude::*;

/// Largest integer a JS number holds exactly, and every integer below it too.
const MAX_SAFE_INTEGER: i64 = (1 << 53) - 1;

/// Reads a JS value as JSON. `undefined` and `null` both read as `null`.
pub fn from_js(value: JsValue) -> Result<Value, JsValue> {
    serde_wasm_bindgen::from_value(value)
        .map_err(|error| crate::error::argument_error(&error.to_string()))
}

/// Reads an optional JS value: `undefined`/`null` → `None`.
pub fn from_js_optional(value: JsValue) -> Result<Option<Value>, JsValue> {
    if value.is_undefined() || value.is_null() {
        return Ok(None);
    }
    from_js(value).map(Some)
}

/// Serializes a core output to a JS value (see module docs for numbers).
pub fn to_js<T: Serialize>(value: &T) -> Result<JsValue, JsValue> {
    let json = serde_json::to_value(value)
        .map_err(|error| crate::error::argument_error(&error.to_string()))?;
    Ok(json_to_js(&json))
}

/// Builds the JS value of a JSON value.
pub fn json_to_js(value: &Value) -> JsValue {
    match value {
        Value::Null => JsValue::NULL,
        Value::Bool(flag) => JsValue::from_bool(*flag),
        Value::Number(number) => number_to_js(number),
        Value::String(text) => JsValue::from_str(text),
        Value::Array(items) => items.iter().map(json_to_js).collect::<Array>().into(),
        Value::Object(map) => {
            let object = Object::new();
            for (key, item) in map {
                // Setting a property on a fresh plain object cannot fail.
                let _ = Reflect::set(&object, &JsValue::from_str(key), &json_to_js(item));
            }
            object.into()
        }
    }
}

/// An i64 as a JS number when exact, else a BigInt.
pub fn i64_to_js(int: i64) -> JsValue {
    if (-MAX_SAFE_INTEGER..=MAX_SAFE_INTEGER).contains(&int) {
        #[allow(clippy::cast_precision_loss)] // exact within ±(2^53 - 1)
        JsValue::from_f64(int as f64)
    } else {
        BigInt::from(int).into()
    }
}

fn number_to_js(number: &serde_json::Number) -> JsValue {
    if let Some(int) = number.as_i64() {
        i64_to_js(int)
    } else if let Some(unsigned) = number.as_u64() {
        BigInt::from(unsigned).into()
    } else {
        JsValue::from_f64(number.as_f64().unwrap_or(f64::NAN))
    }
}
