//! Values crossing the Wasm boundary.
//!
//! JS → Rust: [`read`] walks a JS value into `serde_json::Value`: safe integers become i64,
//! BigInt within the signed 64-bit range i64, other finite numbers f64, plain objects and arrays
//! recursively. JS values JSON has no form for — `NaN`, infinities, a number beyond 2^53 − 1
//! (not every integer exists there, so `9007199254740993` arrives as …992: a BigInt is exact),
//! a BigInt beyond 64 bits, functions, symbols, class instances (`Date`, `Map`, …), nesting past
//! [`MAX_DEPTH`] (a cycle) — are never guessed at: with [`Unreadable::Refuse`] reading fails
//! with a description of the value and where it sits; with [`Unreadable::Mark`] they become the
//! core's `{"$unrepresentable": description}` markers, which no core reader accepts, so the
//! core's own errors name the option and what it expected ("`block` must be an integer, got
//! NaN"). Marks are used where the core reads the value with its own rules (options, integers,
//! counts), refusal where a value could otherwise flow into a command (documents, requests,
//! replies, ranges).
//!
//! Rust → JS: every output is first serialized to `serde_json::Value`, then built as plain JS
//! objects and arrays where integers within ±(2^53 - 1) become numbers and larger ones BigInt,
//! so no value ever loses precision.

use js_sys::{Array, BigInt, Function, Object, Reflect};
use mongo_seq_core::ejson;
use serde::Serialize;
use serde_json::{Map, Number, Value};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

/// Largest integer a JS number holds exactly, and every integer below it too.
const MAX_SAFE_INTEGER: i64 = (1 << 53) - 1;

/// Deepest nesting read (MongoDB documents nest at most 100 levels); deeper is taken for a cycle.
pub const MAX_DEPTH: usize = 200;

/// What [`read`] does with a value JSON cannot carry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unreadable {
    Refuse,
    Mark,
}

/// A value [`read`] refused: what it was (`got`) and where (`path`, empty at the top).
#[derive(Debug)]
pub struct Refused {
    pub path: String,
    pub got: String,
}

impl Refused {
    /// "must be {expected}, got {got}" plus where, for error messages.
    pub fn reason(&self, expected: &str) -> String {
        if self.path.is_empty() {
            format!("must be {expected}, got {}", self.got)
        } else {
            format!(
                "must be {expected}, got {} at `{}`",
                self.got,
                shown_path(&self.path)
            )
        }
    }
}

fn shown_path(path: &str) -> &str {
    path.strip_prefix('.').unwrap_or(path)
}

/// Reads a JS value as JSON (see the module docs). `undefined` reads as `null`.
pub fn read(value: &JsValue, unreadable: Unreadable) -> Result<Value, Refused> {
    let mut reader = Reader {
        unreadable,
        object_prototype: None,
        path: String::new(),
    };
    reader.value(value, 0)
}

struct Reader {
    unreadable: Unreadable,
    /// `Object.prototype`, looked up at the first object (numbers and strings need none).
    object_prototype: Option<Object>,
    path: String,
}

impl Reader {
    fn value(&mut self, value: &JsValue, depth: usize) -> Result<Value, Refused> {
        if value.is_undefined() || value.is_null() {
            return Ok(Value::Null);
        }
        if let Some(flag) = value.as_bool() {
            return Ok(Value::Bool(flag));
        }
        if let Some(text) = value.as_string() {
            return Ok(Value::String(text));
        }
        if let Some(number) = value.as_f64() {
            return match number_to_json(number) {
                Some(json) => Ok(json),
                None => self.unreadable(value),
            };
        }
        if value.is_bigint() {
            return match i64::try_from(value.clone()) {
                Ok(int) => Ok(Value::from(int)),
                Err(_) => self.unreadable(value),
            };
        }
        if value.is_function() || !value.is_object() {
            return self.unreadable(value);
        }
        if depth >= MAX_DEPTH {
            return self.refuse(format!(
                "a value nested deeper than {MAX_DEPTH} levels (a cycle?)"
            ));
        }
        if Array::is_array(value) {
            let array: &Array = value.unchecked_ref();
            let mut items = Vec::with_capacity(array.length() as usize);
            for (index, item) in array.iter().enumerate() {
                let mark = self.path.len();
                self.path.push_str(&format!("[{index}]"));
                let item = self.value(&item, depth + 1);
                self.path.truncate(mark);
                items.push(item?);
            }
            return Ok(Value::Array(items));
        }
        let prototype = Object::get_prototype_of(value);
        let object_prototype = self
            .object_prototype
            .get_or_insert_with(|| Object::get_prototype_of(&Object::new().into()));
        if !(prototype.is_null() || JsValue::from(&prototype) == JsValue::from(&*object_prototype))
        {
            return self.unreadable(value);
        }
        let object: &Object = value.unchecked_ref();
        let mut map = Map::new();
        for key in Object::keys(object).iter() {
            let name = key.as_string().unwrap_or_default();
            let mark = self.path.len();
            self.path.push('.');
            self.path.push_str(&name);
            let item = match Reflect::get(object, &key) {
                Ok(item) => self.value(&item, depth + 1),
                Err(_) => self.refuse("a property whose getter threw".to_owned()),
            };
            self.path.truncate(mark);
            map.insert(name, item?);
        }
        Ok(Value::Object(map))
    }

    fn unreadable(&self, value: &JsValue) -> Result<Value, Refused> {
        self.refuse(describe(value))
    }

    fn refuse(&self, got: String) -> Result<Value, Refused> {
        match self.unreadable {
            Unreadable::Mark => Ok(ejson::unrepresentable(&got)),
            Unreadable::Refuse => Err(Refused {
                path: self.path.clone(),
                got,
            }),
        }
    }
}

/// A JS number as JSON: safe integers as i64, other finite non-integers as f64; `None` for
/// NaN, infinities and integers beyond 2^53 − 1 (inexact).
fn number_to_json(number: f64) -> Option<Value> {
    if !number.is_finite() {
        return None;
    }
    if number.fract() == 0.0 {
        #[allow(clippy::cast_precision_loss)] // exact: 2^53 - 1 is a double
        let safe = number.abs() <= MAX_SAFE_INTEGER as f64;
        #[allow(clippy::cast_possible_truncation)] // integral and within ±(2^53 - 1)
        return safe.then(|| Value::from(number as i64));
    }
    Number::from_f64(number).map(Value::Number)
}

/// A short description of a JS value for messages, in JS terms ("NaN", "a function", "a Date",
/// "number 1.5", "string \"x\"").
pub fn describe(value: &JsValue) -> String {
    if value.is_undefined() {
        return "undefined".to_owned();
    }
    if value.is_null() {
        return "null".to_owned();
    }
    if let Some(flag) = value.as_bool() {
        return format!("boolean {flag}");
    }
    if let Some(text) = value.as_string() {
        let shown: String = text.chars().take(40).collect();
        let more = if shown.len() < text.len() { "…" } else { "" };
        return format!("string {}{more}", mongo_seq_core::ejson::quoted(&shown));
    }
    if let Some(number) = value.as_f64() {
        return describe_number(number);
    }
    if value.is_bigint() {
        let digits = BigInt::unchecked_from_js_ref(value)
            .to_string(10)
            .map(String::from)
            .unwrap_or_default();
        return format!("{digits}n (outside the signed 64-bit range)");
    }
    if value.is_symbol() {
        return "a symbol".to_owned();
    }
    if value.is_function() {
        return "a function".to_owned();
    }
    if Array::is_array(value) {
        return "an array".to_owned();
    }
    let class = Reflect::get(value, &"constructor".into())
        .ok()
        .and_then(|constructor| constructor.dyn_into::<Function>().ok())
        .map(|constructor| String::from(constructor.name()))
        .filter(|name| !name.is_empty() && name != "Object");
    match class {
        Some(name) if name.starts_with(['A', 'E', 'I', 'O', 'U']) => format!("an {name}"),
        Some(name) => format!("a {name}"),
        None => "an object".to_owned(),
    }
}

fn describe_number(number: f64) -> String {
    if number.is_nan() {
        "NaN".to_owned()
    } else if number.is_infinite() {
        if number > 0.0 {
            "Infinity"
        } else {
            "-Infinity"
        }
        .to_owned()
    } else if number_to_json(number).is_none() {
        let number = js_number_text(number);
        format!(
            "{number}, a JS number beyond 2^53 - 1 that may not be the integer written (use a BigInt, e.g. {number}n)"
        )
    } else {
        format!("number {}", js_number_text(number))
    }
}

/// A finite number as JS writes it (`String(number)`); Rust's float formatting would add
/// ~20 KB to the module for error messages only.
fn js_number_text(number: f64) -> String {
    js_sys::Number::from(number)
        .to_string_with_radix(10)
        .map(String::from)
        .unwrap_or_default()
}

/// Serializes a core output to a JS value (see module docs for numbers).
pub fn to_js<T: Serialize>(value: &T) -> Result<JsValue, JsValue> {
    // Core outputs are plain data (maps with string keys, integers, strings): this cannot
    // fail. Through JSON text rather than `serde_json::to_value`: the text serializer and
    // parser are in the module anyway (commands and replies cross as text), the value
    // serializer would be one more copy of every output's serialization.
    Ok(text_to_js(serde_json::to_string(value).ok()))
}

/// The JS value of JSON text (`null` for none): the part of [`to_js`] that is the same for
/// every type, kept out of its instances.
#[inline(never)]
fn text_to_js(text: Option<String>) -> JsValue {
    let json = text
        .and_then(|text| serde_json::from_str(&text).ok())
        .unwrap_or(Value::Null);
    json_to_js(&json)
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

/// Whether `int` is exact as a JS number (within ±(2^53 - 1)).
pub fn is_safe_integer(int: i64) -> bool {
    (-MAX_SAFE_INTEGER..=MAX_SAFE_INTEGER).contains(&int)
}

/// An i64 as a JS number when exact, else a BigInt.
pub fn i64_to_js(int: i64) -> JsValue {
    if is_safe_integer(int) {
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
