//! A sequence that resets (option `reset`): numbers in the period of a date (default now), the
//! period of the instants at hand cached (the core's window, see `crate::period`), and the
//! handle of one period's counter.

use std::sync::{Arc, Mutex, PoisonError};

use mongo_seq_core::{Period, PeriodWindow, SeqError};
use mongodb::bson::DateTime;
use serde_json::Value;

use super::{Binding, Bound, Sequence};
use crate::clock::{now_ms, CoarseClock};
use crate::counter::Counter;
use crate::error::Result;
use crate::period::{instant, Periods};

/// A number with its period and formatted id: what [`Sequence::next_formatted`] gives.
///
/// ```no_run
/// # async fn example(seqs: mongo_seq::Sequences) -> mongo_seq::Result<()> {
/// use mongo_seq::{Reset, SequenceOptions};
///
/// let options = SequenceOptions::new().reset(Reset::Yearly).time_zone("Europe/Paris").format("INV-{yyyy}-{seq:06}");
/// let invoices = seqs.sequence("invoices", options)?;
/// let issued = invoices.next_formatted().await?;
/// println!("{} in {:?}", issued.formatted.unwrap_or_default(), issued.period.map(|p| p.text()));
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Issued {
    /// The number.
    pub value: i64,
    /// Its period (`None` when the sequence never resets).
    pub period: Option<Period>,
    /// Its formatted id (`None` without a `format`).
    pub formatted: Option<String>,
}

/// The counters of a series of a sequence that resets (unscoped, or one scope's): the one of
/// the instants at hand kept with its window.
pub(super) struct Series {
    scope: Option<Value>,
    window: Mutex<Option<Window>>,
}

impl Series {
    pub(super) fn new(scope: Option<Value>) -> Self {
        Self {
            scope,
            window: Mutex::new(None),
        }
    }

    pub(super) fn scope(&self) -> Option<&Value> {
        self.scope.as_ref()
    }

    /// A number of the block in hand of the counter of now's period, when now is in the window
    /// kept and the block has one: by a coarse reading of the clock when it shows now in the
    /// window whatever its lag, else by the precise clock; one lock either way.
    pub(super) fn take_one_now(&self, clock: Option<CoarseClock>) -> Option<i64> {
        let window = self.window.lock().unwrap_or_else(PoisonError::into_inner);
        window
            .as_ref()
            .filter(|window| window.holds_now(clock))
            .and_then(|window| window.counter.take_one())
    }
}

/// A series' window at hand (the core's) and its period's counter. The window runs from the
/// period's first instant to the next period's, so a clock reading a little behind the instant
/// the window was found for (the coarse clock of [`crate::clock`], which decides only when
/// `[reading, reading + lag]` is inside the window) is still inside.
struct Window {
    bounds: PeriodWindow,
    counter: Arc<Counter>,
}

impl Window {
    fn contains(&self, ms: i64) -> bool {
        self.bounds.contains(ms)
    }

    /// Whether now is in the window: by a coarse reading when `[reading, reading + lag]` is
    /// inside it, else by the precise clock.
    fn holds_now(&self, clock: Option<CoarseClock>) -> bool {
        self.holds(clock.map(|c| (c.now_ms(), c.lag_ms)), now_ms)
    }

    /// [`holds_now`](Self::holds_now) with the coarse `(reading, lag)` given, and the precise
    /// clock read only when that reading cannot decide.
    fn holds(&self, coarse: Option<(i64, i64)>, precise: impl FnOnce() -> i64) -> bool {
        let PeriodWindow { from, until, .. } = self.bounds;
        let by_coarse = coarse.is_some_and(|(reading, lag_ms)| {
            from <= reading && reading.saturating_add(lag_ms) < until
        });
        by_coarse || self.contains(precise())
    }
}

impl Sequence {
    /// The counter of `series` in the period of `ms`, and that period (the window kept moves
    /// to it).
    pub(super) fn series_counter(
        &self,
        series: &Series,
        ms: i64,
    ) -> Result<(Arc<Counter>, Period)> {
        let mut window = series.window.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(kept) = window.as_ref().filter(|w| w.contains(ms)) {
            return Ok((Arc::clone(&kept.counter), kept.bounds.period));
        }
        let shared = &self.shared;
        let (period, bounds) = self.periods()?.period_at(ms)?;
        let counter_id = shared.spec.counter_id_in(series.scope(), Some(&period))?;
        let counter = shared.counters.get(&shared.spec, &counter_id)?;
        // A period the core keeps no window for (its dates step back) is asked again each time.
        *window = bounds.map(|bounds| Window {
            bounds,
            counter: Arc::clone(&counter),
        });
        Ok((counter, period))
    }

    /// The periods of a sequence that resets.
    fn periods(&self) -> Result<&Periods> {
        Ok(self
            .shared
            .periods
            .as_ref()
            .ok_or_else(|| SeqError::UnexpectedReply {
                reason: "a series of a sequence that never resets".to_owned(),
            })?)
    }

    /// The counter this handle takes from for `date` (ms, checked; `None`: now) and its period.
    pub(super) fn counter_at(&self, date: Option<i64>) -> Result<(Arc<Counter>, Option<Period>)> {
        match &self.binding {
            Binding::Series(series) => {
                let (counter, period) = self.series_counter(series, date.unwrap_or_else(now_ms))?;
                Ok((counter, Some(period)))
            }
            Binding::Counter(bound) => {
                if let (Some(ms), Some(period), Some(periods)) =
                    (date, bound.period, &self.shared.periods)
                {
                    let (of_date, _) = periods.period_at(ms)?;
                    if of_date != period {
                        return Err(SeqError::InvalidDate {
                            argument: "date".to_owned(),
                            index: None,
                            reason: format!(
                                "is in period {}; this handle numbers period {} (counter `{}`)",
                                of_date.text(),
                                period.text(),
                                bound.counter_id
                            ),
                        }
                        .into());
                    }
                }
                Ok((Arc::clone(&bound.counter), bound.period))
            }
            Binding::Unbound => Err(self.no_counter(None)),
        }
    }

    /// The next number, in the period of `date` for a sequence that resets (yearly, monthly,
    /// daily in its `time_zone`): a document dated 31 December is numbered in December's series
    /// even when it is numbered on New Year's Day. `date` is a `bson::DateTime` or a
    /// `SystemTime`, from 0001-01-02 to 9999-12-29 UTC (else `INVALID_DATE` naming `date`,
    /// nothing reserved). A sequence that never resets checks the date and ignores it.
    /// [`next`](Self::next) is `next_at(now)`.
    ///
    /// ```no_run
    /// # async fn example(seqs: mongo_seq::Sequences) -> mongo_seq::Result<()> {
    /// use mongo_seq::{Reset, SequenceOptions};
    /// use mongodb::bson::DateTime;
    ///
    /// let invoices = seqs.sequence("invoices", SequenceOptions::new().reset(Reset::Yearly).time_zone("Europe/Paris"))?;
    /// // 2025-12-31T23:30:00Z is already 2026 in Paris: counter `invoices/2026`.
    /// let late = DateTime::parse_rfc3339_str("2025-12-31T23:30:00Z").unwrap();
    /// assert_eq!(invoices.next_at(late).await?, 1);
    /// assert_eq!(invoices.period_of(late)?.map(|p| p.text()).as_deref(), Some("2026"));
    /// # Ok(()) }
    /// ```
    pub async fn next_at(&self, date: impl Into<DateTime>) -> Result<i64> {
        let ms = instant(date.into())?;
        let (counter, _) = self.counter_at(Some(ms))?;
        let numbers = counter.take(1, &self.shared.executor).await?;
        let first = numbers.values().next().unwrap_or_default();
        Ok(first)
    }

    /// [`next_many`](Self::next_many) in the period of `date` (see [`next_at`](Self::next_at)).
    ///
    /// ```no_run
    /// # async fn example(seqs: mongo_seq::Sequences) -> mongo_seq::Result<()> {
    /// use mongo_seq::{Reset, SequenceOptions};
    ///
    /// let tickets = seqs.sequence("tickets", SequenceOptions::new().reset(Reset::Monthly))?;
    /// let may = mongodb::bson::DateTime::builder().year(2026).month(5).day(17).build().unwrap();
    /// assert_eq!(tickets.next_many_at(3, may).await?, [1, 2, 3]); // counter `tickets/2026-05`
    /// # Ok(()) }
    /// ```
    pub async fn next_many_at(&self, count: u64, date: impl Into<DateTime>) -> Result<Vec<i64>> {
        let ms = instant(date.into())?;
        let (counter, _) = self.counter_at(Some(ms))?;
        let numbers = counter.take(count, &self.shared.executor).await?;
        Ok(numbers.values().collect())
    }

    /// The next number with its period and formatted id (the period's tokens filled in:
    /// `INV-{yyyy}-{seq:06}` → `INV-2026-000001`), now.
    ///
    /// ```no_run
    /// # async fn example(seqs: mongo_seq::Sequences) -> mongo_seq::Result<()> {
    /// use mongo_seq::{Reset, SequenceOptions};
    ///
    /// let invoices = seqs.sequence("invoices", SequenceOptions::new().reset(Reset::Yearly).format("INV-{yyyy}-{seq:06}"))?;
    /// let issued = invoices.next_formatted().await?;
    /// assert_eq!(issued.value, 1);
    /// assert!(issued.formatted.unwrap().ends_with("-000001"));
    /// # Ok(()) }
    /// ```
    pub async fn next_formatted(&self) -> Result<Issued> {
        self.issue(None).await
    }

    /// [`next_formatted`](Self::next_formatted) in the period of `date`.
    ///
    /// ```no_run
    /// # async fn example(seqs: mongo_seq::Sequences) -> mongo_seq::Result<()> {
    /// use mongo_seq::{Reset, SequenceOptions};
    ///
    /// let fiscal = SequenceOptions::new().reset(Reset::Yearly).year_start(4).format("FY{yy}/{seq}");
    /// let credit_notes = seqs.sequence("credit_notes", fiscal)?;
    /// let may = mongodb::bson::DateTime::builder().year(2026).month(5).day(2).build().unwrap();
    /// // The fiscal year from April 2026 to March 2027 is 2027.
    /// assert_eq!(credit_notes.next_formatted_at(may).await?.formatted.as_deref(), Some("FY27/1"));
    /// # Ok(()) }
    /// ```
    pub async fn next_formatted_at(&self, date: impl Into<DateTime>) -> Result<Issued> {
        self.issue(Some(instant(date.into())?)).await
    }

    async fn issue(&self, ms: Option<i64>) -> Result<Issued> {
        let (counter, period) = self.counter_at(ms)?;
        let numbers = counter.take(1, &self.shared.executor).await?;
        let value = numbers.values().next().unwrap_or_default();
        Ok(Issued {
            value,
            period,
            formatted: self.shared.spec.format_value(value, period.as_ref()),
        })
    }

    /// The period of `date` (`None` when the sequence never resets): its local date in the
    /// sequence's `time_zone`, placed by `reset` and `year_start`.
    ///
    /// ```no_run
    /// # fn example(seqs: mongo_seq::Sequences) -> mongo_seq::Result<()> {
    /// use mongo_seq::{Reset, SequenceOptions};
    ///
    /// let sales = seqs.sequence("sales", SequenceOptions::new().reset(Reset::Daily).time_zone("Pacific/Auckland"))?;
    /// let instant = mongodb::bson::DateTime::parse_rfc3339_str("2026-05-17T20:00:00Z").unwrap();
    /// assert_eq!(sales.period_of(instant)?.unwrap().text(), "2026-05-18");
    /// # Ok(()) }
    /// ```
    pub fn period_of(&self, date: impl Into<DateTime>) -> Result<Option<Period>> {
        let ms = instant(date.into())?;
        match &self.shared.periods {
            Some(periods) => Ok(Some(periods.period_at(ms)?.0)),
            None => Ok(None),
        }
    }

    /// The handle of this series' counter in `period` (`Period::parse("2026")`): its
    /// [`current`](Self::current), [`state`](Self::state), [`set_next`](Self::set_next),
    /// [`seed_from_max`](Self::seed_from_max), and numbers of that period whatever the date.
    /// `INVALID_ARGUMENT` naming `period` for a period of another kind, or when the sequence
    /// never resets; a scoped sequence needs [`scoped`](Self::scoped) first.
    ///
    /// ```no_run
    /// # async fn example(seqs: mongo_seq::Sequences) -> mongo_seq::Result<()> {
    /// use mongo_seq::{Period, Reset, SequenceOptions};
    ///
    /// let invoices = seqs.sequence("invoices", SequenceOptions::new().reset(Reset::Yearly))?;
    /// let year = invoices.in_period(&Period::parse("2026").unwrap())?;
    /// assert_eq!(year.counter_id()?, "invoices/2026");
    /// year.set_next(500).await?; // carry on from the old system's numbers of 2026
    /// assert_eq!(year.next().await?, 500);
    /// # Ok(()) }
    /// ```
    pub fn in_period(&self, period: &Period) -> Result<Self> {
        let scope = match &self.binding {
            Binding::Series(series) => series.scope().cloned(),
            Binding::Counter(bound) => bound.scope.clone(),
            Binding::Unbound => return Err(self.no_counter(None)),
        };
        let shared = &self.shared;
        let counter_id = shared.spec.counter_id_in(scope.as_ref(), Some(period))?;
        let counter = shared.counters.get(&shared.spec, &counter_id)?;
        Ok(Self {
            shared: Arc::clone(shared),
            binding: Binding::Counter(Bound {
                counter_id,
                scope,
                counter,
                period: Some(*period),
            }),
        })
    }

    /// The formatted id of `value` in `period` (`None` without a `format`; a sequence that never
    /// resets takes `None`).
    ///
    /// ```no_run
    /// # fn example(seqs: mongo_seq::Sequences) -> mongo_seq::Result<()> {
    /// use mongo_seq::{Period, Reset, SequenceOptions};
    ///
    /// let tickets = seqs.sequence("tickets", SequenceOptions::new().reset(Reset::Monthly).format("T{yy}{mm}-{seq:04}"))?;
    /// let may = Period::parse("2026-05").unwrap();
    /// assert_eq!(tickets.format_in(7, Some(&may)).as_deref(), Some("T2605-0007"));
    /// # Ok(()) }
    /// ```
    pub fn format_in(&self, value: i64, period: Option<&Period>) -> Option<String> {
        self.shared.spec.format_value(value, period)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::{coarse_clock, COARSE_LAG_MS};
    use jiff::Timestamp;
    use mongo_seq_core::SequenceSpec;
    use serde_json::json;

    fn ms(rfc3339: &str) -> i64 {
        rfc3339
            .parse::<Timestamp>()
            .expect("a timestamp")
            .as_millisecond()
    }

    fn paris_yearly() -> (SequenceSpec, Periods) {
        let spec = SequenceSpec::parse(
            &json!({ "name": "inv", "reset": "yearly", "timeZone": "Europe/Paris" }),
        )
        .expect("a spec");
        let periods = Periods::of(&spec).expect("a zone").expect("periodic");
        (spec, periods)
    }

    fn window_at(spec: &SequenceSpec, periods: &Periods, at: i64) -> Window {
        let (period, bounds) = periods.period_at(at).expect("a period");
        let counter = Counter::new(spec, &spec.counter_id_in(None, Some(&period)).expect("id"))
            .expect("a counter");
        Window {
            bounds: bounds.expect("a window"),
            counter,
        }
    }

    /// The warm path's decision as `next()` makes it, the clocks given: a coarse reading a tick
    /// behind the instant the window was made is in it (no precise read), and across the
    /// year's end the precise clock decides: 23:59:59.999 on 31 December is that year's, the
    /// next millisecond starts a window of the next year, whatever the coarse reading says.
    #[test]
    fn a_year_s_end_crossed_between_two_calls_numbers_into_the_new_year() {
        let (spec, periods) = paris_yearly();
        let tick = 4;
        let lag = coarse_clock().map_or(COARSE_LAG_MS, |c| c.lag_ms);
        assert!(lag >= COARSE_LAG_MS);
        let made = ms("2026-11-26T11:00:00.001Z");
        let window = window_at(&spec, &periods, made);
        assert_eq!(window.bounds.period.text(), "2026");
        // Just after the window was made, the coarse clock still shows the previous tick.
        let precise_reads = &std::cell::Cell::new(0);
        let precise = |at: i64| {
            move || {
                precise_reads.set(precise_reads.get() + 1);
                at
            }
        };
        assert!(window.holds(Some((made - tick, lag)), precise(made)));
        assert_eq!(
            precise_reads.get(),
            0,
            "the coarse reading decides mid-year"
        );

        // The last millisecond of 2026 in Paris, a coarse reading a tick behind: the precise
        // clock decides, and it is 2026's.
        let last = ms("2026-12-31T22:59:59.999Z");
        assert!(window.holds(Some((last - tick, lag)), precise(last)));
        assert_eq!(
            precise_reads.get(),
            1,
            "near the end the precise clock decides"
        );
        // Even a coarse reading `lag` behind the end does not vouch for the window.
        assert!(
            !window.holds(Some((window.bounds.until - lag, lag)), || window
                .bounds
                .until)
        );
        // The next millisecond: outside, and its own window is 2027's.
        let first = last + 1;
        assert!(!window.holds(Some((first - tick, lag)), || first));
        assert!(!window.holds(Some((last, lag)), || first));
        let next = window_at(&spec, &periods, first);
        assert_eq!(next.bounds.period.text(), "2027");
        assert_eq!(next.bounds.from, first, "2027 starts at midnight in Paris");
        assert!(next.holds(None, || first));
        // The first tick of 2027 by a coarse clock still in 2026: the precise clock decides.
        assert!(next.holds(Some((last, lag)), || first));
    }
}
