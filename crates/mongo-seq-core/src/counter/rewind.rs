//! `rewindAll`: every counter of a sequence back to its start — the counter without a scope and
//! every scoped one (`<name>` and `<name>/…`, [`SequenceSpec::counters_of`], and the one the
//! `counterId` option names), what
//! mongoose-sequence's `counterReset(id)` does without a reference. The next number of each is
//! `start` again. Only for collections whose documents were removed (tests, a new year's
//! series): numbers already stored would be issued twice.
//!
//! A gapless sequence (the sidecar's `mode = "gapless"`) is refused unless forced: its numbers
//! must stay gapless, and a counter with a pending intent is mid-batch. Which counters are kept
//! is [`crate::counter::kept`]'s rule: the caller says whether the sequence is gapless when it
//! knows (`gapless: Some(_)`, the sidecar from its trigger); otherwise (`None`, the package) a
//! counter a sidecar trigger keeps — its definition records `gapless`, or it holds a lease
//! `epoch` — counts as one. Kept counters are refused before definitions are compared: a gapless
//! trigger's definition differs from the package's by `gapless`, and "kept" is the answer.
//!
//! ```text
//! find {$or: counters_of(name)} projection {_id, intent, epoch, definition}
//!  ├─ none ────────────────────────────► done {rewound: 0}; of_existing: INVALID_ARGUMENT
//!  ├─ gapless, a pending intent, or (mode unknown) a gapless definition or an epoch, and no force ─► REWIND_REFUSED
//!  ├─ a counter of another definition ─► SEQUENCE_CONFLICT
//!  └─ updateMany {$or: counters_of(name), $and: [{$or: definition absent or D}][, intent absent[, epoch absent]]}
//!                {$set: {<counterField>: start - step, definition: D}[, $unset: {intent}]} ─► done {rewound: n}
//! ```
//!
//! The sequence's [definition](crate::counter::definition) is checked like a reservation's: a
//! counter found with another one is `SEQUENCE_CONFLICT` (force or not: a definition is
//! rewritten by `adopt`), and the update's filter admits only counters without one or with
//! ours (`$and: [{$or: [{definition: {$exists: false}}, {definition: D}]}]`, beside the
//! counters' own `$or`) and `$set`s it.
//!
//! [`RewindSequence::of_existing`] is the rewind of a sequence the caller names as one that exists
//! (mongoose-sequence's `counterReset(id)`, the plugin's `rewindSequence`, `mongo-seq rewind`): a
//! name no counter has is a typo far more often than a wish, so it is refused, nothing written,
//! rather than "rewound 0 counters" (a sequence is created by its first number, never by a rewind).
//!
//! The conditions a check passed are in the update's filter too, so a counter that became a
//! trigger's (or got an intent) in between is left alone, and `rewound` counts what was written.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::counter::definition::CounterDefinition;
use crate::counter::kept;
use crate::ejson;
use crate::error::SeqError;
use crate::protocol::command::{operator, Collection, Command};
use crate::protocol::machine::{Machine, MachinePlan};
use crate::protocol::plan::Step;
use crate::protocol::reply::{unexpected, Reply};
use crate::sequence::options::SequenceSpec;

/// What `rewindAll` did: how many counters it set back, and the number each issues next.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RewindOutcome {
    pub rewound: u64,
    pub next: i64,
}

/// The rewind plan; see the module docs.
pub type RewindSequence = MachinePlan<RewindMachine>;

/// The state of a [`RewindSequence`].
#[derive(Debug, Clone)]
pub struct RewindMachine {
    spec: SequenceSpec,
    force: bool,
    gapless: Option<bool>,
    existing: bool,
    definition: CounterDefinition,
    updating: bool,
}

impl RewindSequence {
    /// `gapless`: whether the sequence is gapless, when the caller knows (`None`: a counter a
    /// sidecar trigger keeps counts as gapless); `force` resets anyway.
    pub fn new(spec: &SequenceSpec, force: bool, gapless: Option<bool>) -> Self {
        Self::build(spec, force, gapless, false)
    }

    /// [`RewindSequence::new`] for a sequence named as one that exists: none of its counters
    /// found is `INVALID_ARGUMENT` (`sequence`), nothing written.
    pub fn of_existing(spec: &SequenceSpec, force: bool, gapless: Option<bool>) -> Self {
        Self::build(spec, force, gapless, true)
    }

    fn build(spec: &SequenceSpec, force: bool, gapless: Option<bool>, existing: bool) -> Self {
        let command = kept::find_counters(spec);
        let machine = RewindMachine {
            spec: spec.clone(),
            force,
            gapless,
            existing,
            definition: CounterDefinition::of(spec),
            updating: false,
        };
        MachinePlan::begin(machine, Ok(Step::Command(command)))
    }
}

impl RewindMachine {
    fn outcome(&self, rewound: u64) -> Step<RewindOutcome> {
        Step::Done(RewindOutcome {
            rewound,
            next: self.spec.start(),
        })
    }

    /// Why the counters found may not be rewound without force, if they may not.
    fn refusal(&self, counters: &[Value]) -> Option<String> {
        if self.force {
            return None;
        }
        kept::refusal(counters, self.gapless)
    }

    fn update(&mut self) -> Step<RewindOutcome> {
        let mut filter = Map::new();
        filter.insert("$or".to_owned(), self.spec.counters_of());
        let mut condition = Map::new();
        self.definition.add_condition(&mut condition);
        filter.insert(
            "$and".to_owned(),
            Value::Array(vec![Value::Object(condition)]),
        );
        if !self.force {
            kept::add_conditions(&mut filter, self.gapless);
        }
        let mut set = Map::new();
        set.insert(
            self.spec.counter_field().to_owned(),
            ejson::long(self.spec.initial_counter()),
        );
        self.definition.add_to(&mut set);
        let mut update = Map::new();
        update.insert("$set".to_owned(), Value::Object(set));
        if self.force {
            update.insert("$unset".to_owned(), operator("intent", "".into()));
        }
        self.updating = true;
        Step::Command(Command::UpdateMany {
            collection: Collection::Counters,
            filter: Value::Object(filter),
            update: Value::Object(update),
        })
    }
}

impl Machine for RewindMachine {
    type Output = RewindOutcome;

    fn on_reply(&mut self, reply: Reply) -> Result<Step<RewindOutcome>, SeqError> {
        if self.updating {
            let result = reply.into_write_result("updateMany")?;
            if let Some(error) = result.write_errors.into_iter().next() {
                return Err(error.into());
            }
            return Ok(self.outcome(result.n));
        }
        let counters = match reply {
            Reply::Documents { documents } => documents,
            other => return Err(unexpected(&other, "find")),
        };
        if counters.is_empty() {
            if self.existing {
                return Err(SeqError::InvalidArgument {
                    argument: "sequence".to_owned(),
                    reason: format!(
                        "`{}` has no counter: nothing to rewind (a sequence is created by its first number, never by a rewind)",
                        self.spec.name()
                    ),
                });
            }
            return Ok(self.outcome(0));
        }
        // Kept counters first: a gapless trigger's counter records `gapless`, which the
        // package's definition lacks, and "kept by a sidecar" is the answer its user needs.
        if let Some(reason) = self.refusal(&counters) {
            return Err(SeqError::RewindRefused {
                name: self.spec.name().to_owned(),
                counters: u64::try_from(counters.len()).unwrap_or(u64::MAX),
                reason,
            });
        }
        for counter in &counters {
            let id = counter.get("_id").map_or_else(String::new, |id| match id {
                Value::String(id) => id.clone(),
                other => other.to_string(),
            });
            self.definition.check(&id, counter)?;
        }
        Ok(self.update())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Plan, WriteResult};
    use serde_json::json;

    fn spec() -> SequenceSpec {
        SequenceSpec::parse(&json!({"name": "orders", "scope": ["tenant"], "start": 10})).unwrap()
    }

    fn found(documents: Value) -> Reply {
        Reply::Documents {
            documents: documents.as_array().cloned().unwrap(),
        }
    }

    #[test]
    fn resets_every_scope_and_counts_them() {
        let mut plan = RewindSequence::new(&spec(), false, None);
        let Ok(Step::Command(Command::Find { filter, .. })) = plan.current_step() else {
            panic!("find first")
        };
        assert_eq!(
            filter,
            json!({"$or": [{"_id": "orders"}, {"_id": {"$gte": "orders/", "$lt": "orders0"}}]})
        );
        let step = plan.feed(found(
            json!([{"_id": "orders/tenant=a"}, {"_id": "orders/tenant=b"}]),
        ));
        let Ok(Step::Command(Command::UpdateMany { filter, update, .. })) = step else {
            panic!("{step:?}")
        };
        assert_eq!(filter["intent"], json!({"$exists": false}));
        assert_eq!(filter["epoch"], json!({"$exists": false}));
        let definition = json!({"start": {"$numberLong": "10"}, "step": {"$numberLong": "1"}});
        assert_eq!(
            filter["$and"],
            json!([{"$or": [{"definition": {"$exists": false}}, {"definition": definition}]}])
        );
        assert_eq!(
            update,
            json!({"$set": {"seq": {"$numberLong": "9"}, "definition": definition, "definitionDigest": "2e96a49a55d5fa67"}})
        );
        let done = plan.feed(Reply::WriteResult(WriteResult {
            n: 2,
            ..WriteResult::default()
        }));
        assert_eq!(
            done,
            Ok(Step::Done(RewindOutcome {
                rewound: 2,
                next: 10
            }))
        );
    }

    #[test]
    fn refuses_gapless_counters_unless_forced() {
        let counters = json!([{"_id": "orders/tenant=a", "epoch": 3}]);
        for (gapless, refused) in [(None, true), (Some(true), true), (Some(false), false)] {
            let mut plan = RewindSequence::new(&spec(), false, gapless);
            let step = plan.feed(found(counters.clone()));
            assert_eq!(
                step.as_ref().err().map(SeqError::code),
                refused.then_some("REWIND_REFUSED"),
                "{gapless:?}: {step:?}"
            );
        }
        let mut plan = RewindSequence::new(&spec(), false, Some(false));
        let error = plan
            .feed(found(json!([{"_id": "orders", "intent": {"first": 1}}])))
            .unwrap_err();
        assert!(
            error.to_string().contains("pending gapless intent"),
            "{error}"
        );
        let mut forced = RewindSequence::new(&spec(), true, Some(true));
        let Ok(Step::Command(Command::UpdateMany { filter, update, .. })) =
            forced.feed(found(counters))
        else {
            panic!("force resets")
        };
        assert!(filter.get("epoch").is_none() && filter.get("intent").is_none());
        assert_eq!(update["$unset"], json!({"intent": ""}));
    }

    #[test]
    fn a_gapless_trigger_s_counter_is_kept_before_its_definition_differs() {
        // The package's definition lacks `gapless`: "kept" is the answer, not SEQUENCE_CONFLICT.
        let counter = json!([{"_id": "orders", "definition": {"start": {"$numberLong": "10"}, "step": {"$numberLong": "1"}, "gapless": true}}]);
        let mut plan = RewindSequence::new(&spec(), false, None);
        let error = plan.feed(found(counter.clone())).unwrap_err();
        assert_eq!(error.code(), "REWIND_REFUSED", "{error}");
        let mut forced = RewindSequence::new(&spec(), true, None);
        assert_eq!(
            forced.feed(found(counter)).unwrap_err().code(),
            "SEQUENCE_CONFLICT"
        );
    }

    #[test]
    fn nothing_to_rewind() {
        let mut plan = RewindSequence::new(&spec(), false, None);
        assert_eq!(
            plan.feed(found(json!([]))),
            Ok(Step::Done(RewindOutcome {
                rewound: 0,
                next: 10
            }))
        );
        // Named as an existing sequence: refused.
        let mut existing = RewindSequence::of_existing(&spec(), true, None);
        let error = existing.feed(found(json!([]))).unwrap_err();
        assert_eq!(error.code(), "INVALID_ARGUMENT");
        assert!(
            error
                .to_string()
                .contains("`orders` has no counter: nothing to rewind"),
            "{error}"
        );
    }
}
