//! `seedFromMax(value)`: move the counter so it never issues `value` or anything before it
//! (imports, or a document that already carries a number).
//!
//! One upsert: `findOneAndUpdate({_id, seq: ok}, {$max: {seq: v}}, upsert, after)` — `$min`
//! when counting down — with `v = max(value, start - step)` so a counter created here still
//! starts at `start`. `$max` never moves a counter backwards, so concurrent seeds and
//! reservations are safe. The counter is not re-aligned to the step grid (seeding 10 with step
//! 2 makes the next number 12). The update carries the sequence's
//! [definition](crate::counter::definition) like a reservation (filter `$or` + `$set`).
//!
//! `ok` admits, like a reservation's filter, only a well-formed counter: an integer (not an
//! array) within the range a counter of the sequence can hold. A refused seed writes nothing:
//! without it, `$max` left a malformed `seq` (`"5"`, which sorts after every number, or one past
//! `max`) as it was but still `$set` the definition on it. A counter the filter refuses makes
//! the upsert's insert a duplicate key, told apart by a `findOne`:
//!
//! ```text
//! findOneAndUpdate {_id, seq: ok, $or: [no definition, ours]} {$max, $set: definition} upsert after
//!  ├─ document ──► done
//!  └─ duplicateKey ─► findOne {_id}
//!      ├─ none (deleted meanwhile) ─────────────────────────► retry
//!      └─ document ─┬─ another definition ─────────────────► SEQUENCE_CONFLICT
//!                   ├─ not an integer, or out of range ────► MALFORMED_COUNTER (nothing written)
//!                   ├─ an integral double (the legacy shell's 5.0):
//!                   │    findOneAndUpdate {_id, seq: {$eq: <that double>}} {$set: {seq: <long>, definition}}
//!                   │      ─► done / none: retry
//!                   └─ an integer (a racing upsert created it) ─► retry
//! ```

use serde_json::{Map, Value};

use crate::counter::current::CounterState;
use crate::counter::definition::CounterDefinition;
use crate::counter::document::read_spec_counter;
use crate::counter::reservation::{integer_type_condition, not_an_array};
use crate::ejson;
use crate::error::SeqError;
use crate::protocol::command::{operator, Collection, Command, ReturnDocument, UpdateOptions};
use crate::protocol::machine::{Machine, MachinePlan};
use crate::protocol::plan::{Retries, Step};
use crate::protocol::reply::{unexpected, Reply};
use crate::sequence::options::SequenceSpec;

/// The seedFromMax plan; its output is the counter state afterwards.
pub type SeedFromMax = MachinePlan<SeedFromMaxMachine>;

/// The state of a [`SeedFromMax`].
#[derive(Debug, Clone)]
pub struct SeedFromMaxMachine {
    spec: SequenceSpec,
    counter_id: String,
    command: Command,
    definition: CounterDefinition,
    /// The seed `v` (`$max`'s, or `$min`'s counting down).
    seed: i64,
    phase: Phase,
    retries: Retries,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Seed,
    /// Reading the counter after a duplicate key.
    Check,
    /// Setting a legacy double counter while it still holds the value read.
    CompareAndSet,
}

impl SeedFromMax {
    pub fn new(spec: &SequenceSpec, counter_id: &str, value: i64) -> Result<Self, SeqError> {
        spec.check_counter_id(counter_id)?;
        if !spec.in_bounds(value) {
            return Err(spec.out_of_bounds("value", value));
        }
        let initial = spec.initial_counter();
        let (op, seed) = if spec.step() > 0 {
            ("$max", value.max(initial))
        } else {
            ("$min", value.min(initial))
        };
        let definition = CounterDefinition::of(spec);
        let mut update = Map::new();
        update.insert(
            op.to_owned(),
            operator(spec.counter_field(), ejson::long(seed)),
        );
        let mut set = Map::new();
        definition.add_to(&mut set);
        update.insert("$set".to_owned(), Value::Object(set));
        let mut filter = spec.id_filter(counter_id);
        filter.insert(
            spec.counter_field().to_owned(),
            Value::Object(well_formed(spec)),
        );
        definition.add_condition(&mut filter);
        let command = Command::FindOneAndUpdate {
            collection: Collection::Counters,
            filter: Value::Object(filter),
            update: Value::Object(update),
            options: UpdateOptions {
                upsert: true,
                return_document: ReturnDocument::After,
            },
        };
        let machine = SeedFromMaxMachine {
            spec: spec.clone(),
            counter_id: counter_id.to_owned(),
            command: command.clone(),
            definition,
            seed,
            phase: Phase::Seed,
            retries: Retries::default(),
        };
        Ok(MachinePlan::begin(machine, Ok(Step::Command(command))))
    }
}

/// A counter `seq` a seed may move: an integer, not an array, within the range a counter of
/// `spec` can hold (see the module docs).
fn well_formed(spec: &SequenceSpec) -> Map<String, Value> {
    let mut condition = integer_type_condition();
    let (low, high) = spec.counter_range();
    if low != i64::MIN {
        condition.insert("$gte".to_owned(), ejson::long(low));
    }
    if high != i64::MAX {
        condition.insert("$lte".to_owned(), ejson::long(high));
    }
    condition
}

impl SeedFromMaxMachine {
    fn retry(&mut self) -> Result<Step<CounterState>, SeqError> {
        self.retries.bump("seedFromMax", &self.counter_id)?;
        self.phase = Phase::Seed;
        Ok(Step::Command(self.command.clone()))
    }

    /// The counter state of a counter document the seed wrote.
    fn done(&self, document: &Value) -> Result<Step<CounterState>, SeqError> {
        let last = read_spec_counter(&self.spec, document, &self.counter_id)?;
        let last = self.spec.check_counter(&self.counter_id, last)?;
        Ok(Step::Done(CounterState::of(&self.spec, Some(last))))
    }

    /// After a duplicate key: the counter as read tells why the seed's filter refused it.
    fn on_check(&mut self, document: &Value) -> Result<Step<CounterState>, SeqError> {
        self.definition.check(&self.counter_id, document)?;
        let last = read_spec_counter(&self.spec, document, &self.counter_id)?;
        let last = self.spec.check_counter(&self.counter_id, last)?;
        let Some(stored) = document
            .get(self.spec.counter_field())
            .filter(|seq| ejson::is_double(seq))
        else {
            return self.retry();
        };
        self.retries.bump("seedFromMax", &self.counter_id)?;
        self.phase = Phase::CompareAndSet;
        let mut filter = self.spec.id_filter(&self.counter_id);
        filter.insert(
            self.spec.counter_field().to_owned(),
            ejson::object([("$eq", stored.clone()), ("$not", not_an_array())]),
        );
        self.definition.add_condition(&mut filter);
        let target = self
            .spec
            .further(Some(last), Some(self.seed))
            .unwrap_or(last);
        let mut set = operator(self.spec.counter_field(), ejson::long(target));
        if let Value::Object(set) = &mut set {
            self.definition.add_to(set);
        }
        Ok(Step::Command(Command::FindOneAndUpdate {
            collection: Collection::Counters,
            filter: Value::Object(filter),
            update: ejson::object([("$set", set)]),
            options: UpdateOptions {
                upsert: false,
                return_document: ReturnDocument::After,
            },
        }))
    }
}

impl Machine for SeedFromMaxMachine {
    type Output = CounterState;

    fn on_reply(&mut self, reply: Reply) -> Result<Step<CounterState>, SeqError> {
        match (self.phase, reply) {
            (Phase::Check, Reply::Document { document }) => self.on_check(&document),
            (Phase::Check, Reply::None) => self.retry(),
            (Phase::Check, other) => Err(unexpected(&other, "findOne")),
            (Phase::Seed | Phase::CompareAndSet, Reply::Document { document }) => {
                self.done(&document)
            }
            (Phase::Seed, Reply::DuplicateKey) => {
                self.phase = Phase::Check;
                Ok(Step::Command(Command::FindOne {
                    collection: Collection::Counters,
                    filter: Value::Object(self.spec.id_filter(&self.counter_id)),
                    options: None,
                }))
            }
            (Phase::Seed, Reply::None) => Err(SeqError::unexpected_reply(
                "findOneAndUpdate with upsert and returnDocument after returned no document",
            )),
            // Changed since it was read: seed again.
            (Phase::CompareAndSet, Reply::None) => self.retry(),
            (_, other) => Err(unexpected(&other, "findOneAndUpdate")),
        }
    }
}
