//! `mongo-seq counters` and `mongo-seq set-next`: operations on the counters collection, through
//! the core's plans.

use futures_util::TryStreamExt;
use mongo_seq_core::{SequenceSpec, SetNext, SetNextOutcome};
use mongodb::bson::{doc, Document};
use mongodb::Collection;
use serde_json::json;

use crate::error::SidecarError;
use crate::exec::Executor;

/// A counter document as listed: its id and `seq` read as an integer, or why not.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CounterRow {
    pub id: String,
    /// The integer, or what is stored instead (relaxed Extended JSON, or `missing`).
    pub seq: Result<i64, String>,
}

/// An integer for the tools' JSON: a number when every JSON parser reads it exactly
/// (|n| ≤ 2^53 − 1; JavaScript's `JSON.parse` rounds beyond), else a decimal string.
pub fn exact_json(n: i64) -> serde_json::Value {
    const EXACT: i64 = (1 << 53) - 1;
    if (-EXACT..=EXACT).contains(&n) {
        json!(n)
    } else {
        json!(n.to_string())
    }
}

impl CounterRow {
    /// JSON for `counters --json`: `seq` as [`exact_json`], `null` with `invalid` when it is not
    /// an integer.
    pub fn to_json(&self) -> serde_json::Value {
        match &self.seq {
            Ok(n) => json!({ "id": self.id, "seq": exact_json(*n) }),
            Err(raw) => json!({ "id": self.id, "seq": null, "invalid": raw }),
        }
    }
}

/// Every counter document, sorted by id.
pub async fn list(counters: &Collection<Document>) -> Result<Vec<CounterRow>, SidecarError> {
    let documents: Vec<Document> = counters
        .find(doc! {})
        .sort(doc! { "_id": 1 })
        .await?
        .try_collect()
        .await?;
    Ok(documents
        .into_iter()
        .map(|d| {
            let id = d.get("_id").map(|v| match v.as_str() {
                Some(s) => s.to_owned(),
                None => v.to_string(),
            });
            let seq = match d.get("seq") {
                None => Err("missing".to_owned()),
                Some(v) => mongo_seq_core::ejson::read_i64(&v.clone().into_canonical_extjson())
                    .map_err(|_| v.clone().into_relaxed_extjson().to_string()),
            };
            CounterRow {
                id: id.unwrap_or_default(),
                seq,
            }
        })
        .collect())
}

/// Makes `next` the next number of `counter_id` (never backwards without `force`).
pub async fn set_next(
    counters: &Collection<Document>,
    spec: &SequenceSpec,
    counter_id: &str,
    next: i64,
    force: bool,
) -> Result<SetNextOutcome, SidecarError> {
    let exec = Executor {
        counters: counters.clone(),
        leases: None,
        label: "set-next".to_owned(),
    };
    let mut plan = SetNext::new(spec, counter_id, next, force)?;
    exec.drive(&mut plan).await
}
