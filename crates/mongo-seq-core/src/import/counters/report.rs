//! What an import reports: every counter adopted or skipped, and the index it changed.

use super::*;

/// What the import did (or, in a dry run, would do) to one counter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum ImportAction {
    /// mongo-seq has no such counter: it is created past the source.
    Create,
    /// mongo-seq's counter is behind the source: it is moved past it.
    Advance,
    /// mongo-seq's counter is already past the source: left as it is.
    Keep,
}

/// One adopted counter.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ImportedCounter {
    /// The source document's identifying fields (`{id, referenceValue}` or `{model, field}`).
    pub source: Value,
    pub sequence: String,
    pub scope: Vec<String>,
    pub counter_id: String,
    /// The last number the plugin issued.
    pub source_last: i64,
    /// mongo-seq's counter before (`null`: none).
    pub before: Option<i64>,
    pub action: ImportAction,
    /// mongo-seq's counter after (`null` in a dry run).
    pub after: Option<i64>,
}

/// A source document (or a mongo-seq counter) the import left alone, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SkippedCounter {
    pub source: Value,
    pub reason: String,
}

/// The plan's output.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ImportReport {
    pub from: CounterSource,
    pub applied: bool,
    pub counters: Vec<ImportedCounter>,
    pub skipped: Vec<SkippedCounter>,
    /// An import in place: mongoose-sequence's unique index replaced so mongo-seq's counters
    /// fit beside its documents (absent otherwise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub index: Option<IndexChange>,
}

/// mongoose-sequence's unique index, replaced by an import in place (see the module docs).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct IndexChange {
    /// Dropped: `id_1_reference_value_1`, on which every document without `id` collides.
    pub dropped: String,
    /// Created first: unique on the same fields, over the documents that have `id`.
    pub created: String,
    /// Done (`false` in a dry run).
    pub applied: bool,
}

/// mongoose-sequence's unique index on its counters collection.
pub const MONGOOSE_SEQUENCE_INDEX: &str = "id_1_reference_value_1";
/// What an import in place puts in its stead (another key pattern: `reference_value` descending).
pub const PARTIAL_INDEX: &str = "id_1_reference_value_-1_where_id";
