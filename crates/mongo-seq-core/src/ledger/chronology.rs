//! Date order: in several countries a later number of a series must not carry an earlier issue
//! date than the number before it (France's and Spain's invoice series, for example). Given a
//! series' numbers with the dates their documents hold, [`chronology`] lists each number whose
//! date is earlier than its predecessor's — the number issued just before it in the series. Pure:
//! `check` reads the documents (the date field in [`read_members`]'s projection) and reports.
//!
//! [`read_members`]: crate::numbering::series::read_members

use serde::Serialize;
use serde_json::Value;

use crate::sequence::field::stored_value;
use crate::sequence::instant::read_date;

/// Most numbers out of date order a report lists (its count is complete).
pub const LISTED: usize = 20;

/// A number whose date is earlier than its predecessor's.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EarlierDate {
    pub number: i64,
    /// Milliseconds since the epoch.
    pub date_ms: i64,
    pub previous: i64,
    pub previous_date_ms: i64,
}

/// One series' date order.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ChronologyReport {
    /// Numbers with a date, compared with their predecessor's.
    pub dated: u64,
    /// Numbers whose document holds no date (missing, null, not a date): not compared.
    pub undated: u64,
    /// Numbers whose date is earlier than their predecessor's.
    pub earlier: u64,
    /// The first of them in issue order (at most [`LISTED`]).
    pub examples: Vec<EarlierDate>,
}

/// The date (milliseconds since the epoch) a document holds in `date_field`, if it holds one.
pub fn document_date(document: &Value, date_field: &str) -> Option<i64> {
    stored_value(document, date_field).and_then(|value| read_date(value).ok())
}

/// The date order of one series: `numbers` are `(number, date)` of its documents in any order;
/// issue order is the order of the numbers along `step` (ascending when it is positive).
pub fn chronology(numbers: &[(i64, Option<i64>)], step: i64) -> ChronologyReport {
    let mut dated: Vec<(i64, i64)> = numbers
        .iter()
        .filter_map(|&(number, date)| date.map(|date| (number, date)))
        .collect();
    dated.sort_unstable();
    if step < 0 {
        dated.reverse();
    }
    let mut report = ChronologyReport {
        dated: u64::try_from(dated.len()).unwrap_or(u64::MAX),
        undated: u64::try_from(numbers.len().saturating_sub(dated.len())).unwrap_or(u64::MAX),
        ..ChronologyReport::default()
    };
    for pair in dated.windows(2) {
        let [(previous, previous_date_ms), (number, date_ms)] = pair else {
            continue;
        };
        if date_ms < previous_date_ms {
            report.earlier = report.earlier.saturating_add(1);
            if report.examples.len() < LISTED {
                report.examples.push(EarlierDate {
                    number: *number,
                    date_ms: *date_ms,
                    previous: *previous,
                    previous_date_ms: *previous_date_ms,
                });
            }
        }
    }
    report
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_number_dated_before_its_predecessor_is_listed() {
        let report = chronology(
            &[
                (3, Some(30)),
                (1, Some(10)),
                (2, Some(40)),
                (4, Some(40)),
                (5, None),
            ],
            1,
        );
        assert_eq!((report.dated, report.undated, report.earlier), (4, 1, 1));
        assert_eq!(
            report.examples,
            [EarlierDate {
                number: 3,
                date_ms: 30,
                previous: 2,
                previous_date_ms: 40
            }]
        );
    }

    #[test]
    fn issue_order_follows_the_step() {
        // Counting down, 9 is issued before 8.
        assert_eq!(chronology(&[(9, Some(10)), (8, Some(20))], -1).earlier, 0);
        assert_eq!(chronology(&[(9, Some(20)), (8, Some(10))], -1).earlier, 1);
    }

    #[test]
    fn the_examples_are_capped_the_count_is_not() {
        let numbers: Vec<(i64, Option<i64>)> = (0..100).map(|n| (n, Some(-n))).collect();
        let report = chronology(&numbers, 1);
        assert_eq!((report.earlier, report.examples.len()), (99, LISTED));
    }

    #[test]
    fn a_documents_date_is_read_in_every_form_and_a_non_date_is_none() {
        let document = json!({"at": {"$date": {"$numberLong": "1767225600000"}}, "iso": {"$date": "2026-01-01T00:00:00Z"}, "s": "2026"});
        assert_eq!(document_date(&document, "at"), Some(1_767_225_600_000));
        assert_eq!(document_date(&document, "iso"), Some(1_767_225_600_000));
        assert_eq!(document_date(&document, "s"), None);
        assert_eq!(document_date(&document, "missing"), None);
    }
}
