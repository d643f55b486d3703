//! One trigger: the supervisor (this module) stands by until it holds the trigger's lease, then
//! runs sessions with backoff between failed ones, until shutdown or the lease is lost.
//!
//! ```text
//! Trigger::run ── standby ──(lease acquired: core AcquireLease)──▶ hold: sessions ∥ lease renewal
//!                    ▲                                                │
//!                    └──── lease lost (renewal, own deadline, fenced) ┘   shutdown: release
//! session (session.rs): unique index → shard keys (sharding.rs) → CompletePending → state → open stream
//!                       → [backfill (backfill.rs)] → batches (batches.rs: each written while
//!                       the next is read) → token (state.rs)
//!                       and dead letters retried (dead_letters.rs)
//! ```
//!
//! Every database operation goes through `M`, the [`Mongo`] interface; every metric, health
//! field and log line through the trigger's [`Probe`].

mod backfill;
mod batches;
mod dead_letters;
mod index;
mod plans;
mod session;
mod sharding;

use std::sync::Arc;
use std::time::Duration;

use mongo_seq_core::{ClusterTime, TwinWatch};
use tokio_util::sync::CancellationToken;
use tracing::{info, warn};

use crate::config::{Settings, TriggerSpec};
use crate::error::SidecarError;
use crate::fence::Fence;
use crate::health::{Health, State};
use crate::lease_keeper::{Acquired, LeaseKeeper};
use crate::liveness::Beacon;
use crate::metrics::Metrics;
use crate::mongo::Mongo;
use crate::probe::Probe;
use crate::state::StateStore;

/// How long a shutdown waits for the batch in flight (then the lease release has
/// [`crate::lease_keeper::RELEASE_TIMEOUT`], all within [`crate::server::SHUTDOWN_GRACE`]).
pub const BATCH_GRACE: Duration = Duration::from_secs(8);

/// What the triggers of one process share.
#[derive(Clone, Default)]
pub struct Shared {
    pub metrics: Metrics,
    pub health: Health,
    /// This process's liveness beacon (no facts: a successor waits for the lease to expire).
    pub beacon: Arc<Beacon>,
    /// This process's nonce, stored with every lease it takes, so that a second process
    /// started with the same instance id is told apart (`None`: leases carry none, and a lease
    /// of this instance id is reclaimed at once, whoever holds it).
    pub incarnation: Option<String>,
}

pub struct Trigger<M> {
    spec: TriggerSpec,
    settings: Settings,
    mongo: M,
    state: StateStore<M>,
    lease: LeaseKeeper<M>,
    probe: Probe,
    /// The newest cluster time of the acknowledged writes of every plan this trigger ran,
    /// however each was left (`run_plan.rs`, `run_writing_plan`): a batch's reads are anchored
    /// at or after it as well as after its events (`batches.rs`).
    written: std::sync::Mutex<Option<ClusterTime>>,
}

impl<M: Mongo> Trigger<M> {
    /// The trigger of `spec`, reaching MongoDB through `mongo` (its documents, counters and
    /// state collections).
    pub fn new(spec: TriggerSpec, settings: Settings, mongo: M, shared: &Shared) -> Self {
        let probe = Probe::new(&spec.id, &shared.metrics, &shared.health);
        let lease = LeaseKeeper::new(
            mongo.clone(),
            &spec.id,
            spec.numbering.sequence(),
            settings.lease.clone(),
            (shared.beacon.clone(), shared.incarnation.clone()),
            probe.clone(),
        );
        Self {
            state: StateStore::new(mongo.clone(), &spec.id, probe.clone()),
            lease,
            probe,
            spec,
            settings,
            mongo,
            written: std::sync::Mutex::new(None),
        }
    }

    pub fn spec(&self) -> &TriggerSpec {
        &self.spec
    }

    /// The trigger's state document (resume token, backfill flag).
    pub fn state(&self) -> &StateStore<M> {
        &self.state
    }

    fn id(&self) -> &str {
        &self.spec.id
    }

    /// Runs until `shutdown`: stands by until it holds the trigger's lease, then runs sessions
    /// (with backoff between failed ones) until shutdown or until the lease is lost. Fails
    /// (`DuplicateInstance`) when another live process with this instance id holds the lease
    /// and this one is to stop.
    pub async fn run(
        self,
        shutdown: CancellationToken,
        backfill_on_start: bool,
    ) -> Result<(), SidecarError> {
        let mut force_backfill = backfill_on_start;
        let mut delay = self.settings.backoff_initial;
        self.probe.state(State::Starting);
        let mut standby_logged = false;
        let mut twin = TwinWatch::default();
        while !shutdown.is_cancelled() {
            // Nothing is held yet: a shutdown stops the attempt at once (without a reachable
            // server it would wait for the driver's server selection, 30 s by default).
            let attempt = tokio::select! {
                biased;
                attempt = self.lease.acquire() => attempt,
                () = shutdown.cancelled() => break,
            };
            let fence = match attempt {
                Ok(Acquired::Held(fence)) => fence,
                Ok(Acquired::Busy(holder)) => {
                    self.probe.standby(
                        &holder.owner,
                        holder.epoch,
                        holder.expires_at_ms,
                        !standby_logged,
                    );
                    standby_logged = true;
                    if let Err(e) = self.lease.watch_twin(&mut twin, &holder) {
                        self.probe.stopped_by(&e);
                        return Err(e);
                    }
                    tokio::select! {
                        biased;
                        () = shutdown.cancelled() => {}
                        () = tokio::time::sleep(self.settings.lease.renew) => {}
                    }
                    continue;
                }
                Err(e) => {
                    self.probe.retrying(&e, delay);
                    tokio::select! {
                        biased;
                        () = shutdown.cancelled() => {}
                        () = tokio::time::sleep(delay) => {}
                    }
                    delay = self.backoff(delay);
                    continue;
                }
            };
            standby_logged = false;
            twin.reset();
            self.probe.holding(Some(&fence));
            tokio::select! {
                biased;
                () = self.hold(&shutdown, &fence, &mut force_backfill, &mut delay) => {}
                () = self.lease.keep(&fence) => {}
            }
            self.probe.holding(None);
            if fence.check().is_ok() {
                if shutdown.is_cancelled() {
                    self.lease.release(&fence).await;
                }
            } else {
                self.probe.lease_lost(fence.epoch);
            }
        }
        self.probe.state(State::Stopped);
        info!(trigger = self.id(), "trigger stopped");
        Ok(())
    }

    /// The next retry delay: doubled, capped.
    fn backoff(&self, delay: Duration) -> Duration {
        (delay * 2).min(self.settings.backoff_max)
    }

    /// Holding the lease: sessions with backoff until shutdown or the lease is lost.
    async fn hold(
        &self,
        shutdown: &CancellationToken,
        fence: &Fence,
        force_backfill: &mut bool,
        delay: &mut Duration,
    ) {
        while !shutdown.is_cancelled() && fence.check().is_ok() {
            // After a shutdown request the session gets BATCH_GRACE to finish its batch and
            // store the token; past that (e.g. the server is unreachable) it is abandoned, which
            // is safe: assignments are idempotent and the stored token is only ever behind.
            let abandon = async {
                shutdown.cancelled().await;
                tokio::time::sleep(BATCH_GRACE).await;
            };
            let result = tokio::select! {
                biased;
                result = self.session(shutdown, fence, force_backfill, delay) => result,
                () = abandon => {
                    warn!(trigger = self.id(), grace_secs = BATCH_GRACE.as_secs(), "shutdown: the session did not finish in time; abandoned");
                    Ok(())
                }
            };
            match result {
                Ok(()) => break,
                Err(e) if e.is_lease_loss() => {
                    warn!(trigger = self.id(), code = e.code(), error = %e, "not the lease holder any more: nothing more is numbered by this instance");
                    fence.lose();
                    break;
                }
                Err(e) => {
                    if let SidecarError::HistoryLost(_) = e {
                        self.probe.history_lost(&e);
                        *force_backfill = true;
                        if let Err(e) = self.state.forget_token(fence).await {
                            warn!(trigger = self.id(), error = %e, "could not clear the stored resume token");
                        }
                    } else {
                        self.probe.retrying(&e, *delay);
                    }
                    tokio::select! {
                        biased;
                        () = shutdown.cancelled() => break,
                        () = fence.lost().cancelled() => break,
                        () = tokio::time::sleep(*delay) => {}
                    }
                    *delay = self.backoff(*delay);
                }
            }
        }
    }
}
