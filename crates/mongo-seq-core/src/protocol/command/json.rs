//! A [`Command`] as canonical Extended JSON and back: the `op` tag, its fields, then the
//! concerns the core chose; reading one back drops the concerns (they follow from the command).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::{Collection, Command, ReturnDocument, UpdateStatement};
use crate::ejson;

impl Serialize for Command {
    /// The command's own fields, then its concerns, written straight to `serializer` (no
    /// intermediate `Value`: this runs once per round trip of every plan).
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = serializer.serialize_map(None)?;
        let mut failed = None;
        self.for_each_field(&mut |key, value| {
            if failed.is_none() {
                failed = map.serialize_entry(key, &value).err();
            }
        });
        match failed {
            Some(error) => Err(error),
            None => map.end(),
        }
    }
}

/// A value of [`Command::for_each_field`]: borrowed from the command where it can be.
enum Field<'a> {
    Value(&'a Value),
    List(&'a [Value]),
    Statements(&'a [UpdateStatement]),
    Owned(Value),
}

impl Serialize for Field<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Value(value) => value.serialize(serializer),
            Self::List(values) => values.serialize(serializer),
            Self::Statements(statements) => statements.serialize(serializer),
            Self::Owned(value) => value.serialize(serializer),
        }
    }
}

impl Field<'_> {
    fn into_value(self) -> Value {
        match self {
            Self::Value(value) => value.clone(),
            Self::List(values) => Value::Array(values.to_vec()),
            Self::Statements(statements) => statements
                .iter()
                .map(|statement| {
                    ejson::object([
                        ("filter", statement.filter.clone()),
                        ("update", statement.update.clone()),
                    ])
                })
                .collect(),
            Self::Owned(value) => value,
        }
    }
}

impl Command {
    /// The command as JSON: the `op` tag, its fields in declaration order, then the concerns.
    pub fn to_json(&self) -> Value {
        let mut fields = Map::new();
        self.for_each_field(&mut |key, value| {
            fields.insert(key.to_owned(), value.into_value());
        });
        Value::Object(fields)
    }

    /// Calls `put` with each key and value of the command as JSON: the `op` tag, its fields in
    /// declaration order, then the concerns. Written out rather than derived: a derived
    /// serializer is one more copy of serde's machinery (and its error path) in the Wasm
    /// module; borrowed values let [`Serialize`] write the command without copying it.
    fn for_each_field(&self, put: &mut dyn FnMut(&'static str, Field<'_>)) {
        fn number(value: u64) -> Field<'static> {
            Field::Owned(Value::from(value))
        }
        fn text(value: &str) -> Field<'static> {
            Field::Owned(Value::from(value))
        }
        let collection = |collection: &Collection| text(collection.name());
        match self {
            Self::FindOneAndUpdate {
                collection: on,
                filter,
                update,
                options,
            } => {
                put("op", text("findOneAndUpdate"));
                put("collection", collection(on));
                put("filter", Field::Value(filter));
                put("update", Field::Value(update));
                put(
                    "options",
                    Field::Owned(ejson::object([
                        ("upsert", Value::Bool(options.upsert)),
                        (
                            "returnDocument",
                            match options.return_document {
                                ReturnDocument::Before => "before",
                                ReturnDocument::After => "after",
                            }
                            .into(),
                        ),
                    ])),
                );
            }
            Self::FindOne {
                collection: on,
                filter,
                options,
            } => {
                put("op", text("findOne"));
                put("collection", collection(on));
                put("filter", Field::Value(filter));
                if let Some(options) = options {
                    put(
                        "options",
                        Field::Owned(ejson::object([
                            ("sort", options.sort.clone()),
                            ("projection", options.projection.clone()),
                        ])),
                    );
                }
            }
            Self::InsertOne {
                collection: on,
                document,
            } => {
                put("op", text("insertOne"));
                put("collection", collection(on));
                put("document", Field::Value(document));
            }
            Self::InsertDocument {
                collection: on,
                fields: set,
                duplicate_key_on,
            } => {
                put("op", text("insertDocument"));
                put("collection", collection(on));
                put("fields", Field::Value(set));
                if let Some(field) = duplicate_key_on {
                    put("duplicateKeyOn", text(field));
                }
            }
            Self::InsertDocuments {
                collection: on,
                first,
                fields: set,
                duplicate_key_on,
            } => {
                put("op", text("insertDocuments"));
                put("collection", collection(on));
                put("first", number(*first));
                put("fields", Field::List(set));
                put("duplicateKeyOn", text(duplicate_key_on));
            }
            Self::Take { counter_id, count } => {
                put("op", text("take"));
                put("counterId", text(counter_id));
                put("count", number(*count));
            }
            Self::Find {
                collection: on,
                filter,
                options,
                ..
            } => {
                put("op", text("find"));
                put("collection", collection(on));
                put("filter", Field::Value(filter));
                if !options.is_empty() {
                    let mut map = Map::new();
                    if let Some(projection) = &options.projection {
                        map.insert("projection".to_owned(), projection.clone());
                    }
                    if let Some(sort) = &options.sort {
                        map.insert("sort".to_owned(), sort.clone());
                    }
                    if let Some(limit) = options.limit {
                        map.insert("limit".to_owned(), Value::from(limit));
                    }
                    put("options", Field::Owned(Value::Object(map)));
                }
            }
            Self::Update {
                collection: on,
                updates,
                ordered,
            } => {
                put("op", text("update"));
                put("collection", collection(on));
                put("updates", Field::Statements(updates));
                put("ordered", Field::Owned(Value::Bool(*ordered)));
            }
            Self::UpdateMany {
                collection: on,
                filter,
                update,
            } => {
                put("op", text("updateMany"));
                put("collection", collection(on));
                put("filter", Field::Value(filter));
                put("update", Field::Value(update));
            }
            Self::Aggregate {
                collection: on,
                pipeline,
            } => {
                put("op", text("aggregate"));
                put("collection", collection(on));
                put("pipeline", Field::List(pipeline));
            }
            Self::CreateIndex {
                collection: on,
                name,
                keys,
                unique,
                partial_filter_expression,
            } => {
                put("op", text("createIndex"));
                put("collection", collection(on));
                put("name", text(name));
                put("keys", Field::Value(keys));
                put("unique", Field::Owned(Value::Bool(*unique)));
                if let Some(expression) = partial_filter_expression {
                    put("partialFilterExpression", Field::Value(expression));
                }
            }
            Self::DropIndex {
                collection: on,
                name,
            } => {
                put("op", text("dropIndex"));
                put("collection", collection(on));
                put("name", text(name));
            }
            Self::Wait { min_ms, max_ms } => {
                put("op", text("wait"));
                put("minMs", number(*min_ms));
                put("maxMs", number(*max_ms));
            }
            Self::LocalDates {
                time_zone,
                instants,
            } => {
                put("op", text("localDates"));
                put("timeZone", text(time_zone));
                put(
                    "instants",
                    Field::Owned(instants.iter().map(|&ms| Value::from(ms)).collect()),
                );
            }
        }
        if let Some(concern) = self.write_concern() {
            put(
                "writeConcern",
                Field::Owned(ejson::object([("w", concern.w)])),
            );
        }
        if let Some(concern) = self.read_concern() {
            put("readConcern", Field::Owned(concern.to_json()));
        }
        if let Some(ms) = self.max_time_ms() {
            put("maxTimeMS", number(ms));
        }
    }
}

impl<'de> Deserialize<'de> for Command {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        let mut value = Value::deserialize(deserializer)?;
        if let Value::Object(fields) = &mut value {
            // Derived from the command itself: whatever the text said is not kept, except a
            // find's `afterClusterTime`, which is the command's own (`Find::after_cluster_time`).
            fields.remove("writeConcern");
            fields.remove("maxTimeMS");
            let mut concern = fields.remove("readConcern");
            let after = concern
                .as_mut()
                .and_then(|concern| concern.get_mut("afterClusterTime").map(Value::take));
            let find = fields.get("op").and_then(Value::as_str) == Some("find");
            if let (Some(after), true) = (after, find) {
                fields.insert("afterClusterTime".to_owned(), after);
            } else if find
                && fields.get("collection").and_then(Value::as_str) == Some("documents")
                && concern
                    .as_ref()
                    .and_then(|c| c.get("level"))
                    .and_then(Value::as_str)
                    == Some("majority")
            {
                // A documents find read `majority` without an anchor (`QueryOptions::majority`).
                let mut command = Command::deserialize(value).map_err(D::Error::custom)?;
                if let Command::Find { options, .. } = &mut command {
                    options.majority = true;
                }
                return Ok(command);
            }
        }
        Command::deserialize(value).map_err(D::Error::custom)
    }
}
