//! Where every number of one counter (one scope and period) went: [`account`]. Pure function.
//!
//! The series is the grid `start, start + step, …` up to the counter (or to the furthest held
//! number, when a counter is behind or missing). Each of its numbers is exactly one of: held by
//! one document, voided (with the ledger's reason), deleted (the ledger recorded its document's
//! deletion), an unexplained gap, or a duplicate (held by two documents, or held and also in
//! the ledger). The walk goes from one held number or ledger entry to the next, so its cost is
//! that of the numbers found and the (sparse) entries, never the length of the series: a gap of
//! ten million numbers is one range. Reports list ranges ([`Run`]), at most [`MAX_RUNS`].
//!
//! Whether a report fails (`mongo-seq check`'s exit status) is decided here too
//! ([`Account::problems`], [`Unnumbered::problems`]): unexplained gaps (when the series
//! promises none: gapless, or `check --gapless`), duplicates, a counter behind its numbers,
//! numbers off the grid, and documents without a number that are not dead letters. Voids,
//! deletions and dead letters waiting are reported, never failures.

use std::collections::BinaryHeap;

use serde::Serialize;
use serde_json::Value;

use crate::ejson;
use crate::error::SeqError;
use crate::ledger::entry::{LedgerKind, RecordedEntry};

/// Most ranges (of each list) a report holds; the counts are always complete.
pub const MAX_RUNS: usize = 100;

/// What one number of the series is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Class {
    Held,
    Voided,
    Deleted,
    Gap,
    Duplicate,
}

/// Consecutive numbers of one class: `first, first + step, …, last` (`count` of them).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Run {
    pub class: Class,
    pub first: i64,
    pub last: i64,
    pub count: u64,
}

/// Voided numbers sharing one reason.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Reason {
    pub reason: String,
    pub count: u64,
}

/// A number accounted for more than once: documents holding it, and its ledger entry's kind.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DuplicateNumber {
    pub number: i64,
    pub held: u64,
    pub recorded: Vec<LedgerKind>,
}

/// Where the numbers of one counter went; see the module docs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Account {
    pub start: i64,
    pub step: i64,
    pub counter: Option<i64>,
    /// The last number of the series accounted for (`None`: nothing issued or held).
    pub end: Option<i64>,
    /// Numbers of the series, `start` to `end`.
    pub numbers: u64,
    pub held: u64,
    pub voided: u64,
    pub deleted: u64,
    /// Unexplained gaps: numbers neither held nor in the ledger.
    pub gaps: u64,
    /// Numbers held twice, or held and in the ledger.
    pub duplicates: u64,
    /// Values held that are not integers (documents without a usable number).
    pub invalid: u64,
    /// Integers held off the grid, or before `start` (per document).
    pub off_grid: u64,
    /// Distinct held numbers past the counter (the next reservations would collide).
    pub beyond_counter: u64,
    /// Ledger entries outside the series (off the grid, before `start`, past `end`).
    pub outside: u64,
    /// Ledger entries that cannot be read (they explain nothing).
    pub unreadable: u64,
    /// Voids by reason (alphabetical).
    pub reasons: Vec<Reason>,
    /// The series as ranges of one class each, in counting order (at most [`MAX_RUNS`]).
    pub runs: Vec<Run>,
    /// More ranges than [`MAX_RUNS`].
    pub runs_truncated: bool,
    /// The unexplained gaps, as ranges (at most [`MAX_RUNS`]).
    pub gap_runs: Vec<Run>,
    /// The duplicates (at most [`MAX_RUNS`]).
    pub duplicate_numbers: Vec<DuplicateNumber>,
}

/// What was found at a grid index: a document's number, or a ledger entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Found {
    Held,
    Recorded(LedgerKind),
}

/// Counts one void's reason in `reasons`, kept in alphabetical order.
fn count_reason(reasons: &mut Vec<Reason>, reason: String) {
    match reasons.binary_search_by(|r| r.reason.as_str().cmp(reason.as_str())) {
        Ok(at) => {
            if let Some(r) = reasons.get_mut(at) {
                r.count = r.count.saturating_add(1);
            }
        }
        Err(at) => reasons.insert(at, Reason { reason, count: 1 }),
    }
}

/// Accounts for every number of a counter's series: `held` (the numbers documents hold,
/// Extended JSON, any order), `ledger` (its ledger entries as stored), `counter` (its value;
/// `None` when there is no counter document).
pub fn account(
    start: i64,
    step: i64,
    counter: Option<i64>,
    held: &[Value],
    ledger: &[Value],
) -> Result<Account, SeqError> {
    if step == 0 {
        return Err(SeqError::InvalidStep { value: step });
    }
    let (start_wide, step_wide) = (i128::from(start), i128::from(step));
    let index_of = |value: i64| -> Option<i128> {
        let distance = i128::from(value).saturating_sub(start_wide);
        let index = distance.checked_div(step_wide)?;
        (distance.checked_rem(step_wide) == Some(0) && index >= 0).then_some(index)
    };
    let number_at =
        |index: i128| i64::try_from(start_wide.saturating_add(index.saturating_mul(step_wide)));

    let mut report = Account {
        start,
        step,
        counter,
        end: None,
        numbers: 0,
        held: 0,
        voided: 0,
        deleted: 0,
        gaps: 0,
        duplicates: 0,
        invalid: 0,
        off_grid: 0,
        beyond_counter: 0,
        outside: 0,
        unreadable: 0,
        reasons: Vec::new(),
        runs: Vec::new(),
        runs_truncated: false,
        gap_runs: Vec::new(),
        duplicate_numbers: Vec::new(),
    };
    // What is at each grid index, as (index, what) pairs: one per held number or ledger entry,
    // never one per number of the series. Sorted as a binary heap, like `audit` (smaller in the
    // Wasm module than a slice sort or a map).
    let mut found: Vec<(i128, Found)> = Vec::new();
    let mut furthest_held: Option<i128> = None;
    for value in held {
        match ejson::read_i64(value).ok().map(|v| (v, index_of(v))) {
            None => report.invalid = report.invalid.saturating_add(1),
            Some((_, None)) => report.off_grid = report.off_grid.saturating_add(1),
            Some((_, Some(index))) => {
                furthest_held = furthest_held.max(Some(index));
                found.push((index, Found::Held));
            }
        }
    }
    // The counter's own index: numbers up to it were issued (`start - step`: none yet).
    let counter_index = counter.map(|c| {
        let distance = i128::from(c).saturating_sub(start_wide);
        distance.checked_div(step_wide).unwrap_or(-1)
    });
    let end_index = match (counter_index, furthest_held) {
        (Some(c), Some(h)) => Some(c.max(h)),
        (c, h) => c.or(h),
    }
    .filter(|end| *end >= 0);
    for document in ledger {
        let Ok(entry) = RecordedEntry::read(document) else {
            report.unreadable = report.unreadable.saturating_add(1);
            continue;
        };
        match index_of(entry.number).filter(|i| end_index.is_some_and(|end| *i <= end)) {
            None => report.outside = report.outside.saturating_add(1),
            Some(index) => {
                found.push((index, Found::Recorded(entry.kind)));
                if entry.kind == LedgerKind::Void {
                    count_reason(&mut report.reasons, entry.reason);
                }
            }
        }
    }
    let found = found
        .into_iter()
        .collect::<BinaryHeap<_>>()
        .into_sorted_vec();
    report.end = end_index.and_then(|end| number_at(end).ok());
    let Some(end_index) = end_index else {
        return Ok(report);
    };
    report.numbers = u64::try_from(end_index.saturating_add(1)).unwrap_or(u64::MAX);

    let mut runs = Runs::default();
    let mut next: i128 = 0; // the first index not accounted for yet
    for group in found.chunk_by(|a, b| a.0 == b.0) {
        let Some(&(index, _)) = group.first() else {
            continue;
        };
        if index > next {
            runs.push(Class::Gap, next, index.saturating_sub(1));
        }
        let held = u64::try_from(group.iter().filter(|(_, f)| *f == Found::Held).count())
            .unwrap_or(u64::MAX);
        let recorded: Vec<LedgerKind> = group
            .iter()
            .filter_map(|(_, f)| match f {
                Found::Recorded(kind) => Some(*kind),
                Found::Held => None,
            })
            .collect();
        if held > 0 && counter_index.map_or(true, |c| index > c) {
            report.beyond_counter = report.beyond_counter.saturating_add(1);
        }
        let class = match (held, recorded.as_slice()) {
            (1, []) => Class::Held,
            (0, [LedgerKind::Void]) => Class::Voided,
            (0, [LedgerKind::Deleted]) => Class::Deleted,
            _ => Class::Duplicate,
        };
        if class == Class::Duplicate && report.duplicate_numbers.len() < MAX_RUNS {
            if let Ok(number) = number_at(index) {
                report.duplicate_numbers.push(DuplicateNumber {
                    number,
                    held,
                    recorded,
                });
            }
        }
        runs.push(class, index, index);
        next = index.saturating_add(1);
    }
    if next <= end_index {
        runs.push(Class::Gap, next, end_index);
    }

    for run in &runs.all {
        let count =
            u64::try_from(run.last.saturating_sub(run.first).saturating_add(1)).unwrap_or(u64::MAX);
        let total = match run.class {
            Class::Held => &mut report.held,
            Class::Voided => &mut report.voided,
            Class::Deleted => &mut report.deleted,
            Class::Gap => &mut report.gaps,
            Class::Duplicate => &mut report.duplicates,
        };
        *total = total.saturating_add(count);
        let (Ok(first), Ok(last)) = (number_at(run.first), number_at(run.last)) else {
            continue;
        };
        let run = Run {
            class: run.class,
            first,
            last,
            count,
        };
        if run.class == Class::Gap && report.gap_runs.len() < MAX_RUNS {
            report.gap_runs.push(run.clone());
        }
        if report.runs.len() < MAX_RUNS {
            report.runs.push(run);
        } else {
            report.runs_truncated = true;
        }
    }
    Ok(report)
}

/// Ranges of grid indices, adjacent ones of one class merged.
#[derive(Default)]
struct Runs {
    all: Vec<IndexRun>,
}

struct IndexRun {
    class: Class,
    first: i128,
    last: i128,
}

impl Runs {
    fn push(&mut self, class: Class, first: i128, last: i128) {
        if let Some(previous) = self.all.last_mut() {
            if previous.class == class && previous.last.saturating_add(1) == first {
                previous.last = last;
                return;
            }
        }
        self.all.push(IndexRun { class, first, last });
    }
}

impl Account {
    /// What makes this counter's account fail (`check`'s exit status 1), as phrases; empty
    /// when it does not. `gapless`: unexplained gaps fail too (a gapless series, or `--gapless`).
    pub fn problems(&self, gapless: bool) -> Vec<String> {
        let mut problems = Vec::new();
        let mut count = |n: u64, what: &str| {
            if n > 0 {
                problems.push(format!("{n} {what}"));
            }
        };
        count(
            self.duplicates,
            "numbers held twice (by two documents, or held and voided or recorded deleted)",
        );
        if gapless {
            count(self.gaps, "numbers unaccounted for (unexplained gaps)");
        }
        count(self.off_grid, "numbers off the step grid");
        count(
            self.beyond_counter,
            "numbers past the counter (the next numbers would collide)",
        );
        problems
    }
}

/// The documents without a usable number (none, or not an integer) against the trigger's dead
/// letters: each one either waits as a dead letter (a record says why) or is unexplained.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Unnumbered {
    /// Unnumbered documents a dead letter explains (waiting to be numbered).
    pub dead_letters: u64,
    /// Unnumbered documents no dead letter explains.
    pub unexplained: u64,
    /// Dead letters whose document is numbered or gone (resolved at the next retry).
    pub stale_dead_letters: u64,
    /// Some unexplained documents' `_id`s (at most [`MAX_RUNS`]).
    pub examples: Vec<Value>,
}

/// Matches unnumbered documents' `_id`s with the dead letters' (Extended JSON, as read).
pub fn unnumbered(documents: &[Value], dead_letters: &[Value]) -> Unnumbered {
    let mut waiting: Vec<String> = dead_letters
        .iter()
        .map(Value::to_string)
        .collect::<BinaryHeap<_>>()
        .into_sorted_vec();
    waiting.dedup();
    let mut report = Unnumbered {
        dead_letters: 0,
        unexplained: 0,
        stale_dead_letters: 0,
        examples: Vec::new(),
    };
    let mut matched = vec![false; waiting.len()];
    for id in documents {
        match waiting.binary_search(&id.to_string()) {
            Ok(at) => {
                if let Some(seen) = matched.get_mut(at).filter(|seen| !**seen) {
                    *seen = true;
                    report.dead_letters = report.dead_letters.saturating_add(1);
                }
            }
            Err(_) => {
                report.unexplained = report.unexplained.saturating_add(1);
                if report.examples.len() < MAX_RUNS {
                    report.examples.push(id.clone());
                }
            }
        }
    }
    let unmatched = matched.iter().filter(|seen| !**seen).count();
    report.stale_dead_letters = u64::try_from(unmatched).unwrap_or(u64::MAX);
    report
}

impl Unnumbered {
    /// What fails: documents left without a number silently (`what` names them in the phrase).
    pub fn problems(&self, what: &str) -> Vec<String> {
        match self.unexplained {
            0 => Vec::new(),
            n => vec![format!("{n} {what} and no dead letter saying why")],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn void(n: i64, reason: &str) -> Value {
        json!({"_id": {"counter": "c", "number": n}, "kind": "void", "reason": reason})
    }

    #[test]
    fn a_series_of_ten_million_costs_its_entries_not_its_length() {
        let held: Vec<Value> = vec![json!(1), json!(10_000_000)];
        let ledger = vec![void(5_000_000, "lost")];
        let report = account(1, 1, Some(10_000_000), &held, &ledger).unwrap();
        assert_eq!(
            (report.held, report.voided, report.gaps, report.numbers),
            (2, 1, 9_999_997, 10_000_000)
        );
        assert_eq!(report.runs.len(), 5);
        assert_eq!(report.gap_runs[0].count, 4_999_998);
    }

    #[test]
    fn counts_down_and_at_the_edges_of_int64() {
        let held = vec![json!(10), json!(8)];
        let report = account(10, -1, Some(7), &held, &[void(9, "x")]).unwrap();
        assert_eq!((report.held, report.voided, report.gaps), (2, 1, 1));
        assert_eq!(report.end, Some(7));
        let max = i64::MAX;
        let report = account(
            max - 1,
            1,
            Some(max),
            &[json!({"$numberLong": max.to_string()})],
            &[],
        )
        .unwrap();
        assert_eq!((report.held, report.gaps, report.end), (1, 1, Some(max)));
        let report = account(i64::MIN, i64::MAX, Some(i64::MAX), &[], &[]).unwrap();
        assert_eq!(report.gaps, 3);
    }
}
