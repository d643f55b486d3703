//! `seedFromCollection(field, document)`: seed a counter from the numbers already stored in a
//! document collection (imports), so it never issues one of them again.
//!
//! 1. `findOne` of the furthest number in `field` among the documents with the scope values of
//!    `document` (see [`crate::counter::largest`]).
//! 2. Found → the [`SeedFromMax`] plan with that number (`$max`, never backwards). Nothing
//!    found → the [`CurrentValue`] plan: nothing to seed, report the counter as it is.
//!
//! The counter id is derived from `document` like every other counter of the sequence.

use serde_json::Value;

use crate::counter::current::{CounterState, CurrentValue};
use crate::counter::largest::{largest_number_query, read_found};
use crate::counter::seed::SeedFromMax;
use crate::error::SeqError;
use crate::protocol::machine::{Machine, MachinePlan};
use crate::protocol::plan::{Plan, Step};
use crate::protocol::reply::{unexpected, Reply};
use crate::sequence::options::SequenceSpec;

#[derive(Debug, Clone)]
enum Phase {
    Find,
    Seed(Box<SeedFromMax>),
    Current(Box<CurrentValue>),
}

/// The seed-from-collection plan; its output is the counter state afterwards.
pub type SeedFromCollection = MachinePlan<SeedFromCollectionMachine>;

/// The state of a [`SeedFromCollection`].
#[derive(Debug, Clone)]
pub struct SeedFromCollectionMachine {
    spec: SequenceSpec,
    counter_id: String,
    field: String,
    phase: Phase,
}

impl SeedFromCollection {
    /// `document` supplies the scope values (required when the sequence is scoped).
    pub fn new(
        spec: &SequenceSpec,
        field: &str,
        document: Option<&Value>,
    ) -> Result<Self, SeqError> {
        let find = largest_number_query(spec, field, document)?;
        let counter_id = spec.counter_id(document)?;
        let machine = SeedFromCollectionMachine {
            spec: spec.clone(),
            counter_id,
            field: field.to_owned(),
            phase: Phase::Find,
        };
        Ok(MachinePlan::begin(machine, Ok(Step::Command(find))))
    }

    /// The counter this plan seeds.
    pub fn counter_id(&self) -> &str {
        &self.machine().counter_id
    }
}

impl Machine for SeedFromCollectionMachine {
    type Output = CounterState;

    fn on_reply(&mut self, reply: Reply) -> Result<Step<CounterState>, SeqError> {
        match &mut self.phase {
            Phase::Find => {
                let (phase, first) = match reply {
                    Reply::Document { document } => {
                        let found = read_found(&document, &self.field)?;
                        let plan = SeedFromMax::new(&self.spec, &self.counter_id, found)?;
                        let first = plan.current_step()?;
                        (Phase::Seed(Box::new(plan)), first)
                    }
                    Reply::None => {
                        let plan = CurrentValue::new(&self.spec, &self.counter_id)?;
                        let first = plan.current_step()?;
                        (Phase::Current(Box::new(plan)), first)
                    }
                    other => return Err(unexpected(&other, "findOne")),
                };
                self.phase = phase;
                Ok(first)
            }
            Phase::Seed(plan) => plan.feed(reply),
            Phase::Current(plan) => plan.feed(reply),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::command::Command;
    use serde_json::json;

    fn command(step: &Step<CounterState>) -> &Command {
        match step {
            Step::Command(command) => command,
            Step::Done(state) => panic!("expected a command, got done {state:?}"),
        }
    }

    fn spec(options: Value) -> SequenceSpec {
        SequenceSpec::parse(&options).unwrap()
    }

    fn to_json(command: &Command) -> Value {
        serde_json::to_value(command).unwrap()
    }

    #[test]
    fn seeds_past_the_largest_number_found() {
        let spec = spec(json!({"name": "users"}));
        let mut plan = SeedFromCollection::new(&spec, "_id", None).unwrap();
        let find = to_json(command(&plan.current_step().unwrap()));
        assert_eq!(find["op"], "findOne");
        assert_eq!(find["collection"], "documents");
        assert_eq!(find["options"]["sort"], json!({"_id": -1}));
        let seed = plan
            .feed(Reply::Document {
                document: json!({"_id": {"$numberLong": "9007199254740993"}}),
            })
            .unwrap();
        let seed = to_json(command(&seed));
        assert_eq!(seed["collection"], "counters");
        assert_eq!(seed["filter"], json!({"_id": "users"}));
        assert_eq!(
            seed["update"],
            json!({"$max": {"seq": {"$numberLong": "9007199254740993"}}})
        );
        let done = plan
            .feed(Reply::Document {
                document: json!({"_id": "users", "seq": {"$numberLong": "9007199254740993"}}),
            })
            .unwrap();
        assert_eq!(
            done,
            Step::Done(CounterState {
                last: Some(9_007_199_254_740_993),
                next: Some(9_007_199_254_740_994)
            })
        );
        assert_eq!(
            plan.feed(Reply::None).unwrap_err().code(),
            "UNEXPECTED_REPLY"
        );
    }

    #[test]
    fn empty_collection_reports_the_counter_unchanged() {
        let spec = spec(json!({"name": "users", "step": -1, "start": 100}));
        let mut plan = SeedFromCollection::new(&spec, "n", None).unwrap();
        assert_eq!(
            to_json(command(&plan.current_step().unwrap()))["options"]["sort"],
            json!({"n": 1})
        );
        let current = to_json(command(&plan.feed(Reply::None).unwrap()));
        assert_eq!(
            current,
            json!({"op": "findOne", "collection": "counters", "filter": {"_id": "users"},
                "readConcern": {"level": "majority"}})
        );
        assert_eq!(
            plan.feed(Reply::None).unwrap(),
            Step::Done(CounterState {
                last: None,
                next: Some(100)
            })
        );
    }

    #[test]
    fn scoped_counters_and_errors() {
        let spec = spec(json!({"name": "orders", "scope": ["tenant"], "max": 10}));
        let doc = json!({"tenant": "acme"});
        let plan = SeedFromCollection::new(&spec, "_id", Some(&doc)).unwrap();
        assert_eq!(plan.counter_id(), "orders/tenant=acme");
        assert_eq!(
            to_json(command(&plan.current_step().unwrap()))["filter"]["tenant"],
            "acme"
        );
        let code = |result: Result<SeedFromCollection, SeqError>| result.err().map(|e| e.code());
        assert_eq!(
            code(SeedFromCollection::new(&spec, "_id", None)),
            Some("MISSING_SCOPE_FIELD")
        );
        assert_eq!(
            code(SeedFromCollection::new(&spec, "a.b", Some(&doc))),
            Some("INVALID_ARGUMENT")
        );
        let mut plan = SeedFromCollection::new(&spec, "_id", Some(&doc)).unwrap();
        let malformed = plan.feed(Reply::Document {
            document: json!({"_id": "x"}),
        });
        assert_eq!(malformed.unwrap_err().code(), "MALFORMED_DOCUMENT");
        let mut plan = SeedFromCollection::new(&spec, "_id", Some(&doc)).unwrap();
        let beyond = plan.feed(Reply::Document {
            document: json!({"_id": 11}),
        });
        assert_eq!(beyond.unwrap_err().code(), "OUT_OF_BOUNDS");
        assert_eq!(plan.current_step().unwrap_err().code(), "OUT_OF_BOUNDS");
    }
}
