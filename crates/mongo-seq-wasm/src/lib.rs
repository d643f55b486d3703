//! wasm-bindgen shims over `mongo-seq-core` for the `mongo-seq` npm package.
//! Conversions and errors only: every decision (filters, updates, bounds, retries, scope ids,
//! formats) is the core's. Errors are JS `Error`s named `MongoSeqError` with the core's `code`.

mod block;
mod convert;
mod error;
mod plan;
mod spec;
mod types;

use mongo_seq_core::{audit, format_seq, SeqError, MAX_RETRIES};
use wasm_bindgen::prelude::*;

use crate::error::IntoJsResult;

/// The version of this crate (and of the core it wraps).
#[wasm_bindgen]
pub fn version() -> String {
    env!("CARGO_PKG_VERSION").to_owned()
}

/// Every error code the core can throw.
#[wasm_bindgen(js_name = errorCodes)]
pub fn error_codes() -> Vec<String> {
    SeqError::CODES
        .iter()
        .map(|code| (*code).to_owned())
        .collect()
}

/// Most restarts (lost races) a plan tolerates before `TOO_MANY_RETRIES`.
#[wasm_bindgen(js_name = maxRetries)]
pub fn max_retries() -> u32 {
    MAX_RETRIES
}

/// Renders `value` through a format template (`INV-{seq:06}`).
#[wasm_bindgen(js_name = formatSeq)]
pub fn format_seq_js(
    template: &str,
    #[wasm_bindgen(unchecked_param_type = "Integer")] value: JsValue,
) -> Result<String, JsValue> {
    format_seq(template, spec::read_integer("value", value)?).js()
}

/// Reads an integer in any form a driver may hand back (number, bigint, EJSON `$numberInt`,
/// `$numberLong`, integral `$numberDouble` up to 2^53): a number, or a bigint beyond 2^53.
/// Anything else is a `MALFORMED_DOCUMENT` naming `field`.
#[wasm_bindgen(js_name = readInteger, unchecked_return_type = "CoreInteger")]
pub fn read_integer(value: JsValue, field: &str) -> Result<JsValue, JsValue> {
    let json = convert::from_js(value)?;
    match mongo_seq_core::ejson::read_i64(&json) {
        Ok(int) => Ok(convert::i64_to_js(int)),
        Err(reason) => Err(error::to_js_error(&SeqError::MalformedDocument {
            field: field.to_owned(),
            reason,
        })),
    }
}

/// Audits the numbers found in a collection against the grid `start, start + step, …` and the
/// counter's last value (`null`: no counter): duplicates, gaps, off-grid values, counter lag.
#[wasm_bindgen(js_name = audit, unchecked_return_type = "AuditReport")]
pub fn audit_js(
    #[wasm_bindgen(unchecked_param_type = "unknown[]")] numbers: JsValue,
    #[wasm_bindgen(unchecked_param_type = "Integer")] start: JsValue,
    #[wasm_bindgen(unchecked_param_type = "Integer")] step: JsValue,
    #[wasm_bindgen(unchecked_param_type = "Integer | null")] counter: JsValue,
) -> Result<JsValue, JsValue> {
    let serde_json::Value::Array(numbers) = convert::from_js(numbers)? else {
        return Err(error::argument_error("numbers must be an array"));
    };
    let counter = if counter.is_null() || counter.is_undefined() {
        None
    } else {
        Some(spec::read_integer("counter", counter)?)
    };
    let report = audit(
        &numbers,
        spec::read_integer("start", start)?,
        spec::read_integer("step", step)?,
        counter,
    )
    .js()?;
    convert::to_js(&report)
}
