//! `current()`: where a counter stands, read with one `findOne({_id})` and no writes.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::counter::document::read_spec_counter;
use crate::error::SeqError;
use crate::protocol::command::{Collection, Command};
use crate::protocol::machine::{Machine, MachinePlan};
use crate::protocol::plan::Step;
use crate::protocol::reply::{unexpected, Reply};
use crate::sequence::options::SequenceSpec;

/// Where a counter stands: the last number issued (`null` when the counter does not exist)
/// and the number the next reservation would start with (`null` when exhausted).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CounterState {
    pub last: Option<i64>,
    pub next: Option<i64>,
}

impl CounterState {
    pub(crate) fn of(spec: &SequenceSpec, last: Option<i64>) -> Self {
        let next = match last {
            Some(last) => spec.next_after(last),
            None => Some(spec.start()),
        };
        Self { last, next }
    }
}

/// `current()`: one `findOne({_id})`, no writes.
pub type CurrentValue = MachinePlan<CurrentValueMachine>;

/// The state of a [`CurrentValue`].
#[derive(Debug, Clone)]
pub struct CurrentValueMachine {
    spec: SequenceSpec,
    counter_id: String,
}

impl CurrentValue {
    pub fn new(spec: &SequenceSpec, counter_id: &str) -> Result<Self, SeqError> {
        spec.check_counter_id(counter_id)?;
        let command = Command::FindOne {
            collection: Collection::Counters,
            filter: Value::Object(spec.id_filter(counter_id)),
            options: None,
        };
        let machine = CurrentValueMachine {
            spec: spec.clone(),
            counter_id: counter_id.to_owned(),
        };
        Ok(MachinePlan::begin(machine, Ok(Step::Command(command))))
    }
}

impl Machine for CurrentValueMachine {
    type Output = CounterState;

    fn on_reply(&mut self, reply: Reply) -> Result<Step<CounterState>, SeqError> {
        match reply {
            Reply::Document { document } => {
                read_spec_counter(&self.spec, &document, &self.counter_id)
                    .and_then(|last| self.spec.check_counter(&self.counter_id, last))
                    .map(|last| Step::Done(CounterState::of(&self.spec, Some(last))))
            }
            Reply::None => Ok(Step::Done(CounterState::of(&self.spec, None))),
            other => Err(unexpected(&other, "findOne")),
        }
    }
}
