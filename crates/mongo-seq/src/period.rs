//! The host's half of periods for a sequence that resets: the core's [`PeriodWindows`] (an
//! instant → its period, and the window of instants sharing it, found from local dates and
//! kept) answered with jiff's local dates in the sequence's zone.

use std::sync::{Mutex, PoisonError};

use jiff::tz::TimeZone;
use mongo_seq_core::{
    check_instant, Period, PeriodWindow, PeriodWindows, SequenceSpec, WindowStep,
};

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

#[cfg(test)]
mod tests {
    use super::*;
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
}
