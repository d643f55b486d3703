//! Which counters only a mongo-seq sidecar's gapless numbering may move: the rule every tool
//! that would move a sequence's counters outside that numbering applies — [`RewindSequence`]
//! (`rewindAll`) and [`CheckNotKept`] (what a caller runs before taking a number on purpose
//! outside the sidecar, the mongoose plugin's `doc.setNext()`).
//!
//! A counter is kept when it holds a pending gapless intent (a sidecar is numbering a batch
//! from it), or — for a caller that does not know whether the sequence is gapless (the
//! package) — when its [definition](crate::counter::definition) records `gapless`, or it holds
//! a lease `epoch` (a sidecar trigger numbers from it, maybe gaplessly: a counter written
//! before definitions existed does not say). A caller that knows says so (`gapless: Some(_)`,
//! the sidecar from its trigger): a gapless sequence is kept whole.
//! The rule is for the whole sequence (every counter [`SequenceSpec::counters_of`] finds): a
//! scope or period a trigger has not numbered yet belongs to it as much as those it has.
//!
//! ```text
//! CheckNotKept: find {$or: counters_of(name)} projection {_id, intent, epoch, definition}
//!  ├─ a counter kept (a pending intent, a gapless definition, an epoch) ─► GAPLESS_REFUSED
//!  └─ otherwise ─► done {counters: n}
//! ```
//!
//! [`RewindSequence`]: crate::counter::rewind::RewindSequence

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::counter::definition;
use crate::ejson;
use crate::error::SeqError;
use crate::protocol::command::{operator, Collection, Command, QueryOptions};
use crate::protocol::machine::{Machine, MachinePlan};
use crate::protocol::plan::Step;
use crate::protocol::reply::{unexpected, Reply};
use crate::sequence::options::SequenceSpec;

/// The counter fields the rule reads (with `_id`, to name the counters).
pub const FIELDS: [&str; 4] = ["_id", "intent", "epoch", definition::FIELD];

/// Why `counters` (documents with [`FIELDS`]) may not be moved outside the sidecar's numbering,
/// if they may not. `gapless`: whether the sequence is gapless, when the caller knows.
pub fn refusal(counters: &[Value], gapless: Option<bool>) -> Option<String> {
    let ids = |key: &str| -> Vec<String> {
        counters
            .iter()
            .filter(|c| c.get(key).is_some_and(|v| !v.is_null()))
            .map(|c| describe_id(c.get("_id")))
            .collect()
    };
    let pending = ids("intent");
    if !pending.is_empty() {
        return Some(format!(
            "{} pending gapless intent ({}): a sidecar is numbering a batch from it",
            plural(pending.len(), "counter holds a", "counters hold a"),
            list(&pending)
        ));
    }
    if gapless == Some(true) {
        return Some("the sequence is gapless: its numbers must stay gapless".to_owned());
    }
    let recorded: Vec<String> = counters
        .iter()
        .filter(|c| {
            c.get(definition::FIELD)
                .and_then(|d| d.get("gapless"))
                .is_some_and(|g| g == &Value::Bool(true))
        })
        .map(|c| describe_id(c.get("_id")))
        .collect();
    if gapless.is_none() && !recorded.is_empty() {
        return Some(format!(
            "the sequence is gapless: {} ({}), numbered by a mongo-seq sidecar's gapless trigger",
            plural(recorded.len(), "counter records it", "counters record it"),
            list(&recorded)
        ));
    }
    let kept = ids("epoch");
    if gapless.is_none() && !kept.is_empty() {
        return Some(format!(
            "{} kept by a mongo-seq sidecar trigger ({}; it holds a lease `epoch`), which may number gaplessly",
            plural(kept.len(), "counter is", "counters are"),
            list(&kept)
        ));
    }
    None
}

/// The conditions [`refusal`] checked, for the filter of the write that follows the read: a
/// counter that became kept in between is left alone.
pub fn add_conditions(filter: &mut Map<String, Value>, gapless: Option<bool>) {
    let absent = operator("$exists", false.into());
    filter.insert("intent".to_owned(), absent.clone());
    if gapless.is_none() {
        filter.insert("epoch".to_owned(), absent);
    }
}

/// The find of every counter of `spec` with the fields the rule reads.
pub(crate) fn find_counters(spec: &SequenceSpec) -> Command {
    let mut projection = Map::new();
    for key in FIELDS {
        projection.insert((*key).to_owned(), 1.into());
    }
    Command::Find {
        collection: Collection::Counters,
        filter: operator("$or", spec.counters_of()),
        options: QueryOptions {
            projection: Some(Value::Object(projection)),
            sort: Some(operator("_id", 1.into())),
            limit: None,
            majority: false,
        },
        after_cluster_time: None,
    }
}

/// What [`CheckNotKept`] found: how many counters the sequence has (none kept).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct KeptCheck {
    pub counters: u64,
}

/// The check; see the module docs.
pub type CheckNotKept = MachinePlan<CheckNotKeptMachine>;

/// The state of a [`CheckNotKept`].
#[derive(Debug, Clone)]
pub struct CheckNotKeptMachine {
    name: String,
}

impl CheckNotKept {
    /// For a caller that does not know whether the sequence is gapless (see the module docs).
    pub fn new(spec: &SequenceSpec) -> Self {
        let machine = CheckNotKeptMachine {
            name: spec.name().to_owned(),
        };
        MachinePlan::begin(machine, Ok(Step::Command(find_counters(spec))))
    }
}

impl Machine for CheckNotKeptMachine {
    type Output = KeptCheck;

    fn on_reply(&mut self, reply: Reply) -> Result<Step<KeptCheck>, SeqError> {
        let counters = match reply {
            Reply::Documents { documents } => documents,
            other => return Err(unexpected(&other, "find")),
        };
        let count = u64::try_from(counters.len()).unwrap_or(u64::MAX);
        if let Some(reason) = refusal(&counters, None) {
            return Err(SeqError::GaplessRefused {
                name: self.name.clone(),
                counters: count,
                reason,
            });
        }
        Ok(Step::Done(KeptCheck { counters: count }))
    }
}

pub(crate) fn describe_id(id: Option<&Value>) -> String {
    match id {
        Some(Value::String(id)) => ejson::quoted(&ejson::truncate_to(id, 60)),
        Some(other) => ejson::describe(other),
        None => "no _id".to_owned(),
    }
}

/// At most three ids, then how many more.
fn list(ids: &[String]) -> String {
    let shown: Vec<&str> = ids.iter().take(3).map(String::as_str).collect();
    match ids.len().saturating_sub(shown.len()) {
        0 => shown.join(", "),
        more => format!("{}, and {more} more", shown.join(", ")),
    }
}

fn plural(count: usize, one: &str, many: &str) -> String {
    if count == 1 {
        format!("1 {one}")
    } else {
        format!("{count} {many}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Plan;
    use serde_json::json;

    fn spec() -> SequenceSpec {
        SequenceSpec::parse(&json!({"name": "orders", "scope": ["tenant"]})).unwrap()
    }

    fn found(documents: Value) -> Reply {
        Reply::Documents {
            documents: documents.as_array().cloned().unwrap(),
        }
    }

    #[test]
    fn a_sequence_a_sidecar_keeps_is_refused_whole() {
        let mut plan = CheckNotKept::new(&spec());
        let Ok(Step::Command(Command::Find {
            filter, options, ..
        })) = plan.current_step()
        else {
            panic!("find first")
        };
        assert_eq!(
            filter,
            json!({"$or": [{"_id": "orders"}, {"_id": {"$gte": "orders/", "$lt": "orders0"}}]})
        );
        assert_eq!(
            options.projection,
            Some(json!({"_id": 1, "intent": 1, "epoch": 1, "definition": 1}))
        );
        let error = plan
            .feed(found(json!([
                {"_id": "orders/tenant=a"},
                {"_id": "orders/tenant=b", "epoch": 4}
            ])))
            .unwrap_err();
        assert_eq!(error.code(), "GAPLESS_REFUSED");
        assert!(
            error
                .to_string()
                .contains("1 counter is kept by a mongo-seq sidecar trigger (\"orders/tenant=b\""),
            "{error}"
        );
        let mut pending = CheckNotKept::new(&spec());
        let error = pending
            .feed(found(json!([{"_id": "orders", "intent": {"first": 1}}])))
            .unwrap_err();
        assert!(
            error.to_string().contains("pending gapless intent"),
            "{error}"
        );
    }

    #[test]
    fn counters_no_sidecar_keeps_pass() {
        for (counters, count) in [
            (json!([]), 0),
            (
                json!([{"_id": "orders/tenant=a", "epoch": null}, {"_id": "orders"}]),
                2,
            ),
        ] {
            let mut plan = CheckNotKept::new(&spec());
            assert_eq!(
                plan.feed(found(counters)),
                Ok(Step::Done(KeptCheck { counters: count }))
            );
        }
    }
}
