//! The promises checked on every schedule.
//!
//! While it runs, [`Issued`] records every number handed to a client (a `next()`, a
//! numbered insert acknowledged, a value imported with `seedFromMax`), and flags a number
//! handed out twice at once, and [`Definitions`] which counter definitions reserved from each
//! counter (two processes with different options must never both reserve). At the end, after quiescence, [`check_counters`] and the trigger
//! checks read the settled replica set.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use bson::Bson;

use crate::model::value::{number, Num};

/// The counter definitions that reserved numbers from each counter: one per
/// counter, whatever the interleaving, or the counter handed numbers out under two sets of
/// options (a second process's step interleaved with the first's).
#[derive(Debug, Default)]
pub struct Definitions {
    reserved: HashMap<String, BTreeSet<String>>,
}

impl Definitions {
    /// Records that `who` reserved from `counter` under `definition`; a violation when another
    /// definition reserved from it before (once per definition that joins).
    pub fn reserved(&mut self, counter: &str, definition: &str, who: &str) -> Option<String> {
        let seen = self.reserved.entry(counter.to_owned()).or_default();
        (seen.insert(definition.to_owned()) && seen.len() > 1).then(|| {
            format!(
                "counter `{counter}` handed out numbers under {} definitions ({}), the last to {who}: two clients with different options both reserved",
                seen.len(),
                seen.iter().cloned().collect::<Vec<_>>().join(" and ")
            )
        })
    }
}

/// Who holds a number, and since when (simulated ms).
#[derive(Debug, Clone)]
pub struct Holder {
    pub who: String,
    pub at_ms: u64,
}

/// Numbers handed out, per counter id.
#[derive(Debug, Default)]
pub struct Issued {
    numbers: BTreeMap<String, HashMap<i64, Holder>>,
    /// Counting direction per counter (`true`: up).
    up: HashMap<String, bool>,
    /// Per counter: `(completed at ms, value)` of every `setNext`/`seedFromMax` acknowledged:
    /// a reservation started afterwards must begin past it.
    floors: HashMap<String, Vec<(u64, i64)>>,
}

impl Issued {
    /// Records `numbers` of `counter` handed to `who`; returns a violation for each number
    /// someone already held.
    pub fn hand_out(
        &mut self,
        counter: &str,
        numbers: &[i64],
        up: bool,
        who: &str,
        at_ms: u64,
    ) -> Vec<String> {
        self.up.insert(counter.to_owned(), up);
        let held = self.numbers.entry(counter.to_owned()).or_default();
        let mut violations = Vec::new();
        for &n in numbers {
            if let Some(first) = held.get(&n) {
                violations.push(format!(
                    "number {n} of counter `{counter}` handed to {who} at {}.{:03}s, already handed to {} at {}.{:03}s",
                    at_ms / 1000,
                    at_ms % 1000,
                    first.who,
                    first.at_ms / 1000,
                    first.at_ms % 1000
                ));
            } else {
                held.insert(
                    n,
                    Holder {
                        who: who.to_owned(),
                        at_ms,
                    },
                );
            }
        }
        violations
    }

    /// An acknowledged `setNext(next)` (floor `next - step`) or `seedFromMax(value)`.
    pub fn floor(&mut self, counter: &str, value: i64, at_ms: u64) {
        self.floors
            .entry(counter.to_owned())
            .or_default()
            .push((at_ms, value));
    }

    /// A reservation of `counter` started at `started_ms` returned `first`: it must lie past
    /// every floor acknowledged before it started.
    pub fn check_reservation(
        &self,
        counter: &str,
        started_ms: u64,
        first: i64,
        up: bool,
    ) -> Option<String> {
        let floors = self.floors.get(counter)?;
        let (at, floor) = floors
            .iter()
            .filter(|(at, _)| *at < started_ms)
            .max_by_key(|(_, v)| if up { *v } else { -*v })?;
        let behind = if up { first <= *floor } else { first >= *floor };
        behind.then(|| {
            format!(
                "a reservation of `{counter}` started at {}.{:03}s returned {first}, not past {floor} set at {}.{:03}s",
                started_ms / 1000,
                started_ms % 1000,
                at / 1000,
                at % 1000
            )
        })
    }

    /// The furthest number handed out per counter (largest counting up, smallest down).
    pub fn furthest(&self) -> Vec<(String, i64, bool)> {
        self.numbers
            .iter()
            .filter_map(|(counter, held)| {
                let up = self.up.get(counter).copied().unwrap_or(true);
                let furthest = if up {
                    held.keys().max()
                } else {
                    held.keys().min()
                }?;
                Some((counter.clone(), *furthest, up))
            })
            .collect()
    }

    /// The furthest number of `counter` handed out so far.
    pub fn furthest_of(&self, counter: &str) -> Option<i64> {
        self.furthest()
            .into_iter()
            .find(|(c, _, _)| c == counter)
            .map(|(_, n, _)| n)
    }

    pub fn count(&self) -> usize {
        self.numbers.values().map(HashMap::len).sum()
    }
}

/// An integer as stored (int32, int64, or an integral double), else `None`.
pub fn integer(value: &Bson) -> Option<i64> {
    match number(value)? {
        Num::Int(i) => Some(i),
        #[allow(clippy::cast_possible_truncation)]
        Num::Float(f) if f.fract() == 0.0 && f.abs() < 9.2e18 => Some(f as i64),
        Num::Float(_) => None,
    }
}

/// Counters never below the largest number handed out: `counters` maps counter ids to their
/// settled `seq`.
pub fn check_counters(issued: &Issued, counters: &HashMap<String, Option<i64>>) -> Vec<String> {
    let mut violations = Vec::new();
    for (counter, furthest, up) in issued.furthest() {
        let seq = counters.get(&counter).copied().flatten();
        let behind = match seq {
            None => true,
            Some(seq) => (up && seq < furthest) || (!up && seq > furthest),
        };
        if behind {
            violations.push(format!(
                "counter `{counter}` holds {} but {furthest} was handed out",
                seq.map_or("nothing".to_owned(), |s| s.to_string())
            ));
        }
    }
    violations
}

/// No two existing documents of one counter hold the same number: `documents` with the
/// counter each belongs to (its id) and the number it holds.
pub fn check_unique_numbers(
    collection: &str,
    documents: impl IntoIterator<Item = (String, i64, String)>,
) -> Vec<String> {
    let mut seen: HashMap<(String, i64), String> = HashMap::new();
    let mut violations = Vec::new();
    for (counter, number, id) in documents {
        if let Some(first) = seen.get(&(counter.clone(), number)) {
            violations.push(format!(
                "documents {first} and {id} of {collection} both hold number {number} of counter `{counter}`"
            ));
        } else {
            seen.insert((counter, number), id);
        }
    }
    violations
}
