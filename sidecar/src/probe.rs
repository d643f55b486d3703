//! What one trigger tells the operator: its metrics (each series labelled with the trigger,
//! created once here), its `/healthz` entry, and the log lines of what happened — the core
//! plans' notes included. The pipeline calls the probe; it never touches a metric itself.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mongo_seq_core::{BatchReport, DeadLetter, Note};
use prometheus::{Gauge, IntCounter, IntCounterVec, IntGauge};
use tracing::{debug, error, info, warn};

use crate::error::{SidecarError, ERROR_KINDS};
use crate::fence::Fence;
use crate::health::{Health, State};
use crate::lock::lock;
use crate::metrics::{Metrics, TokenAge};

/// One trigger's metrics, health and logs.
#[derive(Clone)]
pub struct Probe {
    inner: Arc<Inner>,
}

struct Inner {
    trigger: String,
    health: Health,
    errors: IntCounterVec,
    events: IntCounter,
    numbered: IntCounter,
    prenumbered: IntCounter,
    skipped: IntCounter,
    batches: IntCounter,
    lag: Gauge,
    backfill_remaining: IntGauge,
    healthy: IntGauge,
    lease_held: IntGauge,
    lease_acquired: IntCounter,
    lease_lost: IntCounter,
    fenced: IntCounter,
    intents_completed: IntCounter,
    gapless_renumbered: IntCounter,
    token_age: TokenAge,
    dead_letters: IntGauge,
    dead_letters_recorded: IntCounter,
    dead_letters_resolved: IntCounter,
    /// The dead letters waiting, by document `_id` (as this holder last saw them).
    waiting: Mutex<BTreeSet<String>>,
    /// Documents met that cannot be numbered, by `_id`: each is logged and counted once,
    /// however often the stream (replays) or a backfill meets it again.
    unnumberable: Mutex<BTreeSet<String>>,
}

impl Probe {
    /// The probe of `trigger`. Creates the trigger's series before anything happens (counters
    /// at 0, healthy 1 like a starting trigger's `/healthz`), so every metric is exported from
    /// the start and alerts' `increase()` sees the first error, fence or skipped document.
    pub fn new(trigger: &str, metrics: &Metrics, health: &Health) -> Self {
        let label = [trigger];
        for kind in ERROR_KINDS {
            metrics.errors.with_label_values(&[trigger, kind]);
        }
        let inner = Inner {
            trigger: trigger.to_owned(),
            health: health.clone(),
            errors: metrics.errors.clone(),
            events: metrics.events.with_label_values(&label),
            numbered: metrics.numbered.with_label_values(&label),
            prenumbered: metrics.prenumbered.with_label_values(&label),
            skipped: metrics.skipped.with_label_values(&label),
            batches: metrics.batches.with_label_values(&label),
            lag: metrics.lag.with_label_values(&label),
            backfill_remaining: metrics.backfill_remaining.with_label_values(&label),
            healthy: metrics.healthy.with_label_values(&label),
            lease_held: metrics.lease_held.with_label_values(&label),
            lease_acquired: metrics.lease_acquired.with_label_values(&label),
            lease_lost: metrics.lease_lost.with_label_values(&label),
            fenced: metrics.fenced.with_label_values(&label),
            intents_completed: metrics.intents_completed.with_label_values(&label),
            gapless_renumbered: metrics.gapless_renumbered.with_label_values(&label),
            token_age: metrics.token_age.clone(),
            dead_letters: metrics.dead_letters.with_label_values(&label),
            dead_letters_recorded: metrics.dead_letters_recorded.with_label_values(&label),
            dead_letters_resolved: metrics.dead_letters_resolved.with_label_values(&label),
            waiting: Mutex::default(),
            unnumberable: Mutex::default(),
        };
        inner.healthy.set(1);
        Self {
            inner: Arc::new(inner),
        }
    }

    pub fn trigger(&self) -> &str {
        &self.inner.trigger
    }

    // ------------------------------------------------------------------ health

    /// What the trigger does now (`/healthz` `state`).
    pub fn state(&self, state: State) {
        self.inner.health.set_state(&self.inner.trigger, state);
    }

    /// Healthy in `/healthz` and in the `mongo_seq_trigger_healthy` gauge alike.
    pub fn succeeded(&self) {
        self.inner.health.succeeded(&self.inner.trigger);
        self.inner.healthy.set(1);
    }

    /// Unhealthy in `/healthz` and in the gauge alike, until the next success.
    fn failed(&self, e: &SidecarError) {
        let i = &self.inner;
        i.errors.with_label_values(&[&i.trigger, e.kind()]).inc();
        i.healthy.set(0);
        i.health.error(&i.trigger, &e.code(), &e.to_string());
    }

    /// A failure the trigger retries after `delay`.
    pub fn retrying(&self, e: &SidecarError, delay: Duration) {
        let code = e.code();
        self.failed(e);
        let retry_in_ms = u64::try_from(delay.as_millis()).unwrap_or(u64::MAX);
        error!(trigger = self.trigger(), code, kind = e.kind(), error = %e, retry_in_ms,
            "trigger failed; retrying from the stored resume token");
    }

    /// A failure that stops the trigger, and the process with it.
    pub fn stopped_by(&self, e: &SidecarError) {
        self.failed(e);
        self.state(State::Stopped);
        error!(trigger = self.trigger(), code = e.code(), kind = e.kind(), error = %e, "trigger stopped");
    }

    /// The stored resume point is gone: the trigger backfills and goes on from now.
    pub fn history_lost(&self, e: &SidecarError) {
        let code = e.code();
        self.failed(e);
        if e.to_string().contains("invalidated") {
            warn!(trigger = self.trigger(), code, error = %e,
                "the watched collection was dropped or renamed (or its database dropped): the change stream is invalidated; numbering it again from a fresh backfill, from now on and once it exists");
        } else {
            warn!(trigger = self.trigger(), code, error = %e,
                "resume point lost: numbering unnumbered documents (backfill) and continuing from now");
        }
    }

    // ------------------------------------------------------------------ lease

    /// Another instance holds the lease (`first`: log it, once per standby period).
    pub fn standby(&self, owner: &str, epoch: i64, expires_at_ms: i64, first: bool) {
        let i = &self.inner;
        i.health.set_state(&i.trigger, State::Standby);
        i.health.lease(&i.trigger, false, Some(epoch), Some(owner));
        i.lease_held.set(0);
        self.succeeded();
        if first {
            info!(
                trigger = self.trigger(),
                holder = owner,
                epoch,
                expires_at_ms,
                "standby: another instance holds the lease"
            );
        }
    }

    /// A new epoch was acquired (the counters carry it).
    pub fn lease_acquired(&self, fence: &Fence) {
        self.inner.lease_acquired.inc();
        info!(
            trigger = self.trigger(),
            owner = fence.owner,
            epoch = fence.epoch,
            "lease acquired: this instance numbers the trigger"
        );
    }

    /// This instance holds the lease (`Some`) or not any more (`None`).
    pub fn holding(&self, fence: Option<&Fence>) {
        let i = &self.inner;
        i.health.lease(
            &i.trigger,
            fence.is_some(),
            fence.map(|f| f.epoch),
            fence.map(|f| f.owner.as_str()),
        );
        i.lease_held.set(i64::from(fence.is_some()));
        if fence.is_none() {
            i.token_age.forget(&i.trigger);
            // The holder's view of the dead letters: the next holder reports them.
            lock(&i.waiting).clear();
            self.show_waiting(0);
        }
    }

    /// The resume token was stored at `at_ms`; `resumed`: it is the stored one this holder
    /// resumes from (its `updatedAt`), unless it stored one since.
    pub fn token_stored(&self, at_ms: i64, resumed: bool) {
        self.inner
            .token_age
            .set(&self.inner.trigger, at_ms, resumed);
    }

    /// The lease was lost while held: standing by.
    pub fn lease_lost(&self, epoch: i64) {
        self.inner.lease_lost.inc();
        warn!(
            trigger = self.trigger(),
            epoch, "lease lost: this instance stopped numbering and stands by"
        );
        self.state(State::Standby);
    }

    /// A write was refused: a later holder had touched the counter or the state document.
    pub fn fenced(&self) {
        self.inner.fenced.inc();
    }

    // ------------------------------------------------------------------ numbering

    /// Insert events read from the stream.
    pub fn events(&self, count: usize) {
        self.inner
            .events
            .inc_by(u64::try_from(count).unwrap_or(u64::MAX));
    }

    /// What a batch (stream or backfill) numbered.
    pub fn numbered(&self, report: &BatchReport) {
        self.inner.numbered.inc_by(report.numbered);
    }

    /// Documents inserted with a number of their own (counted once their batch's token is
    /// stored, so a replayed batch is not counted twice).
    pub fn prenumbered(&self, count: u64) {
        self.inner.prenumbered.inc_by(count);
    }

    /// A batch is done (numbers written, for the stream the token stored too).
    pub fn batch_applied(&self, numbered: u64, now_ms: i64) {
        self.inner.batches.inc();
        self.inner
            .health
            .batch_applied(&self.inner.trigger, numbered, now_ms);
    }

    /// Seconds between now and the cluster time of the last processed event.
    pub fn lag(&self, now_ms: i64, cluster_secs: u32) {
        let now = now_ms as f64 / 1000.0;
        self.inner.lag.set((now - f64::from(cluster_secs)).max(0.0));
    }

    pub fn backfill_remaining(&self, remaining: u64) {
        self.inner
            .backfill_remaining
            .set(i64::try_from(remaining).unwrap_or(i64::MAX));
    }

    /// The trigger numbers without its unique index (`unique_index = false`): `/healthz` says so.
    pub fn without_unique_index(&self, warning: &str) {
        self.inner
            .health
            .without_unique_index(&self.inner.trigger, warning);
    }

    // ------------------------------------------------------------------ dead letters

    /// Dead letters recorded (`new` of them for the first time): waiting now.
    pub fn dead_letters_recorded(&self, letters: &[DeadLetter], new: u64) {
        self.inner.dead_letters_recorded.inc_by(new);
        let mut waiting = lock(&self.inner.waiting);
        for letter in letters {
            if waiting.insert(letter.id.to_string()) {
                warn!(trigger = self.trigger(), _id = %letter.id, code = letter.code, reason = letter.reason,
                    "dead letter: document cannot be numbered; recorded, retried until repaired");
            }
        }
        self.show_waiting(waiting.len());
    }

    /// The dead letters waiting, as just read (`ids`), and how many a retry resolved.
    pub fn dead_letters_waiting(&self, ids: impl IntoIterator<Item = String>, resolved: u64) {
        self.inner.dead_letters_resolved.inc_by(resolved);
        if resolved > 0 {
            info!(
                trigger = self.trigger(),
                resolved, "dead letters resolved (numbered after a repair, or gone)"
            );
        }
        let mut waiting = lock(&self.inner.waiting);
        *waiting = ids.into_iter().collect();
        self.show_waiting(waiting.len());
    }

    /// How many dead letters wait (as last seen).
    pub fn dead_letters(&self) -> usize {
        lock(&self.inner.waiting).len()
    }

    fn show_waiting(&self, count: usize) {
        let count = u64::try_from(count).unwrap_or(u64::MAX);
        self.inner
            .dead_letters
            .set(i64::try_from(count).unwrap_or(i64::MAX));
        self.inner.health.dead_letters(&self.inner.trigger, count);
    }

    /// Whether the document `id` is met for the first time (and remembers it).
    fn first_time(&self, id: &serde_json::Value) -> bool {
        lock(&self.inner.unnumberable).insert(id.to_string())
    }

    /// What a core plan noted: the log line, and the metric where there is one.
    pub fn note(&self, note: Note) {
        let trigger = self.trigger();
        match note {
            Note::Skipped { id, error } => {
                if self.first_time(&id) {
                    self.inner.skipped.inc();
                    warn!(trigger, _id = %id, code = error.code(), error = %error, "document cannot be numbered; skipped");
                }
            }
            Note::NotANumber { id, field, reason } => {
                warn!(trigger, _id = %id, "field `{field}` {reason}; document left as it is");
            }
            Note::SeedRefused {
                counter_id,
                value,
                error,
            } => {
                warn!(trigger, counter = counter_id, value, error = %error, "pre-set number not used to move the counter");
            }
            Note::Collision {
                id,
                counter_id,
                number,
                attempt,
            } => {
                warn!(trigger, _id = %id, counter = counter_id, number, attempt, "number already taken by another document; renumbering");
            }
            Note::CompletingIntent {
                counter_id,
                first,
                count,
                epoch,
                before_reserving,
            } => {
                let why = if before_reserving {
                    "completing a pending gapless intent before reserving"
                } else {
                    "completing a gapless intent left pending by an interrupted batch"
                };
                info!(trigger, counter = counter_id, first, count, epoch, "{why}");
            }
            Note::IntentCompleted { counter_id } => {
                self.inner.intents_completed.inc();
                debug!(trigger, counter = counter_id, "gapless intent completed");
            }
            Note::IntentSettled {
                counter_id,
                missing,
                foreign,
                seq,
            } => {
                info!(trigger, counter = counter_id, missing, foreign, seq,
                    "gapless intent: deleted or otherwise numbered documents skipped, counter set to the last number used");
            }
            Note::Renumbered { counter_id, count } => {
                self.inner.gapless_renumbered.inc_by(count);
                info!(
                    trigger,
                    counter = counter_id,
                    renumbered = count,
                    "gapless intent: numbers written past a document deleted meanwhile move down"
                );
            }
            Note::NumberTaken { counter_id, number } => {
                warn!(
                    trigger,
                    counter = counter_id,
                    number,
                    "number already held by another document (inserted with it): skipped"
                );
            }
            Note::AlreadyFinished { counter_id } => {
                warn!(
                    trigger,
                    counter = counter_id,
                    "the intent was already completed by another instance"
                );
            }
            Note::EpochRaised { epoch, highest } => {
                warn!(
                    trigger,
                    epoch,
                    highest,
                    "counters carry a higher epoch than the lease document: raising the epoch"
                );
            }
        }
    }
}
