//! The host's half of periods for a sequence that resets: an instant → its local date in the
//! sequence's zone (jiff, the tz database compiled in) → the core's period, and the window of
//! instants sharing that period, so the warm path compares two integers instead of converting a
//! date (js/src/period-window.js is the npm package's twin).
//!
//! **The window.** For an instant `t` in period `P`, the window is `[t, until)`: `until` is the
//! earlier of the zone's next transition after `t` and the instant the next period's first local
//! date begins at `t`'s offset. Within it the offset is constant, so local time only moves
//! forward, from `t`'s local date to before the next period's first date: every instant of the
//! window is in `P` — also where midnight does not exist (a transition at midnight) or repeats
//! (the window then ends at the transition, and the next one is computed there).

use std::sync::Arc;

use jiff::tz::TimeZone;
use jiff::Timestamp;
use mongo_seq_core::{check_instant, LocalDate, Period, SeqError, SequenceSpec, MAX_INSTANT_MS};

use crate::counter::Counter;
use crate::error::Result;

/// Milliseconds since the epoch, by this process's clock.
pub(crate) fn now_ms() -> i64 {
    let now = std::time::SystemTime::now();
    match now.duration_since(std::time::UNIX_EPOCH) {
        Ok(after) => i64::try_from(after.as_millis()).unwrap_or(i64::MAX),
        Err(before) => i64::try_from(before.duration().as_millis()).map_or(i64::MIN, |ms| -ms),
    }
}

/// The coarse real-time clock (Linux's `CLOCK_REALTIME_COARSE`: the time of the last tick, read
/// without the hardware counter) and how far behind the precise clock it may be, or `None`
/// where there is none (then the warm path reads the precise clock).
#[cfg(target_os = "linux")]
pub(crate) fn coarse_clock() -> Option<CoarseClock> {
    use rustix::time::{clock_getres, ClockId};
    let tick = clock_getres(ClockId::RealtimeCoarse);
    let tick_ms = tick.tv_sec.saturating_mul(1000) + tick.tv_nsec / 1_000_000 + 1;
    // Behind by at most one tick; twice that and at least 10 ms, to be safe.
    Some(CoarseClock {
        lag_ms: tick_ms.saturating_mul(2).max(10),
    })
}

#[cfg(not(target_os = "linux"))]
pub(crate) fn coarse_clock() -> Option<CoarseClock> {
    None
}

/// See [`coarse_clock`].
#[derive(Debug, Clone, Copy)]
pub(crate) struct CoarseClock {
    /// How far behind the precise clock a reading may be, in ms.
    pub(crate) lag_ms: i64,
}

impl CoarseClock {
    /// A reading, in ms since the epoch: now is in `[reading, reading + lag_ms]`.
    #[cfg(target_os = "linux")]
    pub(crate) fn now_ms(self) -> i64 {
        let now = rustix::time::clock_gettime(rustix::time::ClockId::RealtimeCoarse);
        now.tv_sec.saturating_mul(1000) + now.tv_nsec / 1_000_000
    }

    #[cfg(not(target_os = "linux"))]
    pub(crate) fn now_ms(self) -> i64 {
        now_ms()
    }
}

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

    /// Whether now is in the window, by a coarse reading: `[reading, reading + lag]` inside it.
    pub(crate) fn holds_now(&self, clock: CoarseClock) -> bool {
        let reading = clock.now_ms();
        self.from <= reading && reading.saturating_add(clock.lag_ms) < self.until
    }
}

/// The period of the instant `ms` (checked) in `zone`, with the end of its window (see the
/// module docs).
pub(crate) fn period_at(spec: &SequenceSpec, zone: &TimeZone, ms: i64) -> Result<(Period, i64)> {
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
    // After 9999-12-31 (no next period) the window runs to the last instant the core takes.
    let by_offset = match spec.next_period_start(&period)? {
        Some(start) => {
            let midnight = jiff::civil::Date::new(
                i16::try_from(start.year()).unwrap_or(i16::MAX),
                i8::try_from(start.month()).unwrap_or(1),
                i8::try_from(start.day()).unwrap_or(1),
            )
            .map_err(|e| bad_date(&e))?
            .at(0, 0, 0, 0);
            offset
                .to_timestamp(midnight)
                .map_or(MAX_INSTANT_MS + 1, |t| t.as_millisecond())
        }
        None => MAX_INSTANT_MS + 1,
    };
    let transition = zone
        .following(timestamp)
        .next()
        .map_or(i64::MAX, |t| t.timestamp().as_millisecond());
    Ok((period, by_offset.min(transition).max(ms + 1)))
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
    use serde_json::{json, Value};

    fn cases() -> Vec<Value> {
        let text = include_str!("../../../tests/vectors/periods.json");
        let file: Value = serde_json::from_str(text).expect("JSON");
        file["cases"].as_array().expect("cases").clone()
    }

    /// Every instant of a window is in its period, and the window ends where the period does
    /// or at a transition of the zone (then the next window goes on).
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
            let (period, until) = period_at(&spec, &zone, ms).expect("a period");
            assert_eq!(period.text(), expected, "{}", case["name"]);
            for inside in [ms + (until - ms) / 2, until - 1] {
                assert_eq!(
                    period_at(&spec, &zone, inside).expect("inside").0,
                    period,
                    "{}",
                    case["name"]
                );
            }
            if until <= MAX_INSTANT_MS {
                let after = Timestamp::from_millisecond(until).expect("until");
                let before = Timestamp::from_millisecond(until - 1).expect("until - 1");
                let transition = zone.to_offset(after) != zone.to_offset(before);
                let next = period_at(&spec, &zone, until).expect("after").0;
                assert!(
                    next != period || transition,
                    "{}: the window ends early",
                    case["name"]
                );
            }
            checked += 1;
        }
        assert!(checked >= 45, "{checked} cases");
    }
}
