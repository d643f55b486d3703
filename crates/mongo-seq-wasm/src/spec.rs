//! `SequenceSpec`: validated options and the plans of one sequence.

use mongo_seq_core::{
    check_insert_fields, BlockCounter, CurrentValue, InsertNumbered, OptimisticInsert, Reservation,
    ReserveRequest, SeedFromCollection, SeedFromMax, SequenceSpec, SetNext,
};
use wasm_bindgen::prelude::*;

use crate::args;
use crate::block::block_counter::JsBlockCounter;
use crate::convert::to_js;
use crate::error::{invalid_argument, IntoJsResult};
use crate::plan::JsPlan;

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
        SequenceSpec::parse(&args::marked(&options)).js().map(Self)
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
        let document = args::document("document", &document)?;
        self.0.counter_id(document.as_ref()).js()
    }

    /// The formatted id of `value`, or `undefined` without a `format`.
    #[wasm_bindgen(js_name = formatValue)]
    pub fn format_value(
        &self,
        #[wasm_bindgen(unchecked_param_type = "Integer")] value: JsValue,
    ) -> Result<Option<String>, JsValue> {
        Ok(self.0.format_value(args::integer("value", &value)?))
    }

    /// Checks where an insert writes the number (`field`) and the formatted id
    /// (`formatField`, optional); throws `INVALID_ARGUMENT` naming the one that cannot be used.
    /// `nested`: the document is numbered in place (the mongoose plugin), so either may be a
    /// nested path (`parent.nested`).
    #[wasm_bindgen(js_name = checkInsertFields)]
    pub fn check_insert_fields(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] field: JsValue,
        #[wasm_bindgen(js_name = formatField, unchecked_param_type = "string | undefined")]
        format_field: JsValue,
        #[wasm_bindgen(unchecked_param_type = "boolean | undefined")] nested: JsValue,
    ) -> Result<(), JsValue> {
        let field = args::string("field", &field)?;
        let format_field = args::optional_string("formatField", &format_field)?;
        let check = if nested.is_truthy() {
            mongo_seq_core::check_document_fields
        } else {
            check_insert_fields
        };
        check(&self.0, &field, format_field.as_deref()).js()
    }

    /// Plan: atomically reserve numbers (`{ counterId, count, minCount?, extraFilter?, extraSet? }`);
    /// done with a `ReservedRange`.
    pub fn reserve(
        &self,
        #[wasm_bindgen(unchecked_param_type = "ReserveRequest")] request: JsValue,
    ) -> Result<JsPlan, JsValue> {
        let request = args::json("request", "a ReserveRequest object", &request)?;
        let request = ReserveRequest::from_json(&request).js()?;
        Reservation::new(&self.0, &request).js().map(JsPlan::wrap)
    }

    /// The counter object of `counterId` (from `counterId()`): the numbers this process holds.
    #[wasm_bindgen(js_name = blockCounter)]
    pub fn block_counter(
        &self,
        #[wasm_bindgen(js_name = counterId, unchecked_param_type = "string")] counter_id: JsValue,
    ) -> Result<JsBlockCounter, JsValue> {
        let counter_id = args::string("counterId", &counter_id)?;
        BlockCounter::new(&self.0, &counter_id)
            .js()
            .map(JsBlockCounter::new)
    }

    /// Plan: insert the caller's document numbered in `field` (and its formatted id in
    /// `formatField`), numbers from `take` commands, a taken number replaced; done with an
    /// `InsertOutcome`. `document` supplies scope values.
    #[wasm_bindgen(js_name = insertOne)]
    pub fn insert_one(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] field: JsValue,
        #[wasm_bindgen(js_name = formatField, unchecked_param_type = "string | undefined")]
        format_field: JsValue,
        #[wasm_bindgen(unchecked_param_type = "EjsonDocument | undefined")] document: JsValue,
    ) -> Result<JsPlan, JsValue> {
        let field = args::string("field", &field)?;
        let format_field = args::optional_string("formatField", &format_field)?;
        let document = args::document("document", &document)?;
        InsertNumbered::one(&self.0, &field, format_field.as_deref(), document.as_ref())
            .js()
            .map(JsPlan::wrap)
    }

    /// Plan: `insertOne` for `count` documents, inserted in order (`insertDocuments`);
    /// `documents` supplies their scope values (required when scoped).
    #[wasm_bindgen(js_name = insertMany)]
    pub fn insert_many(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] field: JsValue,
        #[wasm_bindgen(js_name = formatField, unchecked_param_type = "string | undefined")]
        format_field: JsValue,
        #[wasm_bindgen(unchecked_param_type = "number")] count: JsValue,
        #[wasm_bindgen(unchecked_param_type = "EjsonDocument[] | undefined")] documents: JsValue,
    ) -> Result<JsPlan, JsValue> {
        const EXPECTED: &str = "an array of documents";
        let field = args::string("field", &field)?;
        let format_field = args::optional_string("formatField", &format_field)?;
        let count = args::integer("count", &count)?;
        let count = u64::try_from(count)
            .map_err(|_| invalid_argument("count", format!("must not be negative, got {count}")))?;
        let documents = if documents.is_undefined() || documents.is_null() {
            None
        } else {
            match args::json("documents", EXPECTED, &documents)? {
                serde_json::Value::Array(documents) => Some(documents),
                _ => {
                    return Err(invalid_argument(
                        "documents",
                        format!(
                            "must be {EXPECTED}, got {}",
                            crate::convert::describe(&documents)
                        ),
                    ))
                }
            }
        };
        InsertNumbered::many(
            &self.0,
            &field,
            format_field.as_deref(),
            count,
            documents.as_deref(),
        )
        .js()
        .map(JsPlan::wrap)
    }

    /// Plan: read the counter without writing; done with a `CounterState`.
    pub fn current(
        &self,
        #[wasm_bindgen(js_name = counterId, unchecked_param_type = "string")] counter_id: JsValue,
    ) -> Result<JsPlan, JsValue> {
        CurrentValue::new(&self.0, &args::string("counterId", &counter_id)?)
            .js()
            .map(JsPlan::wrap)
    }

    /// Plan: make `next` the next number issued; done with a `SetNextOutcome`.
    #[wasm_bindgen(js_name = setNext)]
    pub fn set_next(
        &self,
        #[wasm_bindgen(js_name = counterId, unchecked_param_type = "string")] counter_id: JsValue,
        #[wasm_bindgen(unchecked_param_type = "Integer")] next: JsValue,
        #[wasm_bindgen(unchecked_param_type = "boolean")] force: JsValue,
    ) -> Result<JsPlan, JsValue> {
        let counter_id = args::string("counterId", &counter_id)?;
        let next = args::integer("next", &next)?;
        let force = args::boolean("force", &force)?;
        SetNext::new(&self.0, &counter_id, next, force)
            .js()
            .map(JsPlan::wrap)
    }

    /// Plan: every counter of the sequence (each scope) back to `start`; refused for a gapless
    /// sequence unless `force` (`gapless` undefined: a counter a sidecar trigger keeps counts as
    /// gapless); done with a `ResetOutcome` (`{ reset, next }`).
    #[wasm_bindgen(js_name = resetAll)]
    pub fn reset_all(
        &self,
        #[wasm_bindgen(unchecked_param_type = "boolean")] force: JsValue,
        #[wasm_bindgen(unchecked_param_type = "boolean | undefined")] gapless: JsValue,
    ) -> Result<JsPlan, JsValue> {
        let force = args::boolean("force", &force)?;
        let gapless = if gapless.is_undefined() || gapless.is_null() {
            None
        } else {
            Some(args::boolean("gapless", &gapless)?)
        };
        Ok(JsPlan::wrap(mongo_seq_core::ResetSequence::new(
            &self.0, force, gapless,
        )))
    }

    /// Plan: move the counter past `value` (never backwards); done with a `CounterState`.
    #[wasm_bindgen(js_name = seedFromMax)]
    pub fn seed_from_max(
        &self,
        #[wasm_bindgen(js_name = counterId, unchecked_param_type = "string")] counter_id: JsValue,
        #[wasm_bindgen(unchecked_param_type = "Integer")] value: JsValue,
    ) -> Result<JsPlan, JsValue> {
        let counter_id = args::string("counterId", &counter_id)?;
        let value = args::integer("value", &value)?;
        SeedFromMax::new(&self.0, &counter_id, value)
            .js()
            .map(JsPlan::wrap)
    }

    /// Plan: find the furthest number in `field` of the document collection (among documents
    /// with the scope values of `document`) and seed the counter past it; done with a
    /// `CounterState` (unchanged when the collection holds no number).
    #[wasm_bindgen(js_name = seedFromCollection)]
    pub fn seed_from_collection(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] field: JsValue,
        #[wasm_bindgen(unchecked_param_type = "EjsonDocument | undefined")] document: JsValue,
    ) -> Result<JsPlan, JsValue> {
        let field = args::string("field", &field)?;
        let document = args::document("document", &document)?;
        SeedFromCollection::new(&self.0, &field, document.as_ref())
            .js()
            .map(JsPlan::wrap)
    }

    /// Plan: the tutorial's optimistic loop on the document collection, with backoff (`wait`
    /// commands) and a budget of `maxAttempts` inserts; done with an `OptimisticOutcome`.
    /// `document` supplies scope values.
    #[wasm_bindgen(js_name = insertOptimistic)]
    pub fn insert_optimistic(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] field: JsValue,
        #[wasm_bindgen(unchecked_param_type = "EjsonDocument | undefined")] document: JsValue,
        #[wasm_bindgen(js_name = formatField, unchecked_param_type = "string | undefined")]
        format_field: JsValue,
        #[wasm_bindgen(js_name = maxAttempts, unchecked_param_type = "number | undefined")]
        max_attempts: JsValue,
    ) -> Result<JsPlan, JsValue> {
        let field = args::string("field", &field)?;
        let document = args::document("document", &document)?;
        let format_field = args::optional_string("formatField", &format_field)?;
        OptimisticInsert::with_max_attempts(
            &self.0,
            &field,
            document.as_ref(),
            format_field.as_deref(),
            &args::marked(&max_attempts),
        )
        .js()
        .map(JsPlan::wrap)
    }
}
