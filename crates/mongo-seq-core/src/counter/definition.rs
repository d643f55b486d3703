//! The definition a counter records beside its number: the options that decide which
//! numbers it hands out and how they read, so a second process with other options is refused
//! (`SEQUENCE_CONFLICT`) instead of interleaving numbers with the first.
//!
//! Stored as the sub-document [`FIELD`] of the counter, written by the core in one canonical key
//! order with int64 integers, and beside it its digest [`DIGEST_FIELD`]: the first 16 hex digits
//! of the SHA-256 of the definition's canonical Extended JSON text (compact, keys in canonical
//! order, integers as `{"$numberLong": "…"}`; for `{start: 1, step: 1}`
//! `{"start":{"$numberLong":"1"},"step":{"$numberLong":"1"}}`). Every write that records a
//! definition records its digest with it.
//!
//! The check costs no extra round trip: a reservation's filter holds it. Its common case is the
//! digest alone (`definitionDigest: H`, [`CounterDefinition::add_digest_condition`]): a counter
//! that records our definition already, numbered by one short equality. A counter the digest
//! does not admit — one without a definition (the tutorial's, an import's), one written before
//! digests existed (a definition, no digest), or one with another definition — is read on the
//! conflict path: another definition is `SEQUENCE_CONFLICT` naming the option that differs; the
//! others are recorded by the write that follows, whose filter admits no definition or exactly
//! ours (`$or: [{definition: {$exists: false}}, {definition: D}]`, [`CounterDefinition::add_condition`]:
//! MongoDB compares embedded documents field by field, in order) and `$set`s both fields. The
//! definition is the truth and the digest its short form: a reply whose definition differs from
//! ours though the digest matched (a definition rewritten by a release before digests, which
//! left the old digest) is `SEQUENCE_CONFLICT` too ([`CounterDefinition::check`]).
//!
//! Options at their "not set" value are left out, so a counter
//! written before an option existed keeps matching a sequence that does not use it. A series
//! that resets records its `reset`, `timeZone` and (yearly) `yearStart` always, at their
//! defaults too (`UTC`, 1): they decide which period a number belongs to, so a reader of the
//! counter sees the rule without knowing the defaults, and counters have recorded them so since
//! definitions exist (leaving them out now would make every such counter differ from its own
//! sequence: `SEQUENCE_CONFLICT` on all of them).
//!
//! In the definition: `start`, `step`, `min`, `max`, `reset`, `timeZone` and `yearStart` (a
//! sequence that resets: they decide which period a number belongs to), `format`, `gapless`
//! (numbered by a gapless trigger: [`SequenceSpec::with_gapless`]), `sealFields` (a sealed
//! series: another process sealing other fields would break the chain). Not in it: `block`,
//! `refillAhead` (per process), `counterField`, `counterId`, `scope` (layout: they decide which
//! document is the counter, not what it hands out), and a bound that is exactly a number type's
//! limit ([`TYPE_LIMITS`]: the mongoose plugin bounds a `Number` field's sequence at 2^53 − 1, an
//! `Int32` one at 2^31 − 1, when the options set none): it says what one process can store, not
//! which numbers the series has, and a service numbering the same series through the package,
//! the Rust library or the sidecar must not be refused for it. Adding an option is one line in
//! [`CounterDefinition::entries`].

use serde_json::{Map, Value};

use crate::ejson;
use crate::error::{DefinitionConflict, SeqError};
use crate::seal::link::sha256_hex;
use crate::sequence::options::SequenceSpec;
use crate::sequence::period::Reset;

/// The counter document's field holding its definition.
pub const FIELD: &str = "definition";

/// The counter document's field holding its definition's digest (module docs).
pub const DIGEST_FIELD: &str = "definitionDigest";

/// Hex digits of the SHA-256 a digest keeps: 64 bits, for telling a handful of definitions apart.
const DIGEST_HEX_DIGITS: usize = 16;

/// Bounds a client's number type imposes (JavaScript's exact integers, BSON's int32), left out
/// of a definition (module docs).
pub const TYPE_LIMITS: [i64; 4] = [(1 << 53) - 1, -((1 << 53) - 1), (1 << 31) - 1, -(1 << 31)];

/// A bound as a definition records it: `None` for none, or for a number type's limit.
fn bound(value: Option<i64>) -> Option<Value> {
    value
        .filter(|bound| !TYPE_LIMITS.contains(bound))
        .map(ejson::long)
}

/// One counter's definition, in canonical order. Build with [`CounterDefinition::of`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CounterDefinition {
    document: Map<String, Value>,
    digest: String,
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
    /// The definition of `spec`'s counters (`gapless` when the spec says they are numbered by
    /// the gapless protocol).
    pub fn of(spec: &SequenceSpec) -> Self {
        let mut document = Map::new();
        for (key, value) in Self::entries(spec) {
            if let Some(value) = value {
                document.insert(key.to_owned(), value);
            }
        }
        let digest = Self::digest_of(&document);
        Self { document, digest }
    }

    /// The digest of a definition document: its canonical text's SHA-256, shortened.
    fn digest_of(document: &Map<String, Value>) -> String {
        let text = Value::Object(document.clone()).to_string();
        let mut digest = sha256_hex(&text);
        digest.truncate(DIGEST_HEX_DIGITS);
        digest
    }

    /// The digest as stored beside the definition ([`DIGEST_FIELD`]).
    pub fn digest(&self) -> &str {
        &self.digest
    }

    /// True when `counter` records our digest: the digest condition admits it.
    pub fn digest_recorded(&self, counter: &Value) -> bool {
        counter.get(DIGEST_FIELD).and_then(Value::as_str) == Some(self.digest.as_str())
    }

    /// Every option of a definition, in canonical order; `None` leaves the key out.
    fn entries(spec: &SequenceSpec) -> [(&'static str, Option<Value>); 10] {
        let reset = spec.reset();
        let periodic = reset.is_periodic();
        [
            ("start", Some(ejson::long(spec.start()))),
            ("step", Some(ejson::long(spec.step()))),
            ("min", bound(spec.min())),
            ("max", bound(spec.max())),
            ("reset", periodic.then(|| reset.name().into())),
            ("timeZone", periodic.then(|| spec.time_zone().into())),
            (
                "yearStart",
                (reset == Reset::Yearly).then(|| ejson::long(i64::from(spec.year_start()))),
            ),
            ("format", spec.format().map(|f| f.as_str().into())),
            ("gapless", spec.gapless().then_some(Value::Bool(true))),
            (
                "sealFields",
                spec.sealed()
                    .then(|| spec.seal_fields().iter().cloned().collect()),
            ),
        ]
    }

    /// The definition as stored, from a counter document: `None` when it has none (a counter of
    /// the tutorial's, another recipe's or an older version's).
    pub fn stored(counter: &Value) -> Option<&Value> {
        counter.get(FIELD)
    }

    /// A definition (ours or a stored one) for people and for outputs: its integers as plain
    /// numbers instead of Extended JSON (`{start: 1, step: 2}`); anything else as it is.
    pub fn readable(definition: &Value) -> Value {
        match definition {
            Value::Object(map) => Value::Object(
                map.iter()
                    .map(|(key, value)| {
                        let plain = match value {
                            Value::Object(_) => {
                                ejson::read_i64(value).map_or(value.clone(), Value::from)
                            }
                            other => other.clone(),
                        };
                        (key.clone(), plain)
                    })
                    .collect(),
            ),
            other => other.clone(),
        }
    }

    /// The sub-document as written to the counter.
    pub fn document(&self) -> Value {
        Value::Object(self.document.clone())
    }

    /// The recording write's condition: a counter without a definition (the tutorial's, an
    /// older version's: it is given one by the same update), or one with exactly ours.
    pub fn filter_condition(&self) -> Value {
        let mut absent = Map::new();
        absent.insert(FIELD.to_owned(), ejson::object([("$exists", false.into())]));
        let mut equal = Map::new();
        equal.insert(FIELD.to_owned(), self.document());
        Value::Array(vec![Value::Object(absent), Value::Object(equal)])
    }

    /// Adds the condition to a write's filter (`$or`: a filter holds no other; `extraFilter`
    /// refuses one).
    pub fn add_condition(&self, filter: &mut Map<String, Value>) {
        filter.insert("$or".to_owned(), self.filter_condition());
    }

    /// Adds the digest's condition to a reservation's filter: a counter that records our
    /// definition (module docs); any other is read on the conflict path.
    pub fn add_digest_condition(&self, filter: &mut Map<String, Value>) {
        filter.insert(DIGEST_FIELD.to_owned(), self.digest.clone().into());
    }

    /// Adds the definition and its digest to a write's `$set` (or to a counter about to be
    /// inserted, or an upsert's `$setOnInsert`).
    pub fn add_to(&self, fields: &mut Map<String, Value>) {
        fields.insert(FIELD.to_owned(), self.document());
        fields.insert(DIGEST_FIELD.to_owned(), self.digest.clone().into());
    }

    /// `SEQUENCE_CONFLICT` when `counter` (a counter document read on the conflict path)
    /// records another definition than ours.
    pub fn check(&self, counter_id: &str, counter: &Value) -> Result<(), SeqError> {
        match counter {
            Value::Object(counter) => match self.difference(counter) {
                Some(difference) => Err(self.conflict(counter_id, counter, difference)),
                None => Ok(()),
            },
            _ => Ok(()),
        }
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

    /// Every option in which `stored` (a counter's stored definition; `None`: it has none)
    /// differs from ours, in canonical order then the stored-only ones: what `adopt` reports.
    pub fn changes(&self, stored: Option<&Value>) -> Vec<String> {
        let Some(Value::Object(stored)) = stored else {
            return self.document.keys().cloned().collect();
        };
        self.document
            .keys()
            .chain(
                stored
                    .keys()
                    .filter(|key| !self.document.contains_key(*key)),
            )
            .filter(|key| !same_value(self.document.get(*key), stored.get(*key)))
            .cloned()
            .collect()
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
                ours: Self::readable(&self.document()),
                stored: counter.get(FIELD).map_or(Value::Null, Self::readable),
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
        let plain = CounterDefinition::of(&spec(json!({"name": "invoice"})));
        assert_eq!(
            plain.document(),
            json!({"start": {"$numberLong": "1"}, "step": {"$numberLong": "1"}})
        );
        let full = CounterDefinition::of(
            &spec(
                json!({"name": "invoice", "max": 9, "min": 0, "step": 3, "start": 3, "format": "INV-{yyyy}-{seq}", "yearStart": 4, "reset": "yearly", "timeZone": "Europe/Madrid"}),
            )
            .with_gapless(true),
        );
        let keys: Vec<_> = full.document.keys().cloned().collect();
        assert_eq!(
            keys,
            [
                "start",
                "step",
                "min",
                "max",
                "reset",
                "timeZone",
                "yearStart",
                "format",
                "gapless"
            ]
        );
        assert_eq!(full.document["yearStart"], json!({"$numberLong": "4"}));
        let monthly = CounterDefinition::of(&spec(json!({"name": "invoice", "reset": "monthly"})));
        assert_eq!(
            monthly.document(),
            json!({"start": {"$numberLong": "1"}, "step": {"$numberLong": "1"}, "reset": "monthly", "timeZone": "UTC"})
        );
    }

    #[test]
    fn a_number_type_s_limit_is_not_part_of_it() {
        let plain = CounterDefinition::of(&spec(json!({"name": "invoice"})));
        for options in [
            json!({"name": "invoice", "max": 9_007_199_254_740_991_i64}),
            json!({"name": "invoice", "max": 2_147_483_647}),
            json!({"name": "invoice", "min": -2_147_483_648_i64}),
        ] {
            assert_eq!(CounterDefinition::of(&spec(options)), plain);
        }
        let bounded = CounterDefinition::of(&spec(json!({"name": "invoice", "max": 1000})));
        assert_ne!(bounded, plain);
    }

    #[test]
    fn per_process_and_layout_options_are_not_part_of_it() {
        let a = CounterDefinition::of(&spec(json!({"name": "invoice"})));
        let b = CounterDefinition::of(&spec(
            json!({"name": "invoice", "block": 50, "refillAhead": true, "counterField": "n"}),
        ));
        assert_eq!(a, b);
    }

    #[test]
    fn filter_condition_admits_no_definition_or_exactly_ours() {
        let definition = CounterDefinition::of(&spec(json!({"name": "invoice"})));
        assert_eq!(
            definition.filter_condition(),
            json!([{"definition": {"$exists": false}}, {"definition": definition.document()}])
        );
    }

    #[test]
    fn difference_names_the_first_option_that_differs() {
        let ours = CounterDefinition::of(&spec(json!({"name": "invoice", "step": 1})));
        assert_eq!(ours.difference(&Map::new()), None);
        assert_eq!(ours.difference(&counter(ours.document())), None);
        // An int32 equals our int64, as on the server.
        assert_eq!(
            ours.difference(&counter(json!({"start": 1, "step": 1}))),
            None
        );
        let theirs =
            CounterDefinition::of(&spec(json!({"name": "invoice", "step": 2, "start": 2})));
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
