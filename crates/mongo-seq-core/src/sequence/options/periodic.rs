//! The options of a sequence that resets: parsing `reset`, `timeZone` and `yearStart`, and
//! a spec's periods (which period a date or a counter id is in, where one starts).

use serde_json::{Map, Value};

use super::{integer, invalid, SequenceSpec};
use crate::ejson;
use crate::error::SeqError;
use crate::sequence::calendar::LocalDate;
use crate::sequence::period::{self, Period, Reset};
use crate::sequence::time_zone::{time_zone_problem, UTC};

impl SequenceSpec {
    /// `Ok` when `period` is one of this sequence's: present exactly when it resets, of its
    /// kind; else `INVALID_ARGUMENT` naming `period`.
    pub fn check_period(&self, period: Option<&Period>) -> Result<(), SeqError> {
        match period {
            Some(period) if period.reset() == self.reset => Ok(()),
            None if !self.reset.is_periodic() => Ok(()),
            None => Err(SeqError::invalid_argument(
                "period",
                format!(
                    "sequence `{}` resets {}: its counters and numbers belong to a period (give a date, or a period such as {})",
                    self.name,
                    self.reset.name(),
                    ejson::quoted(self.reset.example_period())
                ),
            )),
            Some(period) if !self.reset.is_periodic() => Err(SeqError::invalid_argument(
                "period",
                format!(
                    "sequence `{}` never resets: it has no period, got {}",
                    self.name,
                    ejson::quoted(&period.text())
                ),
            )),
            Some(period) => Err(SeqError::invalid_argument(
                "period",
                format!(
                    "{} is no period of sequence `{}`, which resets {}",
                    ejson::quoted(&period.text()),
                    self.name,
                    self.reset.name()
                ),
            )),
        }
    }

    /// The period of a local date (`None` when the sequence never resets); see
    /// [`crate::sequence::period`]. A fiscal year beyond 9999 is `INVALID_DATE` naming
    /// `argument`.
    pub fn period_of(&self, date: LocalDate, argument: &str) -> Result<Option<Period>, SeqError> {
        period::period_of(self.reset, self.year_start(), date, argument)
    }

    /// The first local date of `period` (`None`: before 0001-01-01).
    pub fn period_start(&self, period: &Period) -> Result<Option<LocalDate>, SeqError> {
        self.check_period(Some(period))?;
        Ok(period::first_date(*period, self.year_start()))
    }

    /// The first local date of the period after `period` (`None`: after 9999-12-31): until
    /// the instant that date begins in the sequence's zone, every number is in `period`.
    pub fn next_period_start(&self, period: &Period) -> Result<Option<LocalDate>, SeqError> {
        self.check_period(Some(period))?;
        Ok(period::next_start(*period, self.year_start()))
    }

    /// The period a counter id of this sequence ends with (`None` when it never resets, or
    /// the id has none).
    pub fn period_of_counter_id(&self, counter_id: &str) -> Option<Period> {
        if !self.reset.is_periodic() {
            return None;
        }
        let (_, last) = counter_id.rsplit_once('/')?;
        Period::parse(last).filter(|period| period.reset() == self.reset)
    }
}

pub(super) fn parse_reset(raw: Option<&Value>) -> Result<Reset, SeqError> {
    match raw {
        None | Some(Value::Null) => Ok(Reset::Never),
        Some(Value::String(text)) if Reset::parse(text).is_some() => {
            Ok(Reset::parse(text).unwrap_or_default())
        }
        Some(other) => Err(invalid(
            "reset",
            format!(
                "must be one of {}, got {}",
                ejson::quoted_list(&Reset::NAMES),
                ejson::describe(other)
            ),
        )),
    }
}

/// The zone of a periodic sequence (`UTC` by default); refused for one that never resets.
pub(super) fn parse_time_zone(
    raw: Option<&Value>,
    reset: Reset,
) -> Result<Option<String>, SeqError> {
    let zone = match raw {
        None | Some(Value::Null) => None,
        Some(Value::String(zone)) => {
            if let Some(reason) = time_zone_problem(zone) {
                return Err(invalid(
                    "timeZone",
                    format!("{reason}, got {}", ejson::quoted(&ejson::truncate(zone))),
                ));
            }
            Some(zone.clone())
        }
        Some(other) => {
            return Err(invalid(
                "timeZone",
                format!(
                    "must be a string (an IANA time-zone name), got {}",
                    ejson::describe(other)
                ),
            ))
        }
    };
    match (zone, reset.is_periodic()) {
        (zone, true) => Ok(Some(zone.unwrap_or_else(|| UTC.to_owned()))),
        (None, false) => Ok(None),
        (Some(_), false) => Err(invalid(
            "timeZone",
            "needs `reset` yearly, monthly or daily: a sequence that never resets has no period to place in a time zone",
        )),
    }
}

/// The month a yearly sequence's year starts in (1 by default); refused for other sequences.
pub(super) fn parse_year_start(
    map: &Map<String, Value>,
    reset: Reset,
) -> Result<Option<u8>, SeqError> {
    let month = match integer(map, "yearStart")? {
        None => None,
        Some(month) => Some(
            u8::try_from(month)
                .ok()
                .filter(|m| (1..=12).contains(m))
                .ok_or_else(|| {
                    invalid(
                        "yearStart",
                        format!(
                            "must be an integer from 1 (January) to 12 (December), got {month}"
                        ),
                    )
                })?,
        ),
    };
    match (month, reset) {
        (month, Reset::Yearly) => Ok(Some(month.unwrap_or(1))),
        (None, _) => Ok(None),
        (Some(_), Reset::Never) => Err(invalid(
            "yearStart",
            "needs `reset` yearly: a sequence that never resets has no year",
        )),
        (Some(_), _) => Err(invalid(
            "yearStart",
            format!(
                "needs `reset` yearly: the periods of a sequence that resets {} are not years",
                reset.name()
            ),
        )),
    }
}
