//! Periodic series: a sequence that starts again every year, month or day (`reset`), with the
//! period in its counter ids (`invoices/2026`, `invoices/tenantId=acme/2026`, `tickets/2026-05`)
//! and in its formats (`INV-{yyyy}-{seq:06}`).
//!
//! The core has no clock and no time-zone data. The caller gives an instant; the host turns it
//! into a local date in the sequence's `timeZone` with its own well-kept data (`Intl` in JS, a
//! tz database compiled into the binary natively; the `localDates` step of a plan); the core
//! derives the period from that date, by arithmetic alone:
//!
//! | `reset`   | period of the local date `Y-M-D`                         | written    |
//! |-----------|----------------------------------------------------------|------------|
//! | `yearly`  | the (fiscal) year: `Y`, or `Y + 1` when `yearStart > 1` and `M ≥ yearStart` | `YYYY` |
//! | `monthly` | `Y-M`                                                    | `YYYY-MM`  |
//! | `daily`   | `Y-M-D`                                                  | `YYYY-MM-DD` |
//!
//! **Which year a fiscal year is**: the calendar year in which it *ends* (the usual convention:
//! the US federal government, Australia, most companies' "FY2027"). With `yearStart: 4`,
//! 2026-04-01 … 2027-03-31 is the period `2027`; with `yearStart: 1` (the default) the period is
//! the calendar year. Periods have years 1..=9999 (four digits): a date of fiscal year 10000 is
//! refused (`INVALID_DATE`).
//!
//! A period is valid for a sequence only with the sequence's own `reset` (a `2026-05` period is
//! no period of a yearly sequence).

use std::fmt;

use serde::{Serialize, Serializer};

use crate::error::SeqError;
use crate::sequence::calendar::{push_digits, LocalDate, MAX_YEAR};

/// How often a sequence starts again.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Reset {
    /// One series for ever (the default): no period.
    #[default]
    Never,
    Yearly,
    Monthly,
    Daily,
}

impl Reset {
    /// Every value, in the order of the docs.
    pub const NAMES: [&'static str; 4] = ["never", "yearly", "monthly", "daily"];

    pub fn name(self) -> &'static str {
        match self {
            Self::Never => "never",
            Self::Yearly => "yearly",
            Self::Monthly => "monthly",
            Self::Daily => "daily",
        }
    }

    /// How one of this reset's periods is written, for messages (`""` when it never resets).
    pub fn example_period(self) -> &'static str {
        match self {
            Self::Never => "",
            Self::Yearly => "2026",
            Self::Monthly => "2026-05",
            Self::Daily => "2026-05-31",
        }
    }

    pub(crate) fn parse(text: &str) -> Option<Self> {
        match text {
            "never" => Some(Self::Never),
            "yearly" => Some(Self::Yearly),
            "monthly" => Some(Self::Monthly),
            "daily" => Some(Self::Daily),
            _ => None,
        }
    }

    /// Whether the sequence has periods at all.
    pub fn is_periodic(self) -> bool {
        self != Self::Never
    }
}

impl Serialize for Reset {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.name())
    }
}

/// One period of a periodic sequence: a (fiscal) year, a month or a day, as its counter id and
/// its format tokens show it. Serializes as its text (`2026`, `2026-05`, `2026-05-17`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Period {
    reset: Reset,
    year: u16,
    /// 0 for a year.
    month: u8,
    /// 0 for a year or a month.
    day: u8,
}

impl Period {
    /// Reads a period in the form the core writes (`YYYY`, `YYYY-MM`, `YYYY-MM-DD`; a year
    /// 1..=9999, a month and day that exist); its kind follows from its form.
    pub fn parse(text: &str) -> Option<Self> {
        match text.len() {
            4 => {
                let date = LocalDate::read(&format!("{text}-01-01")).ok()?;
                Some(Self::year(date.year()))
            }
            7 => {
                let date = LocalDate::read(&format!("{text}-01")).ok()?;
                Some(Self {
                    reset: Reset::Monthly,
                    year: date.year(),
                    month: date.month(),
                    day: 0,
                })
            }
            10 => LocalDate::read(text).ok().map(Self::of_day),
            _ => None,
        }
    }

    /// [`Period::parse`] of an argument: `INVALID_ARGUMENT` naming `argument` when `text` is
    /// not a period.
    pub fn from_text(argument: &str, text: &str) -> Result<Self, SeqError> {
        Self::parse(text).ok_or_else(|| {
            SeqError::invalid_argument(
                argument,
                format!(
                    "must be a period (YYYY, YYYY-MM or YYYY-MM-DD, a year 0001 to 9999), got {}",
                    crate::ejson::quoted(&crate::ejson::truncate(text))
                ),
            )
        })
    }

    fn year(year: u16) -> Self {
        Self {
            reset: Reset::Yearly,
            year,
            month: 0,
            day: 0,
        }
    }

    fn of_day(date: LocalDate) -> Self {
        Self {
            reset: Reset::Daily,
            year: date.year(),
            month: date.month(),
            day: date.day(),
        }
    }

    /// The `reset` whose periods look like this one.
    pub fn reset(self) -> Reset {
        self.reset
    }

    /// The (fiscal) year: the `{yyyy}` and `{yy}` of a format.
    pub fn year_number(self) -> u16 {
        self.year
    }

    /// The month (`{mm}`), for a monthly or daily period.
    pub fn month(self) -> Option<u8> {
        (self.month != 0).then_some(self.month)
    }

    /// The day of the month (`{dd}`), for a daily period.
    pub fn day(self) -> Option<u8> {
        (self.day != 0).then_some(self.day)
    }

    /// This period lies within `outer`: it is `outer`, or a month or day of the year or month
    /// `outer` is (`2026-03` and `2026-03-15` are within `2026`; `2026` is not within
    /// `2026-03`). What an auditor's report for a period selects.
    pub fn is_within(self, outer: Period) -> bool {
        self.year == outer.year
            && (outer.month == 0 || outer.month == self.month)
            && (outer.day == 0 || outer.day == self.day)
    }

    /// The period as text.
    pub fn text(self) -> String {
        let mut out = String::with_capacity(10);
        push_digits(&mut out, u32::from(self.year), 4);
        if let Some(month) = self.month() {
            out.push('-');
            push_digits(&mut out, u32::from(month), 2);
        }
        if let Some(day) = self.day() {
            out.push('-');
            push_digits(&mut out, u32::from(day), 2);
        }
        out
    }
}

impl fmt::Display for Period {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text())
    }
}

impl Serialize for Period {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.text())
    }
}

/// The field that holds, beside the number in `field`, the number's period on a numbered
/// document: `<field>Period` (`"2026"`). Unique indexes cover it (the scope fields, the period
/// field, the number), so each period's numbers start again without colliding with the last's.
pub fn period_field(field: &str) -> String {
    format!("{field}Period")
}

/// The period of `date` for a sequence resetting `reset` whose year starts in month
/// `year_start` (1..=12); `None` when it never resets. A fiscal year beyond 9999 is
/// `INVALID_DATE` naming `argument`.
pub(crate) fn period_of(
    reset: Reset,
    year_start: u8,
    date: LocalDate,
    argument: &str,
) -> Result<Option<Period>, SeqError> {
    Ok(Some(match reset {
        Reset::Never => return Ok(None),
        Reset::Yearly => {
            let year = if year_start > 1 && date.month() >= year_start {
                date.year().checked_add(1).filter(|y| *y <= MAX_YEAR)
            } else {
                Some(date.year())
            };
            let year = year.ok_or_else(|| {
                SeqError::invalid_date(
                    argument,
                    None,
                    format!(
                        "{date} falls in the fiscal year 10000 (yearStart {year_start}), beyond the years a period can have (1 to 9999)"
                    ),
                )
            })?;
            Period::year(year)
        }
        Reset::Monthly => Period {
            reset: Reset::Monthly,
            year: date.year(),
            month: date.month(),
            day: 0,
        },
        Reset::Daily => Period::of_day(date),
    }))
}

/// The first local date of `period` (whose kind the caller checked), `None` when it lies
/// before 0001-01-01 (the fiscal year 1 when the year starts after January).
pub(crate) fn first_date(period: Period, year_start: u8) -> Option<LocalDate> {
    match period.reset {
        Reset::Yearly if year_start > 1 => {
            LocalDate::new(i64::from(period.year).checked_sub(1)?, year_start, 1)
        }
        Reset::Never | Reset::Yearly => LocalDate::new(i64::from(period.year), 1, 1),
        Reset::Monthly => LocalDate::new(i64::from(period.year), period.month, 1),
        Reset::Daily => LocalDate::new(i64::from(period.year), period.month, period.day),
    }
}

/// The first local date of the period after `period` (whose kind the caller checked): where a
/// host's cache of "the period of now" ends. `None` after 9999-12-31.
pub(crate) fn next_start(period: Period, year_start: u8) -> Option<LocalDate> {
    match period.reset {
        Reset::Yearly if year_start > 1 => LocalDate::new(i64::from(period.year), year_start, 1),
        Reset::Never | Reset::Yearly => {
            LocalDate::new(i64::from(period.year).checked_add(1)?, 1, 1)
        }
        Reset::Monthly => {
            LocalDate::new(i64::from(period.year), period.month, 1)?.first_of_next_month()
        }
        Reset::Daily => first_date(period, year_start)?.next_day(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_period_is_within_itself_and_its_year_or_month() {
        let p = |text: &str| Period::parse(text).unwrap();
        for (inner, outer, within) in [
            ("2026", "2026", true),
            ("2026-03", "2026", true),
            ("2026-03-15", "2026", true),
            ("2026-03-15", "2026-03", true),
            ("2026-10", "2026-01", false),
            ("2025-03", "2026", false),
            ("2026", "2026-03", false),
            ("2026-03", "2026-03-15", false),
        ] {
            assert_eq!(p(inner).is_within(p(outer)), within, "{inner} in {outer}");
        }
    }

    fn date(text: &str) -> LocalDate {
        LocalDate::read(text).unwrap()
    }

    fn period(reset: Reset, year_start: u8, text: &str) -> Result<String, &'static str> {
        period_of(reset, year_start, date(text), "date")
            .map(|p| p.map_or_else(|| "-".to_owned(), Period::text))
            .map_err(|e| e.code())
    }

    #[test]
    fn periods_of_dates() {
        assert_eq!(period(Reset::Never, 1, "2026-05-17").as_deref(), Ok("-"));
        assert_eq!(
            period(Reset::Yearly, 1, "2026-05-17").as_deref(),
            Ok("2026")
        );
        assert_eq!(
            period(Reset::Monthly, 1, "2026-05-17").as_deref(),
            Ok("2026-05")
        );
        assert_eq!(
            period(Reset::Daily, 1, "2026-05-17").as_deref(),
            Ok("2026-05-17")
        );
        // A fiscal year is named after the calendar year it ends in.
        assert_eq!(
            period(Reset::Yearly, 4, "2026-03-31").as_deref(),
            Ok("2026")
        );
        assert_eq!(
            period(Reset::Yearly, 4, "2026-04-01").as_deref(),
            Ok("2027")
        );
        assert_eq!(
            period(Reset::Yearly, 7, "2026-06-30").as_deref(),
            Ok("2026")
        );
        assert_eq!(
            period(Reset::Yearly, 7, "2026-07-01").as_deref(),
            Ok("2027")
        );
        assert_eq!(
            period(Reset::Yearly, 12, "2026-12-01").as_deref(),
            Ok("2027")
        );
        assert_eq!(
            period(Reset::Yearly, 4, "9999-03-31").as_deref(),
            Ok("9999")
        );
        assert_eq!(period(Reset::Yearly, 4, "9999-04-01"), Err("INVALID_DATE"));
        assert_eq!(
            period(Reset::Yearly, 1, "9999-12-31").as_deref(),
            Ok("9999")
        );
        assert_eq!(
            period(Reset::Yearly, 1, "0001-01-01").as_deref(),
            Ok("0001")
        );
    }

    #[test]
    fn period_text_reads_back() {
        for text in [
            "2026",
            "0001",
            "9999",
            "2026-05",
            "2024-02-29",
            "0001-01-01",
        ] {
            assert_eq!(Period::parse(text).map(Period::text).as_deref(), Some(text));
        }
        for bad in [
            "0000",
            "26",
            "20260",
            "2026-13",
            "2026-5",
            "2023-02-29",
            "2026-05-17x",
            "+202",
            "-001",
            "2026-00",
            "10000",
            "2026/05",
        ] {
            assert_eq!(Period::parse(bad), None, "{bad:?}");
        }
        assert_eq!(
            Period::parse("2026").map(Period::reset),
            Some(Reset::Yearly)
        );
        assert_eq!(
            Period::parse("2026-05").map(Period::reset),
            Some(Reset::Monthly)
        );
    }

    #[test]
    fn period_bounds() {
        let bounds = |text: &str, year_start: u8| {
            let period = Period::parse(text).unwrap();
            (
                first_date(period, year_start).map(|d| d.to_string()),
                next_start(period, year_start).map(|d| d.to_string()),
            )
        };
        let some = |a: &str, b: &str| (Some(a.to_owned()), Some(b.to_owned()));
        assert_eq!(bounds("2026", 1), some("2026-01-01", "2027-01-01"));
        assert_eq!(bounds("2027", 4), some("2026-04-01", "2027-04-01"));
        assert_eq!(bounds("2026-12", 1), some("2026-12-01", "2027-01-01"));
        assert_eq!(bounds("2024-02-28", 1), some("2024-02-28", "2024-02-29"));
        assert_eq!(bounds("9999", 1), (Some("9999-01-01".to_owned()), None));
        assert_eq!(bounds("9999", 4), some("9998-04-01", "9999-04-01"));
        assert_eq!(bounds("0001", 7), (None, Some("0001-07-01".to_owned())));
        assert_eq!(
            bounds("9999-12-31", 1),
            (Some("9999-12-31".to_owned()), None)
        );
    }
}
