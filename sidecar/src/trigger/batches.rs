//! The batch loop's reads and writes, group-commit style: a batch is what the stream has when
//! the previous batch's writes return. The next read (one `getMore`, or what the last reply
//! brought beyond a batch, topped up by one `getMore` when that reply was full: a backlog is
//! read in full batches, `connection/stream.rs`) goes out while the current batch is written,
//! and what it brings is the next batch, written as soon as the current one is done. So batches
//! grow with the stream's rate times one write, and a drain's reads overlap its writes (their
//! round trips, at least: a server that runs one command at a time still spends its own time on
//! each).
//!
//! ```text
//! read ─▶ batch 1: number ─────────────▶ batch 2: number ──────────▶ …
//!         read (batch 2, held) ─┘        read (batch 3, held) ─┘
//!         token of batch 1 storable ──┘  token of batch 2 storable ──┘
//! ```
//!
//! A batch read ahead is only held: its token becomes the applied token once it is applied, never
//! before (a crash, a lost lease or a graceful stop meanwhile replays it from the token before).
//! Only reads overlap: batches are numbered one after the other, in stream order, so a gapless
//! trigger's commit order is the stream's as before.
//!
//! Waiting for more pays only under load: when the stream's sustained rate (averaged over the
//! last two seconds or so) fills the batch at least half within `batch_delay`, and would at
//! least double what the batch holds, the batch waits as long as that rate needs to fill it (at
//! most `batch_delay`) and takes one more read ([`linger`]): fewer, fuller batches when the
//! writes could not keep up one by one. This wait adds nothing to a trickle or a moderate rate,
//! nor to one that bursts (writers catching up after a stall look like a busy stream for a
//! quarter second), nor to a backlog that is already a batch worth its commands.
//!
//! At a moderate rate a batch is small: what arrived while the previous one was written, often
//! one or two documents, each batch costing its reservation, its `update` and the read (gapless:
//! about five commands). So the read of the next batch waits, from when the previous read went
//! out, as long as the stream's rate needs to bring [`GATHER`] events, at most `linger` (10 ms by
//! default; [`gather_time`]): the wait overlaps the write in flight, so it adds only what that
//! write did not already take. A trickle that would not bring two events within `linger` is read
//! at once (each document its own batch, no latency added), and a busy stream gathers them within
//! a write anyway.
//!
//! A stream whose read came back empty is waited on before the next read (a real server already
//! waited `max_await` inside its `getMore`; one that answers at once is read again after
//! `poll_interval`), except right after events: then the next read goes out after as long as the
//! empty one took, so reads take at most about half the time of a busy stream that is caught up.

use std::collections::HashSet;
use std::time::Duration;

use mongo_seq_core::{BatchReport, Deletion, RecordDeletions};
use serde_json::Value;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use tracing::{debug, warn};

use super::Trigger;
use crate::config::On;
use crate::error::SidecarError;
use crate::fence::Fence;
use crate::mongo::{ChangeEvent, EventBatch, EventStream, Mongo};

/// Shortest wait between reads of a stream that answers at once (tokio's timer resolution).
const MIN_POLL: Duration = Duration::from_millis(1);

/// The stream's rate is averaged over about this long (exponentially): long enough that a burst
/// (two reads in a row, a backlog after a slow write) does not make a steady stream look busy,
/// short enough to see a stream dry up within a batch delay.
const RATE_WINDOW: Duration = Duration::from_millis(250);

/// The rate that decides a wait of up to `batch_delay` ([`linger`]) is averaged over about this
/// long: a stream must be busy for a while, not for one burst, before its batches wait.
const SUSTAINED_WINDOW: Duration = Duration::from_secs(2);

/// Events a read at a moderate rate waits for (at most `linger`): a batch of 8 costs well under
/// one command per document (3 commands a batch, a gapless one about 5, its read included).
const GATHER: f64 = 8.0;

/// When the stream's reads went out and what they brought: when to read again after an empty one.
#[derive(Debug)]
pub(super) struct Reads {
    /// When the last read went out.
    sent: Instant,
    /// The stream's rate lately, events per second: each read's events over the time since the
    /// read before it, averaged with weight `1 - e^(-that time / RATE_WINDOW)`.
    per_sec: f64,
    /// The same over [`SUSTAINED_WINDOW`].
    sustained_per_sec: f64,
    /// How long it took.
    took: Duration,
    /// When the last read that brought events went out.
    events_at: Option<Instant>,
}

impl Reads {
    pub(super) fn new() -> Self {
        Self {
            sent: Instant::now(),
            per_sec: 0.0,
            sustained_per_sec: 0.0,
            took: Duration::ZERO,
            events_at: None,
        }
    }

    fn record(&mut self, sent: Instant, events: usize) {
        let since = sent.saturating_duration_since(self.sent).as_secs_f64();
        if since > 0.0 {
            #[allow(clippy::cast_precision_loss)] // event counts
            let rate = events as f64 / since;
            let weight = |window: Duration| 1.0 - (-since / window.as_secs_f64()).exp();
            self.per_sec += weight(RATE_WINDOW) * (rate - self.per_sec);
            self.sustained_per_sec += weight(SUSTAINED_WINDOW) * (rate - self.sustained_per_sec);
        }
        self.sent = sent;
        self.took = sent.elapsed();
        if events > 0 {
            self.events_at = Some(sent);
        }
    }

    /// How long the next read waits now to gather a batch (see [`gather_time`]), counted from
    /// when the last read went out.
    pub(super) fn wait_to_gather(&self, linger: Duration) -> Duration {
        gather_time(self.per_sec, linger).saturating_sub(self.sent.elapsed())
    }

    /// How long to wait now, after an empty read, before the next one: see [`quiet_wait`].
    pub(super) fn wait_after_empty(&self, poll_interval: Duration) -> Duration {
        let since_events = self.events_at.map(|at| self.sent.duration_since(at));
        quiet_wait(self.took, since_events, poll_interval).saturating_sub(self.sent.elapsed())
    }
}

/// How long a batch of `got` events, `missing` short of full, waits for more: the time the
/// stream's sustained rate (`per_sec`, measured over the last [`SUSTAINED_WINDOW`] or so) needs
/// to bring the missing ones, at most `cap`. Nothing when the batch is full, when even that wait
/// would not bring it to half full (a trickle, or a moderate rate, is numbered at once: latency
/// matters more there than the few commands a bigger batch would save), or when it would bring
/// fewer events than the batch already holds (a backlog, after a slow write say, is already a
/// batch worth its commands: waiting would add its whole length to every event of it for less
/// than half the commands saved).
pub(super) fn linger(got: usize, missing: usize, per_sec: f64, cap: Duration) -> Duration {
    if missing == 0 || cap.is_zero() || per_sec <= 0.0 {
        return Duration::ZERO;
    }
    #[allow(clippy::cast_precision_loss)] // event counts
    let (got, missing) = (got as f64, missing as f64);
    let fill = (missing / per_sec).min(cap.as_secs_f64());
    if got + per_sec * fill < (got + missing) / 2.0 || per_sec * fill < got {
        return Duration::ZERO;
    }
    Duration::from_secs_f64(fill)
}

/// How long after a read the next one goes out, at `per_sec` events a second: the time that rate
/// needs to bring [`GATHER`] events, at most `linger`; nothing when it would bring fewer than two
/// within `linger` (a trickle: each document is numbered at once).
pub(super) fn gather_time(per_sec: f64, linger: Duration) -> Duration {
    let cap = linger.as_secs_f64();
    if per_sec * cap < 2.0 {
        return Duration::ZERO;
    }
    Duration::from_secs_f64((GATHER / per_sec).min(cap))
}

/// The time from an empty read's start to the next read: `poll_interval` on a quiet stream, or,
/// when a read less than `poll_interval` before it (`since_events` ago) brought events, as long as
/// the empty read took (at least [`MIN_POLL`], at most `poll_interval`): inserts are arriving, and
/// a stream caught up with them is read again soon, at no more than half its server's time.
pub(super) fn quiet_wait(
    took: Duration,
    since_events: Option<Duration>,
    poll_interval: Duration,
) -> Duration {
    match since_events {
        Some(since) if since < poll_interval => {
            took.clamp(MIN_POLL.min(poll_interval), poll_interval)
        }
        _ => poll_interval,
    }
}

/// A batch numbered: its report, event count and newest cluster time (seconds).
pub(super) struct Applied {
    pub report: BatchReport,
    pub events: usize,
    pub cluster_secs: Option<u32>,
}

impl<M: Mongo> Trigger<M> {
    /// One read of the stream, at most `max` events (what its last reply brought beyond a
    /// batch, else one round trip); `None` when `shutdown` came first (the read is dropped: the
    /// stream is not read again).
    pub(super) async fn read(
        &self,
        stream: &mut M::Stream,
        max: usize,
        reads: &mut Reads,
        shutdown: &CancellationToken,
    ) -> Result<Option<EventBatch>, SidecarError> {
        let sent = Instant::now();
        let batch = tokio::select! {
            biased;
            () = shutdown.cancelled() => return Ok(None),
            batch = stream.next_batch(max) => batch?,
        };
        reads.record(sent, batch.events.len());
        Ok(Some(batch))
    }

    /// The read of the next batch, while the current one is written: after waiting to gather
    /// a batch at a moderate rate ([`gather_time`]); `None` when `shutdown` came first.
    pub(super) async fn read_ahead(
        &self,
        stream: &mut M::Stream,
        max: usize,
        reads: &mut Reads,
        shutdown: &CancellationToken,
    ) -> Result<Option<EventBatch>, SidecarError> {
        let wait = reads.wait_to_gather(self.settings.linger);
        if !wait.is_zero() {
            tokio::select! {
                biased;
                () = shutdown.cancelled() => return Ok(None),
                () = tokio::time::sleep(wait) => {}
            }
        }
        self.read(stream, max, reads, shutdown).await
    }

    /// A batch that is not full, under load: waits as [`linger`] says, then reads once more
    /// into it (`false`: shutdown came first; the batch is as it was).
    pub(super) async fn fill(
        &self,
        batch: &mut EventBatch,
        stream: &mut M::Stream,
        reads: &mut Reads,
        shutdown: &CancellationToken,
    ) -> Result<(), SidecarError> {
        let missing = self.settings.batch_size.saturating_sub(batch.events.len());
        let wait = linger(
            batch.events.len(),
            missing,
            reads.sustained_per_sec,
            self.settings.batch_delay,
        );
        if wait.is_zero() {
            return Ok(());
        }
        tokio::select! {
            biased;
            () = shutdown.cancelled() => return Ok(()),
            () = tokio::time::sleep(wait) => {}
        }
        if let Some(more) = self.read(stream, missing, reads, shutdown).await? {
            batch.events.extend(more.events);
            // Past every event of the batch (an empty read's token: past everything read).
            batch.resume_token = more.resume_token.or(batch.resume_token.take());
        }
        Ok(())
    }

    /// After an empty read: waits before the next one (see [`Reads::wait_after_empty`]), or
    /// until shutdown.
    pub(super) async fn wait_after_empty(&self, reads: &Reads, shutdown: &CancellationToken) {
        let wait = reads.wait_after_empty(self.settings.poll_interval);
        tokio::select! {
            biased;
            () = shutdown.cancelled() => {}
            () = tokio::time::sleep(wait) => {}
        }
    }

    /// Numbers the documents of `events` (and, gapless, records their deletions), as the holder
    /// of `fence`: everything that must be written before a token past them may be stored.
    pub(super) async fn apply(
        &self,
        events: Vec<ChangeEvent>,
        verify: bool,
        fence: &Fence,
    ) -> Result<Applied, SidecarError> {
        let count = events.len();
        let cluster_secs = events
            .iter()
            .rev()
            .find_map(|e| e.cluster_time.map(|time| time.t));
        // The reads that drop an event's document (numbered, or gone) are causally after
        // the newest event of the batch, so after every one of them, and after this trigger's
        // own earlier writes.
        let after = self.after_own_writes(events.iter().filter_map(|e| e.cluster_time).max());
        let deletions = self.deletions_of(&events);
        let (documents, times) = self.documents_of(events);
        let report = self
            .number_dated(documents, &times, verify, fence, after)
            .await?;
        // Recorded before the batch's token can be stored: a crash in between replays them.
        if !deletions.is_empty() {
            self.record_deletions(&deletions, fence).await?;
        }
        Ok(Applied {
            report,
            events: count,
            cluster_secs,
        })
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
}

#[cfg(test)]
mod tests;
