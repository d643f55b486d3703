//! `SequenceSpec`: validated options and the plans of one sequence.

use mongo_seq_core::{
    check_insert_fields, BlockCounter, CounterKey, CurrentValue, InsertDates, InsertNumbered,
    LocalDate, NumberingSpec, OptimisticInsert, Period, PeriodWindows, Reservation, ReserveRequest,
    SequenceSpec, SeriesCounters,
};
use wasm_bindgen::prelude::*;

use crate::args;
use crate::block::block_counter::JsBlockCounter;
use crate::convert::to_js;
use crate::error::{invalid_argument, IntoJsResult};
use crate::plan::JsPlan;
use crate::router::period_windows::JsPeriodWindows;
use crate::router::series_counters::JsSeriesCounters;

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

    /// The counter `_id` for a document (scope values read from it; optional when unscoped)
    /// in `period` (`periodOf`'s; required exactly when the sequence resets): `inv/2026`,
    /// `inv/tenantId=acme/2026`.
    #[wasm_bindgen(js_name = counterId)]
    pub fn counter_id(
        &self,
        #[wasm_bindgen(unchecked_param_type = "EjsonDocument | undefined")] document: JsValue,
        #[wasm_bindgen(unchecked_param_type = "string | undefined")] period: JsValue,
    ) -> Result<String, JsValue> {
        let document = args::document("document", &document)?;
        let period = args::period("period", &period)?;
        self.0
            .counter_id_in(document.as_ref(), period.as_ref())
            .js()
    }

    /// The formatted id of `value` of `period` (required when the sequence resets), or
    /// `undefined` without a `format`.
    #[wasm_bindgen(js_name = formatValue)]
    pub fn format_value(
        &self,
        #[wasm_bindgen(unchecked_param_type = "Integer")] value: JsValue,
        #[wasm_bindgen(unchecked_param_type = "string | undefined")] period: JsValue,
    ) -> Result<Option<String>, JsValue> {
        let value = args::integer("value", &value)?;
        let period = args::period("period", &period)?;
        self.0.check_period(period.as_ref()).js()?;
        Ok(self.0.format_value(value, period.as_ref()))
    }

    /// The period (`2026`, `2026-05`, `2026-05-17`) of a local date (`YYYY-MM-DD`, the host's
    /// date of an instant in the sequence's `timeZone`), or `undefined` when the sequence never
    /// resets. A date of a fiscal year beyond 9999 is `INVALID_DATE` naming `date`.
    #[wasm_bindgen(js_name = periodOf)]
    pub fn period_of(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] date: JsValue,
    ) -> Result<Option<String>, JsValue> {
        let date = LocalDate::parse("date", &args::string("date", &date)?).js()?;
        Ok(self.0.period_of(date, "date").js()?.map(Period::text))
    }

    /// The first local date (`YYYY-MM-DD`) of `period`, or `undefined` when it lies before
    /// 0001-01-01.
    #[wasm_bindgen(js_name = periodStart)]
    pub fn period_start(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] period: JsValue,
    ) -> Result<Option<String>, JsValue> {
        let period = Period::from_text("period", &args::string("period", &period)?).js()?;
        let start = self.0.period_start(&period).js()?;
        Ok(start.map(|date| date.to_string()))
    }

    /// The first local date (`YYYY-MM-DD`) of the period after `period`, or `undefined` after
    /// 9999-12-31: until the instant that date begins in the sequence's `timeZone`, every number
    /// drawn now is in `period` (what a cache of the current period keeps).
    #[wasm_bindgen(js_name = nextPeriodStart)]
    pub fn next_period_start(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] period: JsValue,
    ) -> Result<Option<String>, JsValue> {
        let period = Period::from_text("period", &args::string("period", &period)?).js()?;
        let next = self.0.next_period_start(&period).js()?;
        Ok(next.map(|date| date.to_string()))
    }

    /// A counter id of this sequence read back: `{ name, scope: [[field, {type, value}]…],
    /// period? }`; an id the core would not write for this sequence (another name, other scope
    /// fields, a period missing or of another kind) is `INVALID_ARGUMENT` naming `counterId`.
    #[wasm_bindgen(js_name = counterKey, unchecked_return_type = "CounterKey")]
    pub fn counter_key(
        &self,
        #[wasm_bindgen(js_name = counterId, unchecked_param_type = "string")] counter_id: JsValue,
    ) -> Result<JsValue, JsValue> {
        let counter_id = args::string("counterId", &counter_id)?;
        let key = CounterKey::parse(&counter_id).js()?;
        key.belongs_to(&self.0).js()?;
        to_js(&key)
    }

    /// The `createIndex` command (a `Command`) of the unique index that numbering into `field`
    /// relies on (`assign`: a number another document holds is refused and renumbered): the
    /// scope fields, `<field>Period` when the sequence resets, `field`; only where `field`
    /// exists.
    #[wasm_bindgen(js_name = numberingIndex, unchecked_return_type = "Command")]
    pub fn numbering_index(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] field: JsValue,
        #[wasm_bindgen(js_name = formatField, unchecked_param_type = "string | undefined")]
        format_field: JsValue,
    ) -> Result<JsValue, JsValue> {
        let field = args::string("field", &field)?;
        let format_field = args::optional_string("formatField", &format_field)?;
        let numbering =
            NumberingSpec::new(self.0.clone(), &field, format_field.as_deref(), false).js()?;
        to_js(&numbering.unique_index())
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

    /// Plan: atomically reserve numbers (`{ counterId, count, minCount?, extraFilter?, extraSet?,
    /// checkDefinition? }`);
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

    /// The periods of instants for this sequence, which resets (else `INVALID_ARGUMENT` naming
    /// `reset`), and the windows of instants sharing one.
    #[wasm_bindgen(js_name = periodWindows)]
    pub fn period_windows(&self) -> Result<JsPeriodWindows, JsValue> {
        PeriodWindows::new(&self.0).js().map(JsPeriodWindows::new)
    }

    /// The counters of this sequence in this process, and which one a call takes from.
    #[wasm_bindgen(js_name = seriesCounters)]
    pub fn series_counters(&self) -> Result<JsSeriesCounters, JsValue> {
        SeriesCounters::new(&self.0).js().map(JsSeriesCounters::new)
    }

    /// Plan: insert the caller's document numbered in `field` (and its formatted id in
    /// `formatField`), numbers from `take` commands, a taken number replaced; done with an
    /// `InsertOutcome`. `document` supplies scope values and the `dateField` (a sequence that
    /// resets: the document's date field whose period it is numbered in; else `nowMs`, the
    /// caller's clock, ignored when the sequence never resets): the plan then asks
    /// `localDates` first.
    #[wasm_bindgen(js_name = insertOne)]
    pub fn insert_one(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] field: JsValue,
        #[wasm_bindgen(js_name = formatField, unchecked_param_type = "string | undefined")]
        format_field: JsValue,
        #[wasm_bindgen(unchecked_param_type = "EjsonDocument | undefined")] document: JsValue,
        #[wasm_bindgen(js_name = dateField, unchecked_param_type = "string | undefined")]
        date_field: JsValue,
        #[wasm_bindgen(js_name = nowMs, unchecked_param_type = "number | undefined")]
        now_ms: JsValue,
    ) -> Result<JsPlan, JsValue> {
        let field = args::string("field", &field)?;
        let format_field = args::optional_string("formatField", &format_field)?;
        let document = args::document("document", &document)?;
        let dates = insert_dates(&date_field, &now_ms)?;
        InsertNumbered::one(
            &self.0,
            &field,
            format_field.as_deref(),
            document.as_ref(),
            &dates,
        )
        .js()
        .map(JsPlan::wrap)
    }

    /// Plan: `insertOne` for `count` documents, inserted in order (`insertDocuments`);
    /// `documents` supplies their scope values and `dateField`s (required when scoped or
    /// dated); `nowMs` as for `insertOne`.
    #[wasm_bindgen(js_name = insertMany)]
    pub fn insert_many(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] field: JsValue,
        #[wasm_bindgen(js_name = formatField, unchecked_param_type = "string | undefined")]
        format_field: JsValue,
        #[wasm_bindgen(unchecked_param_type = "number")] count: JsValue,
        #[wasm_bindgen(unchecked_param_type = "EjsonDocument[] | undefined")] documents: JsValue,
        #[wasm_bindgen(js_name = dateField, unchecked_param_type = "string | undefined")]
        date_field: JsValue,
        #[wasm_bindgen(js_name = nowMs, unchecked_param_type = "number | undefined")]
        now_ms: JsValue,
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
        let dates = insert_dates(&date_field, &now_ms)?;
        InsertNumbered::many(
            &self.0,
            &field,
            format_field.as_deref(),
            count,
            documents.as_deref(),
            &dates,
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

/// The `dateField` and `nowMs` arguments of an insert.
fn insert_dates(date_field: &JsValue, now_ms: &JsValue) -> Result<InsertDates, JsValue> {
    Ok(InsertDates {
        date_field: args::optional_string("dateField", date_field)?,
        now_ms: args::optional_integer("nowMs", now_ms)?,
    })
}
