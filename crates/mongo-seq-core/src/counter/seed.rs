//! `seedFromMax(value)`: move the counter so it never issues `value` or anything before it
//! (imports, or a document that already carries a number).
//!
//! One upsert: `findOneAndUpdate({_id}, {$max: {seq: v}}, upsert, after)` — `$min` when
//! counting down — with `v = max(value, start - step)` so a counter created here still starts
//! at `start`. `$max` never moves a counter backwards, so concurrent seeds and reservations
//! are safe. The counter is not re-aligned to the step grid (seeding 10 with step 2 makes the
//! next number 12). The update carries the sequence's [definition](crate::counter::definition)
//! like a reservation (filter `$or` + `$set`); a duplicate-key error (racing upserts, or a
//! counter of another definition the filter refused) is told apart by a `findOne`:
//! `SEQUENCE_CONFLICT`, or retried.

use serde_json::{Map, Value};

use crate::counter::current::CounterState;
use crate::counter::definition::CounterDefinition;
use crate::counter::document::read_spec_counter;
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
    /// Reading the counter after a duplicate key.
    checking: bool,
    retries: Retries,
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
            checking: false,
            retries: Retries::default(),
        };
        Ok(MachinePlan::begin(machine, Ok(Step::Command(command))))
    }
}

impl SeedFromMaxMachine {
    fn retry(&mut self) -> Result<Step<CounterState>, SeqError> {
        self.retries.bump("seedFromMax", &self.counter_id)?;
        Ok(Step::Command(self.command.clone()))
    }
}

impl Machine for SeedFromMaxMachine {
    type Output = CounterState;

    fn on_reply(&mut self, reply: Reply) -> Result<Step<CounterState>, SeqError> {
        if self.checking {
            self.checking = false;
            return match reply {
                Reply::Document { document } => {
                    self.definition.check(&self.counter_id, &document)?;
                    self.retry()
                }
                Reply::None => self.retry(),
                other => Err(unexpected(&other, "findOne")),
            };
        }
        match reply {
            Reply::Document { document } => {
                // `$max` moves a counter behind the range into it; one still outside was past
                // the bound before, and is left as it was.
                let last = read_spec_counter(&self.spec, &document, &self.counter_id)?;
                let last = self.spec.check_counter(&self.counter_id, last)?;
                Ok(Step::Done(CounterState::of(&self.spec, Some(last))))
            }
            Reply::DuplicateKey => {
                self.checking = true;
                Ok(Step::Command(Command::FindOne {
                    collection: Collection::Counters,
                    filter: Value::Object(self.spec.id_filter(&self.counter_id)),
                    options: None,
                }))
            }
            Reply::None => Err(SeqError::unexpected_reply(
                "findOneAndUpdate with upsert and returnDocument after returned no document",
            )),
            other => Err(unexpected(&other, "findOneAndUpdate")),
        }
    }
}
