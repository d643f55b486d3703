//! Why a trigger's unique index cannot be built (the server's duplicate key on
//! [`NumberingSpec::unique_index`]): a number held by several documents of one counter, found
//! with one `aggregate` ([`held_twice`]) and read back ([`HeldTwice::read`]) so that the error
//! names it in the trigger's words instead of the server's.

use serde_json::{json, Map, Value};

use crate::numbering::spec::NumberingSpec;
use crate::protocol::command::{Collection, Command};

/// The `aggregate` finding at most one number held twice among the numbered documents: one
/// document `{_id: {n, s0, s1, …}, count}` (the number, the scope values in the sequence's
/// order, how many documents hold it), none when no number is held twice.
pub fn held_twice(numbering: &NumberingSpec) -> Command {
    let mut group = Map::new();
    group.insert(
        "n".to_owned(),
        Value::String(format!("${}", numbering.field())),
    );
    for (i, scope) in numbering.sequence().scope().iter().enumerate() {
        group.insert(format!("s{i}"), Value::String(format!("${scope}")));
    }
    Command::Aggregate {
        collection: Collection::Documents,
        pipeline: vec![
            json!({ "$match": numbering.numbered() }),
            json!({ "$group": { "_id": group, "count": { "$sum": 1 } } }),
            json!({ "$match": { "count": { "$gt": 1 } } }),
            json!({ "$limit": 1 }),
        ],
    }
}

/// A number held twice, as [`held_twice`] found it (values as stored, `None` when absent).
#[derive(Debug, Clone, PartialEq)]
pub struct HeldTwice<'a> {
    pub number: Option<&'a Value>,
    /// Each scope field of the sequence, with its value.
    pub scope: Vec<(&'a str, Option<&'a Value>)>,
    /// How many documents hold it.
    pub count: Option<&'a Value>,
}

impl<'a> HeldTwice<'a> {
    /// Reads a document of [`held_twice`]'s reply.
    pub fn read(numbering: &'a NumberingSpec, found: &'a Value) -> Self {
        let key = found.get("_id");
        let at = |name: &str| key.and_then(|key| key.get(name));
        Self {
            number: at("n"),
            scope: numbering
                .sequence()
                .scope()
                .iter()
                .enumerate()
                .map(|(i, name)| (name.as_str(), at(&format!("s{i}"))))
                .collect(),
            count: found.get("count"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_number_held_twice_is_found_with_its_scope_values() {
        let numbering = NumberingSpec::from_json(
            &json!({"sequence": {"name": "s", "scope": ["tenant"]}, "field": "no"}),
        )
        .unwrap();
        let Command::Aggregate { pipeline, .. } = held_twice(&numbering) else {
            panic!("not an aggregate");
        };
        assert_eq!(
            pipeline.get(1),
            Some(
                &json!({ "$group": { "_id": { "n": "$no", "s0": "$tenant" }, "count": { "$sum": 1 } } })
            )
        );
        let found = json!({"_id": {"n": 7, "s0": "acme"}, "count": 2});
        assert_eq!(
            HeldTwice::read(&numbering, &found),
            HeldTwice {
                number: Some(&json!(7)),
                scope: vec![("tenant", Some(&json!("acme")))],
                count: Some(&json!(2)),
            }
        );
    }
}
