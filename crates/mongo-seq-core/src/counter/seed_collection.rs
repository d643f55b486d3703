//! `seedFromCollection(field, document)`: seed a counter from the numbers already stored in a
//! document collection (imports), so it never issues one of them again.
//!
//! 1. `findOne` of the furthest number in `field` among the documents with the scope values of
//!    `document` (see [`crate::counter::largest`]).
//! 2. Found → the [`SeedFromMax`] plan with that number (`$max`, never backwards). Nothing
//!    found → the [`CurrentValue`] plan: nothing to seed, report the counter as it is.
//! 3. After a seed, the same `findOne` once more: a number further than the one seeded (written
//!    meanwhile, or missed by the first read) is seeded too, at most [`SEED_ROUNDS`] seeds.
//!
//! Why read again: the first read may come from a primary that has just been deposed, which the
//! caller's driver has not yet learned about (for at most an election timeout); it lacks what
//! the new primary accepted since. The seed is a `w: "majority"` write, which only the newest
//! primary can acknowledge, and a driver never goes back to an older primary than one it has
//! seen (the drivers' stale-primary rule, `sim/src/client.rs`): the read after it is served by
//! that primary or a newer one, which holds every write acknowledged before the seed.
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
    /// Seeding `value`.
    Seed {
        plan: Box<SeedFromMax>,
        value: i64,
    },
    Current(Box<CurrentValue>),
    /// Read again after seeding `seeded`; `state`: the counter after it.
    Recheck {
        seeded: i64,
        state: CounterState,
    },
}

/// Most seeds of one plan (each after a read found a further number); then `TOO_MANY_RETRIES`
/// (numbers beyond the counter keep being written while it is seeded).
pub const SEED_ROUNDS: u32 = 3;

/// The seed-from-collection plan; its output is the counter state afterwards.
pub type SeedFromCollection = MachinePlan<SeedFromCollectionMachine>;

/// The state of a [`SeedFromCollection`].
#[derive(Debug, Clone)]
pub struct SeedFromCollectionMachine {
    spec: SequenceSpec,
    counter_id: String,
    field: String,
    find: crate::protocol::command::Command,
    seeds: u32,
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
            find: find.clone(),
            seeds: 0,
            phase: Phase::Find,
        };
        Ok(MachinePlan::begin(machine, Ok(Step::Command(find))))
    }

    /// The counter this plan seeds.
    pub fn counter_id(&self) -> &str {
        &self.machine().counter_id
    }
}

impl SeedFromCollectionMachine {
    /// Seeds `found`, or fails once [`SEED_ROUNDS`] seeds are spent.
    fn seed(&mut self, found: i64) -> Result<Step<CounterState>, SeqError> {
        if self.seeds >= SEED_ROUNDS {
            return Err(SeqError::TooManyRetries {
                operation: "seeding from a collection (further numbers kept appearing)".to_owned(),
                counter_id: self.counter_id.clone(),
                attempts: self.seeds,
            });
        }
        self.seeds = self.seeds.saturating_add(1);
        let plan = SeedFromMax::new(&self.spec, &self.counter_id, found)?;
        let first = plan.current_step()?;
        if let Step::Command(_) = first {
            self.phase = Phase::Seed {
                plan: Box::new(plan),
                value: found,
            };
        }
        self.seeded(found, first)
    }

    /// After the seed plan's step: its command, or (done) the read again.
    fn seeded(
        &mut self,
        found: i64,
        step: Step<CounterState>,
    ) -> Result<Step<CounterState>, SeqError> {
        match step {
            Step::Command(command) => Ok(Step::Command(command)),
            Step::Done(state) => {
                self.phase = Phase::Recheck {
                    seeded: found,
                    state,
                };
                Ok(Step::Command(self.find.clone()))
            }
        }
    }
}

impl Machine for SeedFromCollectionMachine {
    type Output = CounterState;

    fn on_reply(&mut self, reply: Reply) -> Result<Step<CounterState>, SeqError> {
        match std::mem::replace(&mut self.phase, Phase::Find) {
            Phase::Find => match reply {
                Reply::Document { document } => {
                    let found = read_found(&document, &self.field)?;
                    self.seed(found)
                }
                Reply::None => {
                    let plan = CurrentValue::new(&self.spec, &self.counter_id)?;
                    let first = plan.current_step()?;
                    self.phase = Phase::Current(Box::new(plan));
                    Ok(first)
                }
                other => Err(unexpected(&other, "findOne")),
            },
            Phase::Seed { mut plan, value } => {
                let step = plan.feed(reply)?;
                if let Step::Command(_) = step {
                    self.phase = Phase::Seed { plan, value };
                }
                self.seeded(value, step)
            }
            Phase::Current(mut plan) => {
                let step = plan.feed(reply);
                self.phase = Phase::Current(plan);
                step
            }
            Phase::Recheck { seeded, state } => match reply {
                Reply::Document { document } => {
                    let found = read_found(&document, &self.field)?;
                    if self.spec.further(Some(found), Some(seeded)) == Some(seeded) {
                        return Ok(Step::Done(state));
                    }
                    self.seed(found)
                }
                // Every numbered document deleted meanwhile: what was seeded stands.
                Reply::None => Ok(Step::Done(state)),
                other => Err(unexpected(&other, "findOne")),
            },
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
        let definition = json!({"start": {"$numberLong": "1"}, "step": {"$numberLong": "1"}});
        assert_eq!(
            seed["filter"],
            json!({"_id": "users", "seq": {"$type": ["int", "long"], "$not": {"$type": "array"}}, "$or": [{"definition": {"$exists": false}}, {"definition": definition}]})
        );
        assert_eq!(
            seed["update"],
            json!({"$max": {"seq": {"$numberLong": "9007199254740993"}}, "$set": {"definition": definition, "definitionDigest": "b1992bd103fd143e"}})
        );
        let again = plan
            .feed(Reply::Document {
                document: json!({"_id": "users", "seq": {"$numberLong": "9007199254740993"}}),
            })
            .unwrap();
        assert_eq!(to_json(command(&again)), find, "read again after the seed");
        let done = plan
            .feed(Reply::Document {
                document: json!({"_id": {"$numberLong": "9007199254740993"}}),
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

    /// The first read came from a primary just deposed (it lacked 70, written on the new
    /// one): the read after the seed, which only the newest primary acknowledged, finds 70.
    #[test]
    fn a_further_number_found_after_the_seed_is_seeded_too() {
        let spec = spec(json!({"name": "users"}));
        let mut plan = SeedFromCollection::new(&spec, "_id", None).unwrap();
        let find = to_json(command(&plan.current_step().unwrap()));
        let counter = |seq: i64| Reply::Document {
            document: json!({"_id": "users", "seq": seq}),
        };
        let found = |n: i64| Reply::Document {
            document: json!({"_id": n}),
        };
        plan.feed(found(50)).unwrap();
        assert_eq!(to_json(command(&plan.feed(counter(50)).unwrap())), find);
        let seed = to_json(command(&plan.feed(found(70)).unwrap()));
        assert_eq!(
            seed["update"]["$max"],
            json!({"seq": {"$numberLong": "70"}})
        );
        assert_eq!(to_json(command(&plan.feed(counter(70)).unwrap())), find);
        assert_eq!(
            plan.feed(found(70)).unwrap(),
            Step::Done(CounterState {
                last: Some(70),
                next: Some(71)
            })
        );
        // Further numbers keep appearing: at most SEED_ROUNDS seeds.
        let mut plan = SeedFromCollection::new(&spec, "_id", None).unwrap();
        plan.current_step().unwrap();
        let mut n = 10;
        let error = loop {
            match plan.feed(found(n)) {
                Ok(Step::Command(_)) => {}
                Ok(done) => panic!("{done:?}"),
                Err(error) => break error,
            }
            plan.feed(counter(n)).unwrap();
            n += 10;
        };
        assert_eq!(error.code(), "TOO_MANY_RETRIES");
        assert_eq!(n, 10 * (i64::from(SEED_ROUNDS) + 1));
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
