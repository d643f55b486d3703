//! `mongo-seq counters` and `mongo-seq set-next`: operations on the counters collection, through
//! the core's plans.

use futures_util::TryStreamExt;
use mongo_seq_core::{SequenceSpec, SetNext, SetNextOutcome};
use mongodb::bson::{doc, Document};
use mongodb::Collection;

use crate::error::SidecarError;
use crate::exec::Executor;
use crate::metrics::Metrics;

/// Every counter document as `(id, seq)`; `seq` as stored (it may be malformed).
pub async fn list(counters: &Collection<Document>) -> Result<Vec<(String, String)>, SidecarError> {
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
            let seq = d.get("seq").map_or("(missing)".to_owned(), |v| {
                v.clone().into_relaxed_extjson().to_string()
            });
            (id.unwrap_or_default(), seq)
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
        metrics: Metrics::new(),
        label: "set-next".to_owned(),
    };
    let mut plan = SetNext::new(spec, counter_id, next, force)?;
    exec.drive(&mut plan).await
}
