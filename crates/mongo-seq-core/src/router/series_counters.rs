//! `SeriesCounters`: a sequence's counters in a client process, and which one a call takes from.
//!
//! A call names a scope (a document, or none) and, for a sequence that resets, an instant (a
//! date, or now: the host passes its clock reading, the core reads none). The core answers the
//! counter — a [`CounterHandle`], stable for the object's life, the host's index for whatever
//! I/O state it keeps per counter (the refill in flight) — or asks the host the local dates it
//! needs (the [`PeriodWindows`] protocol) first. Hosts keep no map of counters, no period and
//! no window of their own.
//!
//! ```text
//! series_of(scope) ──▶ SeriesId (the scope's values checked: MISSING_SCOPE_FIELD, …)
//! warm_counter(series, now, lag) ──▶ the counter at hand when [now, now + lag] is inside the
//!    window of its period (never resets: always) — no question, two integers compared
//! route(series, date?, now) ──▶ Counter { counter, period }
//!    └──▶ LocalDates([ms…]) ─▶ answer(dates) ─▶ … ─▶ Counter (the window kept, the counter at hand)
//! period_at(ms) ──▶ Period(period?) │ LocalDates ─▶ answer ─▶ … (no counter made)
//! counter(handle) ──▶ its BlockCounter (take, refill, ready, …: see `crate::block`)
//! ```
//!
//! **The warm path.** `now` is given as an interval, `[now_ms, now_ms + lag_ms]`: a host that
//! reads a coarse clock (behind the precise one by at most `lag_ms`) gets the counter at hand
//! only when every instant the precise clock could show is in its period's window; near the
//! window's ends it reads the precise clock and routes. A number issued at 23:59:59.999 on
//! 31 December is that year's, the next millisecond's the next year's.

use std::collections::HashMap;

use serde_json::Value;

use crate::block::block_counter::BlockCounter;
use crate::error::SeqError;
use crate::router::period_windows::{PeriodWindows, WindowStep};
use crate::sequence::calendar::LocalDate;
use crate::sequence::instant::check_instant;
use crate::sequence::options::SequenceSpec;
use crate::sequence::period::Period;
use crate::sequence::scope;

/// One counter of the object, by its place: stable while the object lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CounterHandle(usize);

impl CounterHandle {
    /// Its index (counters are numbered from 0 in the order they were first routed to).
    pub fn index(self) -> usize {
        self.0
    }

    /// The handle of index `index` (checked when used).
    pub fn from_index(index: usize) -> Self {
        Self(index)
    }
}

/// One series of the sequence: its counters across periods for one scope (or none).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SeriesId(usize);

/// What [`SeriesCounters`] needs or gives next.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RouteStep {
    /// The counter the call takes from, and its period (`None`: the sequence never resets).
    Counter {
        counter: CounterHandle,
        period: Option<Period>,
    },
    /// The period of the instant asked about ([`SeriesCounters::period_at`]; `None`: the
    /// sequence never resets).
    Period(Option<Period>),
    /// The local dates of these instants, for [`SeriesCounters::answer`].
    LocalDates(Vec<i64>),
}

#[derive(Debug, Clone)]
struct Series {
    /// The scope's values as the core reads them (`None`: unscoped).
    scope: Option<Value>,
    /// The counter last routed to, with its period: the warm path's.
    at_hand: Option<(Option<Period>, CounterHandle)>,
}

#[derive(Debug, Clone)]
struct Slot {
    counter: BlockCounter,
    /// The period it counts, when it was routed to by one.
    period: Option<Period>,
}

/// What the local dates asked for are for.
#[derive(Debug, Clone, Copy)]
enum Pending {
    Route(SeriesId),
    Period,
}

/// See the module docs.
#[derive(Debug, Clone)]
pub struct SeriesCounters {
    spec: SequenceSpec,
    /// The periods of a sequence that resets.
    windows: Option<PeriodWindows>,
    counters: Vec<Slot>,
    by_id: HashMap<String, CounterHandle>,
    series: Vec<Series>,
    /// A series by its scope's part of the counter id.
    series_by_scope: HashMap<String, SeriesId>,
    /// The unscoped series of an unscoped sequence.
    unscoped: Option<SeriesId>,
    pending: Option<Pending>,
}

impl SeriesCounters {
    /// The counters of `spec`, none made yet.
    pub fn new(spec: &SequenceSpec) -> Result<Self, SeqError> {
        let windows = if spec.reset().is_periodic() {
            Some(PeriodWindows::new(spec)?)
        } else {
            None
        };
        let mut counters = Self {
            spec: spec.clone(),
            windows,
            counters: Vec::new(),
            by_id: HashMap::new(),
            series: Vec::new(),
            series_by_scope: HashMap::new(),
            unscoped: None,
            pending: None,
        };
        if spec.scope().is_empty() {
            counters.unscoped = Some(counters.series_of(None)?);
        }
        Ok(counters)
    }

    /// The sequence.
    pub fn spec(&self) -> &SequenceSpec {
        &self.spec
    }

    /// The series of an unscoped sequence (`None` for a scoped one).
    pub fn unscoped(&self) -> Option<SeriesId> {
        self.unscoped
    }

    /// The series of `scope` (a document holding the scope fields' values; other fields are
    /// ignored, and so is the whole document for an unscoped sequence): `MISSING_SCOPE_FIELD`,
    /// `INVALID_SCOPE_VALUE` when its values cannot name a counter.
    pub fn series_of(&mut self, scope: Option<&Value>) -> Result<SeriesId, SeqError> {
        let spec = &self.spec;
        let key = scope::counter_id(spec.name(), spec.scope(), scope, None)?;
        if let Some(series) = self.series_by_scope.get(&key) {
            return Ok(*series);
        }
        let id = SeriesId(self.series.len());
        self.series.push(Series {
            scope: if spec.scope().is_empty() {
                None
            } else {
                scope.cloned()
            },
            at_hand: None,
        });
        self.series_by_scope.insert(key, id);
        Ok(id)
    }

    /// Whether [`warm_counter`](Self::warm_counter) looks at now: only for a sequence that
    /// resets (a host may skip reading its clock otherwise).
    pub fn warm_path_reads_now(&self) -> bool {
        self.windows.is_some()
    }

    /// The counter at hand of `series` when now, anywhere in `[now_ms, now_ms + lag_ms]`, is in
    /// its period (see the module docs); `None`: [`route`](Self::route).
    pub fn warm_counter(
        &self,
        series: SeriesId,
        now_ms: i64,
        lag_ms: i64,
    ) -> Option<CounterHandle> {
        let (period, counter) = self.series.get(series.0)?.at_hand?;
        let Some(windows) = &self.windows else {
            return Some(counter);
        };
        let window = windows.current()?;
        let inside = Some(window.period) == period
            && window.from <= now_ms
            && now_ms.saturating_add(lag_ms) < window.until;
        inside.then_some(counter)
    }

    /// The counter `series` takes from at `date` (checked: `INVALID_DATE` naming `date`,
    /// whether or not the sequence resets), else at `now_ms`; or the local dates to ask first.
    pub fn route(
        &mut self,
        series: SeriesId,
        date: Option<i64>,
        now_ms: i64,
    ) -> Result<RouteStep, SeqError> {
        self.pending = None;
        let date = date.map(|ms| check_instant("date", None, ms)).transpose()?;
        let Some(windows) = &mut self.windows else {
            return self.counter_step(series, None);
        };
        match windows.period_at(date.unwrap_or(now_ms))? {
            WindowStep::Period(period) => self.counter_step(series, Some(period)),
            WindowStep::LocalDates(instants) => {
                self.pending = Some(Pending::Route(series));
                Ok(RouteStep::LocalDates(instants))
            }
        }
    }

    /// [`route`](Self::route) for the series of `scope`.
    pub fn route_scope(
        &mut self,
        scope: Option<&Value>,
        date: Option<i64>,
        now_ms: i64,
    ) -> Result<RouteStep, SeqError> {
        let series = self.series_of(scope)?;
        self.route(series, date, now_ms)
    }

    /// The period of `ms` (checked: `INVALID_DATE` naming `date`; `None` when the sequence
    /// never resets), or the local dates to ask first.
    pub fn period_at(&mut self, ms: i64) -> Result<RouteStep, SeqError> {
        self.pending = None;
        let ms = check_instant("date", None, ms)?;
        let Some(windows) = &mut self.windows else {
            return Ok(RouteStep::Period(None));
        };
        match windows.period_at(ms)? {
            WindowStep::Period(period) => Ok(RouteStep::Period(Some(period))),
            WindowStep::LocalDates(instants) => {
                self.pending = Some(Pending::Period);
                Ok(RouteStep::LocalDates(instants))
            }
        }
    }

    /// The host's local dates (`YYYY-MM-DD`) of the instants last asked for, in order (see
    /// [`PeriodWindows::answer`]).
    pub fn answer(&mut self, dates: Vec<String>) -> Result<RouteStep, SeqError> {
        let (pending, windows) = self.asked()?;
        let step = windows.answer(dates)?;
        self.went_on(pending, step)
    }

    /// [`answer`](Self::answer) with the dates at hand rather than as text (a native host).
    pub fn answer_dates(&mut self, dates: &[LocalDate]) -> Result<RouteStep, SeqError> {
        let (pending, windows) = self.asked()?;
        let step = windows.answer_dates(dates)?;
        self.went_on(pending, step)
    }

    fn asked(&mut self) -> Result<(Pending, &mut PeriodWindows), SeqError> {
        let pending = self
            .pending
            .take()
            .ok_or_else(|| SeqError::unexpected_reply("no local dates were asked for"))?;
        let windows = self.windows.as_mut().ok_or_else(|| {
            SeqError::unexpected_reply("a sequence that never resets asked for dates")
        })?;
        Ok((pending, windows))
    }

    fn went_on(&mut self, pending: Pending, step: WindowStep) -> Result<RouteStep, SeqError> {
        match (step, pending) {
            (WindowStep::LocalDates(instants), _) => {
                self.pending = Some(pending);
                Ok(RouteStep::LocalDates(instants))
            }
            (WindowStep::Period(period), Pending::Route(series)) => {
                self.counter_step(series, Some(period))
            }
            (WindowStep::Period(period), Pending::Period) => Ok(RouteStep::Period(Some(period))),
        }
    }

    fn counter_step(
        &mut self,
        series: SeriesId,
        period: Option<Period>,
    ) -> Result<RouteStep, SeqError> {
        let counter = self.counter_in(series, period.as_ref())?;
        Ok(RouteStep::Counter { counter, period })
    }

    /// The counter of `series` in `period` (required exactly when the sequence resets, of its
    /// kind: else `INVALID_ARGUMENT` naming `period`), made on first use.
    pub fn counter_in(
        &mut self,
        series: SeriesId,
        period: Option<&Period>,
    ) -> Result<CounterHandle, SeqError> {
        let entry = self.series.get(series.0).ok_or_else(|| {
            SeqError::invalid_argument("series", format!("no series {} here", series.0))
        })?;
        if let Some((at_hand, counter)) = entry.at_hand {
            if at_hand.as_ref() == period {
                return Ok(counter);
            }
        }
        let counter_id = self.spec.counter_id_in(entry.scope.as_ref(), period)?;
        let counter = self.counter_of(&counter_id)?;
        if let Some(slot) = self.counters.get_mut(counter.0) {
            slot.period = slot.period.or(period.copied());
        }
        if let Some(entry) = self.series.get_mut(series.0) {
            entry.at_hand = Some((period.copied(), counter));
        }
        Ok(counter)
    }

    /// The counter `counter_id` (it must belong to the sequence: `INVALID_ARGUMENT`), made on
    /// first use.
    pub fn counter_of(&mut self, counter_id: &str) -> Result<CounterHandle, SeqError> {
        if let Some(counter) = self.by_id.get(counter_id) {
            return Ok(*counter);
        }
        let counter = CounterHandle(self.counters.len());
        self.counters.push(Slot {
            counter: BlockCounter::new(&self.spec, counter_id)?,
            period: None,
        });
        self.by_id.insert(counter_id.to_owned(), counter);
        Ok(counter)
    }

    /// The counter of `handle` (`INVALID_ARGUMENT` naming `counter` for a handle of no counter).
    pub fn counter(&mut self, handle: CounterHandle) -> Result<&mut BlockCounter, SeqError> {
        self.counters
            .get_mut(handle.0)
            .map(|slot| &mut slot.counter)
            .ok_or_else(|| no_counter(handle))
    }

    /// The counter of `handle`, to read.
    pub fn counter_ref(&self, handle: CounterHandle) -> Result<&BlockCounter, SeqError> {
        self.counters
            .get(handle.0)
            .map(|slot| &slot.counter)
            .ok_or_else(|| no_counter(handle))
    }

    /// Refuses a date of another period than that of the counter `handle` (a handle of one
    /// period's counter asked to number a date): `INVALID_DATE` naming `date`.
    pub fn check_period(&self, handle: CounterHandle, period: &Period) -> Result<(), SeqError> {
        let slot = self
            .counters
            .get(handle.0)
            .ok_or_else(|| no_counter(handle))?;
        match slot.period {
            Some(own) if own != *period => Err(SeqError::InvalidDate {
                argument: "date".to_owned(),
                index: None,
                reason: format!(
                    "is in period {}; this handle numbers period {} (counter `{}`)",
                    period.text(),
                    own.text(),
                    slot.counter.counter_id()
                ),
            }),
            _ => Ok(()),
        }
    }

    /// Drops the numbers held for `counter_id`, if any (after `setNext`): see
    /// [`BlockCounter::discard`].
    pub fn discard(&mut self, counter_id: &str) -> u64 {
        let Some(handle) = self.by_id.get(counter_id) else {
            return 0;
        };
        self.counters
            .get_mut(handle.0)
            .map_or(0, |slot| slot.counter.discard())
    }

    /// Drops the numbers every counter holds (after the rewind).
    pub fn discard_all(&mut self) -> u64 {
        self.counters
            .iter_mut()
            .map(|slot| slot.counter.discard())
            .fold(0, u64::saturating_add)
    }

    /// How many counters have been made.
    pub fn len(&self) -> usize {
        self.counters.len()
    }

    /// Whether no counter has been made yet.
    pub fn is_empty(&self) -> bool {
        self.counters.is_empty()
    }
}

fn no_counter(handle: CounterHandle) -> SeqError {
    SeqError::invalid_argument("counter", format!("no counter {} here", handle.0))
}
