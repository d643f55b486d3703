//! `PeriodWindows`: the core's periods of instants for a sequence that resets, and the windows
//! it keeps. JS answers its local dates (Intl) and compares its clock with the current window;
//! every rule is the core's.

use mongo_seq_core::{PeriodWindows, WindowStep};
use wasm_bindgen::prelude::*;

use crate::args;
use crate::convert::to_js;
use crate::error::IntoJsResult;

/// The period of an instant: `periodAt(ms)` gives it (a string) or the instants whose local
/// dates it needs (an array of numbers), to answer with `localDates(dates)` until a period
/// comes back; `current()` is the window `{ period, from, until }` of the period last given.
#[wasm_bindgen(js_name = PeriodWindows)]
pub struct JsPeriodWindows(PeriodWindows);

impl JsPeriodWindows {
    pub fn new(windows: PeriodWindows) -> Self {
        Self(windows)
    }
}

#[wasm_bindgen(js_class = PeriodWindows)]
impl JsPeriodWindows {
    /// The period of `ms` (an instant the core takes, else `INVALID_DATE` naming `date`), or
    /// the instants to date.
    #[wasm_bindgen(js_name = periodAt, unchecked_return_type = "string | number[]")]
    pub fn period_at(
        &mut self,
        #[wasm_bindgen(unchecked_param_type = "number")] ms: JsValue,
    ) -> Result<JsValue, JsValue> {
        let ms = args::integer("date", &ms)?;
        step(self.0.period_at(ms).js()?)
    }

    /// The local dates (`YYYY-MM-DD`) of the instants last asked for, in order.
    #[wasm_bindgen(js_name = localDates, unchecked_return_type = "string | number[]")]
    pub fn local_dates(
        &mut self,
        #[wasm_bindgen(unchecked_param_type = "string[]")] dates: JsValue,
    ) -> Result<JsValue, JsValue> {
        let texts = args::strings("dates", &dates)?;
        step(self.0.answer(texts).js()?)
    }

    /// The window `{ period, from, until }` of the period last given, or `undefined` (none
    /// kept yet, or the last period's dates step back).
    #[wasm_bindgen(
        unchecked_return_type = "{ period: string, from: number, until: number } | undefined"
    )]
    pub fn current(&self) -> Result<JsValue, JsValue> {
        match self.0.current() {
            Some(window) => to_js(&window),
            None => Ok(JsValue::UNDEFINED),
        }
    }
}

fn step(step: WindowStep) -> Result<JsValue, JsValue> {
    match step {
        WindowStep::Period(period) => Ok(JsValue::from_str(&period.text())),
        WindowStep::LocalDates(instants) => to_js(&instants),
    }
}
