//! The counters of dated documents: a plan that numbers documents of a sequence that resets
//! (see [`crate::sequence::period`]) asks the host for the local dates of their instants with
//! one `localDates` command, and reads each answer into the document's period.
//!
//! ```text
//! instants (a dateField's, an event's commit time, the caller's "now"), each checked
//!   ─▶ localDates {timeZone, instants} ─▶ localDates {dates: ["2026-05-17", …]}
//!   ─▶ per instant: its period (the (fiscal) year, month or day), or INVALID_DATE
//!   ─▶ counter id = the scope's id + "/" + period
//! ```

use crate::error::SeqError;
use crate::protocol::command::Command;
use crate::protocol::reply::{unexpected, Reply};
use crate::sequence::calendar::{DateProblem, LocalDate};
use crate::sequence::options::SequenceSpec;
use crate::sequence::period::Period;

/// The `localDates` command for `instants` (checked by the caller) in the sequence's zone.
pub(crate) fn local_dates(spec: &SequenceSpec, instants: Vec<i64>) -> Command {
    Command::LocalDates {
        time_zone: spec.time_zone().to_owned(),
        instants,
    }
}

/// The period of each of the `asked` instants, from the host's `localDates` reply, in order. A
/// reply of another kind or length, or a date that is not `YYYY-MM-DD`, ends the plan
/// (`UNEXPECTED_REPLY`); a date whose period has no year 1..=9999 is that instant's
/// `INVALID_DATE`, naming `argument` and, from `index_of`, the document.
pub(crate) fn periods_of(
    spec: &SequenceSpec,
    reply: Reply,
    asked: usize,
    argument: &str,
    index_of: impl Fn(usize) -> Option<u64>,
) -> Result<Vec<Result<Period, SeqError>>, SeqError> {
    let dates = match reply {
        Reply::LocalDates { dates } => dates,
        other => return Err(unexpected(&other, "localDates")),
    };
    if dates.len() != asked {
        return Err(SeqError::unexpected_reply(format!(
            "`localDates` of {asked} instant(s) answered with {} date(s)",
            dates.len()
        )));
    }
    let mut periods = Vec::with_capacity(asked);
    for (position, text) in dates.iter().enumerate() {
        let index = index_of(position);
        let date = match LocalDate::read(text) {
            Ok(date) => date,
            Err(problem @ DateProblem::Year(_)) => {
                periods.push(Err(SeqError::invalid_date(
                    argument,
                    index,
                    problem.reason(),
                )));
                continue;
            }
            Err(DateProblem::Shape(reason)) => {
                return Err(SeqError::unexpected_reply(format!(
                    "`localDates` answered {}, which {reason}",
                    crate::ejson::quoted(&crate::ejson::truncate(text))
                )))
            }
        };
        let period = spec
            .period_of(date, argument)
            .map_err(|error| with_index(error, index))
            .and_then(|period| {
                period.ok_or_else(|| {
                    SeqError::unexpected_reply("a sequence that never resets asked for dates")
                })
            });
        periods.push(period);
    }
    Ok(periods)
}

/// An `INVALID_DATE` about document `index`.
fn with_index(error: SeqError, index: Option<u64>) -> SeqError {
    match error {
        SeqError::InvalidDate {
            argument, reason, ..
        } => SeqError::InvalidDate {
            argument,
            index,
            reason,
        },
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_periods_and_names_the_document() {
        let spec = SequenceSpec::parse(
            &json!({"name": "inv", "reset": "yearly", "yearStart": 4, "timeZone": "Europe/London"}),
        )
        .unwrap();
        assert_eq!(
            serde_json::to_value(local_dates(&spec, vec![-1, 5])).unwrap(),
            json!({"op": "localDates", "timeZone": "Europe/London", "instants": [-1, 5]})
        );
        let reply = |dates: &[&str]| Reply::LocalDates {
            dates: dates.iter().map(|d| (*d).to_owned()).collect(),
        };
        let periods = periods_of(
            &spec,
            reply(&["2026-03-31", "2026-04-01", "9999-04-01"]),
            3,
            "dateField",
            |i| Some(i as u64 + 10),
        )
        .unwrap();
        assert_eq!(periods[0].as_ref().map(|p| p.text()), Ok("2026".to_owned()));
        assert_eq!(periods[1].as_ref().map(|p| p.text()), Ok("2027".to_owned()));
        let error = periods[2].as_ref().unwrap_err();
        assert_eq!(
            (error.code(), error.details()),
            (
                "INVALID_DATE",
                Some(json!({"argument": "dateField", "index": 12}))
            )
        );
        let code = |reply: Reply, asked| {
            periods_of(&spec, reply, asked, "date", |_| None)
                .err()
                .map(|e| e.code())
        };
        assert_eq!(code(reply(&["2026-01-01"]), 2), Some("UNEXPECTED_REPLY"));
        assert_eq!(code(reply(&["2026-1-01"]), 1), Some("UNEXPECTED_REPLY"));
        assert_eq!(code(Reply::None, 1), Some("UNEXPECTED_REPLY"));
        let out = periods_of(&spec, reply(&["10000-01-01"]), 1, "date", |_| None).unwrap();
        assert_eq!(out[0].as_ref().unwrap_err().code(), "INVALID_DATE");
    }
}
