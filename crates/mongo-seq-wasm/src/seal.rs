//! Sealed series: a link's seal (`sealLink`) and a series' chain verified (`verifySeries`), the
//! core's `seal` module as JS values.

use mongo_seq_core::seal::link::Link;
use mongo_seq_core::seal::verify::{verify_series, StoredLink};
use wasm_bindgen::prelude::*;

use crate::args;
use crate::convert;
use crate::error::IntoJsResult;

/// The seal of `link` (`{series, kind, number, period?, fields}`, fields as canonical Extended
/// JSON) after the link whose hash is `previous`: `{encoding, hash, previous}`.
#[wasm_bindgen(js_name = sealLink, unchecked_return_type = "SealedLink")]
pub fn seal_link(
    #[wasm_bindgen(unchecked_param_type = "SealLink")] link: JsValue,
    #[wasm_bindgen(unchecked_param_type = "string | null | undefined")] previous: JsValue,
) -> Result<JsValue, JsValue> {
    let link = Link::from_json("link", &args::json("link", "a link", &link)?).js()?;
    let previous = args::optional_string("previous", &previous)?;
    convert::to_js(&link.sealed(previous.as_deref()).js()?)
}

/// Verifies one series' `links` (each a link with its stored `seal`, in any order) from
/// `anchor` (the period before's last hash) to `head` (the hash the series' counter keeps).
#[wasm_bindgen(js_name = verifySeries, unchecked_return_type = "SeriesSealReport")]
pub fn verify_series_js(
    #[wasm_bindgen(unchecked_param_type = "string")] series: JsValue,
    #[wasm_bindgen(unchecked_param_type = "StoredSealLink[]")] links: JsValue,
    #[wasm_bindgen(unchecked_param_type = "string | null | undefined")] anchor: JsValue,
    #[wasm_bindgen(unchecked_param_type = "string | null | undefined")] head: JsValue,
) -> Result<JsValue, JsValue> {
    let series = args::string("series", &series)?;
    let links = args::json("links", "an array of links", &links)?;
    let links = StoredLink::list_from_json("links", &links).js()?;
    let anchor = args::optional_string("anchor", &anchor)?;
    let head = args::optional_string("head", &head)?;
    convert::to_js(&verify_series(
        &series,
        &links,
        anchor.as_deref(),
        head.as_deref(),
    ))
}
