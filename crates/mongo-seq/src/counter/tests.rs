//! The core's periods and warm path answered as `Counters` answers them (jiff's local dates).

use super::*;
use mongo_seq_core::{PeriodWindow, PeriodWindows, WindowStep, MAX_INSTANT_MS, MIN_INSTANT_MS};
use serde_json::{json, Value};

/// The period of `at` and its window, the core's `PeriodWindows` answered as `Counters`
/// answers it (asked of a fresh sequence each time: no window kept answers).
fn period_at(spec: &SequenceSpec, at: i64) -> (Period, Option<PeriodWindow>) {
    let zone = time_zone(spec.time_zone()).expect("a zone");
    let mut windows = PeriodWindows::new(spec).expect("periodic");
    let mut step = windows.period_at(at).expect("an instant");
    loop {
        match step {
            WindowStep::Period(period) => {
                return (period, windows.current().filter(|w| w.contains(at)));
            }
            WindowStep::LocalDates(instants) => {
                let dates = local_dates_in(&zone, &instants).expect("dates");
                step = windows.answer_dates(&dates).expect("a step");
            }
        }
    }
}

fn cases() -> Vec<Value> {
    let text = include_str!("../../../../tests/vectors/periods.json");
    let file: Value = serde_json::from_str(text).expect("JSON");
    file["cases"].as_array().expect("cases").clone()
}

/// Every instant of a window is in its period, and the window starts and ends where the
/// period does (asked of a fresh sequence each time: no window kept answers).
#[test]
fn every_instant_of_a_window_is_in_its_period() {
    let mut checked = 0;
    for case in cases() {
        let (Some(ms), Some(expected)) = (case["instant"].as_str(), case["period"].as_str()) else {
            continue;
        };
        let ms: i64 = ms.parse().expect("ms");
        let mut options =
            json!({ "name": "inv", "reset": case["reset"], "timeZone": case["timeZone"] });
        if let Some(start) = case.get("yearStart") {
            options["yearStart"] = start.clone();
        }
        let spec = SequenceSpec::parse(&options).expect("a spec");
        let period_at = |at: i64| period_at(&spec, at);
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

fn paris_yearly() -> SequenceSpec {
    SequenceSpec::parse(&json!({ "name": "inv", "reset": "yearly", "timeZone": "Europe/Paris" }))
        .expect("a spec")
}

fn ms(rfc3339: &str) -> i64 {
    rfc3339
        .parse::<jiff::Timestamp>()
        .expect("a timestamp")
        .as_millisecond()
}

/// The warm path's decision as `next()` makes it (the core's, given the clock readings
/// `take_one_now` would pass): a coarse reading a tick behind the instant the window was
/// made is in it, and across the year's end the precise clock decides: 23:59:59.999 on
/// 31 December is that year's, the next millisecond starts the next year's counter,
/// whatever the coarse reading says.
#[test]
fn a_year_s_end_crossed_between_two_calls_numbers_into_the_new_year() {
    let counters = Counters::new(&paris_yearly()).expect("counters");
    let series = counters.unscoped().expect("unscoped");
    let warm = |reading: i64, lag: i64| counters.0.lock().core.warm_counter(series, reading, lag);
    let (tick, lag) = (4, crate::clock::COARSE_LAG_MS);
    let made = ms("2026-11-26T11:00:00.001Z");
    let (year, period) = counters.route(series, Some(made)).expect("a counter");
    assert_eq!(period.map(|p| p.text()).as_deref(), Some("2026"));
    // Just after the counter was routed to, the coarse clock still shows the previous tick.
    assert_eq!(
        warm(made - tick, lag),
        Some(year),
        "the coarse reading decides mid-year"
    );
    // The last millisecond of 2026 in Paris, a coarse reading a tick behind: it cannot
    // decide, the precise clock does, and it is 2026's.
    let last = ms("2026-12-31T22:59:59.999Z");
    assert_eq!(warm(last - tick, lag), None);
    assert_eq!(warm(last, 0), Some(year));
    // The next millisecond: not 2026's counter, by either clock.
    let first = last + 1;
    assert_eq!(warm(first, 0), None);
    assert_eq!(warm(last, lag), None);
    let (next_year, period) = counters.route(series, Some(first)).expect("a counter");
    assert_ne!(next_year, year);
    assert_eq!(period.map(|p| p.text()).as_deref(), Some("2027"));
    assert_eq!(
        warm(first, 0),
        Some(next_year),
        "2027 starts at midnight in Paris"
    );
    // The first tick of 2027 by a coarse clock still in 2026: the precise clock decides.
    assert_eq!(warm(last, lag), None);
    assert_eq!(
        counters
            .0
            .lock()
            .core
            .counter(next_year)
            .map(|c| c.counter_id().to_owned())
            .ok()
            .as_deref(),
        Some("inv/2027")
    );
}
