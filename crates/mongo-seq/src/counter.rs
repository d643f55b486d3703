//! A sequence's counters in this process, shared by every task: the core's [`SeriesCounters`]
//! (which counter a call takes from — scope, period, date or now —, and per counter the block,
//! the callers waiting in order, the refill to run and its coalescing, when to refill ahead,
//! the `setNext` generation) behind a lock held for a few calls into the core and never across
//! an `.await`; here, the clock readings it is given, the local dates it asks for (jiff), and
//! the async waiting around each counter, by the core's [`CounterHandle`] (js/src/sequence.js is
//! the npm package's twin of this host part).
//!
//! ```text
//! take(handle, n) ─▶ the core: numbers now ──────────────────────────────────────▶ done
//!          └▶ a ticket ─▶ yield once (callers of this moment queue behind it: one refill)
//!               └▶ loop: ready(ticket)? ─▶ done
//!                        refill(ticket) ─▶ a Reservation: run it in a task of this counter,
//!                        │                 await its outcome (its error is this caller's)
//!                        └▶ none (one in flight) ─▶ wait until the counter changes
//! ```
//!
//! **One refill in flight per counter, in a task the counters own.** A refill runs in a task
//! spawned for it (its `JoinHandle` awaited by the caller that started it, its abort handle kept
//! here and used when the counters are dropped), so a caller that goes away does not take the
//! reservation with it: the range still reaches the block and serves the callers behind it.
//! When the task ends it tells the core (`refilled`/`refill_failed`) and wakes the counter's
//! waiters.
//!
//! **Cancel safety.** A future dropped while it waits withdraws its ticket (the core's
//! `withdraw`): the numbers it had been given are a gap, never handed to another caller, and
//! nobody waits on its behalf. Nothing here is half-written on the server: every counter write
//! is one atomic command, run to its end by its task.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};

use jiff::tz::TimeZone;
use mongo_seq_core::{
    BlockCounter, CounterHandle, Numbers, Period, Refill, RouteStep, SeqError, SequenceSpec,
    SeriesCounters, SeriesId, Take,
};
use tokio::sync::Notify;
use tokio::task::AbortHandle;

use crate::clock::{now_ms, CoarseClock};
use crate::error::Result;
use crate::executor::{local_dates_in, time_zone, Executor};
use crate::plan_runner::PlanRunner;
use crate::run::run_plan;

/// See the module docs.
pub(crate) struct Counters(Arc<Shared>);

struct Shared {
    state: Mutex<State>,
    /// The zone whose local dates the core asks for (a sequence that resets).
    zone: Option<TimeZone>,
}

struct State {
    core: SeriesCounters,
    /// Each counter's I/O, by handle.
    io: Vec<CounterIo>,
}

#[derive(Default)]
struct CounterIo {
    /// Wakes the counter's waiters when a refill ends (served, or free to run their own).
    changed: Arc<Notify>,
    /// The refill task in flight (aborted with the counters).
    task: Option<AbortHandle>,
}

impl State {
    fn counter(&mut self, handle: CounterHandle) -> Result<&mut BlockCounter> {
        Ok(self.core.counter(handle)?)
    }

    /// The I/O of `handle`, made on first use.
    fn io(&mut self, handle: CounterHandle) -> &mut CounterIo {
        let index = handle.index();
        if self.io.len() <= index {
            self.io.resize_with(index + 1, CounterIo::default);
        }
        &mut self.io[index]
    }
}

impl Shared {
    /// The lock, for a few calls into the core. A panic cannot leave the core's state half
    /// changed (it never panics on input), so a poisoned lock is used as it is.
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Answers the local dates the core asks for until it gives what was asked.
    fn settle(&self, state: &mut State, mut step: RouteStep) -> Result<RouteStep> {
        while let RouteStep::LocalDates(instants) = &step {
            let zone = self
                .zone
                .as_ref()
                .ok_or_else(|| SeqError::UnexpectedReply {
                    reason: "a sequence that never resets asked for local dates".to_owned(),
                })?;
            step = state.core.answer_dates(&local_dates_in(zone, instants)?)?;
        }
        Ok(step)
    }
}

impl Counters {
    /// The counters of `spec`; `INVALID_OPTION` naming `timeZone` for a zone the tz database
    /// does not have (a sequence that resets).
    pub(crate) fn new(spec: &SequenceSpec) -> Result<Self> {
        let zone = if spec.reset().is_periodic() {
            Some(time_zone(spec.time_zone())?)
        } else {
            None
        };
        Ok(Self(Arc::new(Shared {
            state: Mutex::new(State {
                core: SeriesCounters::new(spec)?,
                io: Vec::new(),
            }),
            zone,
        })))
    }

    /// The series of an unscoped sequence.
    pub(crate) fn unscoped(&self) -> Option<SeriesId> {
        self.0.lock().core.unscoped()
    }

    /// The series of `scope` (its values checked by the core).
    pub(crate) fn series_of(&self, scope: Option<&serde_json::Value>) -> Result<SeriesId> {
        Ok(self.0.lock().core.series_of(scope)?)
    }

    /// The counter of `series` in `period` (see [`SeriesCounters::counter_in`]) and its id.
    pub(crate) fn counter_in(
        &self,
        series: SeriesId,
        period: Option<&Period>,
    ) -> Result<(CounterHandle, String)> {
        let mut state = self.0.lock();
        let handle = state.core.counter_in(series, period)?;
        let counter_id = state.counter(handle)?.counter_id().to_owned();
        Ok((handle, counter_id))
    }

    /// The counter `counter_id` (it must belong to the sequence).
    pub(crate) fn counter_of(&self, counter_id: &str) -> Result<CounterHandle> {
        Ok(self.0.lock().core.counter_of(counter_id)?)
    }

    /// The counter `series` takes from at `date` (ms, checked; `None`: now) and its period.
    pub(crate) fn route(
        &self,
        series: SeriesId,
        date: Option<i64>,
    ) -> Result<(CounterHandle, Option<Period>)> {
        let mut state = self.0.lock();
        let step = state.core.route(series, date, now_ms())?;
        match self.0.settle(&mut state, step)? {
            RouteStep::Counter { counter, period } => Ok((counter, period)),
            other => Err(unexpected(&other)),
        }
    }

    /// The period of `ms` (checked; `None` when the sequence never resets).
    pub(crate) fn period_at(&self, ms: i64) -> Result<Option<Period>> {
        let mut state = self.0.lock();
        let step = state.core.period_at(ms)?;
        match self.0.settle(&mut state, step)? {
            RouteStep::Period(period) => Ok(period),
            other => Err(unexpected(&other)),
        }
    }

    /// Refuses a date whose `period` is not that of the counter `handle` (`INVALID_DATE`).
    pub(crate) fn check_period(&self, handle: CounterHandle, period: &Period) -> Result<()> {
        Ok(self.0.lock().core.check_period(handle, period)?)
    }

    /// One number from the block in hand of `handle`, when the core hands it out without waiting.
    pub(crate) fn take_one(&self, handle: CounterHandle) -> Option<i64> {
        self.0.lock().counter(handle).ok()?.take_one()
    }

    /// One number of the counter at hand of `series` when now is in its period (by a coarse
    /// reading of the clock when it decides, else by the precise one) and its block has one:
    /// one lock.
    pub(crate) fn take_one_now(&self, series: SeriesId, clock: Option<CoarseClock>) -> Option<i64> {
        let mut state = self.0.lock();
        let core = &mut state.core;
        let handle = clock
            .and_then(|clock| core.warm_counter(series, clock.now_ms(), clock.lag_ms))
            .or_else(|| core.warm_counter(series, now_ms(), 0))?;
        core.counter(handle).ok()?.take_one()
    }

    /// `count` numbers of `handle`: from the block, or after a refill (see the module docs).
    pub(crate) async fn take(
        &self,
        handle: CounterHandle,
        count: u64,
        executor: &Executor,
    ) -> Result<Numbers> {
        let shared = &self.0;
        let (ticket, changed) = {
            let mut state = shared.lock();
            match state.counter(handle)?.take(count)? {
                Take::Numbers(numbers) => {
                    self.refill_ahead(&mut state, handle, executor)?;
                    return Ok(numbers);
                }
                Take::Ticket(ticket) => (ticket, Arc::clone(&state.io(handle).changed)),
            }
        };
        let mut waiter = Waiter {
            shared,
            handle,
            ticket: Some(ticket),
        };
        // The callers of this moment queue first: one refill serves them all (with `block: 1`,
        // one `$inc` of exactly what they asked for).
        tokio::task::yield_now().await;
        loop {
            // Registered before looking, so a refill that ends in between still wakes it.
            let notified = changed.notified();
            let refill = {
                let mut state = shared.lock();
                let counter = state.counter(handle)?;
                if let Some(numbers) = counter.ready(ticket) {
                    waiter.ticket = None;
                    self.refill_ahead(&mut state, handle, executor)?;
                    return Ok(numbers);
                }
                match counter.refill(ticket, Some(now_ms())) {
                    Ok(refill) => refill.map(|refill| {
                        (refill.id, self.spawn(&mut state, handle, refill, executor))
                    }),
                    Err(error) => {
                        waiter.ticket = None; // the core dropped it
                        return Err(error.into());
                    }
                }
            };
            match refill {
                None => notified.await,
                Some((id, task)) => match task.await {
                    Ok(Ok(())) => {}
                    Ok(Err(error)) => {
                        waiter.ticket = None; // the core dropped the owner of a failed refill
                        return Err(error);
                    }
                    Err(join) if join.is_panic() => std::panic::resume_unwind(join.into_panic()),
                    // Cancelled before it reported (the runtime is shutting down): the others
                    // run their own.
                    Err(_) => {
                        if let Ok(counter) = shared.lock().counter(handle) {
                            counter.refill_failed(id);
                        }
                        changed.notify_waiters();
                        waiter.ticket = None;
                        return Err(SeqError::UnexpectedReply {
                            reason:
                                "the refill's task was cancelled (is the runtime shutting down?)"
                                    .to_owned(),
                        }
                        .into());
                    }
                },
            }
        }
    }

    /// Drops the numbers this process holds for `counter_id` (after `setNext`); the refill in
    /// flight no longer counts when it comes back.
    pub(crate) fn discard(&self, counter_id: &str) {
        self.0.lock().core.discard(counter_id);
    }

    /// Drops the numbers every counter holds (after the rewind).
    pub(crate) fn discard_all(&self) {
        self.0.lock().core.discard_all();
    }

    /// Starts the refill ahead the core asks for (option `refillAhead`): nobody waits for it; if
    /// it fails, the next caller that finds the block dry runs its own and gets the error.
    fn refill_ahead(
        &self,
        state: &mut State,
        handle: CounterHandle,
        executor: &Executor,
    ) -> Result<()> {
        if let Some(refill) = state.counter(handle)?.refill_ahead(Some(now_ms())) {
            drop(self.spawn(state, handle, refill, executor));
        }
        Ok(())
    }

    /// Runs `refill` of `handle` in a task; its handle resolves once the core knows how it ended.
    fn spawn(
        &self,
        state: &mut State,
        handle: CounterHandle,
        refill: Refill,
        executor: &Executor,
    ) -> tokio::task::JoinHandle<Result<()>> {
        let Refill { id, mut plan } = refill;
        let shared: Weak<Shared> = Arc::downgrade(&self.0);
        let executor = executor.clone();
        let task = tokio::spawn(async move {
            let result = run_plan(&mut plan, &mut PlanRunner::counters(&executor)).await;
            if let Some(shared) = shared.upgrade() {
                let changed = {
                    let mut state = shared.lock();
                    if let Ok(counter) = state.counter(handle) {
                        match &result {
                            Ok(range) => counter.refilled(id, *range),
                            Err(_) => counter.refill_failed(id),
                        }
                    }
                    let io = state.io(handle);
                    io.task = None;
                    Arc::clone(&io.changed)
                };
                changed.notify_waiters();
            }
            result.map(drop)
        });
        state.io(handle).task = Some(task.abort_handle());
        task
    }
}

impl Drop for Shared {
    fn drop(&mut self) {
        let state = self.state.get_mut().unwrap_or_else(PoisonError::into_inner);
        for io in &mut state.io {
            if let Some(task) = io.task.take() {
                task.abort();
            }
        }
    }
}

fn unexpected(step: &RouteStep) -> crate::Error {
    SeqError::UnexpectedReply {
        reason: format!("the counters answered {step:?}"),
    }
    .into()
}

/// A caller waiting with a ticket; dropped before it is served (a cancelled future), it leaves
/// the queue.
struct Waiter<'a> {
    shared: &'a Shared,
    handle: CounterHandle,
    ticket: Option<u64>,
}

impl Drop for Waiter<'_> {
    fn drop(&mut self) {
        if let Some(ticket) = self.ticket {
            if let Ok(counter) = self.shared.lock().counter(self.handle) {
                counter.withdraw(ticket);
            }
        }
    }
}

#[cfg(test)]
mod tests;
