//! `setNext(n, force)`: make `n` the next number issued (stores `seq = n - step`).
//!
//! Without `force` the counter may only move forward, and the check is race-safe because it
//! sits in the update filter: `findOneAndUpdate({_id, seq: {$type: ["int", "long"], $not:
//! {$type: "array"}, $lte: n - step}}, {$set: {seq: n - step}}, returnDocument: before)`
//! (`$gte` when counting down). A null reply is told apart with `findOne({_id})`: missing →
//! `insertOne` the counter (duplicate key → retry); present and ahead → `BACKWARDS_REFUSED`;
//! not an integer → `MALFORMED_COUNTER` (nothing written: a malformed counter is only
//! rewritten with force); a legacy integral double not ahead → `$set` only while it still holds
//! the value read (`{_id, seq: {$eq: <that double>}}`); present and not ahead → lost a race,
//! retry.
//! With `force` one upsert `$set` does it; an unreadable old value is reported as `null`
//! so force can repair a broken counter. Callers holding a block should discard it after.
//!
//! Every write carries the sequence's [definition](crate::counter::definition) like a
//! reservation: the filter admits a counter without one or with ours and `$set`s it, so a
//! counter of another definition is never moved; the read that follows a refused write (the
//! `findOne`, with force after the upsert's duplicate key) fails with `SEQUENCE_CONFLICT`.
//! A definition is rewritten on purpose by [`crate::counter::adopt`], never by `force`.
//!
//! `n` must lie on the sequence's grid `start, start + step, …` (what `audit` expects), else
//! every number issued afterwards would be off it: refused (`INVALID_ARGUMENT`, naming the
//! nearest grid numbers) unless `force`.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::counter::definition::CounterDefinition;
use crate::counter::document::read_counter_of;
use crate::counter::reservation::{integer_type_condition, not_an_array};
use crate::ejson;
use crate::error::SeqError;
use crate::protocol::command::{operator, Collection, Command, ReturnDocument, UpdateOptions};
use crate::protocol::machine::{Machine, MachinePlan};
use crate::protocol::plan::{Retries, Step};
use crate::protocol::reply::{unexpected, Reply};
use crate::sequence::options::SequenceSpec;

/// Result of `setNext`: the last value before (`null` if the counter was created or, with
/// force, unreadable), whether the counter was created, and the next number now due.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SetNextOutcome {
    pub previous_last: Option<i64>,
    pub created: bool,
    pub next: i64,
}

#[derive(Debug, Clone, Copy)]
enum Phase {
    Update,
    Check,
    CompareAndSet,
    Insert,
    /// With force, after the upsert's duplicate key: another definition, or a racing insert.
    ForcedCheck,
}

/// The setNext plan; see the module docs.
pub type SetNext = MachinePlan<SetNextMachine>;

/// The state of a [`SetNext`].
#[derive(Debug, Clone)]
pub struct SetNextMachine {
    counter_id: String,
    /// The counter document's `_id` (the `counterId` option's, or the id).
    id: Value,
    counter_field: String,
    step: i64,
    next: i64,
    target: i64,
    force: bool,
    definition: CounterDefinition,
    phase: Phase,
    retries: Retries,
}

impl SetNext {
    pub fn new(
        spec: &SequenceSpec,
        counter_id: &str,
        next: i64,
        force: bool,
    ) -> Result<Self, SeqError> {
        spec.check_counter_id(counter_id)?;
        if !spec.in_bounds(next) {
            return Err(spec.out_of_bounds("next", next));
        }
        let target = next
            .checked_sub(spec.step())
            .ok_or_else(|| SeqError::overflow(format!("next {next} - step {}", spec.step())))?;
        if !force {
            check_on_grid(spec, "next", next, "; pass force to set it anyway")?;
        }
        let machine = SetNextMachine {
            counter_id: counter_id.to_owned(),
            id: spec.counter_document_id(counter_id),
            counter_field: spec.counter_field().to_owned(),
            step: spec.step(),
            next,
            target,
            force,
            definition: CounterDefinition::of(spec),
            phase: Phase::Update,
            retries: Retries::default(),
        };
        let first = machine.update_command();
        Ok(MachinePlan::begin(machine, Ok(Step::Command(first))))
    }
}

impl SetNextMachine {
    fn id_filter(&self) -> Map<String, Value> {
        let mut filter = Map::new();
        filter.insert("_id".to_owned(), self.id.clone());
        filter
    }

    fn update_command(&self) -> Command {
        let mut filter = self.id_filter();
        if !self.force {
            let op = if self.step > 0 { "$lte" } else { "$gte" };
            let mut seq = integer_type_condition();
            seq.insert(op.to_owned(), ejson::long(self.target));
            filter.insert(self.counter_field.clone(), Value::Object(seq));
        }
        self.set_command(filter, self.force)
    }

    /// `$set` the target where `filter` matches, returning the document before.
    fn set_command(&self, mut filter: Map<String, Value>, upsert: bool) -> Command {
        self.definition.add_condition(&mut filter);
        let mut set = operator(&self.counter_field, ejson::long(self.target));
        if let Value::Object(set) = &mut set {
            self.definition.add_to(set);
        }
        let mut update = Map::new();
        update.insert("$set".to_owned(), set);
        Command::FindOneAndUpdate {
            collection: Collection::Counters,
            filter: Value::Object(filter),
            update: Value::Object(update),
            options: UpdateOptions {
                upsert,
                return_document: ReturnDocument::Before,
            },
        }
    }

    /// The last number a counter document holds.
    fn read(&self, document: &Value) -> Result<i64, SeqError> {
        read_counter_of(document, &self.counter_id, &self.id, &self.counter_field)
    }

    fn done(&self, previous_last: Option<i64>, created: bool) -> Step<SetNextOutcome> {
        Step::Done(SetNextOutcome {
            previous_last,
            created,
            next: self.next,
        })
    }

    fn find_command(&self) -> Command {
        Command::FindOne {
            collection: Collection::Counters,
            filter: Value::Object(self.id_filter()),
            options: None,
        }
    }

    fn restart(&mut self) -> Result<Step<SetNextOutcome>, SeqError> {
        self.retries.bump("setNext", &self.counter_id)?;
        self.phase = Phase::Update;
        Ok(Step::Command(self.update_command()))
    }

    fn transition(&mut self, reply: Reply) -> Result<Step<SetNextOutcome>, SeqError> {
        match (self.phase, reply) {
            (Phase::Update, Reply::Document { document }) if self.force => {
                Ok(self.done(self.read(&document).ok(), false))
            }
            (Phase::Update, Reply::Document { document }) => {
                Ok(self.done(Some(self.read(&document)?), false))
            }
            (Phase::Update, Reply::None) if self.force => Ok(self.done(None, true)),
            (Phase::Update, Reply::None) => {
                self.phase = Phase::Check;
                Ok(Step::Command(self.find_command()))
            }
            (Phase::Update, Reply::DuplicateKey) if self.force => {
                self.phase = Phase::ForcedCheck;
                Ok(Step::Command(self.find_command()))
            }
            (Phase::ForcedCheck, Reply::Document { document }) => {
                self.definition.check(&self.counter_id, &document)?;
                self.restart()
            }
            (Phase::ForcedCheck, Reply::None) => self.restart(),
            (Phase::ForcedCheck, other) => Err(unexpected(&other, "findOne")),
            (Phase::Update, other) => Err(unexpected(&other, "findOneAndUpdate")),
            (Phase::Check, Reply::Document { document }) => {
                self.definition.check(&self.counter_id, &document)?;
                let last = self.read(&document)?;
                let backwards = if self.step > 0 {
                    last > self.target
                } else {
                    last < self.target
                };
                if backwards {
                    return Err(SeqError::BackwardsRefused {
                        counter_id: self.counter_id.clone(),
                        last,
                        next: self.next,
                    });
                }
                match document
                    .get(&self.counter_field)
                    .filter(|seq| ejson::is_double(seq))
                {
                    // A legacy double: set it only while it still holds the value just read.
                    Some(stored) => {
                        self.retries.bump("setNext", &self.counter_id)?;
                        self.phase = Phase::CompareAndSet;
                        let mut filter = self.id_filter();
                        filter.insert(
                            self.counter_field.clone(),
                            ejson::object([("$eq", stored.clone()), ("$not", not_an_array())]),
                        );
                        Ok(Step::Command(self.set_command(filter, false)))
                    }
                    None => self.restart(),
                }
            }
            (Phase::Check, Reply::None) => {
                self.phase = Phase::Insert;
                let mut document = self.id_filter();
                document.insert(self.counter_field.clone(), ejson::long(self.target));
                self.definition.add_to(&mut document);
                Ok(Step::Command(Command::InsertOne {
                    collection: Collection::Counters,
                    document: Value::Object(document),
                }))
            }
            (Phase::Check, other) => Err(unexpected(&other, "findOne")),
            (Phase::CompareAndSet, Reply::Document { document }) => {
                Ok(self.done(Some(self.read(&document)?), false))
            }
            (Phase::CompareAndSet, Reply::None) => self.restart(),
            (Phase::CompareAndSet, other) => Err(unexpected(&other, "findOneAndUpdate")),
            (Phase::Insert, Reply::Inserted) => Ok(self.done(None, true)),
            (Phase::Insert, Reply::DuplicateKey) => self.restart(),
            (Phase::Insert, other) => Err(unexpected(&other, "insertOne")),
        }
    }
}

/// `next` (the argument `argument`) must be `start + k·step` for some `k ≥ 0`; `remedy` ends
/// the message. (i128: no i64 difference overflows.)
pub(crate) fn check_on_grid(
    spec: &SequenceSpec,
    argument: &str,
    next: i64,
    remedy: &str,
) -> Result<(), SeqError> {
    let (start, step) = (i128::from(spec.start()), i128::from(spec.step()));
    let offset = i128::from(next).saturating_sub(start);
    if offset != 0 && (offset < 0) != (step < 0) {
        return Err(SeqError::invalid_argument(
            argument,
            format!(
                "{next} is before the sequence's start {} (step {}){remedy}",
                spec.start(),
                spec.step()
            ),
        ));
    }
    let stride = step.saturating_abs();
    if offset.checked_rem_euclid(stride) == Some(0) {
        return Ok(());
    }
    let below = offset
        .checked_div_euclid(stride)
        .map_or(start, |k| start.saturating_add(k.saturating_mul(stride)));
    Err(SeqError::invalid_argument(
        argument,
        format!(
            "{next} is not on the sequence's grid start + k·step (start {}, step {}): the nearest are {} and {}{remedy}",
            spec.start(),
            spec.step(),
            wide(below),
            wide(below.saturating_add(stride))
        ),
    ))
}

/// An i128 of magnitude below 2^120 in decimal, through i64 formatting (`i128`'s own `Display`
/// would be in the Wasm module for this one message).
fn wide(value: i128) -> String {
    const SPLIT: i128 = 1_000_000_000_000_000_000; // 10^18
    match i64::try_from(value) {
        Ok(value) => value.to_string(),
        #[allow(clippy::cast_possible_truncation)] // |value / 10^18| < 2^61, remainder < 10^18
        Err(_) => format!(
            "{}{:018}",
            (value / SPLIT) as i64,
            (value % SPLIT).unsigned_abs() as u64
        ),
    }
}

impl Machine for SetNextMachine {
    type Output = SetNextOutcome;

    fn on_reply(&mut self, reply: Reply) -> Result<Step<SetNextOutcome>, SeqError> {
        self.transition(reply)
    }
}

#[cfg(test)]
mod tests {
    use super::wide;

    #[test]
    fn wide_values_print_in_decimal() {
        let max = i128::from(i64::MAX);
        let min = i128::from(i64::MIN);
        for value in [0, -1, max, min, max + 7, min - 7, 1 << 100, -(1 << 100)] {
            assert_eq!(wide(value), value.to_string());
        }
    }
}
