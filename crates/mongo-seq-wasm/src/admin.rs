//! `SequenceAdmin`: the plans of one sequence that number nothing on the hot path (assign,
//! void, setNext, adoptDefinition, rewind, seal verification, seeds), in the module the
//! package loads on their first use (`js/src/wasm.js`). Built from the same options as the
//! hot module's `SequenceSpec`: each module owns the objects it makes.

use mongo_seq_core::{
    assign_matching, AdoptDefinition, SeedFromCollection, SeedFromMax, SequenceSpec, SetNext,
    VoidNumbers, VoidRequest,
};
use wasm_bindgen::prelude::*;

use crate::args;
use crate::error::IntoJsResult;
use crate::plan::JsPlan;

/// Validated sequence options, as `SequenceSpec` takes them, and the sequence's admin plans.
#[wasm_bindgen(js_name = SequenceAdmin)]
pub struct JsSequenceAdmin(SequenceSpec);

#[wasm_bindgen(js_class = SequenceAdmin)]
impl JsSequenceAdmin {
    /// Validates raw options (those `SequenceSpec` takes); throws a `MongoSeqError` as it does.
    #[wasm_bindgen(constructor)]
    pub fn new(
        #[wasm_bindgen(unchecked_param_type = "SequenceOptions")] options: JsValue,
    ) -> Result<JsSequenceAdmin, JsValue> {
        SequenceSpec::parse(&args::marked(&options)).js().map(Self)
    }

    /// Plan: number every document matching `filter` that has no number in `field` (and its
    /// formatted id in `formatField`, its period in `<field>Period` when the sequence resets),
    /// in the order of `sort` (then `_id`), each in the period of its `dateField` or else of
    /// `nowMs`; done with an `AssignOutcome` (`{ assigned: [{_id, value, formatted?,
    /// period?}], skipped: [{_id, code, message}] }`).
    pub fn assign(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] field: JsValue,
        #[wasm_bindgen(js_name = formatField, unchecked_param_type = "string | undefined")]
        format_field: JsValue,
        #[wasm_bindgen(unchecked_param_type = "EjsonDocument")] filter: JsValue,
        #[wasm_bindgen(unchecked_param_type = "EjsonDocument | undefined")] sort: JsValue,
        #[wasm_bindgen(js_name = dateField, unchecked_param_type = "string | undefined")]
        date_field: JsValue,
        #[wasm_bindgen(js_name = nowMs, unchecked_param_type = "number | undefined")]
        now_ms: JsValue,
    ) -> Result<JsPlan, JsValue> {
        let field = args::string("field", &field)?;
        let format_field = args::optional_string("formatField", &format_field)?;
        // Missing: the core names `filter` and what it must be.
        let filter = args::document("filter", &filter)?.unwrap_or_default();
        let sort = args::document("sort", &sort)?;
        let date_field = args::optional_string("dateField", &date_field)?;
        let now_ms = args::optional_integer("nowMs", &now_ms)?;
        assign_matching(
            &self.0,
            &field,
            format_field.as_deref(),
            filter,
            sort.as_ref(),
            date_field.as_deref(),
            now_ms,
        )
        .js()
        .map(JsPlan::wrap)
    }

    /// Plan: void numbers of a counter in the ledger (`{ counterId, numbers, field, reason, by,
    /// nowMs }`); done with a `VoidOutcome` (`{ counterId, numbers, atMs }`).
    #[wasm_bindgen(js_name = voidNumbers)]
    pub fn void_numbers(
        &self,
        #[wasm_bindgen(unchecked_param_type = "VoidRequest")] request: JsValue,
    ) -> Result<JsPlan, JsValue> {
        let request = VoidRequest::from_json(&args::marked(&request)).js()?;
        VoidNumbers::new(&self.0, &request).js().map(JsPlan::wrap)
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

    /// Plan: rewrite the counter's definition to this sequence's on purpose (`gapless`: numbered
    /// by a gapless trigger); done with an `AdoptOutcome` (`{ counterId, previous, definition,
    /// changed }`); refused for a counter that does not exist.
    #[wasm_bindgen(js_name = adoptDefinition)]
    pub fn adopt_definition(
        &self,
        #[wasm_bindgen(js_name = counterId, unchecked_param_type = "string")] counter_id: JsValue,
        #[wasm_bindgen(unchecked_param_type = "boolean | undefined")] gapless: JsValue,
    ) -> Result<JsPlan, JsValue> {
        let counter_id = args::string("counterId", &counter_id)?;
        let gapless = if gapless.is_undefined() || gapless.is_null() {
            false
        } else {
            args::boolean("gapless", &gapless)?
        };
        AdoptDefinition::new(&self.0.clone().with_gapless(gapless), &counter_id)
            .js()
            .map(JsPlan::wrap)
    }

    /// Plan: every counter of the sequence (each scope) back to `start`; refused for a gapless
    /// sequence unless `force` (`gapless` undefined: a counter a sidecar trigger keeps counts as
    /// gapless), and — `existing` — for a sequence without counters (INVALID_ARGUMENT); done
    /// with a `RewindOutcome` (`{ rewound, next }`).
    #[wasm_bindgen(js_name = rewindAll)]
    pub fn rewind_all(
        &self,
        #[wasm_bindgen(unchecked_param_type = "boolean")] force: JsValue,
        #[wasm_bindgen(unchecked_param_type = "boolean | undefined")] gapless: JsValue,
        #[wasm_bindgen(unchecked_param_type = "boolean | undefined")] existing: JsValue,
    ) -> Result<JsPlan, JsValue> {
        let force = args::boolean("force", &force)?;
        let gapless = if gapless.is_undefined() || gapless.is_null() {
            None
        } else {
            Some(args::boolean("gapless", &gapless)?)
        };
        let rewind = if existing.is_undefined() || !args::boolean("existing", &existing)? {
            mongo_seq_core::RewindSequence::new
        } else {
            mongo_seq_core::RewindSequence::of_existing
        };
        Ok(JsPlan::wrap(rewind(&self.0, force, gapless)))
    }

    /// Plan: every series of this sealed sequence (its `sealFields`) numbered in `field`
    /// verified as stored (the counters, the documents, the ledger); done with one
    /// `SeriesSealReport` per counter, by counter id.
    #[wasm_bindgen(js_name = verifySeal)]
    pub fn verify_seal(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] field: JsValue,
    ) -> Result<JsPlan, JsValue> {
        let field = args::string("field", &field)?;
        mongo_seq_core::VerifySeal::new(&self.0, &field)
            .js()
            .map(JsPlan::wrap)
    }

    /// Plan: refuses (GAPLESS_REFUSED) a sequence whose counters a sidecar keeps (a pending
    /// gapless intent, a lease `epoch`: the core's rule, as `rewindAll` applies it), before a
    /// number is taken on purpose outside the sidecar's numbering; done with a `KeptCheck`
    /// (`{ counters }`, how many the sequence has).
    #[wasm_bindgen(js_name = checkNotKept)]
    pub fn check_not_kept(&self) -> JsPlan {
        JsPlan::wrap(mongo_seq_core::CheckNotKept::new(&self.0))
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
}
