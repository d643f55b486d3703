#![allow(clippy::arithmetic_side_effects)] // test arithmetic on small values

use super::*;
use serde_json::json;

/// A host whose zone is a fixed offset, with a day that repeats its last `back_ms` (a clock
/// set back at midnight, UTC+1 → UTC) at `back_at` when given.
struct Host {
    offset_ms: i64,
    back_at: Option<i64>,
    asked: usize,
}

impl Host {
    fn date(&self, ms: i64) -> String {
        let offset = match self.back_at {
            Some(at) if ms >= at => 0,
            _ => self.offset_ms,
        };
        let days = (ms + offset).div_euclid(DAY_MS);
        // Civil from days (the inverse of days_from_civil), for the test only.
        let z = days + 719_468;
        let era = z.div_euclid(146_097);
        let doe = z - era * 146_097;
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
        let mp = (5 * doy + 2) / 153;
        let day = doy - (153 * mp + 2) / 5 + 1;
        let month = if mp < 10 { mp + 3 } else { mp - 9 };
        let year = yoe + era * 400 + i64::from(month <= 2);
        format!("{year:04}-{month:02}-{day:02}")
    }

    fn period(&mut self, windows: &mut PeriodWindows, ms: i64) -> Result<String, SeqError> {
        let mut step = windows.period_at(ms)?;
        loop {
            match step {
                WindowStep::Period(period) => return Ok(period.text()),
                WindowStep::LocalDates(instants) => {
                    self.asked += instants.len();
                    let dates = instants.iter().map(|&ms| self.date(ms)).collect();
                    step = windows.answer(dates)?;
                }
            }
        }
    }
}

fn windows(options: serde_json::Value) -> PeriodWindows {
    PeriodWindows::new(&SequenceSpec::parse(&options).unwrap()).unwrap()
}

fn ms(days: i64, hours: i64) -> i64 {
    days * DAY_MS + hours * 3_600_000
}

/// 2026-01-01 is day 20454 since the epoch.
const JAN_1_2026: i64 = 20_454;

#[test]
fn a_window_spans_its_period_and_is_kept() {
    let mut windows = windows(json!({"name": "w", "reset": "yearly"}));
    let mut host = Host {
        offset_ms: 3_600_000,
        back_at: None,
        asked: 0,
    };
    assert_eq!(host.date(ms(JAN_1_2026, 0)), "2026-01-01");
    assert_eq!(
        host.period(&mut windows, ms(JAN_1_2026 + 100, 0)).unwrap(),
        "2026"
    );
    // 2026 at UTC+1: from 2025-12-31T23:00Z to 2026-12-31T23:00Z.
    let window = windows.current().unwrap();
    assert_eq!(
        (window.from, window.until),
        (ms(JAN_1_2026 - 1, 23), ms(JAN_1_2026 + 364, 23))
    );
    // 1 + 2 × (2 for the bracket, 8 or 9 on the quarter hours, 1 for the edge); 61 to the
    // millisecond.
    assert_eq!(host.asked, 23, "dates asked");
    // Inside it, and in a kept window, no question.
    host.asked = 0;
    assert_eq!(host.period(&mut windows, window.until - 1).unwrap(), "2026");
    assert_eq!(host.period(&mut windows, window.until).unwrap(), "2027");
    assert_eq!(
        host.asked, 5,
        "the next year's ends are where the last offset puts them: its date and two per end"
    );
    assert_eq!(
        windows.current().unwrap().until,
        ms(JAN_1_2026 + 365 + 364, 23)
    );
    assert_eq!(host.period(&mut windows, window.from - 1).unwrap(), "2025");
    let asked = host.asked;
    for at in [
        window.from,
        window.until + 5,
        window.from - 5,
        window.until - 1,
    ] {
        host.period(&mut windows, at).unwrap();
    }
    assert_eq!(host.asked, asked, "the windows of recent periods are kept");
    assert_eq!(windows.current().unwrap().period.text(), "2026");
}

#[test]
fn a_clock_set_back_at_midnight_ends_the_day_after_the_hour_repeated() {
    // Daily at UTC+1; on 2026-01-02 at 00:00 local the clock goes back to 23:00 (UTC): the
    // instants after it are dated 2026-01-01 for one more hour.
    let change = ms(JAN_1_2026, 23);
    let mut windows = windows(json!({"name": "w", "reset": "daily"}));
    let mut host = Host {
        offset_ms: 3_600_000,
        back_at: Some(change),
        asked: 0,
    };
    // The day before, at UTC+1: the next search looks first where UTC+1 puts midnight, and
    // finds the day ends an hour later.
    assert_eq!(
        host.period(&mut windows, ms(JAN_1_2026 - 1, 12)).unwrap(),
        "2025-12-31"
    );
    assert_eq!(
        host.period(&mut windows, change + 60_000).unwrap(),
        "2026-01-01"
    );
    let window = windows.current().unwrap();
    assert_eq!(
        window.until,
        change + 3_600_000,
        "the day ends at midnight UTC"
    );
    assert!(window.contains(change - 60_000));
    assert_eq!(
        host.period(&mut windows, window.until).unwrap(),
        "2026-01-02"
    );
}

#[test]
fn an_offset_off_the_quarter_hours_is_found_to_the_millisecond() {
    // Paris's local mean time, UTC+0:09:21.
    let offset_ms = 561_000;
    let mut windows = windows(json!({"name": "w", "reset": "monthly"}));
    let mut host = Host {
        offset_ms,
        back_at: None,
        asked: 0,
    };
    assert_eq!(
        host.period(&mut windows, ms(JAN_1_2026 + 40, 0)).unwrap(),
        "2026-02"
    );
    let window = windows.current().unwrap();
    assert_eq!(
        (window.from, window.until),
        (
            ms(JAN_1_2026 + 31, 0) - offset_ms,
            ms(JAN_1_2026 + 59, 0) - offset_ms
        )
    );
}

#[test]
fn odd_answers_and_bounds() {
    let mut windows = windows(json!({"name": "w", "reset": "monthly"}));
    let code = |r: Result<WindowStep, SeqError>| r.unwrap_err().code();
    assert_eq!(code(windows.answer(vec![])), "UNEXPECTED_REPLY");
    assert_eq!(code(windows.period_at(MAX_INSTANT_MS + 1)), "INVALID_DATE");
    assert!(matches!(
        windows.period_at(0),
        Ok(WindowStep::LocalDates(_))
    ));
    assert_eq!(code(windows.answer(vec![])), "UNEXPECTED_REPLY");
    windows.period_at(0).unwrap();
    assert_eq!(
        code(windows.answer(vec!["1970-1-1".into()])),
        "UNEXPECTED_REPLY"
    );
    windows.period_at(0).unwrap();
    let WindowStep::LocalDates(asked) = windows.answer(vec!["1970-01-01".into()]).unwrap() else {
        panic!("the bracket is asked")
    };
    assert_eq!(asked.len(), 4);
    assert_eq!(
        code(windows.answer(vec!["1970-01-01".into()])),
        "UNEXPECTED_REPLY"
    );
    // The first and last periods run to the first and last instants the core takes.
    let mut host = Host {
        offset_ms: 0,
        back_at: None,
        asked: 0,
    };
    let mut yearly = PeriodWindows::new(
        &SequenceSpec::parse(&json!({"name": "w", "reset": "yearly", "yearStart": 7})).unwrap(),
    )
    .unwrap();
    assert_eq!(host.period(&mut yearly, MIN_INSTANT_MS).unwrap(), "0001");
    assert_eq!(yearly.current().unwrap().from, MIN_INSTANT_MS);
    let mut daily = windows_of("daily");
    assert_eq!(
        host.period(&mut daily, MAX_INSTANT_MS).unwrap(),
        "9999-12-29"
    );
    assert_eq!(daily.current().unwrap().until, MAX_INSTANT_MS + 1);
    let never = SequenceSpec::parse(&json!({"name": "w"})).unwrap();
    assert_eq!(
        PeriodWindows::new(&never).unwrap_err().code(),
        "INVALID_ARGUMENT"
    );
}

fn windows_of(reset: &str) -> PeriodWindows {
    windows(json!({"name": "w", "reset": reset}))
}
