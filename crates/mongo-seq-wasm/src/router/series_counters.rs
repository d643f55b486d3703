//! `SeriesCounters`: the core's counters of one sequence in this process and which one a call
//! takes from. JS answers its local dates (Intl) and keeps, per counter handle, the promise of
//! the refill in flight; every rule is the core's.

use std::cell::RefCell;
use std::rc::Rc;

use mongo_seq_core::{CounterHandle, Period, RouteStep, SeriesCounters};
use wasm_bindgen::prelude::*;

use crate::args;
use crate::block::block_counter::JsBlockCounter;
use crate::convert::{is_safe_integer, to_js};
use crate::error::{invalid_argument, IntoJsResult};

/// A sequence's counters: `takeOneNow(nowMs)` is the warm path of an unscoped `next()` (a
/// number, or `NaN`: route); `route(scope, date, nowMs)` gives the counter's handle (a number)
/// or the instants whose local dates it needs (an array), to answer with `localDates(dates)`
/// until a handle comes back; `counter(handle)` is that counter's `BlockCounter`.
#[wasm_bindgen(js_name = SeriesCounters)]
pub struct JsSeriesCounters {
    core: Rc<RefCell<SeriesCounters>>,
    /// The period of the counter last routed to.
    routed: Option<Period>,
}

impl JsSeriesCounters {
    pub fn new(counters: SeriesCounters) -> Self {
        Self {
            core: Rc::new(RefCell::new(counters)),
            routed: None,
        }
    }

    fn with<R>(&self, use_it: impl FnOnce(&mut SeriesCounters) -> R) -> Result<R, JsValue> {
        // Calls never nest (nothing here calls back into JS while the counters are borrowed).
        let mut core = self
            .core
            .try_borrow_mut()
            .map_err(|_| JsValue::from_str("mongo-seq: SeriesCounters used re-entrantly"))?;
        Ok(use_it(&mut core))
    }

    fn step(&mut self, step: RouteStep) -> Result<JsValue, JsValue> {
        match step {
            RouteStep::Counter { counter, period } => {
                self.routed = period;
                Ok(handle_to_js(counter))
            }
            RouteStep::Period(period) => {
                Ok(period.map_or(JsValue::UNDEFINED, |p| JsValue::from_str(&p.text())))
            }
            RouteStep::LocalDates(instants) => to_js(&instants),
        }
    }
}

#[wasm_bindgen(js_class = SeriesCounters)]
impl JsSeriesCounters {
    /// Whether `takeOneNow` looks at `nowMs` (a sequence that resets): else any number will do.
    #[wasm_bindgen(js_name = warmPathReadsNow)]
    pub fn warm_path_reads_now(&self) -> Result<bool, JsValue> {
        self.with(|core| core.warm_path_reads_now())
    }

    /// The next number of an unscoped sequence's counter at hand when `nowMs` (`Date.now()`) is
    /// in its period, its block holds one, nobody waits and it is exact as a JS number;
    /// otherwise `NaN` and nothing is taken (use `route`).
    #[wasm_bindgen(js_name = takeOneNow)]
    pub fn take_one_now(&self, #[wasm_bindgen(js_name = nowMs)] now_ms: f64) -> f64 {
        self.with(|core| {
            #[allow(clippy::cast_possible_truncation)] // saturating; NaN is 0, then routed
            let now = now_ms as i64;
            let counter = core
                .unscoped()
                .and_then(|series| core.warm_counter(series, now, 0))
                .and_then(|handle| core.counter(handle).ok())?;
            let value = counter.peek().filter(|value| is_safe_integer(*value))?;
            counter.take_one();
            #[allow(clippy::cast_precision_loss)] // exact: a safe integer
            Some(value as f64)
        })
        .ok()
        .flatten()
        .unwrap_or(f64::NAN)
    }

    /// The counter `scope` (a document, or `undefined`) takes from at `date` (ms, or
    /// `undefined`: at `nowMs`): its handle, or the instants to date.
    #[wasm_bindgen(unchecked_return_type = "number | number[]")]
    pub fn route(
        &mut self,
        #[wasm_bindgen(unchecked_param_type = "EjsonDocument | undefined")] scope: JsValue,
        #[wasm_bindgen(unchecked_param_type = "number | undefined")] date: JsValue,
        #[wasm_bindgen(js_name = nowMs, unchecked_param_type = "number")] now_ms: JsValue,
    ) -> Result<JsValue, JsValue> {
        let scope = args::document("scope", &scope)?;
        let date = args::optional_integer("date", &date)?;
        let now = args::integer("nowMs", &now_ms)?;
        let step = self
            .with(|core| core.route_scope(scope.as_ref(), date, now))?
            .js()?;
        self.step(step)
    }

    /// The period (a string; `undefined`: the sequence never resets) of `ms`, or the instants
    /// to date.
    #[wasm_bindgen(js_name = periodAt, unchecked_return_type = "string | undefined | number[]")]
    pub fn period_at(
        &mut self,
        #[wasm_bindgen(unchecked_param_type = "number")] ms: JsValue,
    ) -> Result<JsValue, JsValue> {
        let ms = args::integer("date", &ms)?;
        let step = self.with(|core| core.period_at(ms))?.js()?;
        self.step(step)
    }

    /// The local dates (`YYYY-MM-DD`) of the instants last asked for, in order: what `route`
    /// or `periodAt` would have given, or more instants to date.
    #[wasm_bindgen(
        js_name = localDates,
        unchecked_return_type = "number | string | undefined | number[]"
    )]
    pub fn local_dates(
        &mut self,
        #[wasm_bindgen(unchecked_param_type = "string[]")] dates: JsValue,
    ) -> Result<JsValue, JsValue> {
        let texts = args::strings("dates", &dates)?;
        let step = self.with(|core| core.answer(texts))?.js()?;
        self.step(step)
    }

    /// The period of the counter last routed to (`undefined`: the sequence never resets).
    #[wasm_bindgen(js_name = routedPeriod)]
    pub fn routed_period(&self) -> Option<String> {
        self.routed.map(|period| period.text())
    }

    /// The handle of the counter `counterId` (of this sequence, else `INVALID_ARGUMENT`).
    #[wasm_bindgen(js_name = counterOf)]
    pub fn counter_of(
        &self,
        #[wasm_bindgen(js_name = counterId, unchecked_param_type = "string")] counter_id: JsValue,
    ) -> Result<f64, JsValue> {
        let counter_id = args::string("counterId", &counter_id)?;
        let handle = self.with(|core| core.counter_of(&counter_id))?.js()?;
        Ok(handle_number(handle))
    }

    /// The counter of `handle` (from `route` or `counterOf`): its numbers, waiters and refills.
    pub fn counter(
        &self,
        #[wasm_bindgen(unchecked_param_type = "number")] handle: JsValue,
    ) -> Result<JsBlockCounter, JsValue> {
        let raw = args::integer("counter", &handle)?;
        let handle = usize::try_from(raw)
            .map(CounterHandle::from_index)
            .map_err(|_| invalid_argument("counter", format!("must be a handle, got {raw}")))?;
        self.with(|core| core.counter_ref(handle).map(drop))?.js()?;
        Ok(JsBlockCounter::in_series(&self.core, handle))
    }

    /// Drops the numbers held for `counterId` (after `setNext`); returns how many.
    pub fn discard(
        &self,
        #[wasm_bindgen(js_name = counterId, unchecked_param_type = "string")] counter_id: JsValue,
    ) -> Result<f64, JsValue> {
        let counter_id = args::string("counterId", &counter_id)?;
        #[allow(clippy::cast_precision_loss)] // at most a few blocks
        self.with(|core| core.discard(&counter_id) as f64)
    }

    /// Drops the numbers every counter holds (after the rewind); returns how many.
    #[wasm_bindgen(js_name = discardAll)]
    pub fn discard_all(&self) -> Result<f64, JsValue> {
        #[allow(clippy::cast_precision_loss)]
        self.with(|core| core.discard_all() as f64)
    }
}

fn handle_number(handle: CounterHandle) -> f64 {
    #[allow(clippy::cast_precision_loss)] // far fewer counters than 2^53
    let index = handle.index() as f64;
    index
}

fn handle_to_js(handle: CounterHandle) -> JsValue {
    JsValue::from_f64(handle_number(handle))
}
