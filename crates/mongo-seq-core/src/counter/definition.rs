//! The definition a counter records beside its number (issue 20): the options that decide which
//! numbers it hands out and how they read, so a second process with other options is refused
//! (`SEQUENCE_CONFLICT`) instead of interleaving numbers with the first.
//!
//! Stored as the sub-document [`FIELD`] of the counter, written by the core in one canonical key
//! order with int64 integers: MongoDB compares embedded documents field by field, in order, so
//! the reservation's own filter (`$or: [{definition: {$exists: false}}, {definition: D}]`) is the
//! check, at no extra round trip. Options at their "not set" value are left out, so a counter
//! written before an option existed keeps matching a sequence that does not use it.
//!
//! In the definition: `start`, `step`, `min`, `max`, `format`, `gapless`. Not in it: `block`,
//! `refillAhead` (per process), `counterField`, `counterId`, `scope` (layout: they decide which
//! document is the counter, not what it hands out). Adding an option (the series' `reset`,
//! `timeZone`, `yearStart`) is one line in [`CounterDefinition::entries`].

use serde_json::{Map, Value};

use crate::ejson;
use crate::error::{DefinitionConflict, SeqError};
use crate::sequence::options::SequenceSpec;

/// The counter document's field holding its definition.
pub const FIELD: &str = "definition";

/// One counter's definition, in canonical order. Build with [`CounterDefinition::of`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CounterDefinition {
    document: Map<String, Value>,
}

/// The first option in which a stored definition differs from ours.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Difference {
    /// The option's key; `"(key order)"` when the options agree but the stored document lists
    /// them in another order (written by hand), which MongoDB's equality does not accept.
    pub option: String,
    /// Our value (`None`: not set).
    pub ours: Option<Value>,
    /// The stored value (`None`: not set).
    pub stored: Option<Value>,
}

impl CounterDefinition {
    /// The definition of `spec`'s counters; `gapless` when they are numbered by the gapless
    /// protocol.
    pub fn of(spec: &SequenceSpec, gapless: bool) -> Self {
        let mut document = Map::new();
        for (key, value) in Self::entries(spec, gapless) {
            if let Some(value) = value {
                document.insert(key.to_owned(), value);
            }
        }
        Self { document }
    }

    /// Every option of a definition, in canonical order; `None` leaves the key out.
    fn entries(spec: &SequenceSpec, gapless: bool) -> [(&'static str, Option<Value>); 6] {
        [
            ("start", Some(ejson::long(spec.start()))),
            ("step", Some(ejson::long(spec.step()))),
            ("min", spec.min().map(ejson::long)),
            ("max", spec.max().map(ejson::long)),
            ("format", spec.format().map(|f| f.as_str().into())),
            ("gapless", gapless.then_some(Value::Bool(true))),
        ]
    }

    /// The sub-document as written to the counter.
    pub fn document(&self) -> Value {
        Value::Object(self.document.clone())
    }

    /// The reservation filter's condition: a counter without a definition (the tutorial's, an
    /// older version's: it is given one by the same update), or one with exactly ours.
    pub fn filter_condition(&self) -> Value {
        let mut absent = Map::new();
        absent.insert(FIELD.to_owned(), ejson::object([("$exists", false.into())]));
        let mut equal = Map::new();
        equal.insert(FIELD.to_owned(), self.document());
        Value::Array(vec![Value::Object(absent), Value::Object(equal)])
    }

    /// How a counter document's stored definition differs from ours: `None` when it has none
    /// or the same (values compared as numbers, so an int32 equals our int64 like on the
    /// server).
    pub fn difference(&self, counter: &Map<String, Value>) -> Option<Difference> {
        let stored = match counter.get(FIELD) {
            None => return None,
            Some(Value::Object(stored)) => stored,
            Some(other) => {
                return Some(Difference {
                    option: FIELD.to_owned(),
                    ours: Some(self.document()),
                    stored: Some(other.clone()),
                })
            }
        };
        let keys = self.document.keys().chain(
            stored
                .keys()
                .filter(|key| !self.document.contains_key(*key)),
        );
        for key in keys {
            let (ours, theirs) = (self.document.get(key), stored.get(key));
            if !same_value(ours, theirs) {
                return Some(Difference {
                    option: key.clone(),
                    ours: ours.cloned(),
                    stored: theirs.cloned(),
                });
            }
        }
        if !stored.keys().eq(self.document.keys()) {
            return Some(Difference {
                option: "(key order)".to_owned(),
                ours: Some(self.document()),
                stored: Some(Value::Object(stored.clone())),
            });
        }
        None
    }

    /// `SEQUENCE_CONFLICT` for `counter` (a counter document whose definition differs from ours
    /// as `difference` says).
    pub fn conflict(
        &self,
        counter_id: &str,
        counter: &Map<String, Value>,
        difference: Difference,
    ) -> SeqError {
        SeqError::SequenceConflict {
            counter_id: counter_id.to_owned(),
            conflict: Box::new(DefinitionConflict {
                option: difference.option,
                our_value: difference.ours,
                stored_value: difference.stored,
                ours: self.document(),
                stored: counter.get(FIELD).cloned().unwrap_or(Value::Null),
            }),
        }
    }
}

/// Equal as the server compares them: integers by value whatever their width.
fn same_value(a: Option<&Value>, b: Option<&Value>) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => match (ejson::read_i64(a), ejson::read_i64(b)) {
            (Ok(a), Ok(b)) => a == b,
            _ => a == b,
        },
        (None, None) => true,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn spec(options: Value) -> SequenceSpec {
        SequenceSpec::parse(&options).unwrap()
    }

    fn counter(definition: Value) -> Map<String, Value> {
        let mut counter = Map::new();
        counter.insert("_id".to_owned(), "invoice".into());
        counter.insert("seq".to_owned(), 5.into());
        counter.insert(FIELD.to_owned(), definition);
        counter
    }

    #[test]
    fn canonical_order_int64_and_unset_options_left_out() {
        let plain = CounterDefinition::of(&spec(json!({"name": "invoice"})), false);
        assert_eq!(
            plain.document(),
            json!({"start": {"$numberLong": "1"}, "step": {"$numberLong": "1"}})
        );
        let full = CounterDefinition::of(
            &spec(
                json!({"name": "invoice", "max": 9, "min": 0, "step": 3, "start": 3, "format": "INV-{seq}"}),
            ),
            true,
        );
        let keys: Vec<_> = full.document.keys().cloned().collect();
        assert_eq!(keys, ["start", "step", "min", "max", "format", "gapless"]);
    }

    #[test]
    fn per_process_and_layout_options_are_not_part_of_it() {
        let a = CounterDefinition::of(&spec(json!({"name": "invoice"})), false);
        let b = CounterDefinition::of(
            &spec(
                json!({"name": "invoice", "block": 50, "refillAhead": true, "counterField": "n"}),
            ),
            false,
        );
        assert_eq!(a, b);
    }

    #[test]
    fn filter_condition_admits_no_definition_or_exactly_ours() {
        let definition = CounterDefinition::of(&spec(json!({"name": "invoice"})), false);
        assert_eq!(
            definition.filter_condition(),
            json!([{"definition": {"$exists": false}}, {"definition": definition.document()}])
        );
    }

    #[test]
    fn difference_names_the_first_option_that_differs() {
        let ours = CounterDefinition::of(&spec(json!({"name": "invoice", "step": 1})), false);
        assert_eq!(ours.difference(&Map::new()), None);
        assert_eq!(ours.difference(&counter(ours.document())), None);
        // An int32 equals our int64, as on the server.
        assert_eq!(
            ours.difference(&counter(json!({"start": 1, "step": 1}))),
            None
        );
        let theirs = CounterDefinition::of(
            &spec(json!({"name": "invoice", "step": 2, "start": 2})),
            false,
        );
        let difference = ours.difference(&counter(theirs.document())).unwrap();
        assert_eq!(difference.option, "start");
        // A key only the stored definition has (a newer version's option) differs too.
        let difference = ours
            .difference(&counter(json!({"start": 1, "step": 1, "reset": "yearly"})))
            .unwrap();
        assert_eq!(
            (
                difference.option.as_str(),
                difference.ours,
                difference.stored
            ),
            ("reset", None, Some(json!("yearly")))
        );
        // Same options in another order: MongoDB's equality refuses it, so it is a difference.
        let difference = ours
            .difference(&counter(json!({"step": 1, "start": 1})))
            .unwrap();
        assert_eq!(difference.option, "(key order)");
        // Not a document at all.
        let difference = ours.difference(&counter(json!("v1"))).unwrap();
        assert_eq!(difference.option, "definition");
    }
}
