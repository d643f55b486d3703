//! Extended JSON v2 (the core's language) ↔ BSON (the driver's), through the bson crate: the
//! executor's side of the conversion every shell has between its host's values and the core's
//! canonical Extended JSON (the Wasm crate's `convert.rs` is the JS side).

use mongodb::bson::{Bson, Document};
use serde_json::Value;

/// Canonical Extended JSON of a BSON value.
///
/// ```
/// use mongo_seq::executor::convert::from_bson;
/// use mongodb::bson::Bson;
/// use serde_json::json;
///
/// assert_eq!(from_bson(&Bson::Int64(5)), json!({ "$numberLong": "5" }));
/// ```
pub fn from_bson(value: &Bson) -> Value {
    value.clone().into_canonical_extjson()
}

/// Canonical Extended JSON of a document.
///
/// ```
/// use mongo_seq::executor::convert::from_doc;
/// use mongodb::bson::doc;
/// use serde_json::json;
///
/// let counter = from_doc(doc! { "_id": "orders", "seq": 41_i64 });
/// assert_eq!(counter, json!({ "_id": "orders", "seq": { "$numberLong": "41" } }));
/// ```
pub fn from_doc(document: Document) -> Value {
    Bson::Document(document).into_canonical_extjson()
}

/// A BSON value from Extended JSON (canonical or relaxed).
///
/// ```
/// use mongo_seq::executor::convert::to_bson;
/// use mongodb::bson::Bson;
/// use serde_json::json;
///
/// assert_eq!(to_bson(json!({ "$numberLong": "5" }))?, Bson::Int64(5));
/// assert_eq!(to_bson(json!(5))?, Bson::Int32(5), "relaxed Extended JSON too");
/// # Ok::<(), String>(())
/// ```
pub fn to_bson(value: Value) -> Result<Bson, String> {
    Bson::try_from(value).map_err(|e| format!("invalid Extended JSON: {e}"))
}

/// A BSON document from Extended JSON.
///
/// ```
/// use mongo_seq::executor::convert::to_doc;
/// use mongodb::bson::doc;
/// use serde_json::json;
///
/// assert_eq!(to_doc(json!({ "seq": { "$numberLong": "5" } }))?, doc! { "seq": 5_i64 });
/// assert!(to_doc(json!([1, 2])).is_err(), "not a document");
/// # Ok::<(), String>(())
/// ```
pub fn to_doc(value: Value) -> Result<Document, String> {
    match to_bson(value)? {
        Bson::Document(document) => Ok(document),
        other => Err(format!("expected an Extended JSON document, got {other}")),
    }
}

/// A value for a message: relaxed Extended JSON (`5`, not `{"$numberLong": "5"}`).
///
/// ```
/// use mongo_seq::executor::convert::relaxed;
/// use serde_json::json;
///
/// assert_eq!(relaxed(&json!({ "$numberLong": "5" })), "5");
/// ```
pub fn relaxed(value: &Value) -> String {
    match to_bson(value.clone()) {
        Ok(bson) => bson.into_relaxed_extjson().to_string(),
        Err(_) => value.to_string(),
    }
}
