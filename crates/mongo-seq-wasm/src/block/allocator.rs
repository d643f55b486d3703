//! `BlockAllocator`: the core's hi/lo allocator, held by a JS sequence object.

use mongo_seq_core::{check_count, BlockAllocator, ReservedRange};
use wasm_bindgen::prelude::*;

use crate::args;
use crate::convert::{i64_to_js, to_js};
use crate::error::{invalid_argument, IntoJsResult};

/// Numbers reserved in a block and not handed out yet. No I/O: when it runs dry, run the
/// `refillRequest` reservation and `refill` it with the resulting range.
#[wasm_bindgen(js_name = BlockAllocator)]
pub struct JsBlockAllocator(BlockAllocator);

#[wasm_bindgen(js_class = BlockAllocator)]
impl JsBlockAllocator {
    /// An empty allocator refilling `block` (≥ 1) numbers at a time.
    #[wasm_bindgen(constructor)]
    pub fn new(
        #[wasm_bindgen(unchecked_param_type = "number")] block: JsValue,
    ) -> Result<JsBlockAllocator, JsValue> {
        let raw = args::integer("block", &block)?;
        let block = u64::try_from(raw)
            .map_err(|_| invalid_argument("block", format!("must be at least 1, got {raw}")))?;
        BlockAllocator::new(block).js().map(Self)
    }

    /// Numbers left before a refill is needed.
    pub fn remaining(&self) -> f64 {
        #[allow(clippy::cast_precision_loss)] // a block never holds 2^53 numbers in practice
        let remaining = self.0.remaining() as f64;
        remaining
    }

    /// True when `next()` would return `undefined`: time to refill.
    #[wasm_bindgen(js_name = isEmpty)]
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The reservation request that lets `wanted` more numbers be served (at least one block).
    #[wasm_bindgen(js_name = refillRequest, unchecked_return_type = "ReserveRequest")]
    pub fn refill_request(
        &self,
        #[wasm_bindgen(js_name = counterId, unchecked_param_type = "string")] counter_id: JsValue,
        #[wasm_bindgen(unchecked_param_type = "number")] wanted: JsValue,
    ) -> Result<JsValue, JsValue> {
        let counter_id = args::string("counterId", &counter_id)?;
        let wanted = check_count("wanted", &args::marked(&wanted)).js()?;
        to_js(&self.0.refill_request(&counter_id, wanted))
    }

    /// Loads a freshly reserved range; only when empty.
    pub fn refill(
        &mut self,
        #[wasm_bindgen(unchecked_param_type = "ReservedRange")] range: JsValue,
    ) -> Result<(), JsValue> {
        self.0.refill(read_range(range)?).js()
    }

    /// The next number, or `undefined` when a refill is needed.
    #[wasm_bindgen(unchecked_return_type = "number | bigint | undefined")]
    pub fn next(&mut self) -> JsValue {
        self.0.next().map_or(JsValue::UNDEFINED, i64_to_js)
    }

    /// Up to `max` consecutive numbers as a range, or `undefined` when empty.
    #[wasm_bindgen(unchecked_return_type = "ReservedRange | undefined")]
    pub fn take(
        &mut self,
        #[wasm_bindgen(unchecked_param_type = "number")] max: JsValue,
    ) -> Result<JsValue, JsValue> {
        match self.0.take(check_count("max", &args::marked(&max)).js()?) {
            Some(range) => to_js(&range),
            None => Ok(JsValue::UNDEFINED),
        }
    }

    /// Drops the rest of the block (a gap); returns how many numbers were dropped.
    pub fn discard(&mut self) -> f64 {
        #[allow(clippy::cast_precision_loss)]
        let dropped = self.0.discard() as f64;
        dropped
    }
}

/// Reads and checks a range handed back from JS.
pub fn read_range(range: JsValue) -> Result<ReservedRange, JsValue> {
    let range = args::json("range", "a ReservedRange object", &range)?;
    ReservedRange::from_json(&range).js()
}

/// Every number of a range, in order.
#[wasm_bindgen(js_name = rangeValues, unchecked_return_type = "Array<number | bigint>")]
pub fn range_values(
    #[wasm_bindgen(unchecked_param_type = "ReservedRange")] range: JsValue,
) -> Result<JsValue, JsValue> {
    let range = read_range(range)?;
    Ok(range
        .iter()
        .map(i64_to_js)
        .collect::<js_sys::Array>()
        .into())
}
