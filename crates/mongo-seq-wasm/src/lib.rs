//! wasm-bindgen shims over `mongo-seq-core` for the `mongo-seq` npm package.
//! Conversions and errors only: every decision (filters, updates, bounds, retries, scope ids,
//! formats) is the core's. Errors are JS `Error`s named `MongoSeqError` with the core's `code`.
//!
//! The package ships the crate as two modules (`js/scripts/build-wasm`): feature `hot`, what
//! `new Sequences(db).sequence(…)`, `next()`, inserts and formats need, loaded on the first
//! call; feature `cold`, the admin paths (audit, ledger, import, assign, adopt, void, rewind,
//! seals, seeds), loaded on their first use. Each owns the objects it makes; a native build has
//! both (the default).
// One feature alone leaves some shared shims unused.
#![cfg_attr(
    not(all(feature = "hot", feature = "cold")),
    allow(dead_code, unused_imports)
)]

#[cfg(feature = "cold")]
mod admin;
mod args;
#[cfg(feature = "hot")]
mod block;
mod convert;
mod error;
mod plan;
#[cfg(feature = "hot")]
mod router;
#[cfg(feature = "cold")]
mod seal;
#[cfg(feature = "hot")]
mod spec;
mod types;

#[cfg(feature = "cold")]
use mongo_seq_core::{account, audit, unnumbered, ImportCounters, ImportRequest};
use mongo_seq_core::{
    check_count, check_field_path, format_seq, SeqError, SequenceSpec, MAX_RETRIES,
};
use wasm_bindgen::prelude::*;

use crate::error::IntoJsResult;
use crate::plan::JsPlan;

/// Talc instead of the standard library's dlmalloc: a third of its size in the module and
/// faster; single-threaded, like the module (no `atomics`).
#[cfg(all(target_family = "wasm", not(target_feature = "atomics")))]
#[global_allocator]
static ALLOCATOR: talc::wasm::WasmDynamicTalc = talc::wasm::new_wasm_dynamic_allocator();

/// The version of this crate (and of the core it wraps).
#[cfg(feature = "hot")]
#[wasm_bindgen]
pub fn version() -> String {
    env!("CARGO_PKG_VERSION").to_owned()
}

/// Every error code the core can throw.
#[cfg(feature = "hot")]
#[wasm_bindgen(js_name = errorCodes, unchecked_return_type = "string[]")]
pub fn error_codes() -> js_sys::Array {
    SeqError::codes().map(JsValue::from_str).collect()
}

/// Every key of a sequence's options the core knows (`name` among them).
#[cfg(feature = "hot")]
#[wasm_bindgen(js_name = optionKeys, unchecked_return_type = "string[]")]
pub fn option_keys() -> js_sys::Array {
    SequenceSpec::KEYS
        .iter()
        .map(|key| JsValue::from_str(key))
        .collect()
}

/// Most restarts (lost races) a plan tolerates before `TOO_MANY_RETRIES`.
#[cfg(feature = "hot")]
#[wasm_bindgen(js_name = maxRetries)]
pub fn max_retries() -> u32 {
    MAX_RETRIES
}

/// Renders `value` through a format template (`INV-{seq:06}`); `period` (`2026`, `2026-05`,
/// `2026-05-17`) fills the period tokens (`INV-{yyyy}-{seq:06}`).
#[cfg(feature = "hot")]
#[wasm_bindgen(js_name = formatSeq)]
pub fn format_seq_js(
    #[wasm_bindgen(unchecked_param_type = "string")] template: JsValue,
    #[wasm_bindgen(unchecked_param_type = "Integer")] value: JsValue,
    #[wasm_bindgen(unchecked_param_type = "string | undefined")] period: JsValue,
) -> Result<String, JsValue> {
    let template = args::string("template", &template)?;
    let period = args::period("period", &period)?;
    format_seq(&template, args::integer("value", &value)?, period.as_ref()).js()
}

/// `ms` (milliseconds since the epoch) when the core accepts it as an instant
/// (0001-01-02T00:00:00Z to 9999-12-29T23:59:59.999Z: every local date of it has a year 1..=9999),
/// else an `INVALID_DATE` naming `argument`: what a host checks before it turns an instant of its
/// own (a `date` option) into a local date.
#[cfg(feature = "hot")]
#[wasm_bindgen(js_name = checkInstant)]
pub fn check_instant_js(
    #[wasm_bindgen(unchecked_param_type = "string")] argument: JsValue,
    #[wasm_bindgen(unchecked_param_type = "number")] ms: JsValue,
) -> Result<f64, JsValue> {
    let argument = args::string("argument", &argument)?;
    let ms = mongo_seq_core::check_instant(&argument, None, args::integer(&argument, &ms)?).js()?;
    #[allow(clippy::cast_precision_loss)] // within ±2^53: the accepted instants are
    Ok(ms as f64)
}

/// Checks a field path that may be nested (`meta.seq`: where the sidecar writes a number);
/// `INVALID_ARGUMENT` naming `argument` when it cannot be one.
#[cfg(feature = "hot")]
#[wasm_bindgen(js_name = checkFieldPath)]
pub fn check_field_path_js(
    #[wasm_bindgen(unchecked_param_type = "string")] argument: JsValue,
    #[wasm_bindgen(unchecked_param_type = "string")] field: JsValue,
) -> Result<(), JsValue> {
    let argument = args::string("argument", &argument)?;
    let field = args::string(&argument, &field)?;
    check_field_path(&argument, &field).js()
}

/// Checks a collection name as the server would (`$`, NUL, `system.*`, the 255-byte namespace
/// with `database` when given): `INVALID_OPTION` naming `option`, before any command.
#[cfg(feature = "hot")]
#[wasm_bindgen(js_name = checkCollectionName)]
pub fn check_collection_name_js(
    #[wasm_bindgen(unchecked_param_type = "string")] option: JsValue,
    #[wasm_bindgen(unchecked_param_type = "string")] name: JsValue,
    #[wasm_bindgen(unchecked_param_type = "string | undefined")] database: JsValue,
) -> Result<(), JsValue> {
    let option = args::string("option", &option)?;
    let name = args::string(&option, &name)?;
    let database = args::optional_string("database", &database)?;
    mongo_seq_core::sequence::name::check_collection_name(&option, &name, database.as_deref()).js()
}

/// The error a server's refusal (`code`, `message`) of a write on the counters collection
/// `collection` (`db.coll`) means when it refused it for its shard key (`UNSUPPORTED_SHARD_KEY`,
/// returned, not thrown); `undefined` for any other code.
#[cfg(feature = "hot")]
#[wasm_bindgen(js_name = shardKeyRefusal, unchecked_return_type = "Error | undefined")]
pub fn shard_key_refusal_js(
    #[wasm_bindgen(unchecked_param_type = "string")] collection: JsValue,
    #[wasm_bindgen(unchecked_param_type = "number")] code: JsValue,
    #[wasm_bindgen(unchecked_param_type = "string")] message: JsValue,
) -> Result<JsValue, JsValue> {
    let collection = args::string("collection", &collection)?;
    let message = args::string("message", &message)?;
    let code = args::integer("code", &code)?;
    Ok(
        mongo_seq_core::shard_key_refusal(&collection, code, &message)
            .map_or(JsValue::UNDEFINED, |error| error::to_js_error(&error)),
    )
}

/// Reads a batch size (`nextMany`'s count, `insertMany`'s number of documents): an integer
/// from 0 to 1,000,000, else `INVALID_ARGUMENT` naming `argument`. Returns it as a number.
#[cfg(feature = "hot")]
#[wasm_bindgen(js_name = checkCount)]
pub fn check_count_js(
    #[wasm_bindgen(unchecked_param_type = "string")] argument: JsValue,
    #[wasm_bindgen(unchecked_param_type = "number | bigint")] value: JsValue,
) -> Result<f64, JsValue> {
    let argument = args::string("argument", &argument)?;
    let count = check_count(&argument, &args::marked(&value)).js()?;
    #[allow(clippy::cast_precision_loss)] // at most 1,000,000
    Ok(count as f64)
}

/// Reads an integer in any form a driver may hand back (number, bigint, EJSON `$numberInt`,
/// `$numberLong`, integral `$numberDouble` up to 2^53): a number, or a bigint beyond 2^53.
/// Anything else is a `MALFORMED_DOCUMENT` naming `field`.
#[cfg(feature = "hot")]
#[wasm_bindgen(js_name = readInteger, unchecked_return_type = "CoreInteger")]
pub fn read_integer(
    value: JsValue,
    #[wasm_bindgen(unchecked_param_type = "string")] field: JsValue,
) -> Result<JsValue, JsValue> {
    let field = args::string("field", &field)?;
    match mongo_seq_core::ejson::read_i64(&args::marked(&value)) {
        Ok(int) => Ok(convert::i64_to_js(int)),
        Err(reason) => Err(error::to_js_error(&SeqError::MalformedDocument {
            field,
            reason,
        })),
    }
}

/// Audits the numbers found in a collection against the grid `start, start + step, …` and the
/// counter's last value (`null`: no counter): duplicates, gaps, off-grid values, counter lag.
#[cfg(feature = "cold")]
#[wasm_bindgen(js_name = audit, unchecked_return_type = "AuditReport")]
pub fn audit_js(
    #[wasm_bindgen(unchecked_param_type = "unknown[]")] numbers: JsValue,
    #[wasm_bindgen(unchecked_param_type = "Integer")] start: JsValue,
    #[wasm_bindgen(unchecked_param_type = "Integer")] step: JsValue,
    #[wasm_bindgen(unchecked_param_type = "Integer | null")] counter: JsValue,
) -> Result<JsValue, JsValue> {
    const EXPECTED: &str = "an array of numbers";
    let serde_json::Value::Array(numbers) = args::json("numbers", EXPECTED, &numbers)? else {
        return Err(error::invalid_argument(
            "numbers",
            format!("must be {EXPECTED}, got {}", convert::describe(&numbers)),
        ));
    };
    let counter = if counter.is_null() || counter.is_undefined() {
        None
    } else {
        Some(args::integer("counter", &counter)?)
    };
    let report = audit(
        &numbers,
        args::integer("start", &start)?,
        args::integer("step", &step)?,
        counter,
    )
    .js()?;
    convert::to_js(&report)
}

/// Accounts for every number of one counter from `start` to the counter (`null`: no counter
/// document): held by one document, voided, deleted (the ledger's entries as stored), an
/// unexplained gap or a duplicate, as counts and ranges.
#[cfg(feature = "cold")]
#[wasm_bindgen(js_name = account, unchecked_return_type = "Account")]
pub fn account_js(
    #[wasm_bindgen(unchecked_param_type = "Integer")] start: JsValue,
    #[wasm_bindgen(unchecked_param_type = "Integer")] step: JsValue,
    #[wasm_bindgen(unchecked_param_type = "Integer | null")] counter: JsValue,
    #[wasm_bindgen(unchecked_param_type = "unknown[]")] held: JsValue,
    #[wasm_bindgen(unchecked_param_type = "EjsonDocument[]")] ledger: JsValue,
) -> Result<JsValue, JsValue> {
    let counter = if counter.is_null() || counter.is_undefined() {
        None
    } else {
        Some(args::integer("counter", &counter)?)
    };
    let report = account(
        args::integer("start", &start)?,
        args::integer("step", &step)?,
        counter,
        &array("held", "an array of numbers", &held)?,
        &array("ledger", "an array of ledger entries", &ledger)?,
    )
    .js()?;
    convert::to_js(&report)
}

/// Unnumbered documents' `_id`s against a trigger's dead letters' (Extended JSON): those
/// waiting as dead letters, and those left unexplained.
#[cfg(feature = "cold")]
#[wasm_bindgen(js_name = unnumbered, unchecked_return_type = "Unnumbered")]
pub fn unnumbered_js(
    #[wasm_bindgen(unchecked_param_type = "unknown[]")] documents: JsValue,
    #[wasm_bindgen(js_name = deadLetters, unchecked_param_type = "unknown[]")]
    dead_letters: JsValue,
) -> Result<JsValue, JsValue> {
    const EXPECTED: &str = "an array of _ids";
    convert::to_js(&unnumbered(
        &array("documents", EXPECTED, &documents)?,
        &array("deadLetters", EXPECTED, &dead_letters)?,
    ))
}

/// An array argument, as JSON values.
#[cfg(feature = "cold")]
fn array(
    argument: &str,
    expected: &str,
    value: &JsValue,
) -> Result<Vec<serde_json::Value>, JsValue> {
    match args::json(argument, expected, value)? {
        serde_json::Value::Array(items) => Ok(items),
        _ => Err(error::invalid_argument(
            argument,
            format!("must be {expected}, got {}", convert::describe(value)),
        )),
    }
}

/// The import options validated, defaults filled in (the collections' names among them).
#[cfg(feature = "cold")]
#[wasm_bindgen(js_name = importRequest, unchecked_return_type = "Required<ImportRequest>")]
pub fn import_request(
    #[wasm_bindgen(unchecked_param_type = "ImportRequest")] request: JsValue,
) -> Result<JsValue, JsValue> {
    let request = args::json("options", "an object { from, apply, … }", &request)?;
    convert::to_js(&ImportRequest::from_json(&request).js()?)
}

/// Plan: adopt the counters of mongoose-sequence or mongoose-auto-increment/@typegoose
/// (`{ from, apply?, source?, counters?, names?, counterField? }`): reads them (`find` on the
/// `documents` collection, the source) and mongo-seq's, and with `apply` moves mongo-seq's
/// counters past them, never backwards; done with an `ImportReport`.
#[cfg(feature = "cold")]
#[wasm_bindgen(js_name = importCounters)]
pub fn import_counters(
    #[wasm_bindgen(unchecked_param_type = "ImportRequest")] request: JsValue,
) -> Result<JsPlan, JsValue> {
    let request = args::json("options", "an object { from, apply, … }", &request)?;
    let request = ImportRequest::from_json(&request).js()?;
    Ok(JsPlan::wrap(ImportCounters::new(&request)))
}
