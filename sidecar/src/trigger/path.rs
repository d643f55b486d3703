//! Field paths in the Extended JSON documents a trigger reads and writes: the trigger's `match`
//! rewritten for change events (whose inserted document is `fullDocument`). Reading a path is
//! the core's (`mongo_seq_core::sequence::field::stored_value`).

use serde_json::{Map, Value};

/// Rewrites a `match` expression on document fields into one on the change event's
/// `prefix` (field names are prefixed; `$and`/`$or`/`$nor` are followed).
pub fn prefix_filter(filter: &Map<String, Value>, prefix: &str) -> Map<String, Value> {
    let mut out = Map::new();
    for (key, value) in filter {
        if matches!(key.as_str(), "$and" | "$or" | "$nor") {
            let items = match value {
                Value::Array(items) => items
                    .iter()
                    .map(|item| match item {
                        Value::Object(inner) => Value::Object(prefix_filter(inner, prefix)),
                        other => other.clone(),
                    })
                    .collect(),
                other => vec![other.clone()],
            };
            out.insert(key.clone(), Value::Array(items));
        } else if key.starts_with('$') {
            out.insert(key.clone(), value.clone());
        } else {
            out.insert(format!("{prefix}.{key}"), value.clone());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn prefixes_match_fields() {
        let m = json!({ "type": "invoice", "$or": [{ "a": 1 }, { "b.c": { "$gt": 2 } }] });
        let Value::Object(m) = m else { unreachable!() };
        assert_eq!(
            Value::Object(prefix_filter(&m, "fullDocument")),
            json!({ "fullDocument.type": "invoice", "$or": [{ "fullDocument.a": 1 }, { "fullDocument.b.c": { "$gt": 2 } }] })
        );
    }
}
