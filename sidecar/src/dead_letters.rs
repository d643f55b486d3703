//! Dead letters, stored and retried: documents a trigger cannot number (the core decides which:
//! `DeadLetter::of_note`) are recorded in the trigger's state collection, and retried — by the
//! trigger's lease holder every `dead_letter_retry_ms` while it has some, or by `mongo-seq
//! retry`. The commands (record, resolve, list), the retry round's reads and what became of
//! each dead letter (the core's `RetryRound`) and its batch are the core's; this module runs
//! them.
//!
//! A retry round: the waiting dead letters (one `find`), their documents still of the series
//! (one `find`), the core's batch over those (as a holder's batch, or leaseless), a read-back
//! of the ones it did not report (one `find`), then each dead letter is resolved (`numbered`
//! or `gone`) or recorded again (an attempt more, the reason as it is now).

use std::collections::BTreeSet;

use mongo_seq_core::{
    record_dead_letter, resolve_dead_letters, waiting_dead_letters, BatchReport, ClusterTime,
    DeadLetter, Note, Reply, Resolution, RetryBatch, RetryRound,
};
use serde_json::Value;

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
    let mut outcome = RetryOutcome::default();
    let mut round = RetryRound::new(stored);
    if round.is_empty() {
        return Ok(outcome);
    }
    let numbering = &trigger.numbering;
    let matching = trigger.filter.clone().map(Value::Object);
    let find = round.documents(numbering, matching.as_ref());
    let found = documents(mongo.execute(find).await?, "dead letters' documents")?;
    outcome.gone = round.found(&found);

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
    if let Some(read_back) = round.read_back(numbering, &outcome.waiting) {
        let read = documents(mongo.execute(read_back).await?, "read back")?;
        let settled = round.settled(numbering, &outcome.waiting, &read);
        outcome.numbered = settled.numbered;
        outcome.waiting.extend(settled.waiting);
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
