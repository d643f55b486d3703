//! `BlockCounter`: the core's counter object, one counter of a sequence's `SeriesCounters` (or
//! one of its own, for the vectors). JS keeps only the promise of the refill in flight; every
//! decision is the core's.
//!
//! A refill is a `Plan` like any other (the package's one loop runs it), whose reservation's
//! range goes straight to the counter when it is done, without crossing to JS and back; a
//! refill plan freed before it is done (its driver failed) tells the counter it failed.

use std::cell::RefCell;
use std::rc::Rc;

use mongo_seq_core::{
    check_count, BlockCounter, Command, CounterHandle, Numbers, Plan, Refill, Reply, Reservation,
    SeqError, SeriesCounters, Step, Take,
};
use wasm_bindgen::prelude::*;

use crate::args;
use crate::convert::{i64_to_js, is_safe_integer};
use crate::error::IntoJsResult;
use crate::plan::JsPlan;

/// One counter's numbers as this process hands them out: the block, the callers waiting, the
/// refill in flight. `takeOne()` is the warm path; `take(count)` gives numbers or a ticket,
/// and a ticket's holder runs `refill(ticket)` (or waits for the one in flight), then
/// collects its numbers with `ready(ticket)`.
#[wasm_bindgen(js_name = BlockCounter)]
pub struct JsBlockCounter(CounterCell);

/// Where a counter lives: its own cell, or a sequence's `SeriesCounters` (its handle there).
#[derive(Clone)]
pub enum CounterCell {
    Own(Rc<RefCell<BlockCounter>>),
    InSeries(Rc<RefCell<SeriesCounters>>, CounterHandle),
}

impl CounterCell {
    /// Calls never nest (nothing here calls back into JS while the counter is borrowed).
    pub fn with<R>(&self, use_it: impl FnOnce(&mut BlockCounter) -> R) -> Result<R, JsValue> {
        let reentrant = |_| JsValue::from_str("mongo-seq: BlockCounter used re-entrantly");
        match self {
            Self::Own(cell) => Ok(use_it(&mut *cell.try_borrow_mut().map_err(reentrant)?)),
            Self::InSeries(series, handle) => {
                let mut series = series.try_borrow_mut().map_err(reentrant)?;
                Ok(use_it(series.counter(*handle).js()?))
            }
        }
    }
}

impl JsBlockCounter {
    pub fn new(counter: BlockCounter) -> Self {
        Self(CounterCell::Own(Rc::new(RefCell::new(counter))))
    }

    /// The counter `handle` of `series`.
    pub fn in_series(series: &Rc<RefCell<SeriesCounters>>, handle: CounterHandle) -> Self {
        Self(CounterCell::InSeries(Rc::clone(series), handle))
    }

    fn with<R>(&self, use_it: impl FnOnce(&mut BlockCounter) -> R) -> Result<R, JsValue> {
        self.0.with(use_it)
    }
}

#[wasm_bindgen(js_class = BlockCounter)]
impl JsBlockCounter {
    /// The next number when the block holds one, nobody waits and it is exact as a JS number;
    /// otherwise `NaN` and nothing is taken (use `take(1)`).
    #[wasm_bindgen(js_name = takeOne)]
    pub fn take_one(&self) -> f64 {
        self.with(|counter| match counter.peek() {
            Some(value) if is_safe_integer(value) => {
                counter.take_one();
                #[allow(clippy::cast_precision_loss)] // exact: a safe integer
                let value = value as f64;
                value
            }
            _ => f64::NAN,
        })
        .unwrap_or(f64::NAN)
    }

    /// `count` numbers (0 to 1,000,000): an array when the block holds them and nobody waits,
    /// else a ticket (a number) to wait with.
    #[wasm_bindgen(unchecked_return_type = "Array<number | bigint> | number")]
    pub fn take(
        &self,
        #[wasm_bindgen(unchecked_param_type = "number")] count: JsValue,
    ) -> Result<JsValue, JsValue> {
        let count = check_count("count", &args::marked(&count)).js()?;
        match self.with(|counter| counter.take(count))?.js()? {
            Take::Numbers(numbers) => Ok(values(&numbers)),
            #[allow(clippy::cast_precision_loss)] // tickets count calls
            Take::Ticket(ticket) => Ok(JsValue::from_f64(ticket as f64)),
        }
    }

    /// The numbers of the waiter `ticket` once served (once), else `undefined`.
    #[wasm_bindgen(unchecked_return_type = "Array<number | bigint> | undefined")]
    pub fn ready(
        &self,
        #[wasm_bindgen(unchecked_param_type = "number")] ticket: JsValue,
    ) -> Result<JsValue, JsValue> {
        let ticket = read_ticket(&ticket)?;
        Ok(self
            .with(|counter| counter.ready(ticket))?
            .map_or(JsValue::UNDEFINED, |numbers| values(&numbers)))
    }

    /// The refill the waiter `ticket` runs (a `Plan` done with `null`), or `undefined`: one is
    /// in flight (wait for it) or the waiter was served. Throws when the reservation cannot be
    /// built (the waiter then gave up). `nowMs` (`Date.now()`; optional): the clock by which
    /// the block grows under load.
    pub fn refill(
        &self,
        #[wasm_bindgen(unchecked_param_type = "number")] ticket: JsValue,
        #[wasm_bindgen(js_name = nowMs)] now_ms: Option<f64>,
    ) -> Result<Option<JsPlan>, JsValue> {
        let ticket = read_ticket(&ticket)?;
        let now_ms = now_ms.and_then(clock_ms);
        let refill = self.with(|counter| counter.refill(ticket, now_ms))?.js()?;
        Ok(refill.map(|refill| self.plan_of(refill)))
    }

    /// The refill ahead to start now in the background (a `Plan` done with `null`; the sequence
    /// option `refillAhead`), or `undefined`. Ask after a `take()`: `takeOne()` gives `NaN` when
    /// one is due. Nobody waits on it: if it fails, free it; the next caller who finds the block
    /// dry runs its own refill.
    #[wasm_bindgen(js_name = refillAhead)]
    pub fn refill_ahead(
        &self,
        #[wasm_bindgen(js_name = nowMs)] now_ms: Option<f64>,
    ) -> Result<Option<JsPlan>, JsValue> {
        let now_ms = now_ms.and_then(clock_ms);
        let refill = self.with(|counter| counter.refill_ahead(now_ms))?;
        Ok(refill.map(|refill| self.plan_of(refill)))
    }

    /// The counter's id.
    #[wasm_bindgen(js_name = counterId)]
    pub fn counter_id(&self) -> Result<String, JsValue> {
        self.with(|counter| counter.counter_id().to_owned())
    }

    /// Drops the numbers of the block (after `setNext`) and invalidates the refill in flight;
    /// returns how many numbers were dropped.
    pub fn discard(&self) -> Result<f64, JsValue> {
        #[allow(clippy::cast_precision_loss)] // at most a block
        self.with(|counter| counter.discard() as f64)
    }
}

/// A host clock reading in whole milliseconds (`None`: not a finite number, which only
/// keeps the block at its size).
fn clock_ms(now: f64) -> Option<i64> {
    #[allow(clippy::cast_possible_truncation)] // saturating, and only a clock
    now.is_finite().then_some(now as i64)
}

impl JsBlockCounter {
    /// A refill as a `Plan` whose range goes to this counter.
    fn plan_of(&self, refill: Refill) -> JsPlan {
        JsPlan::wrap(CounterRefill {
            counter: self.0.clone(),
            id: refill.id,
            plan: refill.plan,
            done: false,
        })
    }
}

fn read_ticket(ticket: &JsValue) -> Result<u64, JsValue> {
    let raw = args::integer("ticket", ticket)?;
    u64::try_from(raw).map_err(|_| {
        crate::error::invalid_argument("ticket", format!("must be a ticket from take(), got {raw}"))
    })
}

fn values(numbers: &Numbers) -> JsValue {
    numbers
        .values()
        .map(i64_to_js)
        .collect::<js_sys::Array>()
        .into()
}

/// A refill's reservation: done, its range goes to the counter; dropped unfinished (the
/// driver failed, or the plan did), the counter hears it failed.
struct CounterRefill {
    counter: CounterCell,
    id: u64,
    plan: Reservation,
    done: bool,
}

impl Plan for CounterRefill {
    type Output = ();

    fn current_step(&self) -> Result<Step<()>, SeqError> {
        Ok(match self.plan.current_step()? {
            Step::Command(command) => Step::Command(command),
            Step::Done(_) => Step::Done(()),
        })
    }

    fn pending_command(&self) -> Option<&Command> {
        self.plan.pending_command()
    }

    fn feed(&mut self, reply: Reply) -> Result<Step<()>, SeqError> {
        Ok(match self.plan.feed(reply)? {
            Step::Command(command) => Step::Command(command),
            Step::Done(range) => {
                let id = self.id;
                if self
                    .counter
                    .with(|counter| counter.refilled(id, range))
                    .is_ok()
                {
                    self.done = true;
                }
                Step::Done(())
            }
        })
    }
}

impl Drop for CounterRefill {
    fn drop(&mut self) {
        if !self.done {
            let id = self.id;
            // Borrowed (re-entrant) or gone: nothing to tell.
            drop(self.counter.with(|counter| counter.refill_failed(id)));
        }
    }
}
