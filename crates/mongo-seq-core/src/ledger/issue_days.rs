//! When a series' numbers were issued, for an auditor's report: the first and the last number
//! with their dates, and how many numbers each day (UTC) saw. A document's issue date is its
//! date field (a trigger's `date_field`), else its ObjectId `_id`'s creation time — the same
//! rule that places an undated document in a period. Pure: `report` reads the documents with
//! [`read_members`]' projection (the `_id` and the date field are in it) and hands the pairs
//! over.
//!
//! [`read_members`]: crate::numbering::series::read_members

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value;

use crate::ledger::chronology::document_date;
use crate::sequence::calendar::LocalDate;
use crate::sequence::instant::object_id_instant;

const DAY_MS: i64 = 86_400_000;

/// The issue date (milliseconds since the epoch) of `document`: `date_field`'s date when it holds
/// one, else its ObjectId `_id`'s creation time; `None` when neither is there.
pub fn issue_date(document: &Value, date_field: Option<&str>) -> Option<i64> {
    date_field
        .and_then(|field| document_date(document, field))
        .or_else(|| document.get("_id").and_then(object_id_instant))
}

/// A number and its document's issue date (none: undated).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DatedNumber {
    pub number: i64,
    pub date_ms: Option<i64>,
}

/// How many numbers were issued on one day (UTC).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DayCount {
    /// `YYYY-MM-DD`.
    pub day: String,
    pub count: u64,
}

/// When one series' numbers were issued.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct IssueDays {
    /// The first number held, in issue order (along the step), and its date.
    pub first: Option<DatedNumber>,
    /// The last number held, in issue order.
    pub last: Option<DatedNumber>,
    /// Numbers per day, in day order; days without a number are left out.
    pub days: Vec<DayCount>,
    /// Numbers without an issue date, or dated outside the years 1..=9999 (in no day).
    pub undated: u64,
}

/// When a series' numbers were issued: `numbers` are `(number, issue date)` of its documents in
/// any order (a number held twice counts twice in its day); issue order is the order of the
/// numbers along `step`.
pub fn issue_days(numbers: &[(i64, Option<i64>)], step: i64) -> IssueDays {
    let dated = |&(number, date_ms): &(i64, Option<i64>)| DatedNumber { number, date_ms };
    let (smallest, largest) = (
        numbers.iter().min_by_key(|(n, _)| *n).map(dated),
        numbers.iter().max_by_key(|(n, _)| *n).map(dated),
    );
    let (first, last) = if step < 0 {
        (largest, smallest)
    } else {
        (smallest, largest)
    };
    let mut per_day: BTreeMap<i64, u64> = BTreeMap::new();
    let mut undated = 0u64;
    for &(_, date_ms) in numbers {
        let day = date_ms
            .map(|ms| ms.div_euclid(DAY_MS))
            .filter(|day| LocalDate::of_day_number(*day).is_some());
        match day {
            Some(day) => {
                let count = per_day.entry(day).or_default();
                *count = count.saturating_add(1);
            }
            None => undated = undated.saturating_add(1),
        }
    }
    let days = per_day
        .into_iter()
        .filter_map(|(day, count)| {
            LocalDate::of_day_number(day).map(|date| DayCount {
                day: date.to_string(),
                count,
            })
        })
        .collect();
    IssueDays {
        first,
        last,
        days,
        undated,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    // 2026-03-01T00:00:00Z.
    const MARCH_1: i64 = 1_772_323_200_000;

    #[test]
    fn the_date_field_wins_over_the_object_id_and_neither_is_undated() {
        let document = json!({
            "_id": {"$oid": "69a3818000000000000000aa"},
            "at": {"$date": {"$numberLong": MARCH_1.to_string()}},
        });
        assert_eq!(issue_date(&document, Some("at")), Some(MARCH_1));
        // 0x69a38180 seconds: 2026-03-01T00:00:00Z.
        assert_eq!(issue_date(&document, None), Some(MARCH_1));
        assert_eq!(issue_date(&document, Some("missing")), Some(MARCH_1));
        assert_eq!(issue_date(&json!({"_id": 7}), None), None);
        assert_eq!(
            issue_date(&json!({"_id": 7, "at": "2026"}), Some("at")),
            None
        );
    }

    #[test]
    fn numbers_are_counted_per_utc_day_and_the_ends_follow_the_step() {
        let numbers = [
            (3, Some(MARCH_1 + DAY_MS + 5)),
            (1, Some(MARCH_1)),
            (2, Some(MARCH_1 + DAY_MS - 1)),
            (4, None),
            (5, Some(MARCH_1 + 3 * DAY_MS)),
            (6, Some(i64::MAX)),
        ];
        let days = issue_days(&numbers, 1);
        assert_eq!(
            days.first,
            Some(DatedNumber {
                number: 1,
                date_ms: Some(MARCH_1)
            })
        );
        assert_eq!(days.last.map(|d| d.number), Some(6));
        let counted: Vec<(&str, u64)> = days
            .days
            .iter()
            .map(|d| (d.day.as_str(), d.count))
            .collect();
        assert_eq!(
            counted,
            [("2026-03-01", 2), ("2026-03-02", 1), ("2026-03-04", 1)]
        );
        assert_eq!(days.undated, 2);
        // Counting down, the largest number is the first issued.
        let down = issue_days(&numbers, -1);
        assert_eq!(
            (down.first.map(|d| d.number), down.last.map(|d| d.number)),
            (Some(6), Some(1))
        );
        assert_eq!(issue_days(&[], 1), IssueDays::default());
    }
}
