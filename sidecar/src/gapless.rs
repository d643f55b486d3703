//! Gapless numbering (core `intent` protocol, see `crates/mongo-seq-core/src/intent.rs`):
//! reserve the group's numbers and record the intent in one atomic counter update → write them
//! in intent order (one `update` command, `ordered: true`, only where a document has no number)
//! → clear the intent. An intent left pending (the holder died mid-batch, or a document was
//! deleted or took a number meanwhile) is completed by whoever holds the trigger: the core
//! decides from what the intent's documents look like now, the sidecar writes it, looks again,
//! and clears the intent setting the counter to the last number actually used.

use futures_util::TryStreamExt;
use mongo_seq_core::intent::read_counter_extras;
use mongo_seq_core::lease::counters_of;
use mongo_seq_core::{
    plan_completion, Assignment, FinishIntent, FinishOutcome, GaplessReservation, GaplessReserve,
    Intent,
};
use mongodb::bson::{doc, Bson, Document};
use serde_json::Value;
use tracing::{info, warn};

use crate::ejson;
use crate::error::SidecarError;
use crate::lease::Fence;
use crate::trigger::{as_u64, lookup, Trigger};

/// How many times a completion writes and looks again before giving up (each round settles
/// what the previous one could not: a deletion, a number taken by another document).
const COMPLETION_ROUNDS: usize = 8;
/// How many pending intents one reservation completes before giving up.
const PENDING_ROUNDS: usize = 5;

/// What one ordered `update` did.
struct Applied {
    matched: u64,
    modified: u64,
    /// Numbers the unique index refused (another document holds them).
    taken: Vec<i64>,
}

impl Trigger {
    /// Numbers `ids` (stream order) from `counter_id` without gaps; returns how many documents
    /// got a number (including those of an earlier pending intent completed on the way).
    pub(crate) async fn number_gapless(
        &self,
        counter_id: &str,
        mut ids: Vec<Bson>,
        fence: &Fence,
    ) -> Result<u64, SidecarError> {
        let mut numbered = 0;
        for _ in 0..PENDING_ROUNDS {
            if ids.is_empty() {
                return Ok(numbered);
            }
            fence.check()?;
            let json_ids: Vec<Value> = ids
                .iter()
                .map(|id| id.clone().into_canonical_extjson())
                .collect();
            let mut plan =
                GaplessReserve::new(&self.spec.sequence, counter_id, json_ids, fence.epoch)?;
            match self.exec.drive(&mut plan).await? {
                GaplessReservation::Reserved { range, intent } => {
                    let assignments: Vec<Assignment> = intent
                        .ids
                        .iter()
                        .enumerate()
                        .filter_map(|(i, id)| {
                            let number = range.get(i as u64)?;
                            Some(Assignment {
                                id: id.clone(),
                                number,
                                formatted: self.spec.sequence.format_value(number),
                                previous: None,
                            })
                        })
                        .collect();
                    let applied = self.apply(&assignments, fence).await?;
                    numbered += applied.modified;
                    if applied.matched == assignments.len() as u64 && applied.taken.is_empty() {
                        self.finish(counter_id, &intent, range.last, fence).await?;
                    } else {
                        // A document was deleted (or numbered otherwise) since we looked, or a
                        // number is held by a document inserted with it: settle it now.
                        numbered += self
                            .complete_intent(counter_id, &intent, applied.taken, fence)
                            .await?;
                    }
                    return Ok(numbered);
                }
                GaplessReservation::Pending { intent } => {
                    numbered += self
                        .complete_pending_intent(
                            counter_id,
                            &intent,
                            fence,
                            "completing a pending gapless intent before reserving",
                        )
                        .await?;
                    // The completed intent may have numbered some of ours (a replayed batch).
                    ids = self.still_unnumbered(ids).await?;
                }
                GaplessReservation::Fenced { counter_epoch } => {
                    self.metrics
                        .fenced
                        .with_label_values(&[&self.spec.id])
                        .inc();
                    return Err(SidecarError::Fenced(format!(
                        "counter `{counter_id}` carries epoch {counter_epoch} > {}: another instance holds the trigger",
                        fence.epoch
                    )));
                }
            }
        }
        Err(SidecarError::Reply(format!(
            "counter `{counter_id}`: an intent was pending {PENDING_ROUNDS} times in a row"
        )))
    }

    /// Before numbering anything: completes every intent left pending on the trigger's counters.
    pub(crate) async fn complete_pending(&self, fence: &Fence) -> Result<(), SidecarError> {
        let filter = ejson::to_doc(serde_json::json!({ "$or": counters_of(self.spec.sequence.name()), "intent": { "$exists": true } }))
            .map_err(SidecarError::Reply)?;
        let pending: Vec<Document> = self.exec.counters.find(filter).await?.try_collect().await?;
        for counter in pending {
            let Ok(counter_id) = counter.get_str("_id").map(str::to_owned) else {
                continue;
            };
            let (_, intent) = read_counter_extras(&ejson::from_doc(&counter), &counter_id)?;
            let Some(intent) = intent else { continue };
            self.complete_pending_intent(
                &counter_id,
                &intent,
                fence,
                "completing a gapless intent left pending by an interrupted batch",
            )
            .await?;
        }
        Ok(())
    }

    /// Completes an intent someone else (or an earlier run) left pending; logs and counts it.
    async fn complete_pending_intent(
        &self,
        counter_id: &str,
        intent: &Intent,
        fence: &Fence,
        why: &'static str,
    ) -> Result<u64, SidecarError> {
        info!(
            trigger = self.spec.id,
            counter = counter_id,
            first = intent.first,
            count = intent.count,
            epoch = intent.epoch,
            "{why}"
        );
        let numbered = self
            .complete_intent(counter_id, intent, Vec::new(), fence)
            .await?;
        self.metrics
            .intents_completed
            .with_label_values(&[&self.spec.id])
            .inc();
        Ok(numbered)
    }

    /// Completes `intent`: look at its documents, write what the core decides, look again, and
    /// when nothing is left to write, clear it and set the counter to the last number used.
    async fn complete_intent(
        &self,
        counter_id: &str,
        intent: &Intent,
        mut taken: Vec<i64>,
        fence: &Fence,
    ) -> Result<u64, SidecarError> {
        let mut modified = 0;
        for _ in 0..COMPLETION_ROUNDS {
            fence.check()?;
            let found = self.intent_documents(intent).await?;
            let completion = plan_completion(&self.spec.sequence, intent, &found, &taken)?;
            if completion.assignments.is_empty() {
                if completion.missing > 0 || completion.foreign > 0 {
                    info!(trigger = self.spec.id, counter = counter_id, missing = completion.missing, foreign = completion.foreign, seq = completion.seq,
                        "gapless intent: deleted or otherwise numbered documents skipped, counter set to the last number used");
                }
                self.finish(counter_id, intent, completion.seq, fence)
                    .await?;
                return Ok(modified);
            }
            if completion.renumbered > 0 {
                self.metrics
                    .gapless_renumbered
                    .with_label_values(&[&self.spec.id])
                    .inc_by(completion.renumbered);
                info!(
                    trigger = self.spec.id,
                    counter = counter_id,
                    renumbered = completion.renumbered,
                    "gapless intent: numbers written past a document deleted meanwhile move down"
                );
            }
            let applied = self.apply(&completion.assignments, fence).await?;
            // Modified counts documents that got their first number only.
            modified += applied
                .modified
                .saturating_sub(completion.renumbered.min(applied.modified));
            // A number refused because one of the intent's own documents still holds it (it
            // moves in a later statement) is not taken by someone else.
            let ours = |n: &i64| {
                found.iter().any(|(_, v)| {
                    v.as_ref()
                        .and_then(|v| mongo_seq_core::ejson::read_i64(v).ok())
                        == Some(*n)
                })
            };
            taken.extend(applied.taken.into_iter().filter(|n| !ours(n)));
        }
        Err(SidecarError::Reply(format!(
            "could not complete the gapless intent of `{counter_id}` in {COMPLETION_ROUNDS} rounds"
        )))
    }

    /// The intent's documents that still exist, with their number field.
    async fn intent_documents(
        &self,
        intent: &Intent,
    ) -> Result<Vec<(Value, Option<Value>)>, SidecarError> {
        let field = self.spec.field.as_str();
        let ids: Vec<Bson> = intent
            .ids
            .iter()
            .map(|id| ejson::to_bson(id.clone()))
            .collect::<Result<_, _>>()
            .map_err(SidecarError::Reply)?;
        let docs: Vec<Document> = self
            .docs
            .find(doc! { "_id": { "$in": ids } })
            .projection(doc! { "_id": 1, field: 1 })
            .await?
            .try_collect()
            .await?;
        Ok(docs
            .iter()
            .filter_map(|d| {
                let id = d.get("_id")?.clone().into_canonical_extjson();
                Some((
                    id,
                    lookup(d, field).map(|v| v.clone().into_canonical_extjson()),
                ))
            })
            .collect())
    }

    /// `ids` that still exist without a number, in the same order.
    async fn still_unnumbered(&self, ids: Vec<Bson>) -> Result<Vec<Bson>, SidecarError> {
        let field = self.spec.field.as_str();
        let open: Vec<Document> = self
            .docs
            .find(doc! { "_id": { "$in": ids.clone() }, field: { "$exists": false } })
            .projection(doc! { "_id": 1 })
            .await?
            .try_collect()
            .await?;
        let open: std::collections::HashSet<String> = open
            .iter()
            .filter_map(|d| d.get("_id").map(crate::trigger::id_key))
            .collect();
        Ok(ids
            .into_iter()
            .filter(|id| open.contains(&crate::trigger::id_key(id)))
            .collect())
    }

    /// One `update` command, `ordered: true`, a statement per assignment (only where the
    /// document has no number yet): the numbered documents stay a prefix in intent order.
    async fn apply(
        &self,
        assignments: &[Assignment],
        fence: &Fence,
    ) -> Result<Applied, SidecarError> {
        let field = self.spec.field.as_str();
        let mut statements = Vec::with_capacity(assignments.len());
        for a in assignments {
            let id = ejson::to_bson(a.id.clone()).map_err(SidecarError::Reply)?;
            let mut set = doc! { field: a.number };
            if let (Some(format_field), Some(formatted)) = (&self.spec.format_field, &a.formatted) {
                set.insert(format_field.clone(), formatted.clone());
            }
            // Compare-and-set: only where there is no number yet, or still the one being moved.
            let current = match a.previous {
                Some(previous) => Bson::Int64(previous),
                None => Bson::Document(doc! { "$exists": false }),
            };
            statements.push(doc! { "q": { "_id": id, field: current }, "u": { "$set": set } });
        }
        fence.check()?;
        let reply = self
            .db
            .run_command(
                doc! { "update": self.docs.name(), "updates": statements, "ordered": true },
            )
            .await?;
        if let Ok(wce) = reply.get_document("writeConcernError") {
            return Err(SidecarError::Reply(format!("write concern error: {wce}")));
        }
        let mut taken = Vec::new();
        for e in reply
            .get_array("writeErrors")
            .map(|a| a.as_slice())
            .unwrap_or_default()
            .iter()
            .filter_map(Bson::as_document)
        {
            let code = e.get_i32("code").unwrap_or(0);
            match assignments.get(as_u64(e, "index") as usize) {
                Some(a) if code == 11000 => {
                    warn!(
                        trigger = self.spec.id,
                        number = a.number,
                        "number already held by another document (inserted with it): skipped"
                    );
                    taken.push(a.number);
                }
                _ => {
                    return Err(SidecarError::Reply(format!(
                        "update of `{}` failed: {} (code {code})",
                        self.docs.namespace(),
                        e.get_str("errmsg").unwrap_or("")
                    )))
                }
            }
        }
        Ok(Applied {
            matched: as_u64(&reply, "n"),
            modified: as_u64(&reply, "nModified"),
            taken,
        })
    }

    /// Clears the intent and sets the counter (fenced by the epoch).
    async fn finish(
        &self,
        counter_id: &str,
        intent: &Intent,
        seq: i64,
        fence: &Fence,
    ) -> Result<(), SidecarError> {
        fence.check()?;
        let mut plan =
            FinishIntent::new(&self.spec.sequence, counter_id, intent, seq, fence.epoch)?;
        match self.exec.drive(&mut plan).await? {
            FinishOutcome::Finished => Ok(()),
            FinishOutcome::AlreadyFinished => {
                warn!(
                    trigger = self.spec.id,
                    counter = counter_id,
                    "the intent was already completed by another instance"
                );
                Ok(())
            }
            FinishOutcome::Fenced { counter_epoch } => {
                self.metrics
                    .fenced
                    .with_label_values(&[&self.spec.id])
                    .inc();
                Err(SidecarError::Fenced(format!(
                    "counter `{counter_id}` carries epoch {counter_epoch} > {}",
                    fence.epoch
                )))
            }
        }
    }
}
