//! A session of a lease holder: the unique index, intents left pending, the stored state, the
//! change stream (opened before a backfill scans, so nothing inserted meanwhile is missed),
//! then batches until shutdown: read what the stream has (at most `batch_size` events), number
//! it, store the resume token. A quiet stream stores the server's post-batch token every
//! `heartbeat`.

use std::time::Duration;

use mongo_seq_core::BatchReport;
use serde_json::{json, Value};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use tracing::{debug, info};

use super::{prefix_filter, Trigger};
use crate::error::SidecarError;
use crate::health::State;
use crate::lease::Fence;
use crate::mongo::{EventBatch, EventStream, Mongo, ResumeToken, Watch};

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
        // Whoever holds the trigger completes what an interrupted holder left pending first.
        self.complete_pending(fence).await?;
        let stored = self.state.load().await?;
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
        let mut last_store = Instant::now();
        let mut last_cluster_secs: Option<u32> = None;
        while !shutdown.is_cancelled() {
            fence.check()?;
            let batch = self.next_batch(&mut stream, shutdown).await?;
            if let Some(secs) = last_cluster_secs {
                // Literally "now minus the cluster time of the last processed event": it grows on
                // a quiet collection.
                self.probe.lag(self.mongo.now_ms(), secs);
            }
            if batch.events.is_empty() {
                // Caught up: everything the stream had was numbered (after an error, this is
                // the first sign the trigger works again).
                self.probe.succeeded();
                *delay = self.settings.backoff_initial;
                if last_store.elapsed() >= self.settings.heartbeat {
                    // Quiet stream: store the post-batch resume token when the server gives one.
                    self.store_moved(batch.resume_token, &mut stored_token, fence)
                        .await?;
                    last_store = Instant::now();
                }
                continue;
            }
            let events = batch.events.len();
            self.probe.events(events);
            let cluster_secs = batch.events.iter().rev().find_map(|e| e.cluster_time_secs);
            let documents: Vec<Value> = batch
                .events
                .into_iter()
                .filter_map(|event| event.document)
                .collect();
            let report = self.number(documents, verify, fence).await?;
            verify = verify && report.already > 0;
            self.state
                .save(batch.resume_token.as_ref(), None, fence)
                .await?;
            stored_token = batch.resume_token;
            last_store = Instant::now();
            self.applied(&report, cluster_secs, events);
            if let Some(secs) = cluster_secs {
                last_cluster_secs = Some(secs);
            }
            *delay = self.settings.backoff_initial;
        }
        // Graceful shutdown: the batch in flight is done; keep the newest token.
        self.store_moved(stream.resume_token(), &mut stored_token, fence)
            .await
    }

    /// The change stream of the trigger: its inserts (matching its `match`), after `token`.
    fn watch(&self, token: Option<ResumeToken>) -> Watch {
        let inserts = json!({ "operationType": "insert" });
        let filter = match &self.spec.filter {
            Some(m) => json!({ "$and": [inserts, prefix_filter(m, "fullDocument")] }),
            None => inserts,
        };
        Watch {
            filter,
            start_after: token,
            batch_size: u32::try_from(self.settings.batch_size).unwrap_or(u32::MAX),
            max_await: self.settings.max_await,
        }
    }

    /// The events available now, up to the batch size; empty after a quiet poll interval.
    async fn next_batch(
        &self,
        stream: &mut M::Stream,
        shutdown: &CancellationToken,
    ) -> Result<EventBatch, SidecarError> {
        let asked = Instant::now();
        let batch = stream.next_batch(self.settings.batch_size).await?;
        if batch.events.is_empty() {
            // A real server waits up to maxAwaitTime in getMore; one that answers at once is
            // asked at most once per poll interval.
            let rest = self.settings.poll_interval.saturating_sub(asked.elapsed());
            tokio::select! {
                biased;
                () = shutdown.cancelled() => {}
                () = tokio::time::sleep(rest) => {}
            }
        }
        Ok(batch)
    }

    /// Stores `token` when the stream moved past the one stored.
    async fn store_moved(
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

    /// A stream batch is numbered and its token stored.
    fn applied(&self, report: &BatchReport, cluster_secs: Option<u32>, events: usize) {
        // Counted once the token is stored: a batch replayed after a failure is not counted
        // twice.
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
