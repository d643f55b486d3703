//! The keeper of a trigger's lease, the sidecar's side of the core's lease protocols
//! (`AcquireLease`, `RenewLease`, the `Lease` plan's release; see
//! `crates/mongo-seq-core/src/acquire.rs`): a standby tries to acquire it every `renew`
//! interval; the holder renews it every `renew` interval and considers it lost `margin` before
//! it could expire, by its own monotonic clock (so a process paused past its lease, e.g.
//! SIGSTOP, stops before it sends anything), or as soon as a renewal finds someone else holding
//! it. Every write of a holder checks its [`Fence`] first.
//!
//! Monotonic time is `tokio::time` (a paused tokio clock drives it); the lease's `nowMs` is the
//! interface's wall clock.

use std::sync::Arc;
use std::time::Duration;

use mongo_seq_core::{
    AcquireLease, Acquisition, Lease, LeaseHolder, LeaseInfo, LeaseRequest, Plan, RenewLease,
    Renewal, SequenceSpec, Twin, TwinWatch,
};
use tokio::time::Instant;
use tracing::{info, warn};

use crate::config::LeaseSettings;
use crate::error::SidecarError;
use crate::fence::Fence;
use crate::liveness::{self, Beacon};
use crate::metrics::lease_traffic;
use crate::mongo::Mongo;
use crate::probe::Probe;
use crate::run_plan::run_plan;

/// How long a graceful shutdown tries to release a lease (it expires by itself otherwise).
pub const RELEASE_TIMEOUT: Duration = Duration::from_millis(1500);

/// What an acquisition attempt found.
pub enum Acquired {
    Held(Arc<Fence>),
    /// Someone else holds it: the lease as found.
    Busy(LeaseInfo),
}

/// Acquires, renews and releases one trigger's lease.
pub struct LeaseKeeper<M> {
    mongo: M,
    /// `_id` of the lease document (the trigger's state document).
    lease_id: String,
    /// The trigger's sequence (its counters are `name`, `name/…`, and the one `counterId` names).
    sequence: SequenceSpec,
    settings: LeaseSettings,
    /// This process's liveness beacon: its facts go with every lease it takes.
    beacon: Arc<Beacon>,
    /// This process's nonce (`Shared::incarnation`), stored with every lease it takes.
    incarnation: Option<String>,
    probe: Probe,
}

impl<M: Mongo> LeaseKeeper<M> {
    pub fn new(
        mongo: M,
        lease_id: &str,
        sequence: &SequenceSpec,
        settings: LeaseSettings,
        (beacon, incarnation): (Arc<Beacon>, Option<String>),
        probe: Probe,
    ) -> Self {
        Self {
            mongo,
            lease_id: lease_id.to_owned(),
            sequence: sequence.clone(),
            settings,
            beacon,
            incarnation,
            probe,
        }
    }

    fn request(&self, held: Option<i64>, release: bool) -> LeaseRequest {
        LeaseRequest {
            lease_id: self.lease_id.clone(),
            owner: self.settings.instance_id.clone(),
            now_ms: self.mongo.now_ms(),
            ttl_ms: i64::try_from(self.settings.ttl.as_millis()).unwrap_or(i64::MAX),
            held,
            min_epoch: 0,
            release,
            process: self.beacon.facts(),
            holder_gone: None,
            incarnation: self.incarnation.clone(),
        }
    }

    /// Until when a lease asked for at `sent` may be acted on: `margin` before it expires.
    fn horizon(&self, sent: Instant) -> Instant {
        sent + self.settings.ttl.saturating_sub(self.settings.margin)
    }

    /// One acquisition attempt (a standby's poll). On success the epoch is above every
    /// counter's and stamped on all of them.
    pub async fn acquire(&self) -> Result<Acquired, SidecarError> {
        lease_traffic(self.try_acquire()).await
    }

    async fn try_acquire(&self) -> Result<Acquired, SidecarError> {
        let (acquisition, sent) = match self.attempt(None).await? {
            // A busy lease whose holder provably no longer exists (a crashed predecessor on
            // this machine, see `liveness`) is taken over now.
            (
                Acquisition::Busy {
                    owner,
                    epoch,
                    process: Some(facts),
                    ..
                },
                _,
            ) if liveness::gone(&facts) => {
                info!(
                    lease = self.lease_id,
                    holder = owner,
                    epoch,
                    "the lease holder's process no longer exists: taking over without waiting for the lease to expire"
                );
                self.attempt(Some(LeaseHolder { owner, epoch })).await?
            }
            other => other,
        };
        match acquisition {
            Acquisition::Held { epoch, .. } => {
                let fence = Fence::new(&self.settings.instance_id, epoch, self.horizon(sent));
                self.probe.lease_acquired(&fence);
                Ok(Acquired::Held(Arc::new(fence)))
            }
            Acquisition::Busy {
                owner,
                epoch,
                expires_at_ms,
                process,
                incarnation,
            } => Ok(Acquired::Busy(LeaseInfo {
                owner,
                epoch,
                expires_at_ms,
                process,
                incarnation,
            })),
        }
    }

    /// Takes a lease found busy into `watch` (what this standby saw so far): an error when it
    /// proves that another live process with this instance id holds it and this one is to
    /// stop (the core's `TwinWatch`; the time between findings is the renew interval).
    pub fn watch_twin(&self, watch: &mut TwinWatch, found: &LeaseInfo) -> Result<(), SidecarError> {
        let owner = &self.settings.instance_id;
        let verdict = watch.observe(owner, self.incarnation.as_deref(), found);
        let holder = found
            .process
            .as_ref()
            .and_then(liveness::describe)
            .map(|process| format!(", process {process}"))
            .unwrap_or_default();
        match verdict {
            Twin::Unproven => Ok(()),
            Twin::ThisStops => Err(SidecarError::DuplicateInstance {
                instance_id: owner.clone(),
                trigger: self.probe.trigger().to_owned(),
                epoch: found.epoch,
                holder,
            }),
            Twin::ThatStops => {
                warn!(
                    trigger = self.probe.trigger(),
                    instance = owner,
                    epoch = found.epoch,
                    holder = holder.trim_start_matches(", process "),
                    "another running sidecar has this instance id and holds this trigger's lease: it stops when it stands by for a lease this one holds; this one stands by. Give each sidecar its own `[lease].instance_id`"
                );
                watch.reset();
                Ok(())
            }
        }
    }

    /// Runs the core's acquisition; its writes stop once the lease asked for may have expired.
    async fn attempt(
        &self,
        holder_gone: Option<LeaseHolder>,
    ) -> Result<(Acquisition, Instant), SidecarError> {
        let sent = Instant::now();
        let until = self.horizon(sent);
        let mut request = self.request(None, false);
        request.holder_gone = holder_gone;
        let mut plan = AcquireLease::for_sequence(&request, &self.sequence)?;
        let in_time = || {
            if Instant::now() < until {
                Ok(())
            } else {
                Err(SidecarError::LeaseLost(
                    "the lease was not acquired in time (by this process's clock)".to_owned(),
                ))
            }
        };
        let acquisition = run_plan(&self.mongo, &mut plan, in_time, |note| {
            self.probe.note(note)
        })
        .await?;
        Ok((acquisition, sent))
    }

    /// Renews until the lease is lost (returns then, with `fence` marked lost).
    pub async fn keep(&self, fence: &Fence) {
        loop {
            let wake = (Instant::now() + self.settings.renew).min(fence.valid_until());
            tokio::select! {
                biased;
                () = fence.lost().cancelled() => return,
                () = tokio::time::sleep_until(wake) => {}
            }
            if Instant::now() >= fence.valid_until() {
                warn!(
                    trigger = self.probe.trigger(),
                    epoch = fence.epoch,
                    "lease not renewed in time: stopping (another instance may take over)"
                );
                break;
            }
            let sent = Instant::now();
            let renewal =
                tokio::time::timeout_at(fence.valid_until(), lease_traffic(self.renew(fence)))
                    .await;
            match renewal {
                Ok(Ok(Renewal::Renewed { .. })) => fence.extend(self.horizon(sent)),
                Ok(Ok(Renewal::Lost { owner, epoch, .. })) => {
                    warn!(
                        trigger = self.probe.trigger(),
                        epoch = fence.epoch,
                        holder = owner,
                        holder_epoch = epoch,
                        "lease taken over: stopping"
                    );
                    break;
                }
                Ok(Err(e)) => {
                    warn!(trigger = self.probe.trigger(), error = %e, "lease renewal failed; retrying while the lease lasts")
                }
                Err(_) => {}
            }
        }
        fence.lose();
    }

    async fn renew(&self, fence: &Fence) -> Result<Renewal, SidecarError> {
        let mut plan = RenewLease::new(&self.request(Some(fence.epoch), false))?;
        self.run_held(&mut plan, fence).await
    }

    /// Runs a lease plan of the holder of `fence` (its writes stop once the fence is gone).
    async fn run_held<P>(&self, plan: &mut P, fence: &Fence) -> Result<P::Output, SidecarError>
    where
        P: Plan + Send,
        P::Output: Send,
    {
        run_plan(
            &self.mongo,
            plan,
            || fence.check(),
            |note| self.probe.note(note),
        )
        .await
    }

    /// Gives the lease up (graceful shutdown) so a standby takes over at once.
    pub async fn release(&self, fence: &Fence) {
        let release = async {
            let mut plan = Lease::new(&self.request(Some(fence.epoch), true))?;
            self.run_held(&mut plan, fence).await
        };
        match tokio::time::timeout(RELEASE_TIMEOUT, release).await {
            Ok(Ok(_)) => info!(
                trigger = self.probe.trigger(),
                epoch = fence.epoch,
                "lease released"
            ),
            Ok(Err(e)) => {
                warn!(trigger = self.probe.trigger(), error = %e, "could not release the lease (it expires by itself)")
            }
            Err(_) => warn!(
                trigger = self.probe.trigger(),
                "lease release timed out (it expires by itself)"
            ),
        }
    }
}
