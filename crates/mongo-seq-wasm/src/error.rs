//! Core errors as JS `Error`s: `name` "MongoSeqError", the core's stable `code`, its `details`
//! (camelCase fields, integers beyond 2^53 as BigInt) and its message.

use js_sys::{Error, Reflect};
use mongo_seq_core::SeqError;
use wasm_bindgen::prelude::*;

use crate::convert::json_to_js;

/// The JS error for a core error.
pub fn to_js_error(error: &SeqError) -> JsValue {
    let info = error.info();
    let js_error = Error::new(&info.message);
    js_error.set_name("MongoSeqError");
    let _ = Reflect::set(&js_error, &"code".into(), &info.code.into());
    if let Some(details) = &info.details {
        let _ = Reflect::set(&js_error, &"details".into(), &json_to_js(details));
    }
    js_error.into()
}

/// `INVALID_ARGUMENT` naming `argument`.
pub fn invalid_argument(argument: &str, reason: impl Into<String>) -> JsValue {
    to_js_error(&SeqError::InvalidArgument {
        argument: argument.to_owned(),
        reason: reason.into(),
    })
}

/// `Result<T, SeqError>` → `Result<T, JsValue>` with the error converted.
pub trait IntoJsResult<T> {
    fn js(self) -> Result<T, JsValue>;
}

impl<T> IntoJsResult<T> for Result<T, SeqError> {
    fn js(self) -> Result<T, JsValue> {
        self.map_err(into_js_error)
    }
}

/// [`to_js_error`] taking the error: one copy of dropping it, not one per `T` above.
#[inline(never)]
fn into_js_error(error: SeqError) -> JsValue {
    to_js_error(&error)
}
