//! The counters collection on a sharded cluster. Every write on a counter finds it by its `_id`
//! alone (a `findAndModify` that may upsert, an insert, an update by `_id`), and a sharded
//! collection takes an upsert only when its filter holds the whole shard key. So the counters
//! collection — and the sidecar's state collection, whose lease documents are written the same
//! way — must be unsharded, or sharded on `{ _id: 1 }` or `{ _id: "hashed" }`: anything else is
//! [`SeqError::UnsupportedShardKey`], nothing written.
//!
//! Two ways to know, both read here from what the shells bring: the collection's entry in the
//! `config.collections` catalog (read through `mongos` before the first write; no entry, or one
//! marked `dropped`, is an unsharded collection), and, when that entry cannot be read (a user
//! without the privilege), the server's refusal of a counter write ([`SHARD_KEY_REFUSALS`]).

use serde_json::Value;

use crate::ejson;
use crate::error::SeqError;

/// Server error codes that refuse a write for its shard key: ShardKeyNotFound (61: "An upsert
/// on a sharded collection must contain the shard key", "Query for sharded findAndModify must
/// contain the shard key") and the shard key update refusal (31025). Neither can come from an
/// unsharded collection.
pub const SHARD_KEY_REFUSALS: [i64; 2] = [61, 31025];

/// Whether `key` (a shard key pattern) is `_id` alone, ranged (`1`) or hashed.
fn on_id_alone(key: &serde_json::Map<String, Value>) -> bool {
    let mut fields = key.iter();
    match (fields.next(), fields.next()) {
        (Some((field, direction)), None) if field == "_id" => {
            direction == "hashed" || ejson::read_i64(direction) == Ok(1)
        }
        _ => false,
    }
}

/// A shard key pattern as the shell writes it: `{ tenant: 1, _id: "hashed" }`.
pub(crate) fn shown(key: &serde_json::Map<String, Value>) -> String {
    let fields: Vec<String> = key
        .iter()
        .map(|(field, direction)| {
            let direction = match direction {
                Value::String(text) => ejson::quoted(text),
                other => {
                    ejson::read_i64(other).map_or_else(|_| other.to_string(), |n| n.to_string())
                }
            };
            format!("{field}: {direction}")
        })
        .collect();
    format!("{{ {} }}", fields.join(", "))
}

/// Checks the `config.collections` entry of `collection` (`db.coll`, named in the error): `None`
/// (not in the catalog: unsharded), an entry marked `dropped`, or one whose `key` is `_id`
/// alone passes.
pub fn check_shard_key(collection: &str, entry: Option<&Value>) -> Result<(), SeqError> {
    let Some(entry) = entry else {
        return Ok(());
    };
    if entry.get("dropped") == Some(&Value::Bool(true)) {
        return Ok(());
    }
    match entry.get("key") {
        Some(Value::Object(key)) if on_id_alone(key) => Ok(()),
        Some(Value::Object(key)) => Err(SeqError::UnsupportedShardKey {
            collection: collection.to_owned(),
            key: shown(key),
        }),
        Some(other) => Err(SeqError::unexpected_reply(format!(
            "the config.collections entry of {collection} has a `key` that is not a document: {}",
            ejson::truncate(&other.to_string())
        ))),
        None => Err(SeqError::unexpected_reply(format!(
            "the config.collections entry of {collection} has no `key`"
        ))),
    }
}

/// The error a server's refusal of a write on `collection` (`db.coll`) means, when its `code`
/// is one of [`SHARD_KEY_REFUSALS`]; `None` for any other code.
pub fn shard_key_refusal(collection: &str, code: i64, message: &str) -> Option<SeqError> {
    SHARD_KEY_REFUSALS
        .contains(&code)
        .then(|| SeqError::UnsupportedShardKey {
            collection: collection.to_owned(),
            key: format!(
                "a key other than `_id` (the server refused a write by `_id`: {} (code {code}))",
                ejson::truncate_to(message, 200)
            ),
        })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn unsharded_or_sharded_on_id_alone_passes() {
        for entry in [
            None,
            Some(json!({ "_id": "app.counters", "key": { "_id": 1 }, "unique": false })),
            Some(json!({ "_id": "app.counters", "key": { "_id": { "$numberInt": "1" } } })),
            Some(json!({ "_id": "app.counters", "key": { "_id": 1.0 } })),
            Some(json!({ "_id": "app.counters", "key": { "_id": "hashed" } })),
            // MongoDB before 5.0 kept dropped collections in the catalog, marked.
            Some(json!({ "_id": "app.counters", "key": { "tenant": 1 }, "dropped": true })),
        ] {
            assert_eq!(
                check_shard_key("app.counters", entry.as_ref()),
                Ok(()),
                "{entry:?}"
            );
        }
    }

    #[test]
    fn any_other_key_is_refused_naming_the_collection_the_key_and_the_fix() {
        for (key, shown) in [
            (json!({ "tenant": 1 }), "{ tenant: 1 }"),
            (json!({ "_id": 1, "tenant": 1 }), "{ _id: 1, tenant: 1 }"),
            (
                json!({ "tenant": "hashed", "_id": 1 }),
                "{ tenant: \"hashed\", _id: 1 }",
            ),
            (json!({ "_id": -1 }), "{ _id: -1 }"),
        ] {
            let entry = json!({ "_id": "app.counters", "key": key });
            let err = check_shard_key("app.counters", Some(&entry)).unwrap_err();
            assert_eq!(err.code(), "UNSUPPORTED_SHARD_KEY");
            let message = err.to_string();
            assert!(
                message.contains(&format!("app.counters is sharded on {shown}")),
                "{message}"
            );
            assert!(message.contains("unsharded collection"), "{message}");
            assert!(message.contains("{ _id: 1 }"), "{message}");
        }
        let entry = json!({ "_id": "app.counters", "key": "tenant" });
        assert_eq!(
            check_shard_key("app.counters", Some(&entry))
                .unwrap_err()
                .code(),
            "UNEXPECTED_REPLY"
        );
    }

    #[test]
    fn a_shard_key_refusal_of_a_write_is_read_as_the_same_error() {
        let refusal = "Failed to target upsert by query :: could not extract exact shard key";
        let err = shard_key_refusal("app.counters", 61, refusal).unwrap();
        assert_eq!(err.code(), "UNSUPPORTED_SHARD_KEY");
        assert!(err.to_string().contains(refusal), "{err}");
        assert!(err
            .to_string()
            .contains("app.counters is sharded on a key other than `_id`"));
        assert_eq!(
            shard_key_refusal("app.counters", 31025, "x").map(|e| e.code()),
            Some("UNSUPPORTED_SHARD_KEY")
        );
        assert_eq!(shard_key_refusal("app.counters", 11000, "dup"), None);
    }
}
