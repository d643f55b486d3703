//! Audit of the numbers found in a collection (`mongo-seq check`). Pure function.
//!
//! The expected numbers form the grid `start, start + step, …`. The report counts
//! duplicates, non-integers, numbers off the grid (wrong stride or before `start`), gaps on
//! the grid between `start` and the furthest number, and whether the counter has reached the
//! furthest number (if not, the next reservation would collide). Numbers reserved by a block
//! but never used sit *after* the furthest number and are not gaps; unused numbers in the
//! middle of the grid (lost blocks, failed inserts) are. "Largest" means furthest in the
//! counting direction (the smallest value when counting down). Examples are listed in
//! counting order, at most [`MAX_EXAMPLES`] each.

use std::collections::BinaryHeap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::ejson;
use crate::error::SeqError;

/// Most duplicate and gap examples listed in a report.
pub const MAX_EXAMPLES: usize = 10;

/// A number found more than once.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Duplicate {
    pub value: i64,
    pub occurrences: u64,
}

/// A run of missing grid numbers `first, first + step, …, last`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Gap {
    pub first: i64,
    pub last: i64,
    pub count: u64,
}

/// Result of [`audit`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AuditReport {
    /// Values examined.
    pub total: u64,
    /// Values that are not integers (strings, fractions, …).
    pub invalid: u64,
    /// Integers not on the grid (counted per occurrence).
    pub off_grid: u64,
    /// Distinct integers.
    pub distinct: u64,
    /// Distinct integers that occur more than once.
    pub duplicate_values: u64,
    pub duplicates: Vec<Duplicate>,
    /// Grid numbers missing between `start` and the furthest on-grid number.
    pub gap_count: u64,
    pub gaps: Vec<Gap>,
    /// Furthest integer in the counting direction.
    pub largest: Option<i64>,
    pub counter: Option<i64>,
    /// The counter has issued `largest` already (true when there are no numbers).
    pub counter_ok: bool,
}

/// Audits `numbers` (Extended JSON values, any order, duplicates allowed).
pub fn audit(
    numbers: &[Value],
    start: i64,
    step: i64,
    counter: Option<i64>,
) -> Result<AuditReport, SeqError> {
    if step == 0 {
        return Err(SeqError::InvalidStep { value: step });
    }
    // Sorted as a binary heap: a heap sort is a fraction of the size of the slice sorts in the
    // Wasm module, and still O(n log n).
    let mut ints: Vec<i64> = numbers
        .iter()
        .filter_map(|v| ejson::read_i64(v).ok())
        .collect::<BinaryHeap<i64>>()
        .into_sorted_vec();
    let invalid = u64::try_from(numbers.len().saturating_sub(ints.len())).unwrap_or(u64::MAX);
    if step < 0 {
        ints.reverse();
    }

    let mut report = AuditReport {
        total: u64::try_from(numbers.len()).unwrap_or(u64::MAX),
        invalid,
        off_grid: 0,
        distinct: 0,
        duplicate_values: 0,
        duplicates: Vec::new(),
        gap_count: 0,
        gaps: Vec::new(),
        largest: ints.last().copied(),
        counter,
        counter_ok: false,
    };

    let (start_wide, step_wide) = (i128::from(start), i128::from(step));
    let mut expected: i128 = 0; // next grid index we hope to see
    for run in ints.chunk_by(|a, b| a == b) {
        let Some(&value) = run.first() else { continue };
        let occurrences = u64::try_from(run.len()).unwrap_or(u64::MAX);
        report.distinct = report.distinct.saturating_add(1);
        if occurrences > 1 {
            report.duplicate_values = report.duplicate_values.saturating_add(1);
            if report.duplicates.len() < MAX_EXAMPLES {
                report.duplicates.push(Duplicate { value, occurrences });
            }
        }
        let distance = i128::from(value).saturating_sub(start_wide);
        let index = distance.checked_div(step_wide).unwrap_or(-1);
        if distance.checked_rem(step_wide) != Some(0) || index < 0 {
            report.off_grid = report.off_grid.saturating_add(occurrences);
            continue;
        }
        if index > expected {
            let missing = index.saturating_sub(expected);
            report.gap_count = report
                .gap_count
                .saturating_add(u64::try_from(missing).unwrap_or(u64::MAX));
            let at = |i: i128| {
                i64::try_from(start_wide.saturating_add(i.saturating_mul(step_wide))).ok()
            };
            if let (true, Some(first), Some(last)) = (
                report.gaps.len() < MAX_EXAMPLES,
                at(expected),
                at(index.saturating_sub(1)),
            ) {
                report.gaps.push(Gap {
                    first,
                    last,
                    count: u64::try_from(missing).unwrap_or(u64::MAX),
                });
            }
        }
        expected = index.saturating_add(1);
    }

    report.counter_ok = match (counter, report.largest) {
        (_, None) => true,
        (None, Some(_)) => false,
        (Some(counter), Some(largest)) => {
            if step > 0 {
                counter >= largest
            } else {
                counter <= largest
            }
        }
    };
    Ok(report)
}
