//! Before a backfill numbers the documents that have no number, every counter of the trigger
//! moves past the numbers the collection already holds (numbers given out while nobody was
//! watching are never issued again): one aggregation finds the furthest number per scope, then
//! a [`SeedFromMax`] per counter.
//!
//! ```text
//! SeedFromExisting(numbering):
//!   aggregate [{$match: {field: {$exists: true}}},
//!              {$group: {_id: {s0: "$<scope 0>", s1: "$<scope 1>", …[, p: "$<field>Period"]},
//!                        n: {$max: "$field"}}}]
//!              ($min when counting down; `p`, the period, for a sequence that resets: its
//!              counters are per scope and period, a group without a valid period passed over)
//!   → per group, in the order returned: the scope document rebuilt from the key (dotted paths
//!     nested), its counter id, n read as an integer (a group without either is passed over)
//!     → SeedFromMax(counterId, n) (a value outside the bounds: note seedRefused, passed over)
//! ```

use std::collections::VecDeque;

use serde::Serialize;
use serde_json::{json, Map, Value};

use crate::counter::seed::SeedFromMax;
use crate::ejson;
use crate::error::SeqError;
use crate::numbering::spec::NumberingSpec;
use crate::protocol::command::{Collection, Command};
use crate::protocol::machine::{launch, resume, Machine, MachinePlan};
use crate::protocol::note::Note;
use crate::protocol::plan::Step;
use crate::protocol::reply::Reply;
use crate::sequence::options::SequenceSpec;
use crate::sequence::period::Period;

/// What [`SeedFromExisting`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SeedReport {
    /// Scopes (groups) the aggregation found.
    pub scopes: u64,
    /// Counters seeded (moved past the furthest number, or created there).
    pub seeded: u64,
}

/// Seeds every counter of a trigger from the numbers its collection holds; see the module docs.
pub type SeedFromExisting = MachinePlan<SeedFromExistingMachine>;

#[derive(Debug, Clone)]
enum SeedPhase {
    Idle,
    Aggregate,
    Seed(Box<SeedFromMax>),
}

/// The state of a [`SeedFromExisting`].
#[derive(Debug, Clone)]
pub struct SeedFromExistingMachine {
    numbering: NumberingSpec,
    groups: VecDeque<Value>,
    report: SeedReport,
    notes: Vec<Note>,
    phase: SeedPhase,
}

impl SeedFromExisting {
    pub fn new(numbering: &NumberingSpec) -> Result<Self, SeqError> {
        let sequence = numbering.sequence();
        let field = numbering.field();
        let mut key = Map::new();
        for (index, scope) in sequence.scope().iter().enumerate() {
            key.insert(format!("s{index}"), Value::String(format!("${scope}")));
        }
        if sequence.reset().is_periodic() {
            key.insert(
                "p".to_owned(),
                Value::String(format!("${}", numbering.period_field())),
            );
        }
        let mut furthest = Map::new();
        furthest.insert(
            furthest_accumulator(sequence).to_owned(),
            Value::String(format!("${field}")),
        );
        let pipeline = vec![
            json!({ "$match": numbering.numbered() }),
            json!({ "$group": { "_id": key, "n": furthest } }),
        ];
        let machine = SeedFromExistingMachine {
            numbering: numbering.clone(),
            groups: VecDeque::new(),
            report: SeedReport::default(),
            notes: Vec::new(),
            phase: SeedPhase::Aggregate,
        };
        let aggregate = Command::Aggregate {
            collection: Collection::Documents,
            pipeline,
        };
        Ok(MachinePlan::begin(machine, Ok(Step::Command(aggregate))))
    }
}

/// `$max` counting up, `$min` counting down: the accumulator of the furthest number.
fn furthest_accumulator(sequence: &SequenceSpec) -> &'static str {
    if sequence.step() > 0 {
        "$max"
    } else {
        "$min"
    }
}

/// Sets a dotted path, creating embedded documents on the way (replacing any other value,
/// an Extended JSON scalar such as `{"$oid": …}` included).
fn set_path(document: &mut Map<String, Value>, path: &str, value: Value) {
    match path.split_once('.') {
        None => {
            document.insert(path.to_owned(), value);
        }
        Some((head, rest)) => {
            let inner = document
                .entry(head.to_owned())
                .or_insert_with(|| Value::Object(Map::new()));
            let embedded =
                matches!(inner, Value::Object(map) if !map.keys().any(|k| k.starts_with('$')));
            if !embedded {
                *inner = Value::Object(Map::new());
            }
            if let Value::Object(inner) = inner {
                set_path(inner, rest, value);
            }
        }
    }
}

impl SeedFromExistingMachine {
    /// The document holding a group's scope values, rebuilt from its `_id` (`{s0, s1, …}`).
    fn scope_document(&self, group: &Value) -> Value {
        let mut scoped = Map::new();
        if let Some(Value::Object(key)) = group.get("_id") {
            for (index, scope) in self.numbering.sequence().scope().iter().enumerate() {
                if let Some(value) = key.get(&format!("s{index}")) {
                    set_path(&mut scoped, scope, value.clone());
                }
            }
        }
        Value::Object(scoped)
    }

    /// Seeds the next group's counter, or finishes.
    fn next(&mut self) -> Result<Step<SeedReport>, SeqError> {
        while let Some(group) = self.groups.pop_front() {
            let sequence = self.numbering.sequence();
            let Some(furthest) = group.get("n") else {
                continue;
            };
            let counter_id = if sequence.reset().is_periodic() {
                let period = group
                    .get("_id")
                    .and_then(|key| key.get("p"))
                    .and_then(Value::as_str)
                    .and_then(Period::parse);
                let Some(period) = period else { continue };
                sequence.counter_id_in(Some(&self.scope_document(&group)), Some(&period))
            } else {
                sequence.counter_id(Some(&self.scope_document(&group)))
            };
            let (Ok(counter_id), Ok(value)) = (counter_id, ejson::read_i64(furthest)) else {
                continue;
            };
            let plan = match SeedFromMax::new(sequence, &counter_id, value) {
                Ok(plan) => plan,
                Err(error) => {
                    self.notes.push(Note::SeedRefused {
                        counter_id,
                        value,
                        error,
                    });
                    continue;
                }
            };
            let step = launch(plan, &mut self.notes, |plan| {
                self.phase = SeedPhase::Seed(plan);
            })?;
            if let Step::Command(command) = step.and_then(|_| Ok(self.seeded()))? {
                return Ok(Step::Command(command));
            }
        }
        Ok(Step::Done(self.report.clone()))
    }

    fn seeded(&mut self) -> Step<()> {
        self.report.seeded = self.report.seeded.saturating_add(1);
        Step::Done(())
    }
}

impl Machine for SeedFromExistingMachine {
    type Output = SeedReport;

    fn on_reply(&mut self, reply: Reply) -> Result<Step<SeedReport>, SeqError> {
        match std::mem::replace(&mut self.phase, SeedPhase::Idle) {
            SeedPhase::Aggregate => {
                let documents = reply.into_documents("aggregate")?;
                self.report.scopes = u64::try_from(documents.len()).unwrap_or(u64::MAX);
                self.groups = documents.into();
                self.next()
            }
            SeedPhase::Seed(plan) => resume(plan, reply, &mut self.notes, |plan| {
                self.phase = SeedPhase::Seed(plan);
            })?
            .and_then(|_| Ok(self.seeded()))?
            .and_then(|()| self.next()),
            SeedPhase::Idle => Err(SeqError::unexpected_reply("no command is pending")),
        }
    }

    fn drain_notes(&mut self) -> Vec<Note> {
        std::mem::take(&mut self.notes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rebuilds_nested_scope_documents() {
        let mut doc = Map::new();
        set_path(&mut doc, "a.b", json!(1));
        set_path(&mut doc, "a.c", json!(2));
        set_path(&mut doc, "x", json!(3));
        set_path(&mut doc, "x.y", json!(4));
        set_path(&mut doc, "o", json!({"$oid": "65a1b2c3d4e5f60718293a4b"}));
        set_path(&mut doc, "o.z", json!(5));
        assert_eq!(
            Value::Object(doc),
            json!({"a": {"b": 1, "c": 2}, "x": {"y": 4}, "o": {"z": 5}})
        );
    }
}
