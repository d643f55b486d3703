//! A session of a lease holder: the unique index, intents left pending, the stored state, the
//! change stream (opened before a backfill scans, so nothing inserted meanwhile is missed),
//! then batches until shutdown: what the stream has (at most `batch_size` events), numbered while
//! the next batch is read (group commit, `batches.rs`), and the resume token of the batches
//! applied stored when the core's [`Checkpoint`] says so (at most every `checkpoint`; on a quiet
//! stream the server's post-batch token every `heartbeat`; at a graceful stop).

use std::time::Duration;

use futures_util::future::Either;
use mongo_seq_core::{BatchReport, ChangeStream, Checkpoint};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use tracing::{debug, info};

use super::batches::Reads;
use super::Trigger;
use crate::config::On;
use crate::error::SidecarError;
use crate::fence::Fence;
use crate::health::State;
use crate::mongo::{EventBatch, EventStream, Mongo, ResumeToken, Watch};

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
        let documents = self.check_sharding().await?;
        self.ensure_index(&documents).await?;
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
            // The stream's first resume point is stored before the scan (as not backfilled yet):
            // if this session fails during it, the next one backfills again but resumes the
            // stream here, so deletions made meanwhile still reach the trigger.
            if stored_token.is_none() {
                if let Some(token) = stream.resume_token() {
                    self.state.save(Some(&token), Some(false), fence).await?;
                    stored_token = Some(token);
                }
            }
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
        // The token past every event applied (not necessarily stored yet).
        let mut applied_token = stored_token.clone();
        // A batch read while the previous one was written (batches.rs): held, not applied.
        let mut ahead: Option<EventBatch> = None;
        let mut reads = Reads::new();
        let batch_size = self.settings.batch_size;
        let mut last_cluster_secs: Option<u32> = None;
        while !shutdown.is_cancelled() {
            fence.check()?;
            if self.probe.dead_letters() > 0
                && last_retry.elapsed() >= self.settings.dead_letter_retry
            {
                self.retry_dead_letters(fence).await?;
                last_retry = Instant::now();
            }
            let mut batch = match ahead.take() {
                Some(batch) => batch,
                None => match self
                    .read(&mut stream, batch_size, &mut reads, shutdown)
                    .await?
                {
                    Some(batch) => batch,
                    None => break,
                },
            };
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
                if batch.resume_token.is_some() {
                    applied_token = batch.resume_token;
                }
                let moved = applied_token.is_some() && applied_token != stored_token;
                if checkpoint.quiet(now_ms(), moved) {
                    self.store(applied_token.clone(), &mut stored_token, fence)
                        .await?;
                    checkpoint.stored(now_ms());
                }
                self.wait_after_empty(&reads, shutdown).await;
                continue;
            }
            // Under load: fuller batches (batches.rs, `linger`).
            self.fill(&mut batch, &mut stream, &mut reads, shutdown)
                .await?;
            self.probe.events(batch.events.len());
            // Mutant (simulator only): the token stored before the batch is applied.
            if mongo_seq_core::mutants::active(mongo_seq_core::mutants::Mutant::TokenBeforeBatch) {
                self.state
                    .save(batch.resume_token.as_ref(), None, fence)
                    .await?;
            }
            // The batch is written while the next one is read (group commit, batches.rs). A
            // failure of either ends the session at once (what the other did is safe to drop:
            // writes are idempotent, the token not stored).
            let mut apply = std::pin::pin!(self.apply(batch.events, verify, fence));
            let mut read =
                std::pin::pin!(self.read_ahead(&mut stream, batch_size, &mut reads, shutdown));
            let first = tokio::select! {
                biased;
                applied = &mut apply => Either::Left(applied?),
                next = &mut read => Either::Right(next?),
            };
            let (applied, next) = match first {
                Either::Left(applied) => (applied, read.await?),
                Either::Right(next) => (apply.await?, next),
            };
            verify = verify && applied.report.already > 0;
            applied_token = batch.resume_token;
            ahead = next;
            // Mutant (simulator only): the token of the batch read ahead taken as applied.
            if mongo_seq_core::mutants::active(mongo_seq_core::mutants::Mutant::ReadAheadToken) {
                if let Some(token) = ahead.as_ref().and_then(|b| b.resume_token.clone()) {
                    applied_token = Some(token);
                }
            }
            if checkpoint.batch_applied(now_ms()) {
                self.store(applied_token.clone(), &mut stored_token, fence)
                    .await?;
                checkpoint.stored(now_ms());
            }
            self.applied(&applied.report, applied.cluster_secs, applied.events);
            if let Some(secs) = applied.cluster_secs {
                last_cluster_secs = Some(secs);
            }
            *delay = self.settings.backoff_initial;
        }
        // Graceful shutdown: the batch in flight is done; a batch read ahead is not applied, so
        // the token stored is the applied one (past the read-ahead batch only when it was empty).
        if let Some(batch) = ahead.filter(|b| b.events.is_empty()) {
            if batch.resume_token.is_some() {
                applied_token = batch.resume_token;
            }
        }
        if checkpoint.unstored() || (applied_token.is_some() && applied_token != stored_token) {
            self.store(applied_token, &mut stored_token, fence).await?;
        }
        Ok(())
    }

    /// The change stream of the trigger (the core's), after `token`.
    fn watch(&self, token: Option<ResumeToken>) -> Watch {
        let spec = &self.spec;
        let stream = ChangeStream::of(
            &spec.numbering,
            spec.filter.as_ref(),
            spec.on == On::Match,
            spec.record_deletions,
        );
        Watch {
            stream: if spec.post_images {
                stream.with_post_images()
            } else {
                stream
            },
            start_after: token,
            batch_size: u32::try_from(self.settings.batch_size.max(MIN_STREAM_READ))
                .unwrap_or(u32::MAX),
            max_await: self.settings.max_await,
        }
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

/// A duration in whole milliseconds (the core's time unit).
fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}
