//! Pieces of the errors' messages: bounds, epochs, and what to do about another tool's unique
//! index on the counters collection.

/// Whose index a unique index on the counters collection is, by the shapes the peers create,
/// and what to do about it.
pub(super) fn unique_index_remedy(collection: &str, index: &str) -> String {
    let peer = match index {
        "id_1_reference_value_1" => Some((
            "mongoose-sequence",
            "mongoose-sequence",
            "{ id, reference_value }",
        )),
        "field_1_model_1" | "model_1_field_1" => Some((
            "mongoose-auto-increment",
            "auto-increment",
            "{ field, model }",
        )),
        "field_1_modelName_1" | "modelName_1_field_1" => Some((
            "@typegoose/auto-increment",
            "auto-increment",
            "{ field, modelName }",
        )),
        _ => None,
    };
    match peer {
        Some((plugin, from, keys)) => format!(
            "it is {plugin}'s index on {keys}, on which every counter without those fields collides after the first: its counters share this collection. Adopt them with `mongo-seq import --from {from} --apply` (the package's importCounters(db, {{ from: \"{from}\", apply: true }})){}, or give mongo-seq a {collection} collection of its own (the `collection` option; the mongoose plugin's `counters`); nothing was written",
            if from == "mongoose-sequence" { ", which in place replaces that index by one over its own documents" } else { " into a counters collection of mongo-seq's" },
        ),
        None => format!("another tool's documents and index share this collection; give mongo-seq a {collection} collection of its own, or drop that index; nothing was written"),
    }
}

pub(super) fn fmt_epoch(epoch: Option<i64>) -> String {
    epoch.map_or_else(|| "an epoch".to_owned(), |e| format!("epoch {e}"))
}

pub(super) fn fmt_bound(bound: Option<i64>) -> String {
    bound.map_or_else(|| "unbounded".to_owned(), |b| b.to_string())
}
