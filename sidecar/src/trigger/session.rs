//! A session of a lease holder: the unique index, intents left pending, the stored state, the
//! change stream (opened before a backfill scans, so nothing inserted meanwhile is missed),
//! then batches until shutdown: read what the stream has (at most `batch_size` events; at most
//! two reads, see [`Trigger::next_batch`]), number it, and store the resume token when the
//! core's [`Checkpoint`] says so (at most every `checkpoint`; on a quiet stream the server's
//! post-batch token every `heartbeat`; at a graceful stop).

use std::collections::HashSet;
use std::time::Duration;

use mongo_seq_core::{BatchReport, Checkpoint, Deletion, RecordDeletions};
use serde_json::{json, Map, Value};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use tracing::{debug, info, warn};

use super::{prefix_filter, Trigger};
use crate::config::On;
use crate::error::SidecarError;
use crate::fence::Fence;
use crate::health::State;
use crate::mongo::{ChangeEvent, EventBatch, EventStream, Mongo, ResumeToken, Watch};

/// Fewest events one read of the change stream may bring (its cursor's `batchSize`, when the
/// numbering batch is smaller): a small `batch_size` numbers small batches without a `getMore`
/// each, the reply's other events wait in the stream for the next batches.
const MIN_STREAM_READ: usize = 1000;

impl<M: Mongo> Trigger<M> {
    /// Runs until shutdown (`Ok`) or a failure (`Err`: the supervisor reports it and retries).
    pub(super) async fn session(
        &self,
        shutdown: &CancellationToken,
        fence: &Fence,
        force_backfill: &mut bool,
        delay: &mut Duration,
    ) -> Result<(), SidecarError> {
        self.ensure_index().await?;
        self.check_sharding().await?;
        // Whoever holds the trigger completes what an interrupted holder left pending first.
        self.complete_pending(fence).await?;
        let stored = self.state.load().await?;
        // The dead letters waiting (read with the state): retried now, then every interval
        // while any wait.
        if stored.dead_letters > 0 {
            self.retry_dead_letters(fence).await?;
        } else {
            self.probe.dead_letters_waiting([], 0);
        }
        let mut last_retry = Instant::now();
        let backfill = *force_backfill || stored.token.is_none() || !stored.backfill_done;
        // The stream is opened before the backfill scans, so nothing inserted meanwhile is missed.
        let mut stream = self.mongo.watch(self.watch(stored.token.clone())).await?;
        let mut stored_token = stored.token.clone();
        if backfill {
            self.probe.state(State::Backfilling);
            if !self.backfill(shutdown, fence).await? {
                return Ok(());
            }
            let token = stream.resume_token();
            self.state.save(token.as_ref(), Some(true), fence).await?;
            if token.is_some() {
                stored_token = token;
            }
            *force_backfill = false;
        }
        self.probe.state(State::Running);
        info!(
            trigger = self.id(),
            resumed = stored.token.is_some(),
            "watching for inserts"
        );

        // Events right after a (re)start may be for documents numbered before the crash or by the
        // backfill: check them against the collection until a batch shows none of those.
        let mut verify = true;
        let started = Instant::now();
        let now_ms = || u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
        let mut checkpoint = Checkpoint::new(
            millis(self.settings.checkpoint),
            millis(self.settings.heartbeat),
        );
        checkpoint.stored(now_ms());
        // The token of the last batch applied (not necessarily stored yet).
        let mut applied_token = stored_token.clone();
        let mut last_read = Instant::now();
        let mut last_cluster_secs: Option<u32> = None;
        while !shutdown.is_cancelled() {
            fence.check()?;
            if self.probe.dead_letters() > 0
                && last_retry.elapsed() >= self.settings.dead_letter_retry
            {
                self.retry_dead_letters(fence).await?;
                last_retry = Instant::now();
            }
            let batch = self
                .next_batch(&mut stream, shutdown, &mut last_read)
                .await?;
            if let Some(secs) = last_cluster_secs {
                // Literally "now minus the cluster time of the last processed event": it grows on
                // a quiet collection.
                self.probe.lag(self.mongo.now_ms(), secs);
            }
            if batch.events.is_empty() {
                // Caught up: everything the stream had was numbered (after an error, this is
                // the first sign the trigger works again). Its token is past every event handed
                // out, all applied.
                self.probe.succeeded();
                *delay = self.settings.backoff_initial;
                let token = batch.resume_token.or_else(|| applied_token.clone());
                let moved = token.is_some() && token != stored_token;
                if checkpoint.quiet(now_ms(), moved) {
                    self.store(token, &mut stored_token, fence).await?;
                    checkpoint.stored(now_ms());
                }
                continue;
            }
            let events = batch.events.len();
            self.probe.events(events);
            let cluster_secs = batch
                .events
                .iter()
                .rev()
                .find_map(|e| e.cluster_time.map(|time| time.t));
            // The reads that drop an event's document (numbered, or gone) are causally after
            // the newest event of the batch, so after every one of them.
            let after = batch.events.iter().filter_map(|e| e.cluster_time).max();
            let deletions = self.deletions_of(&batch.events);
            let (documents, times) = self.documents_of(batch.events);
            // Mutant (simulator only): the token stored before the batch is applied.
            let early =
                mongo_seq_core::mutants::active(mongo_seq_core::mutants::Mutant::TokenBeforeBatch);
            if early {
                self.state
                    .save(batch.resume_token.as_ref(), None, fence)
                    .await?;
            }
            let report = self
                .number_dated(documents, &times, verify, fence, after)
                .await?;
            verify = verify && report.already > 0;
            // Recorded before the batch's token can be stored: a crash in between replays them.
            if !deletions.is_empty() {
                self.record_deletions(&deletions, fence).await?;
            }
            applied_token = batch.resume_token;
            if checkpoint.batch_applied(now_ms()) {
                self.store(applied_token.clone(), &mut stored_token, fence)
                    .await?;
                checkpoint.stored(now_ms());
            }
            self.applied(&report, cluster_secs, events);
            if let Some(secs) = cluster_secs {
                last_cluster_secs = Some(secs);
            }
            *delay = self.settings.backoff_initial;
        }
        // Graceful shutdown: the batch in flight is done; keep the newest token.
        let token = stream.resume_token().or(applied_token);
        if checkpoint.unstored() || (token.is_some() && token != stored_token) {
            self.store(token, &mut stored_token, fence).await?;
        }
        Ok(())
    }

    /// The change stream of the trigger, after `token`: its inserts (matching its `match`), or
    /// with `on = "match"` the inserts, updates and replaces whose document (an update's looked
    /// up when the event is read) matches and has no number yet. A looked-up document may be
    /// newer than its event, even a stale view on a real replica set: it only says which
    /// documents to try; every first number is written where the document still matches.
    fn watch(&self, token: Option<ResumeToken>) -> Watch {
        let on_match = self.spec.on == On::Match;
        let operations = if on_match {
            json!({ "operationType": { "$in": ["insert", "update", "replace"] } })
        } else {
            json!({ "operationType": "insert" })
        };
        let mut stages = vec![operations];
        if let Some(m) = &self.spec.filter {
            stages.push(Value::Object(prefix_filter(m, "fullDocument")));
        }
        if on_match {
            // The trigger's own numbering writes are update events too: dropped here.
            stages.push(Value::Object(prefix_filter(
                self.spec
                    .numbering
                    .unnumbered()
                    .as_object()
                    .unwrap_or(&Map::new()),
                "fullDocument",
            )));
        }
        let mut filter = match stages.len() {
            1 => stages.remove(0),
            _ => json!({ "$and": stages }),
        };
        // A gapless trigger also reads deletions, to record their numbers (the ledger).
        let deleted_fields = if self.spec.record_deletions {
            let mut fields = self.spec.numbering.document_fields();
            fields.push(self.spec.numbering.period_field());
            filter = json!({ "$or": [filter, { "operationType": "delete" }] });
            fields
        } else {
            Vec::new()
        };
        Watch {
            filter,
            update_lookup: on_match,
            fields: self.spec.numbering.document_fields(),
            deleted_fields,
            start_after: token,
            batch_size: u32::try_from(self.settings.batch_size.max(MIN_STREAM_READ))
                .unwrap_or(u32::MAX),
            max_await: self.settings.max_await,
        }
    }

    /// The next batch: what the stream has now, at most `batch_size` events (its own reply's
    /// leftovers, else one round trip). When that is not a full batch and inserts are coming,
    /// it waits once for more — as long as the rate just seen needs to fill the batch, at most
    /// `batch_delay` — and reads once more. So a batch costs at most two reads (two `getMore`s),
    /// however busy the stream; a quiet stream is read at most once per poll interval (a real
    /// server also waits `max_await` inside its `getMore`).
    async fn next_batch(
        &self,
        stream: &mut M::Stream,
        shutdown: &CancellationToken,
        last_read: &mut Instant,
    ) -> Result<EventBatch, SidecarError> {
        let max = self.settings.batch_size;
        let asked = Instant::now();
        let previous_read = *last_read;
        let mut batch = stream.next_batch(max).await?;
        *last_read = Instant::now();
        if batch.events.is_empty() {
            let rest = self.settings.poll_interval.saturating_sub(asked.elapsed());
            tokio::select! {
                biased;
                () = shutdown.cancelled() => {}
                () = tokio::time::sleep(rest) => {}
            }
            return Ok(batch);
        }
        let missing = max.saturating_sub(batch.events.len());
        let wait = linger(
            batch.events.len(),
            missing,
            last_read.duration_since(previous_read),
            self.settings.batch_delay,
        );
        if wait.is_zero() {
            return Ok(batch);
        }
        tokio::select! {
            biased;
            () = shutdown.cancelled() => return Ok(batch),
            () = tokio::time::sleep(wait) => {}
        }
        let more = stream.next_batch(missing).await?;
        *last_read = Instant::now();
        batch.events.extend(more.events);
        // Past every event of the batch (an empty read's token: past everything read).
        batch.resume_token = more.resume_token.or(batch.resume_token);
        Ok(batch)
    }

    /// The documents the events bring, in order, and each one's event time (a period's, when
    /// the trigger has no `date_field`). With `on = "match"` a document comes once, at its
    /// first event: several updates of one document before it is numbered are one coming to
    /// match.
    fn documents_of(&self, events: Vec<ChangeEvent>) -> (Vec<Value>, Vec<Option<i64>>) {
        let mut seen = HashSet::new();
        let mut documents = Vec::with_capacity(events.len());
        let mut times = Vec::with_capacity(events.len());
        for event in events {
            let time = event.time_ms();
            let Some(document) = event.document else {
                continue;
            };
            if self.spec.on == On::Match {
                if let Some(id) = document.get("_id") {
                    if !seen.insert(id.to_string()) {
                        continue;
                    }
                }
            }
            documents.push(document);
            times.push(time);
        }
        (documents, times)
    }

    /// The `delete` events of a batch, as the core's deletion records read them.
    fn deletions_of(&self, events: &[ChangeEvent]) -> Vec<Deletion> {
        events
            .iter()
            .filter_map(|event| {
                let deleted = event.deleted.as_ref()?;
                Some(Deletion {
                    id: deleted.id.clone(),
                    before: deleted.before.clone(),
                    at_ms: event.time_ms().unwrap_or_else(|| self.mongo.now_ms()),
                    cluster_time: event.cluster_time,
                })
            })
            .collect()
    }

    /// Records the numbers of deleted documents in the ledger (the core's `RecordDeletions`);
    /// a deletion without a pre-image is a warning naming what to enable.
    async fn record_deletions(
        &self,
        deletions: &[Deletion],
        fence: &Fence,
    ) -> Result<(), SidecarError> {
        let mut plan = RecordDeletions::new(
            &self.spec.numbering,
            deletions,
            &self.settings.lease.instance_id,
        )?;
        let report = self.run_held(&mut plan, fence).await?;
        if report.without_pre_image > 0 {
            warn!(
                trigger = self.id(),
                deletions = report.without_pre_image,
                "deleted documents' numbers not recorded: their delete events carry no pre-image; enable them on the collection (MongoDB 6.0+): db.runCommand({{collMod: \"{}\", changeStreamPreAndPostImages: {{enabled: true}}}})",
                self.spec.ns.coll
            );
        }
        debug!(
            trigger = self.id(),
            recorded = report.recorded,
            not_final = report.not_final,
            unnumbered = report.unnumbered,
            "deletions recorded"
        );
        Ok(())
    }

    /// Stores `token` (when there is one and it is not the one stored).
    async fn store(
        &self,
        token: Option<ResumeToken>,
        stored: &mut Option<ResumeToken>,
        fence: &Fence,
    ) -> Result<(), SidecarError> {
        if token.is_some() && token != *stored {
            self.state.save(token.as_ref(), None, fence).await?;
            *stored = token;
        }
        Ok(())
    }

    /// A stream batch is numbered (its token stored, or due at the next checkpoint).
    fn applied(&self, report: &BatchReport, cluster_secs: Option<u32>, events: usize) {
        // Counted once the batch is written (a batch replayed after a crash numbers nothing
        // twice: its documents come back as already numbered).
        self.probe.prenumbered(report.prenumbered);
        let now_ms = self.mongo.now_ms();
        self.probe.batch_applied(report.numbered, now_ms);
        if let Some(secs) = cluster_secs {
            self.probe.lag(now_ms, secs);
        }
        self.probe.succeeded();
        debug!(
            trigger = self.id(),
            events,
            numbered = report.numbered,
            prenumbered = report.prenumbered,
            already = report.already,
            skipped = report.skipped,
            collisions = report.collisions,
            "batch applied"
        );
    }
}

/// How long a batch of `got` events, `missing` short of full, waits for more: the time the rate
/// just seen (`got` events since the previous read, `window` ago) needs to bring the missing
/// ones, at most `cap`. Nothing when the batch is full, or when even that wait would not bring
/// it to half full: a trickle, or a moderate rate, is numbered at once (latency matters more
/// there than the few commands a bigger batch would save).
fn linger(got: usize, missing: usize, window: Duration, cap: Duration) -> Duration {
    if missing == 0 || cap.is_zero() {
        return Duration::ZERO;
    }
    #[allow(clippy::cast_precision_loss)] // event counts
    let (got, missing) = (got as f64, missing as f64);
    let per_sec = got / window.as_secs_f64().max(0.001);
    let fill = (missing / per_sec).min(cap.as_secs_f64());
    if got + per_sec * fill < (got + missing) / 2.0 {
        return Duration::ZERO;
    }
    Duration::from_secs_f64(fill)
}

/// A duration in whole milliseconds (the core's time unit).
fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    const CAP: Duration = Duration::from_millis(500);

    #[test]
    fn a_full_batch_or_no_delay_does_not_wait() {
        assert_eq!(
            linger(1000, 0, Duration::from_millis(10), CAP),
            Duration::ZERO
        );
        assert_eq!(
            linger(10, 990, Duration::from_millis(10), Duration::ZERO),
            Duration::ZERO
        );
    }

    #[test]
    fn a_busy_stream_waits_as_long_as_its_rate_needs_to_fill_the_batch() {
        // 150 events in 100 ms: 1,500/s; 850 missing need 567 ms, capped at 500 ms.
        assert_eq!(linger(150, 850, Duration::from_millis(100), CAP), CAP);
        // 500 events in 100 ms: 5,000/s; 500 missing need 100 ms.
        let wait = linger(500, 500, Duration::from_millis(100), CAP);
        assert!((wait.as_secs_f64() - 0.1).abs() < 1e-9, "{wait:?}");
    }

    #[test]
    fn a_trickle_or_a_moderate_rate_is_numbered_at_once() {
        // One event in 5 s: not one more expected within the cap.
        assert_eq!(linger(1, 999, Duration::from_secs(5), CAP), Duration::ZERO);
        // 20 events in 100 ms: 200/s; 500 ms bring 100 more, far from half of 1,000.
        assert_eq!(
            linger(20, 980, Duration::from_millis(100), CAP),
            Duration::ZERO
        );
    }
}
