//! Extended JSON v2 (the core's language) ↔ BSON (the driver's), through the bson crate.

use mongodb::bson::{Bson, Document};
use serde_json::Value;

/// Canonical Extended JSON of a document, for the core.
pub fn from_doc(document: &Document) -> Value {
    Bson::Document(document.clone()).into_canonical_extjson()
}

/// A BSON value from Extended JSON (canonical or relaxed) handed out by the core.
pub fn to_bson(value: Value) -> Result<Bson, String> {
    Bson::try_from(value).map_err(|e| format!("invalid Extended JSON from the core: {e}"))
}

/// A BSON document from Extended JSON handed out by the core.
pub fn to_doc(value: Value) -> Result<Document, String> {
    match to_bson(value)? {
        Bson::Document(document) => Ok(document),
        other => Err(format!("expected an Extended JSON document, got {other}")),
    }
}
