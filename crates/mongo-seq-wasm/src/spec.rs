//! `SequenceSpec`: validated options and the plans of one sequence.

use mongo_seq_core::{
    ejson, CurrentValue, OptimisticInsert, Reservation, ReserveRequest, SeedFromCollection,
    SeedFromMax, SeqError, SequenceSpec, SetNext,
};
use wasm_bindgen::prelude::*;

use crate::convert::{from_js, from_js_optional, to_js};
use crate::error::{to_js_error, IntoJsResult};
use crate::plan::JsPlan;

/// Reads an integer argument (number, BigInt or `{ $numberLong }`) for the core.
pub fn read_integer(argument: &str, value: JsValue) -> Result<i64, JsValue> {
    ejson::read_i64(&from_js(value)?).map_err(|reason| {
        to_js_error(&SeqError::InvalidArgument {
            argument: argument.to_owned(),
            reason,
        })
    })
}

/// Validated sequence options (`name`, `start`, `step`, `min`, `max`, `block`, `scope`,
/// `format`). Constructing one validates; every plan of the sequence starts here.
#[wasm_bindgen(js_name = SequenceSpec)]
pub struct JsSequenceSpec(SequenceSpec);

#[wasm_bindgen(js_class = SequenceSpec)]
impl JsSequenceSpec {
    /// Validates raw options; throws a `MongoSeqError` (code `UNKNOWN_OPTION`, `INVALID_STEP`, …).
    #[wasm_bindgen(constructor)]
    pub fn new(
        #[wasm_bindgen(unchecked_param_type = "SequenceOptions")] options: JsValue,
    ) -> Result<JsSequenceSpec, JsValue> {
        SequenceSpec::parse(&from_js(options)?).js().map(Self)
    }

    /// The normalized options, defaults filled in.
    #[wasm_bindgen(unchecked_return_type = "NormalizedSequenceOptions")]
    pub fn options(&self) -> Result<JsValue, JsValue> {
        to_js(&self.0)
    }

    /// The counter `_id` for a document (scope values read from it; optional when unscoped).
    #[wasm_bindgen(js_name = counterId)]
    pub fn counter_id(
        &self,
        #[wasm_bindgen(unchecked_param_type = "EjsonDocument | undefined")] document: JsValue,
    ) -> Result<String, JsValue> {
        let document = from_js_optional(document)?;
        self.0.counter_id(document.as_ref()).js()
    }

    /// The formatted id of `value`, or `undefined` without a `format`.
    #[wasm_bindgen(js_name = formatValue)]
    pub fn format_value(
        &self,
        #[wasm_bindgen(unchecked_param_type = "Integer")] value: JsValue,
    ) -> Result<Option<String>, JsValue> {
        Ok(self.0.format_value(read_integer("value", value)?))
    }

    /// Plan: atomically reserve numbers (`{ counterId, count, minCount?, extraFilter?, extraSet? }`);
    /// done with a `ReservedRange`.
    pub fn reserve(
        &self,
        #[wasm_bindgen(unchecked_param_type = "ReserveRequest")] request: JsValue,
    ) -> Result<JsPlan, JsValue> {
        let request = ReserveRequest::from_json(&from_js(request)?).js()?;
        Reservation::new(&self.0, &request).js().map(JsPlan::wrap)
    }

    /// Plan: read the counter without writing; done with a `CounterState`.
    pub fn current(
        &self,
        #[wasm_bindgen(js_name = counterId)] counter_id: &str,
    ) -> Result<JsPlan, JsValue> {
        CurrentValue::new(&self.0, counter_id)
            .js()
            .map(JsPlan::wrap)
    }

    /// Plan: make `next` the next number issued; done with a `SetNextOutcome`.
    #[wasm_bindgen(js_name = setNext)]
    pub fn set_next(
        &self,
        #[wasm_bindgen(js_name = counterId)] counter_id: &str,
        #[wasm_bindgen(unchecked_param_type = "Integer")] next: JsValue,
        force: bool,
    ) -> Result<JsPlan, JsValue> {
        SetNext::new(&self.0, counter_id, read_integer("next", next)?, force)
            .js()
            .map(JsPlan::wrap)
    }

    /// Plan: move the counter past `value` (never backwards); done with a `CounterState`.
    #[wasm_bindgen(js_name = seedFromMax)]
    pub fn seed_from_max(
        &self,
        #[wasm_bindgen(js_name = counterId)] counter_id: &str,
        #[wasm_bindgen(unchecked_param_type = "Integer")] value: JsValue,
    ) -> Result<JsPlan, JsValue> {
        SeedFromMax::new(&self.0, counter_id, read_integer("value", value)?)
            .js()
            .map(JsPlan::wrap)
    }

    /// Plan: find the furthest number in `field` of the document collection (among documents
    /// with the scope values of `document`) and seed the counter past it; done with a
    /// `CounterState` (unchanged when the collection holds no number).
    #[wasm_bindgen(js_name = seedFromCollection)]
    pub fn seed_from_collection(
        &self,
        field: &str,
        #[wasm_bindgen(unchecked_param_type = "EjsonDocument | undefined")] document: JsValue,
    ) -> Result<JsPlan, JsValue> {
        let document = from_js_optional(document)?;
        SeedFromCollection::new(&self.0, field, document.as_ref())
            .js()
            .map(JsPlan::wrap)
    }

    /// Plan: the tutorial's optimistic loop on the document collection; done with an
    /// `OptimisticOutcome`. `document` supplies scope values.
    #[wasm_bindgen(js_name = insertOptimistic)]
    pub fn insert_optimistic(
        &self,
        field: &str,
        #[wasm_bindgen(unchecked_param_type = "EjsonDocument | undefined")] document: JsValue,
        #[wasm_bindgen(js_name = formatField)] format_field: Option<String>,
    ) -> Result<JsPlan, JsValue> {
        let document = from_js_optional(document)?;
        OptimisticInsert::new(&self.0, field, document.as_ref(), format_field.as_deref())
            .js()
            .map(JsPlan::wrap)
    }
}
