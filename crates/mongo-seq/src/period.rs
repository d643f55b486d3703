//! The host's half of periods for a sequence that resets: the core's [`PeriodWindows`] (an
//! instant → its period, and the window of instants sharing it, found from local dates and
//! kept) answered with jiff's local dates in the sequence's zone; and the warm path's decision
//! whether now is in the window at hand, by this process's clocks.
//!
//! The core's window runs from the period's first instant to the next period's, so a clock
//! reading a little behind the instant the window was found for (the coarse clock of
//! [`crate::clock`], which decides only when `[reading, reading + lag]` is inside the window)
//! is still inside.

use std::sync::{Arc, Mutex, PoisonError};

use jiff::tz::TimeZone;
use mongo_seq_core::{
    check_instant, Period, PeriodWindow, PeriodWindows, SequenceSpec, WindowStep,
};

use crate::clock::{now_ms, CoarseClock};
use crate::counter::Counter;
use crate::error::Result;
use crate::executor::{local_dates_in, time_zone};

/// A caller's date as milliseconds, checked by the core (`INVALID_DATE` naming `date`).
pub(crate) fn instant(date: mongodb::bson::DateTime) -> Result<i64> {
    Ok(check_instant("date", None, date.timestamp_millis())?)
}

/// The periods of a sequence that resets: its zone (checked to exist) and the core's windows.
pub(crate) struct Periods {
    zone: TimeZone,
    windows: Mutex<PeriodWindows>,
}

impl Periods {
    /// `None` for a sequence that never resets; `INVALID_OPTION` naming `timeZone` for a zone
    /// the tz database does not have.
    pub(crate) fn of(spec: &SequenceSpec) -> Result<Option<Self>> {
        if !spec.reset().is_periodic() {
            return Ok(None);
        }
        Ok(Some(Self {
            zone: time_zone(spec.time_zone())?,
            windows: Mutex::new(PeriodWindows::new(spec)?),
        }))
    }

    /// The period of the instant `ms` (checked), and the window holding it when the core keeps
    /// one.
    pub(crate) fn period_at(&self, ms: i64) -> Result<(Period, Option<PeriodWindow>)> {
        let mut windows = self.windows.lock().unwrap_or_else(PoisonError::into_inner);
        let mut step = windows.period_at(ms)?;
        loop {
            match step {
                WindowStep::Period(period) => {
                    let window = windows.current().filter(|w| w.contains(ms));
                    return Ok((period, window));
                }
                WindowStep::LocalDates(instants) => {
                    step = windows.answer_dates(&local_dates_in(&self.zone, &instants)?)?;
                }
            }
        }
    }
}

/// A series' window at hand and its period's counter.
pub(crate) struct Window {
    pub(crate) bounds: PeriodWindow,
    pub(crate) counter: Arc<Counter>,
}

impl Window {
    pub(crate) fn contains(&self, ms: i64) -> bool {
        self.bounds.contains(ms)
    }

    /// Whether now is in the window: by a coarse reading when `[reading, reading + lag]` is
    /// inside it, else by the precise clock.
    pub(crate) fn holds_now(&self, clock: Option<CoarseClock>) -> bool {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::{coarse_clock, COARSE_LAG_MS};
    use jiff::Timestamp;
    use mongo_seq_core::{MAX_INSTANT_MS, MIN_INSTANT_MS};
    use serde_json::{json, Value};

    fn cases() -> Vec<Value> {
        let text = include_str!("../../../tests/vectors/periods.json");
        let file: Value = serde_json::from_str(text).expect("JSON");
        file["cases"].as_array().expect("cases").clone()
    }

    /// Every instant of a window is in its period, and the window starts and ends where the
    /// period does (asked of a fresh sequence each time: no window kept answers).
    #[test]
    fn every_instant_of_a_window_is_in_its_period() {
        let mut checked = 0;
        for case in cases() {
            let (Some(ms), Some(expected)) = (case["instant"].as_str(), case["period"].as_str())
            else {
                continue;
            };
            let ms: i64 = ms.parse().expect("ms");
            let mut options =
                json!({ "name": "inv", "reset": case["reset"], "timeZone": case["timeZone"] });
            if let Some(start) = case.get("yearStart") {
                options["yearStart"] = start.clone();
            }
            let spec = SequenceSpec::parse(&options).expect("a spec");
            let period_at = |at: i64| {
                let periods = Periods::of(&spec).expect("a zone").expect("periodic");
                periods.period_at(at).expect("a period")
            };
            let (period, window) = period_at(ms);
            let PeriodWindow { from, until, .. } = window.expect("a window");
            assert_eq!(period.text(), expected, "{}", case["name"]);
            for inside in [
                from,
                from + (ms - from) / 2,
                ms + (until - ms) / 2,
                until - 1,
            ] {
                assert_eq!(
                    period_at(inside).0,
                    period,
                    "{}: {inside} in the window",
                    case["name"]
                );
            }
            for outside in [from - 1, until] {
                if (MIN_INSTANT_MS..=MAX_INSTANT_MS).contains(&outside) {
                    assert_ne!(
                        period_at(outside).0,
                        period,
                        "{}: the window stops short at {outside}",
                        case["name"]
                    );
                }
            }
            checked += 1;
        }
        assert!(checked >= 45, "{checked} cases");
    }

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
