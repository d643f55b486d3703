//! The host's half of periods for a sequence that resets: an instant → its local date in the
//! sequence's zone (jiff, the tz database compiled in) → the core's period, and the window of
//! instants sharing that period, so the warm path compares two integers instead of converting a
//! date (js/src/period-window.js is the npm package's twin).
//!
//! **The window.** For an instant `t` in period `P` at offset `o`, the window is `[from, until)`:
//! `from` is the later of the zone's last transition at or before `t` and the instant `P`'s first
//! local date begins at `o`; `until` is the earlier of the zone's next transition after `t` and
//! the instant the next period's first local date begins at `o`. Within it the offset is `o`, so
//! local time only moves forward, from `P`'s first date at the earliest to before the next
//! period's first date: every instant of the window is in `P` — also where midnight does not
//! exist (a transition at midnight) or repeats (the window then ends at the transition, and the
//! next one is computed there). `from` reaches back to the period's start so that a clock
//! reading a little behind `t` (the coarse clock of [`crate::clock`], which decides only when
//! `[reading, reading + lag]` is inside the window) is still inside.

use std::ops::Range;
use std::sync::Arc;

use jiff::tz::TimeZone;
use jiff::Timestamp;
use mongo_seq_core::{
    check_instant, LocalDate, Period, SeqError, SequenceSpec, MAX_INSTANT_MS, MIN_INSTANT_MS,
};

use crate::clock::{now_ms, CoarseClock};
use crate::counter::Counter;
use crate::error::Result;

/// A caller's date as milliseconds, checked by the core (`INVALID_DATE` naming `date`).
pub(crate) fn instant(date: mongodb::bson::DateTime) -> Result<i64> {
    Ok(check_instant("date", None, date.timestamp_millis())?)
}

/// The instants `[from, until)` whose period is `period`, and its counter.
pub(crate) struct Window {
    pub(crate) from: i64,
    pub(crate) until: i64,
    pub(crate) period: Period,
    pub(crate) counter: Arc<Counter>,
}

impl Window {
    pub(crate) fn contains(&self, ms: i64) -> bool {
        self.from <= ms && ms < self.until
    }

    /// Whether now is in the window: by a coarse reading when `[reading, reading + lag]` is
    /// inside it, else by the precise clock.
    pub(crate) fn holds_now(&self, clock: Option<CoarseClock>) -> bool {
        self.holds(clock.map(|c| (c.now_ms(), c.lag_ms)), now_ms)
    }

    /// [`holds_now`](Self::holds_now) with the coarse `(reading, lag)` given, and the precise
    /// clock read only when that reading cannot decide.
    fn holds(&self, coarse: Option<(i64, i64)>, precise: impl FnOnce() -> i64) -> bool {
        let by_coarse = coarse.is_some_and(|(reading, lag_ms)| {
            self.from <= reading && reading.saturating_add(lag_ms) < self.until
        });
        by_coarse || self.contains(precise())
    }
}

/// The period of the instant `ms` (checked) in `zone`, with its window `[from, until)` (see the
/// module docs), which holds `ms`.
pub(crate) fn period_at(
    spec: &SequenceSpec,
    zone: &TimeZone,
    ms: i64,
) -> Result<(Period, Range<i64>)> {
    let ms = check_instant("date", None, ms)?;
    let timestamp = Timestamp::from_millisecond(ms).map_err(|e| bad_date(&e))?;
    let offset = zone.to_offset(timestamp);
    let date = offset.to_datetime(timestamp).date();
    let (month, day) = (date.month().unsigned_abs(), date.day().unsigned_abs());
    let local = LocalDate::new(date.year().into(), month, day)
        .ok_or_else(|| bad_date(&format!("no local date for {ms} ms")))?;
    let period = spec
        .period_of(local, "date")?
        .ok_or_else(|| SeqError::InvalidArgument {
            argument: "date".to_owned(),
            reason: "the sequence never resets".to_owned(),
        })?;
    // The instant a local date begins at this offset (`None`: beyond what jiff represents).
    let begins = |date: LocalDate| -> Result<Option<i64>> {
        let midnight = jiff::civil::Date::new(
            i16::try_from(date.year()).unwrap_or(i16::MAX),
            i8::try_from(date.month()).unwrap_or(1),
            i8::try_from(date.day()).unwrap_or(1),
        )
        .map_err(|e| bad_date(&e))?
        .at(0, 0, 0, 0);
        Ok(offset
            .to_timestamp(midnight)
            .ok()
            .map(|t| t.as_millisecond()))
    };
    // Before 0001-01-01 or after 9999-12-31 (no such period) the window runs to the first or last
    // instant the core takes.
    let start = match spec.period_start(&period)? {
        Some(date) => begins(date)?.unwrap_or(MIN_INSTANT_MS),
        None => MIN_INSTANT_MS,
    };
    let end = match spec.next_period_start(&period)? {
        Some(date) => begins(date)?.unwrap_or(MAX_INSTANT_MS + 1),
        None => MAX_INSTANT_MS + 1,
    };
    // The offset holds since the last transition at or before `ms` (one that set it; none: ever);
    // whether `preceding` counts a transition at `ms` itself or not, one that set another
    // offset is not used.
    let transition_before = match zone.preceding(timestamp).next() {
        None => MIN_INSTANT_MS,
        Some(t) if t.offset() == offset => t.timestamp().as_millisecond(),
        Some(_) => ms,
    };
    let transition_after = zone
        .following(timestamp)
        .next()
        .map_or(i64::MAX, |t| t.timestamp().as_millisecond());
    let from = start.max(transition_before).max(MIN_INSTANT_MS).min(ms);
    let until = end.min(transition_after).max(ms + 1);
    Ok((period, from..until))
}

fn bad_date(e: &dyn std::fmt::Display) -> SeqError {
    SeqError::InvalidDate {
        argument: "date".to_owned(),
        index: None,
        reason: e.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::{coarse_clock, COARSE_LAG_MS};
    use serde_json::{json, Value};

    fn cases() -> Vec<Value> {
        let text = include_str!("../../../tests/vectors/periods.json");
        let file: Value = serde_json::from_str(text).expect("JSON");
        file["cases"].as_array().expect("cases").clone()
    }

    /// Every instant of a window is in its period, and the window starts and ends where the
    /// period does or at a transition of the zone (then the next window goes on).
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
            let zone = crate::executor::time_zone(spec.time_zone()).expect("a zone");
            let (period, span) = period_at(&spec, &zone, ms).expect("a period");
            let (from, until) = (span.start, span.end);
            assert_eq!(period.text(), expected, "{}", case["name"]);
            assert!(span.contains(&ms), "{}", case["name"]);
            for inside in [
                from,
                from + (ms - from) / 2,
                ms + (until - ms) / 2,
                until - 1,
            ] {
                assert_eq!(
                    period_at(&spec, &zone, inside).expect("inside").0,
                    period,
                    "{}: {inside} in the window",
                    case["name"]
                );
            }
            // Each end is the period's or a change of offset.
            for (inside, outside) in [(from, from - 1), (until - 1, until)] {
                if !(MIN_INSTANT_MS..=MAX_INSTANT_MS).contains(&outside) {
                    continue;
                }
                let offset = |ms| zone.to_offset(Timestamp::from_millisecond(ms).expect("ms"));
                let transition = offset(inside) != offset(outside);
                let beyond = period_at(&spec, &zone, outside).expect("beyond").0;
                assert!(
                    beyond != period || transition,
                    "{}: the window stops short at {outside}",
                    case["name"]
                );
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

    fn paris_yearly() -> (SequenceSpec, TimeZone) {
        let spec = SequenceSpec::parse(
            &json!({ "name": "inv", "reset": "yearly", "timeZone": "Europe/Paris" }),
        )
        .expect("a spec");
        let zone = crate::executor::time_zone(spec.time_zone()).expect("a zone");
        (spec, zone)
    }

    fn window_at(spec: &SequenceSpec, zone: &TimeZone, at: i64) -> Window {
        let (period, span) = period_at(spec, zone, at).expect("a period");
        let counter = Counter::new(spec, &spec.counter_id_in(None, Some(&period)).expect("id"))
            .expect("a counter");
        Window {
            from: span.start,
            until: span.end,
            period,
            counter,
        }
    }

    /// The warm path's decision as `next()` makes it, the clocks given: a coarse reading a tick
    /// behind the instant the window was made is in it (no precise read), and across the
    /// year's end the precise clock decides: 23:59:59.999 on 31 December is that year's, the
    /// next millisecond starts a window of the next year, whatever the coarse reading says.
    #[test]
    fn a_year_s_end_crossed_between_two_calls_numbers_into_the_new_year() {
        let (spec, zone) = paris_yearly();
        let tick = 4;
        let lag = coarse_clock().map_or(COARSE_LAG_MS, |c| c.lag_ms);
        assert!(lag >= COARSE_LAG_MS);
        let made = ms("2026-11-26T11:00:00.001Z");
        let window = window_at(&spec, &zone, made);
        assert_eq!(window.period.text(), "2026");
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
        assert!(!window.holds(Some((window.until - lag, lag)), || window.until));
        // The next millisecond: outside, and its own window is 2027's.
        let first = last + 1;
        assert!(!window.holds(Some((first - tick, lag)), || first));
        assert!(!window.holds(Some((last, lag)), || first));
        let next = window_at(&spec, &zone, first);
        assert_eq!(next.period.text(), "2027");
        assert_eq!(next.from, first, "2027 starts at midnight in Paris");
        assert!(next.holds(None, || first));
        // The first tick of 2027 by a coarse clock still in 2026: the precise clock decides.
        assert!(next.holds(Some((last, lag)), || first));
    }
}
