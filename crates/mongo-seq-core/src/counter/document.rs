//! Counter documents: reading the last number issued from one.
//!
//! A counter is `{ _id: <counter id>, seq: <last value issued> }`, exactly the document
//! MongoDB's auto-increment tutorial creates, so counters made by its `getNextSequence()`
//! keep working. A fresh counter holds `start - step` (the tutorial's `seq: 0` for the
//! defaults). `seq` may be any BSON integer type or an integral double up to 2^53.
//!
//! The sequence option `counterField` names that field otherwise, so counters other recipes
//! made keep working in place: `{ _id, sequence }` (the Go block-allocation article),
//! `{ _id: "<db>.<collection>", seq_value }` (the Atlas trigger recipe). It is a plain
//! top-level field; `_id`, and `epoch` and `intent` (the sidecar's fencing and gapless
//! protocols keep them in the counter document) are reserved.

use serde_json::{json, Value};

use crate::ejson;
use crate::error::SeqError;
use crate::protocol::command::{Collection, Command, QueryOptions};
use crate::sequence::options::SequenceSpec;

/// The read of the counter documents, sorted by `_id` (each series' periods together, in
/// order): every one, or with `only` the counters of that sequence.
pub fn list_counters(only: Option<&SequenceSpec>) -> Command {
    Command::Find {
        collection: Collection::Counters,
        filter: only.map_or_else(|| json!({}), |spec| json!({ "$or": spec.counters_of() })),
        options: QueryOptions {
            sort: Some(json!({ "_id": 1 })),
            ..QueryOptions::default()
        },
        after_cluster_time: None,
    }
}

/// Reads the last number issued (`field`, `seq` by default) from a counter document, checking
/// that `_id` is the expected counter.
pub fn read_counter(document: &Value, counter_id: &str, field: &str) -> Result<i64, SeqError> {
    read_counter_of(
        document,
        counter_id,
        &Value::String(counter_id.to_owned()),
        field,
    )
}

/// [`read_counter`] of `spec`'s counter `counter_id`: its counter field, and the `counterId`
/// option's `_id` when it names that counter.
pub(crate) fn read_spec_counter(
    spec: &SequenceSpec,
    document: &Value,
    counter_id: &str,
) -> Result<i64, SeqError> {
    read_counter_of(
        document,
        counter_id,
        &spec.counter_document_id(counter_id),
        spec.counter_field(),
    )
}

/// [`read_counter`] of a counter whose `_id` is `id` (the `counterId` option's document).
pub(crate) fn read_counter_of(
    document: &Value,
    counter_id: &str,
    id: &Value,
    field: &str,
) -> Result<i64, SeqError> {
    let Value::Object(map) = document else {
        return Err(SeqError::malformed_counter(
            counter_id,
            format!("expected a document, got {}", ejson::describe(document)),
        ));
    };
    match map.get("_id") {
        // The filter matched the `_id` exactly (documents in field order); the reply is checked
        // to be that counter's.
        Some(found) if found == id => {}
        Some(other) => {
            return Err(SeqError::malformed_counter(
                counter_id,
                format!(
                    "reply is for another counter (_id {})",
                    ejson::describe(other)
                ),
            ))
        }
        None => {
            return Err(SeqError::malformed_counter(
                counter_id,
                "document has no `_id`",
            ))
        }
    }
    let seq = map.get(field).ok_or_else(|| {
        SeqError::malformed_counter(counter_id, format!("document has no `{field}` field"))
    })?;
    ejson::read_i64(seq).map_err(|reason| {
        SeqError::malformed_counter(counter_id, format!("field `{field}` {reason}"))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::plan::Plan;
    use crate::Reply;
    use crate::{Reservation, ReserveRequest, SequenceSpec, Step};
    use serde_json::json;

    #[test]
    fn the_counters_are_listed_in_id_order_all_or_those_of_a_sequence() {
        let Command::Find {
            collection,
            filter,
            options,
            ..
        } = list_counters(None)
        else {
            panic!("not a find");
        };
        assert_eq!(collection, Collection::Counters);
        assert_eq!(filter, json!({}));
        assert_eq!(options.sort, Some(json!({"_id": 1})));
        let spec = SequenceSpec::parse(&json!({"name": "inv"})).unwrap();
        let Command::Find { filter, .. } = list_counters(Some(&spec)) else {
            panic!("not a find");
        };
        assert_eq!(filter, json!({"$or": spec.counters_of()}));
    }

    #[test]
    fn a_counter_key_document_is_the_counters_id_in_order() {
        let spec = SequenceSpec::parse(&json!({
            "name": "students", "counterField": "seq_value",
            "counterId": {"db": "school", "coll": "students"}
        }))
        .unwrap();
        assert_eq!(
            spec.counter_document_id("students"),
            json!({"db": "school", "coll": "students"})
        );
        let plan = Reservation::new(&spec, &ReserveRequest::new("students", 1)).unwrap();
        let Ok(Step::Command(command)) = plan.current_step() else {
            panic!()
        };
        let text = serde_json::to_string(&command).unwrap();
        assert!(
            text.contains(r#""_id":{"db":"school","coll":"students"}"#),
            "{text}"
        );
        let reply = |id: Value| Reply::Document {
            document: json!({"_id": id, "seq_value": 7}),
        };
        let ours = plan
            .clone()
            .feed(reply(json!({"db": "school", "coll": "students"})));
        assert!(matches!(ours, Ok(Step::Done(_))), "{ours:?}");
        let mut plan = plan;
        let other = plan.feed(reply(json!({"db": "school", "coll": "teachers"})));
        assert_eq!(other.unwrap_err().code(), "MALFORMED_COUNTER");
    }

    #[test]
    fn counter_key_rules() {
        let code = |options: Value| {
            SequenceSpec::parse(&options)
                .err()
                .map(|e| (e.code(), e.option_name().map(str::to_owned)))
        };
        assert_eq!(code(json!({"name": "a", "counterId": "shop.orders"})), None);
        assert_eq!(code(json!({"name": "a", "counterId": null})), None);
        for bad in [
            json!({"name": "a", "counterId": {"db": "x"}, "scope": ["t"]}),
            json!({"name": "a", "counterId": {}}),
            json!({"name": "a", "counterId": {"$in": [1]}}),
            json!({"name": "a", "counterId": ""}),
            json!({"name": "a", "counterId": 5}),
            json!({"name": "a", "counterId": [1]}),
            json!({"name": "a", "counterId": {"x": "y".repeat(1001)}}),
        ] {
            assert_eq!(
                code(bad.clone()),
                Some(("INVALID_OPTION", Some("counterId".to_owned()))),
                "{bad}"
            );
        }
    }
}
