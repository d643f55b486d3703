//! Extended JSON v2 (the core's language) ↔ BSON (the driver's), through the bson crate: the
//! executor's side of the conversion every shell has between its host's values and the core's
//! canonical Extended JSON (the Wasm crate's `convert.rs` is the JS side).

use mongodb::bson::{Bson, Document};
use serde_json::Value;

/// Canonical Extended JSON of a BSON value.
pub fn from_bson(value: &Bson) -> Value {
    value.clone().into_canonical_extjson()
}

/// Canonical Extended JSON of a document.
pub fn from_doc(document: Document) -> Value {
    Bson::Document(document).into_canonical_extjson()
}

/// A BSON value from Extended JSON (canonical or relaxed).
pub fn to_bson(value: Value) -> Result<Bson, String> {
    Bson::try_from(value).map_err(|e| format!("invalid Extended JSON: {e}"))
}

/// A BSON document from Extended JSON.
pub fn to_doc(value: Value) -> Result<Document, String> {
    match to_bson(value)? {
        Bson::Document(document) => Ok(document),
        other => Err(format!("expected an Extended JSON document, got {other}")),
    }
}

/// A value for a message: relaxed Extended JSON (`5`, not `{"$numberLong": "5"}`).
pub fn relaxed(value: &Value) -> String {
    match to_bson(value.clone()) {
        Ok(bson) => bson.into_relaxed_extjson().to_string(),
        Err(_) => value.to_string(),
    }
}
