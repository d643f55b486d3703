//! `adopt`: rewrite a counter's [definition](crate::counter::definition) on purpose — after
//! the sequence's options changed (a new `max`, a `format`), when a counter made under other
//! options is to be numbered under these — and say what changed.
//!
//! One `findOneAndUpdate({_id, <counterField>: {$exists: true}}, {$set: {definition: D,
//! definitionDigest: H}}, returnDocument: before)`, no upsert (both rewritten: reservations
//! filter on the digest): a counter that does not exist is refused
//! (`INVALID_ARGUMENT` naming `counterId`), nothing written. The number is left as it is:
//! adopting a definition never moves a counter (`setNext` does, on the grid of the new one).
//!
//! ```text
//! findOneAndUpdate {_id, seq: {$exists: true}} {$set: {definition: D, definitionDigest: H}} before
//!  ├─ document ─► done {counterId, previous: its definition or null, definition: D, changed}
//!  └─ none ─────► INVALID_ARGUMENT (no such counter; nothing written)
//! ```

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::counter::definition::{CounterDefinition, FIELD};
use crate::error::SeqError;
use crate::protocol::command::{operator, Collection, Command, ReturnDocument, UpdateOptions};
use crate::protocol::machine::{Machine, MachinePlan};
use crate::protocol::plan::Step;
use crate::protocol::reply::{unexpected, Reply};
use crate::sequence::options::SequenceSpec;

/// What `adopt` did: the definition the counter had (`null`: none), the one it has now (their
/// integers as plain numbers), and the options that differ between them (empty: it already had
/// it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AdoptOutcome {
    pub counter_id: String,
    pub previous: Value,
    pub definition: Value,
    pub changed: Vec<String>,
}

/// The adopt plan; see the module docs.
pub type AdoptDefinition = MachinePlan<AdoptMachine>;

/// The state of an [`AdoptDefinition`].
#[derive(Debug, Clone)]
pub struct AdoptMachine {
    counter_id: String,
    definition: CounterDefinition,
}

impl AdoptDefinition {
    pub fn new(spec: &SequenceSpec, counter_id: &str) -> Result<Self, SeqError> {
        spec.check_counter_id(counter_id)?;
        let definition = CounterDefinition::of(spec);
        let mut filter = spec.id_filter(counter_id);
        filter.insert(
            spec.counter_field().to_owned(),
            operator("$exists", true.into()),
        );
        let mut set = Map::new();
        definition.add_to(&mut set);
        let command = Command::FindOneAndUpdate {
            collection: Collection::Counters,
            filter: Value::Object(filter),
            update: operator("$set", Value::Object(set)),
            options: UpdateOptions {
                upsert: false,
                return_document: ReturnDocument::Before,
            },
        };
        let machine = AdoptMachine {
            counter_id: counter_id.to_owned(),
            definition,
        };
        Ok(MachinePlan::begin(machine, Ok(Step::Command(command))))
    }
}

impl Machine for AdoptMachine {
    type Output = AdoptOutcome;

    fn on_reply(&mut self, reply: Reply) -> Result<Step<AdoptOutcome>, SeqError> {
        match reply {
            Reply::Document { document } => {
                let previous = document.get(FIELD).cloned();
                Ok(Step::Done(AdoptOutcome {
                    counter_id: self.counter_id.clone(),
                    changed: self.definition.changes(previous.as_ref()),
                    previous: previous.map_or(Value::Null, |p| CounterDefinition::readable(&p)),
                    definition: CounterDefinition::readable(&self.definition.document()),
                }))
            }
            Reply::None => Err(SeqError::invalid_argument(
                "counterId",
                format!(
                    "counter {} does not exist: there is no definition to adopt (nothing was written; its first reservation records the sequence's definition)",
                    crate::ejson::quoted(&self.counter_id)
                ),
            )),
            other => Err(unexpected(&other, "findOneAndUpdate")),
        }
    }
}
