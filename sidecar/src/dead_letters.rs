//! Dead letters, stored and retried: documents a trigger cannot number (the core decides which:
//! `DeadLetter::of_note`) are recorded in the trigger's state collection, and retried — by the
//! trigger's lease holder every `dead_letter_retry_ms` while it has some, or by `mongo-seq
//! retry`. The commands (record, resolve, list) and the retry's batch are the core's; this
//! module runs them and sorts the outcome.
//!
//! A retry round: the waiting dead letters (one `find`), their documents still of the series
//! (the core's `numbering::series`: numbered, or unnumbered and matching; one `find`), the core's batch over those (as a holder's batch, or leaseless), a
//! read-back of the ones it did not report (one `find`), then each dead letter is resolved
//! (`numbered`: its document holds an integer now, or `gone`: deleted, or unnumbered and no
//! longer matching) or
//! recorded again (an attempt more, the reason as it is now).

use std::collections::BTreeSet;

use mongo_seq_core::numbering::series::members_among;
use mongo_seq_core::sequence::field::stored_value;
use mongo_seq_core::{
    dead_letter_document, record_dead_letter, resolve_dead_letters, waiting_dead_letters,
    BatchReport, ClusterTime, Collection, Command, DeadLetter, Note, QueryOptions, Reply,
    Resolution, RetryBatch,
};
use serde_json::{json, Map, Value};

use crate::config::TriggerSpec;
use crate::error::SidecarError;
use crate::lock::lock;
use crate::mongo::{documents, Mongo};
use crate::run_plan::run_writing_plan;

/// Records `letters` of `trigger` (one upsert each); returns how many were not waiting yet.
pub async fn record<M: Mongo>(
    mongo: &M,
    trigger: &str,
    letters: &[DeadLetter],
) -> Result<u64, SidecarError> {
    let mut new = 0;
    let mut seen = BTreeSet::new();
    for letter in letters {
        if !seen.insert(letter.id.to_string()) {
            continue;
        }
        let now = mongo.now_ms();
        match mongo
            .execute(record_dead_letter(trigger, letter, now))
            .await?
        {
            Reply::Document { document } => {
                let attempts = document
                    .get("attempts")
                    .map(mongo_seq_core::ejson::read_i64);
                if matches!(attempts, Some(Ok(1))) {
                    new += 1;
                }
            }
            other => {
                return Err(SidecarError::Reply(format!(
                    "dead letter of `{trigger}`: expected a document, got {other:?}"
                )))
            }
        }
    }
    Ok(new)
}

/// The dead letters of `trigger` still waiting, as stored (oldest first).
pub async fn waiting<M: Mongo>(mongo: &M, trigger: &str) -> Result<Vec<Value>, SidecarError> {
    documents(
        mongo.execute(waiting_dead_letters(trigger)).await?,
        "dead letters",
    )
}

/// What a retry round did.
#[derive(Debug, Default)]
pub struct RetryOutcome {
    /// Dead letters whose document has a number now.
    pub numbered: Vec<Value>,
    /// Dead letters whose document is deleted or no longer matches the trigger.
    pub gone: Vec<Value>,
    /// Dead letters still waiting (recorded again), with their reasons now.
    pub waiting: Vec<DeadLetter>,
    /// Of those, the ones recorded for the first time (none on a plain retry).
    pub new: u64,
    /// What the batch did.
    pub report: BatchReport,
}

/// Retries the dead letters `stored` (as [`waiting`] gives them) of `trigger`: as its lease
/// holder (`epoch`, with `before_write` its fence) or without a lease (`None`: refused for a
/// gapless trigger). Every note of the batch goes to `note` too.
pub async fn retry<M: Mongo>(
    mongo: &M,
    trigger: &TriggerSpec,
    stored: &[Value],
    epoch: Option<i64>,
    before_write: impl Fn() -> Result<(), SidecarError> + Send + Sync,
    note: impl Fn(Note) + Send + Sync,
    wrote: impl Fn(Option<ClusterTime>) + Send + Sync,
) -> Result<RetryOutcome, SidecarError> {
    let ids: Vec<Value> = stored
        .iter()
        .filter_map(dead_letter_document)
        .cloned()
        .collect();
    let mut outcome = RetryOutcome::default();
    if ids.is_empty() {
        return Ok(outcome);
    }
    let numbering = &trigger.numbering;
    // The documents still of the series (the core's rule): numbered (by hand, or by another
    // round), or unnumbered and still matching.
    let matching = trigger.filter.clone().map(Value::Object);
    let filter = members_among(numbering.field(), matching.as_ref(), &ids);
    let projection: Map<String, Value> = numbering
        .document_fields()
        .into_iter()
        .map(|field| (field, json!(1)))
        .collect();
    let find = Command::Find {
        collection: Collection::Documents,
        filter,
        options: QueryOptions::projection(Value::Object(projection)),
        after_cluster_time: None,
    };
    let found = documents(mongo.execute(find).await?, "dead letters' documents")?;
    let found_ids: BTreeSet<String> = found
        .iter()
        .filter_map(|d| d.get("_id").map(Value::to_string))
        .collect();
    outcome.gone = ids
        .iter()
        .filter(|id| !found_ids.contains(&id.to_string()))
        .cloned()
        .collect();

    let letters = std::sync::Mutex::new(Vec::new());
    if !found.is_empty() {
        let mut plan = RetryBatch::new(numbering, found, epoch)?;
        let noted = |n: Note| {
            if let Some(letter) = DeadLetter::of_note(&n) {
                lock(&letters).push(letter);
            }
            note(n);
        };
        outcome.report = run_writing_plan(mongo, &mut plan, before_write, noted, wrote).await?;
    }
    outcome.waiting = letters.into_inner().unwrap_or_default();
    let still: BTreeSet<String> = outcome.waiting.iter().map(|l| l.id.to_string()).collect();
    // Numbered, as read back: a document a gapless batch drops as "already numbered" may hold
    // something else than a number (it then waits on, with the reason it had).
    let candidates: Vec<Value> = ids
        .iter()
        .filter(|id| found_ids.contains(&id.to_string()) && !still.contains(&id.to_string()))
        .cloned()
        .collect();
    if !candidates.is_empty() {
        let read_back = Command::Find {
            collection: Collection::Documents,
            filter: json!({ "_id": { "$in": candidates } }),
            options: QueryOptions::projection(json!({ "_id": 1, numbering.field(): 1 })),
            after_cluster_time: None,
        };
        let numbered: BTreeSet<String> = documents(mongo.execute(read_back).await?, "read back")?
            .iter()
            .filter(|d| {
                stored_value(d, numbering.field())
                    .is_some_and(|v| mongo_seq_core::ejson::read_i64(v).is_ok())
            })
            .filter_map(|d| d.get("_id").map(Value::to_string))
            .collect();
        for id in candidates {
            if numbered.contains(&id.to_string()) {
                outcome.numbered.push(id);
            } else if let Some(letter) = stored.iter().find_map(|s| as_letter(s, &id)) {
                outcome.waiting.push(letter);
            }
        }
    }

    let name = &trigger.id;
    outcome.new = record(mongo, name, &outcome.waiting).await?;
    for (ids, resolution) in [
        (&outcome.numbered, Resolution::Numbered),
        (&outcome.gone, Resolution::Gone),
    ] {
        if !ids.is_empty() {
            let now = mongo.now_ms();
            mongo
                .execute(resolve_dead_letters(name, ids, resolution, now))
                .await?;
        }
    }
    Ok(outcome)
}

/// The dead letter stored in `stored` when it is the one of the document `id`.
fn as_letter(stored: &Value, id: &Value) -> Option<DeadLetter> {
    (dead_letter_document(stored)? == id).then(|| DeadLetter {
        id: id.clone(),
        code: text(stored, "code"),
        reason: text(stored, "reason"),
    })
}

fn text(stored: &Value, key: &str) -> String {
    stored
        .get(key)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned()
}
