//! What to import: the plugin whose counters are adopted, where they are, and the names and
//! counter field mongo-seq gives them. Parsed from the caller's options with
//! [`ImportRequest::from_json`]; errors name the option.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::ejson;
use crate::error::SeqError;

/// The plugin whose counters are imported.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CounterSource {
    MongooseSequence,
    AutoIncrement,
}

impl CounterSource {
    const NAMES: [&'static str; 2] = ["mongoose-sequence", "auto-increment"];

    /// The plugin's default counter collection.
    pub fn default_collection(self) -> &'static str {
        match self {
            Self::MongooseSequence => "counters",
            Self::AutoIncrement => "identitycounters",
        }
    }
}

/// What to import. Parse raw JSON with [`ImportRequest::from_json`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ImportRequest {
    pub from: CounterSource,
    /// Write (else a dry run: read and report only).
    pub apply: bool,
    /// The source collection (the plugin's default collection when not given).
    pub source: String,
    /// mongo-seq's counters collection (default `counters`).
    pub counters: String,
    /// Sequence names by source key (`id`, or `model.field`): every value a string. Values
    /// rather than strings: a `BTreeMap<String, Value>` is what `serde_json::Map` holds in the
    /// Wasm module, so its code is there anyway; another map type would be one more copy of the
    /// B-tree. (Not `serde_json::Map` itself: with serde_json's `preserve_order`, which other
    /// crates of the workspace turn on, it keeps insertion order, not sorted.)
    pub names: BTreeMap<String, Value>,
    /// The counter field of the mongo-seq counters written (`seq` by default).
    pub counter_field: Option<String>,
}

const REQUEST_KEYS: [&str; 6] = [
    "from",
    "apply",
    "source",
    "counters",
    "names",
    "counterField",
];

impl ImportRequest {
    /// Parses `{ from, apply?, source?, counters?, names?, counterField? }`; errors name the key.
    pub fn from_json(raw: &Value) -> Result<Self, SeqError> {
        let invalid = |option: &str, reason: String| SeqError::InvalidOption {
            option: option.to_owned(),
            reason,
        };
        let Value::Object(map) = raw else {
            return Err(invalid(
                "options",
                format!(
                    "must be an object {{ from, apply, … }}, got {}",
                    ejson::describe(raw)
                ),
            ));
        };
        if let Some(key) = map.keys().find(|k| !REQUEST_KEYS.contains(&k.as_str())) {
            return Err(SeqError::UnknownOption {
                key: key.clone(),
                known: REQUEST_KEYS.join(", "),
            });
        }
        let from = match map.get("from") {
            Some(Value::String(name)) if name == "mongoose-sequence" => {
                CounterSource::MongooseSequence
            }
            Some(Value::String(name)) if name == "auto-increment" => CounterSource::AutoIncrement,
            other => {
                return Err(invalid(
                    "from",
                    format!(
                        "must be one of {}, got {}",
                        CounterSource::NAMES.join(", "),
                        other.map_or_else(|| "nothing".to_owned(), ejson::describe)
                    ),
                ))
            }
        };
        let apply = match map.get("apply") {
            None | Some(Value::Null) => false,
            Some(Value::Bool(apply)) => *apply,
            Some(other) => {
                return Err(invalid(
                    "apply",
                    format!("must be a boolean, got {}", ejson::describe(other)),
                ))
            }
        };
        let collection = |key: &str, default: &str| -> Result<String, SeqError> {
            match map.get(key) {
                None | Some(Value::Null) => Ok(default.to_owned()),
                Some(Value::String(name)) => {
                    crate::sequence::name::check_collection_name(key, name, None)?;
                    Ok(name.clone())
                }
                Some(other) => Err(invalid(
                    key,
                    format!("must be a collection name, got {}", ejson::describe(other)),
                )),
            }
        };
        let source = collection("source", from.default_collection())?;
        let counters = collection("counters", "counters")?;
        // mongoose-sequence's collection can be made mongo-seq's (see the import module docs).
        if source == counters && from == CounterSource::AutoIncrement {
            return Err(invalid(
                "counters",
                format!("`{counters}` is the auto-increment plugins' collection, whose unique index on {{ field, model }} admits one document without those fields: give mongo-seq another counters collection, or drop that index and import with a `source` other than `{counters}`"),
            ));
        }
        let mut names = BTreeMap::new();
        match map.get("names") {
            None | Some(Value::Null) => {}
            Some(Value::Object(given)) => {
                for (key, name) in given {
                    let Value::String(name) = name else {
                        return Err(invalid(
                            "names",
                            format!(
                                "maps source keys to sequence names; `{}` maps to {}",
                                ejson::truncate(key),
                                ejson::describe(name)
                            ),
                        ));
                    };
                    names.insert(key.clone(), Value::String(name.clone()));
                }
            }
            Some(other) => {
                return Err(invalid(
                    "names",
                    format!(
                        "must be an object {{ <source key>: <sequence name> }}, got {}",
                        ejson::describe(other)
                    ),
                ))
            }
        }
        let counter_field = match map.get("counterField") {
            None | Some(Value::Null) => None,
            Some(Value::String(field)) => {
                Some(crate::sequence::counter_field::check_counter_field(field)?)
            }
            Some(other) => {
                return Err(invalid(
                    "counterField",
                    format!("must be a string, got {}", ejson::describe(other)),
                ))
            }
        };
        Ok(Self {
            from,
            apply,
            source,
            counters,
            names,
            counter_field,
        })
    }
}
