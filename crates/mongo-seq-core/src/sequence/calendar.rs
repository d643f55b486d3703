//! Local dates: the calendar a period is counted in (the proleptic Gregorian calendar, years
//! 1..=9999, ISO 8601's `YYYY-MM-DD`), and the day arithmetic the core needs without a clock or
//! time-zone data: the day after a date, a date's day number, and a UTC date-time's instant (for
//! Extended JSON's relaxed `$date`).
//!
//! The core never turns an instant into a local date: the host does, with its time-zone data
//! (see [`crate::sequence::period`]), and hands the date over as text.

use std::fmt;

use crate::ejson;

/// Smallest year of a local date.
pub const MIN_YEAR: u16 = 1;
/// Largest year of a local date (four digits).
pub const MAX_YEAR: u16 = 9999;

/// A calendar date, always valid (years 1..=9999, a day that exists in its month).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct LocalDate {
    year: u16,
    month: u8,
    day: u8,
}

/// Why a text is not a local date: its shape, or a year outside 1..=9999.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum DateProblem {
    /// Not `YYYY-MM-DD` with a real month and day.
    Shape(String),
    /// A well-formed date whose year is not 1..=9999 (`0000-12-31`, `10000-01-01`).
    Year(i64),
}

impl DateProblem {
    pub(crate) fn reason(&self) -> String {
        match self {
            Self::Shape(reason) => reason.clone(),
            Self::Year(year) => {
                format!("year {year} is outside the years a period can have (1 to 9999)")
            }
        }
    }
}

pub(crate) fn is_leap(year: i64) -> bool {
    let divides = |n: i64| year.checked_rem_euclid(n) == Some(0);
    divides(4) && (!divides(100) || divides(400))
}

/// Days in `month` (1..=12) of `year`; 0 for a month that does not exist.
pub(crate) fn days_in_month(year: i64, month: u8) -> u8 {
    match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if is_leap(year) => 29,
        2 => 28,
        _ => 0,
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date (negative before), for any year a
/// 64-bit day count can hold (Howard Hinnant's `days_from_civil`). `month` 1..=12, `day` 1..=31.
pub(crate) fn days_from_civil(year: i64, month: u8, day: u8) -> Option<i64> {
    let year = if month <= 2 {
        year.checked_sub(1)?
    } else {
        year
    };
    let era = year.checked_div_euclid(400)?;
    let year_of_era = year.checked_rem_euclid(400)?;
    // March-based month (March = 0), so the leap day is the last day of the year.
    let shifted = i64::from(if month > 2 {
        month.checked_sub(3)?
    } else {
        month.checked_add(9)?
    });
    let day_of_year = shifted
        .checked_mul(153)?
        .checked_add(2)?
        .checked_div(5)?
        .checked_add(i64::from(day))?
        .checked_sub(1)?;
    let day_of_era = year_of_era
        .checked_mul(365)?
        .checked_add(year_of_era.checked_div(4)?)?
        .checked_sub(year_of_era.checked_div(100)?)?
        .checked_add(day_of_year)?;
    era.checked_mul(146_097)?
        .checked_add(day_of_era)?
        .checked_sub(719_468)
}

/// Reads an unsigned decimal of exactly `digits` ASCII digits.
fn fixed_digits(text: &str, digits: usize) -> Option<u32> {
    if text.len() != digits || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse().ok()
}

impl LocalDate {
    /// The date `year-month-day`, if it exists and `year` is 1..=9999.
    pub fn new(year: i64, month: u8, day: u8) -> Option<Self> {
        let year = u16::try_from(year)
            .ok()
            .filter(|y| (MIN_YEAR..=MAX_YEAR).contains(y))?;
        (day >= 1 && day <= days_in_month(i64::from(year), month)).then_some(Self {
            year,
            month,
            day,
        })
    }

    /// Parses `YYYY-MM-DD` (ISO 8601's calendar date, four-digit year). Anything else is an
    /// `INVALID_DATE` naming `argument`.
    pub fn parse(argument: &str, text: &str) -> Result<Self, crate::error::SeqError> {
        Self::read(text).map_err(|problem| {
            crate::error::SeqError::invalid_date(
                argument,
                None,
                format!(
                    "{} {}",
                    ejson::quoted(&ejson::truncate(text)),
                    problem.reason()
                ),
            )
        })
    }

    /// Reads a date as a host writes it: `[-]Y…Y-MM-DD`, the year in as many digits as it
    /// needs (at least four), so a year outside 1..=9999 is told apart from a malformed text.
    pub(crate) fn read(text: &str) -> Result<Self, DateProblem> {
        let shape = || {
            DateProblem::Shape(
                "is not a date of the form YYYY-MM-DD (a year of four digits, a month and a day that exist)"
                    .to_owned(),
            )
        };
        let (negative, unsigned) = match text.strip_prefix('-') {
            Some(rest) => (true, rest),
            None => (false, text),
        };
        let mut parts = unsigned.rsplitn(3, '-');
        let (Some(day), Some(month), Some(year)) = (parts.next(), parts.next(), parts.next())
        else {
            return Err(shape());
        };
        let (Some(month), Some(day)) = (fixed_digits(month, 2), fixed_digits(day, 2)) else {
            return Err(shape());
        };
        if year.len() < 4 || year.len() > 18 || !year.bytes().all(|b| b.is_ascii_digit()) {
            return Err(shape());
        }
        let year: i64 = year.parse().map_err(|_| shape())?;
        let year = if negative {
            year.saturating_neg()
        } else {
            year
        };
        let (month, day) = (
            u8::try_from(month).unwrap_or(0),
            u8::try_from(day).unwrap_or(0),
        );
        if day == 0 || day > days_in_month(year, month) {
            return Err(shape());
        }
        if !(i64::from(MIN_YEAR)..=i64::from(MAX_YEAR)).contains(&year) {
            return Err(DateProblem::Year(year));
        }
        Self::new(year, month, day).ok_or_else(shape)
    }

    pub fn year(self) -> u16 {
        self.year
    }
    pub fn month(self) -> u8 {
        self.month
    }
    pub fn day(self) -> u8 {
        self.day
    }

    /// The date whose day number (days since 1970-01-01, as [`days_from_civil`] counts) is
    /// `days`, if its year is 1..=9999 (Howard Hinnant's `civil_from_days`): the UTC day of an
    /// instant is `of_day_number(ms.div_euclid(86_400_000))`.
    pub fn of_day_number(days: i64) -> Option<Self> {
        let shifted = days.checked_add(719_468)?;
        let era = shifted.checked_div_euclid(146_097)?;
        let day_of_era = shifted.checked_rem_euclid(146_097)?; // 0..=146_096
        let year_of_era = day_of_era
            .checked_sub(day_of_era.checked_div(1460)?)?
            .checked_add(day_of_era.checked_div(36_524)?)?
            .checked_sub(day_of_era.checked_div(146_096)?)?
            .checked_div(365)?; // 0..=399
        let day_of_year = day_of_era.checked_sub(
            year_of_era
                .checked_mul(365)?
                .checked_add(year_of_era.checked_div(4)?)?
                .checked_sub(year_of_era.checked_div(100)?)?,
        )?; // 0..=365, from March 1st
        let shifted_month = day_of_year
            .checked_mul(5)?
            .checked_add(2)?
            .checked_div(153)?; // 0..=11
        let day = day_of_year
            .checked_sub(
                shifted_month
                    .checked_mul(153)?
                    .checked_add(2)?
                    .checked_div(5)?,
            )?
            .checked_add(1)?;
        let month = if shifted_month < 10 {
            shifted_month.checked_add(3)?
        } else {
            shifted_month.checked_sub(9)?
        };
        let year = era
            .checked_mul(400)?
            .checked_add(year_of_era)?
            .checked_add(i64::from(month <= 2))?;
        Self::new(year, u8::try_from(month).ok()?, u8::try_from(day).ok()?)
    }

    /// The day after, `None` after 9999-12-31.
    pub fn next_day(self) -> Option<Self> {
        if self.day < days_in_month(i64::from(self.year), self.month) {
            return Self::new(i64::from(self.year), self.month, self.day.saturating_add(1));
        }
        self.first_of_next_month()
    }

    /// The first day of the month after, `None` after December 9999.
    pub fn first_of_next_month(self) -> Option<Self> {
        if self.month < 12 {
            Self::new(i64::from(self.year), self.month.saturating_add(1), 1)
        } else {
            Self::new(i64::from(self.year).saturating_add(1), 1, 1)
        }
    }
}

/// Writes `value` in at least `width` digits (zero-padded).
pub(crate) fn push_digits(out: &mut String, value: u32, width: usize) {
    let digits = value.to_string();
    for _ in digits.len()..width {
        out.push('0');
    }
    out.push_str(&digits);
}

impl fmt::Display for LocalDate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut out = String::with_capacity(10);
        push_digits(&mut out, u32::from(self.year), 4);
        out.push('-');
        push_digits(&mut out, u32::from(self.month), 2);
        out.push('-');
        push_digits(&mut out, u32::from(self.day), 2);
        f.write_str(&out)
    }
}

/// The instant (milliseconds since 1970-01-01T00:00:00Z) of an RFC 3339 date-time, the form of
/// Extended JSON's relaxed `$date`: `YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)` (`T` and `Z` in
/// either case; digits of the fraction beyond milliseconds are dropped, as drivers do). `None`
/// for anything else, a leap second (`:60`) included.
pub(crate) fn rfc3339_millis(text: &str) -> Option<i64> {
    let bytes = text.as_bytes();
    let date = text.get(..10)?;
    let separator = *bytes.get(10)?;
    if separator != b'T' && separator != b't' {
        return None;
    }
    let year = i64::from(fixed_digits(date.get(..4)?, 4)?);
    if date.get(4..5)? != "-" || date.get(7..8)? != "-" {
        return None;
    }
    let month = u8::try_from(fixed_digits(date.get(5..7)?, 2)?).ok()?;
    let day = u8::try_from(fixed_digits(date.get(8..10)?, 2)?).ok()?;
    if day == 0 || day > days_in_month(year, month) {
        return None;
    }
    let time = text.get(11..19)?;
    if time.get(2..3)? != ":" || time.get(5..6)? != ":" {
        return None;
    }
    let hour = i64::from(fixed_digits(time.get(..2)?, 2)?);
    let minute = i64::from(fixed_digits(time.get(3..5)?, 2)?);
    let second = i64::from(fixed_digits(time.get(6..8)?, 2)?);
    if hour > 23 || minute > 59 || second > 59 {
        return None;
    }
    let mut rest = text.get(19..)?;
    let mut millis = 0i64;
    if let Some(fraction) = rest.strip_prefix('.') {
        let digits = fraction.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 {
            return None;
        }
        let kept = fraction.get(..digits.min(3))?;
        let scale = [100, 10, 1];
        for (digit, unit) in kept.bytes().zip(scale) {
            millis = millis.checked_add(i64::from(digit.wrapping_sub(b'0')).checked_mul(unit)?)?;
        }
        rest = fraction.get(digits..)?;
    }
    let offset_minutes: i64 = match rest {
        "Z" | "z" => 0,
        _ => {
            let negative = match rest.get(..1)? {
                "+" => false,
                "-" => true,
                _ => return None,
            };
            let offset = rest.get(1..)?;
            if offset.len() != 5 || offset.get(2..3)? != ":" {
                return None;
            }
            let hours = i64::from(fixed_digits(offset.get(..2)?, 2)?);
            let minutes = i64::from(fixed_digits(offset.get(3..)?, 2)?);
            if hours > 23 || minutes > 59 {
                return None;
            }
            let magnitude = hours.checked_mul(60)?.checked_add(minutes)?;
            if negative {
                magnitude.checked_neg()?
            } else {
                magnitude
            }
        }
    };
    let seconds_of_day = hour
        .checked_mul(3600)?
        .checked_add(minute.checked_mul(60)?)?
        .checked_add(second)?;
    days_from_civil(year, month, day)?
        .checked_mul(86_400)?
        .checked_add(seconds_of_day)?
        .checked_sub(offset_minutes.checked_mul(60)?)?
        .checked_mul(1000)?
        .checked_add(millis)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn date(text: &str) -> Result<String, DateProblem> {
        LocalDate::read(text).map(|d| d.to_string())
    }

    #[test]
    fn reads_and_writes_iso_dates() {
        assert_eq!(date("2026-05-17").as_deref(), Ok("2026-05-17"));
        assert_eq!(date("0001-01-01").as_deref(), Ok("0001-01-01"));
        assert_eq!(date("9999-12-31").as_deref(), Ok("9999-12-31"));
        assert_eq!(date("2024-02-29").as_deref(), Ok("2024-02-29"));
        assert_eq!(date("2000-02-29").as_deref(), Ok("2000-02-29"));
        assert_eq!(date("0000-12-31"), Err(DateProblem::Year(0)));
        assert_eq!(date("10000-01-01"), Err(DateProblem::Year(10000)));
        assert_eq!(date("-0001-12-31"), Err(DateProblem::Year(-1)));
        for bad in [
            "",
            "2026",
            "2026-5-17",
            "2026-05-7",
            "26-05-17",
            "2026-13-01",
            "2026-00-10",
            "2026-04-31",
            "2023-02-29",
            "1900-02-29",
            "2026-05-17T00",
            "+2026-05-17",
            "2026/05/17",
            "2026-05-00",
            " 2026-05-17",
            "２０２６-05-17",
            "--2026-05-17",
        ] {
            assert!(matches!(date(bad), Err(DateProblem::Shape(_))), "{bad:?}");
        }
    }

    #[test]
    fn steps_days_and_months() {
        let next = |text: &str| {
            LocalDate::read(text)
                .unwrap()
                .next_day()
                .map(|d| d.to_string())
        };
        assert_eq!(next("2026-12-31").as_deref(), Some("2027-01-01"));
        assert_eq!(next("2024-02-28").as_deref(), Some("2024-02-29"));
        assert_eq!(next("2023-02-28").as_deref(), Some("2023-03-01"));
        assert_eq!(next("9999-12-31"), None);
        let month = |text: &str| {
            LocalDate::read(text)
                .unwrap()
                .first_of_next_month()
                .map(|d| d.to_string())
        };
        assert_eq!(month("2026-01-31").as_deref(), Some("2026-02-01"));
        assert_eq!(month("9999-12-01"), None);
    }

    #[test]
    fn day_numbers_match_the_epoch() {
        assert_eq!(days_from_civil(1970, 1, 1), Some(0));
        assert_eq!(days_from_civil(2000, 3, 1), Some(11_017));
        assert_eq!(days_from_civil(1969, 12, 31), Some(-1));
        assert_eq!(days_from_civil(1, 1, 1), Some(-719_162));
        assert_eq!(days_from_civil(9999, 12, 31), Some(2_932_896));
    }

    #[test]
    fn day_numbers_turn_back_into_dates() {
        for (days, date) in [
            (0, "1970-01-01"),
            (-1, "1969-12-31"),
            (20_454, "2026-01-01"),
            (20_512, "2026-02-28"),
            (11_016, "2000-02-29"),
            (-719_162, "0001-01-01"),
            (2_932_896, "9999-12-31"),
        ] {
            let found = LocalDate::of_day_number(days).map(|d| d.to_string());
            assert_eq!(found.as_deref(), Some(date), "{days}");
            let back = LocalDate::parse("d", date).unwrap();
            assert_eq!(
                days_from_civil(back.year().into(), back.month(), back.day()),
                Some(days)
            );
        }
        for days in [-719_163, 2_932_897, i64::MIN, i64::MAX] {
            assert_eq!(LocalDate::of_day_number(days), None, "{days}");
        }
    }

    #[test]
    fn reads_rfc3339() {
        assert_eq!(rfc3339_millis("1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(
            rfc3339_millis("2026-01-01T00:00:00.000Z"),
            Some(1_767_225_600_000)
        );
        assert_eq!(
            rfc3339_millis("2026-01-01T01:00:00+01:00"),
            Some(1_767_225_600_000)
        );
        assert_eq!(rfc3339_millis("1969-12-31t23:59:59.9999z"), Some(-1));
        assert_eq!(
            rfc3339_millis("2025-12-31T19:00:00.5-05:00"),
            Some(1_767_225_600_500)
        );
        for bad in [
            "",
            "2026-01-01",
            "2026-01-01T00:00Z",
            "2026-01-01T24:00:00Z",
            "2026-01-01T00:00:60Z",
            "2026-02-30T00:00:00Z",
            "2026-01-01T00:00:00",
            "2026-01-01T00:00:00+0100",
            "2026-01-01T00:00:00.Z",
            "2026-01-01 00:00:00Z",
            "2026-01-01T00:00:00+24:00",
        ] {
            assert_eq!(rfc3339_millis(bad), None, "{bad:?}");
        }
    }
}
