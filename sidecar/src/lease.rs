//! The trigger's lease, the sidecar's side (the protocol is the core's `lease` plan): a
//! standby tries to acquire it every `renew` interval; the holder renews it every `renew`
//! interval and considers it lost `margin` before it could expire, by its own monotonic clock
//! (so a process paused past its lease, e.g. SIGSTOP, stops before it sends anything), or as soon
//! as a renewal finds someone else holding it. Every numbering step checks the [`Fence`] first.
//!
//! On acquisition the holder makes sure its epoch is above every epoch stamped on the trigger's
//! counters, stamps its epoch on all of them (`updateMany`), and only then starts numbering.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use futures_util::TryStreamExt;
use mongo_seq_core::lease::{counters_of, stamp_epoch};
use mongo_seq_core::{Lease, LeaseHolder, LeaseOutcome, LeaseRequest};
use mongodb::bson::{doc, Document};
use tokio_util::sync::CancellationToken;
use tracing::{info, warn};

use crate::config::LeaseSettings;
use crate::ejson;
use crate::error::SidecarError;
use crate::exec::Executor;
use crate::liveness::{self, Beacon};
use crate::metrics::{lease_traffic, Metrics};

/// How long a graceful shutdown tries to release a lease (it expires by itself otherwise).
pub const RELEASE_TIMEOUT: Duration = Duration::from_millis(1500);

/// What the holder of a lease carries: its epoch, and until when (monotonic) it may act.
#[derive(Debug)]
pub struct Fence {
    pub owner: String,
    pub epoch: i64,
    valid_until: Mutex<Instant>,
    lost: CancellationToken,
}

impl Fence {
    pub fn new(owner: &str, epoch: i64, valid_until: Instant) -> Self {
        Self {
            owner: owner.to_owned(),
            epoch,
            valid_until: Mutex::new(valid_until),
            lost: CancellationToken::new(),
        }
    }

    fn valid_until(&self) -> Instant {
        *self.valid_until.lock().expect("fence lock")
    }

    fn extend(&self, until: Instant) {
        let mut valid = self.valid_until.lock().expect("fence lock");
        *valid = (*valid).max(until);
    }

    /// Marks the lease lost.
    pub fn lose(&self) {
        self.lost.cancel();
    }

    /// Cancelled when the lease is lost.
    pub fn lost(&self) -> &CancellationToken {
        &self.lost
    }

    /// `Err(LeaseLost)` once the lease is lost or may have expired: call before every write.
    pub fn check(&self) -> Result<(), SidecarError> {
        if self.lost.is_cancelled() {
            return Err(SidecarError::LeaseLost(format!(
                "epoch {} was taken over or not renewed",
                self.epoch
            )));
        }
        if Instant::now() >= self.valid_until() {
            self.lost.cancel();
            return Err(SidecarError::LeaseLost(format!(
                "epoch {} not renewed in time (by this process's clock)",
                self.epoch
            )));
        }
        Ok(())
    }
}

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

/// Acquires, renews and releases one trigger's lease.
#[derive(Clone)]
pub struct LeaseKeeper {
    pub exec: Executor,
    /// `_id` of the lease document (the trigger's state document).
    pub lease_id: String,
    /// The trigger's sequence name (its counters are `name` and `name/…`).
    pub sequence: String,
    pub settings: LeaseSettings,
    pub metrics: Metrics,
    /// This process's liveness beacon: its facts go with every lease it takes.
    pub beacon: Arc<Beacon>,
}

/// What an acquisition attempt found.
pub enum Acquired {
    Held(Arc<Fence>),
    Busy {
        owner: String,
        epoch: i64,
        expires_at_ms: i64,
    },
}

impl LeaseKeeper {
    fn request(&self, held: Option<i64>, min_epoch: i64, release: bool) -> LeaseRequest {
        LeaseRequest {
            lease_id: self.lease_id.clone(),
            owner: self.settings.instance_id.clone(),
            now_ms: now_ms(),
            ttl_ms: i64::try_from(self.settings.ttl.as_millis()).unwrap_or(i64::MAX),
            held,
            min_epoch,
            release,
            process: self.beacon.facts(),
            holder_gone: None,
        }
    }

    fn horizon(&self, sent: Instant) -> Instant {
        sent + self.settings.ttl.saturating_sub(self.settings.margin)
    }

    async fn run(
        &self,
        held: Option<i64>,
        min_epoch: i64,
    ) -> Result<(LeaseOutcome, Instant), SidecarError> {
        self.run_request(self.request(held, min_epoch, false)).await
    }

    async fn run_request(
        &self,
        request: LeaseRequest,
    ) -> Result<(LeaseOutcome, Instant), SidecarError> {
        let sent = Instant::now();
        let mut plan = Lease::new(&request)?;
        Ok((self.exec.drive(&mut plan).await?, sent))
    }

    /// A busy lease whose holder provably no longer exists (a crashed predecessor on this
    /// machine, see `liveness`) is taken over now; else it stays busy.
    async fn take_over_if_gone(
        &self,
        busy: LeaseOutcome,
        min_epoch: i64,
        sent: Instant,
    ) -> Result<(LeaseOutcome, Instant), SidecarError> {
        let LeaseOutcome::Busy {
            owner,
            epoch,
            process: Some(facts),
            ..
        } = &busy
        else {
            return Ok((busy, sent));
        };
        if !liveness::gone(facts) {
            return Ok((busy, sent));
        }
        info!(
            lease = self.lease_id,
            holder = owner,
            epoch,
            "the lease holder's process no longer exists: taking over without waiting for the lease to expire"
        );
        let mut request = self.request(None, min_epoch, false);
        request.holder_gone = Some(LeaseHolder {
            owner: owner.clone(),
            epoch: *epoch,
        });
        self.run_request(request).await
    }

    /// One acquisition attempt (a standby's poll). On success the epoch is above every counter's
    /// and stamped on all of them.
    pub async fn acquire(&self) -> Result<Acquired, SidecarError> {
        lease_traffic(self.try_acquire()).await
    }

    async fn try_acquire(&self) -> Result<Acquired, SidecarError> {
        let (outcome, sent) = self.run(None, 0).await?;
        let (outcome, sent) = self.take_over_if_gone(outcome, 0, sent).await?;
        let (mut epoch, mut sent) = match outcome {
            LeaseOutcome::Held { epoch, .. } => (epoch, sent),
            LeaseOutcome::Busy {
                owner,
                epoch,
                expires_at_ms,
                ..
            } => {
                return Ok(Acquired::Busy {
                    owner,
                    epoch,
                    expires_at_ms,
                })
            }
            LeaseOutcome::Released => {
                return Err(SidecarError::Reply(
                    "lease plan answered `released` to an acquisition".to_owned(),
                ))
            }
        };
        // The lease document may be younger than the counters (state collection dropped):
        // never run with an epoch the counters already passed.
        let highest = self.highest_counter_epoch().await?;
        if highest >= epoch {
            warn!(
                lease = self.lease_id,
                epoch,
                highest,
                "counters carry a higher epoch than the lease document: raising the epoch"
            );
            match self.run(None, highest).await? {
                (LeaseOutcome::Held { epoch: raised, .. }, again) => {
                    (epoch, sent) = (raised, again)
                }
                (
                    LeaseOutcome::Busy {
                        owner,
                        epoch,
                        expires_at_ms,
                        ..
                    },
                    _,
                ) => {
                    return Ok(Acquired::Busy {
                        owner,
                        epoch,
                        expires_at_ms,
                    })
                }
                (LeaseOutcome::Released, _) => {
                    return Err(SidecarError::Reply("unexpected lease outcome".to_owned()))
                }
            }
        }
        let fence = Arc::new(Fence::new(
            &self.settings.instance_id,
            epoch,
            self.horizon(sent),
        ));
        self.stamp(&fence).await?;
        self.metrics
            .lease_acquired
            .with_label_values(&[&self.exec.label])
            .inc();
        info!(
            trigger = self.exec.label,
            owner = fence.owner,
            epoch,
            "lease acquired: this instance numbers the trigger"
        );
        Ok(Acquired::Held(fence))
    }

    async fn highest_counter_epoch(&self) -> Result<i64, SidecarError> {
        let filter = ejson::to_doc(serde_json::json!({ "$or": counters_of(&self.sequence) }))
            .map_err(SidecarError::Reply)?;
        let found: Vec<Document> = self
            .exec
            .counters
            .find(filter)
            .sort(doc! { "epoch": -1 })
            .limit(1)
            .projection(doc! { "epoch": 1 })
            .await?
            .try_collect()
            .await?;
        Ok(found
            .first()
            .and_then(|d| d.get("epoch"))
            .and_then(|e| mongo_seq_core::ejson::read_i64(&e.clone().into_canonical_extjson()).ok())
            .unwrap_or(0))
    }

    /// Stamps the epoch on every counter of the trigger, so an earlier holder's reservations fail.
    async fn stamp(&self, fence: &Fence) -> Result<(), SidecarError> {
        fence.check()?;
        let (filter, update) = stamp_epoch(&self.sequence, fence.epoch);
        let filter = ejson::to_doc(filter).map_err(SidecarError::Reply)?;
        let update = ejson::to_doc(update).map_err(SidecarError::Reply)?;
        self.exec.counters.update_many(filter, update).await?;
        Ok(())
    }

    /// Renews until the lease is lost (returns then, with `fence` marked lost) or `stop`.
    pub async fn keep(&self, fence: &Fence, stop: &CancellationToken) {
        loop {
            let wake = (Instant::now() + self.settings.renew).min(fence.valid_until());
            tokio::select! {
                _ = tokio::time::sleep_until(wake.into()) => {}
                _ = stop.cancelled() => return,
                _ = fence.lost().cancelled() => return,
            }
            if Instant::now() >= fence.valid_until() {
                warn!(
                    trigger = self.exec.label,
                    epoch = fence.epoch,
                    "lease not renewed in time: stopping (another instance may take over)"
                );
                break;
            }
            let renewal = tokio::time::timeout_at(
                fence.valid_until().into(),
                lease_traffic(self.run(Some(fence.epoch), 0)),
            )
            .await;
            match renewal {
                Ok(Ok((LeaseOutcome::Held { epoch, .. }, sent))) if epoch == fence.epoch => {
                    fence.extend(self.horizon(sent))
                }
                Ok(Ok((LeaseOutcome::Busy { owner, epoch, .. }, _))) => {
                    warn!(
                        trigger = self.exec.label,
                        epoch = fence.epoch,
                        holder = owner,
                        holder_epoch = epoch,
                        "lease taken over: stopping"
                    );
                    break;
                }
                Ok(Ok(other)) => {
                    warn!(
                        trigger = self.exec.label,
                        ?other,
                        "unexpected lease renewal outcome: stopping"
                    );
                    break;
                }
                Ok(Err(e)) => {
                    warn!(trigger = self.exec.label, error = %e, "lease renewal failed; retrying while the lease lasts")
                }
                Err(_) => {}
            }
        }
        fence.lose();
    }

    /// Gives the lease up (graceful shutdown) so a standby takes over at once.
    pub async fn release(&self, fence: &Fence) {
        let plan = Lease::new(&self.request(Some(fence.epoch), 0, true));
        let result = match plan {
            Ok(mut plan) => tokio::time::timeout(RELEASE_TIMEOUT, self.exec.drive(&mut plan))
                .await
                .ok(),
            Err(e) => Some(Err(e.into())),
        };
        match result {
            Some(Ok(_)) => info!(
                trigger = self.exec.label,
                epoch = fence.epoch,
                "lease released"
            ),
            Some(Err(e)) => {
                warn!(trigger = self.exec.label, error = %e, "could not release the lease (it expires by itself)")
            }
            None => warn!(
                trigger = self.exec.label,
                "lease release timed out (it expires by itself)"
            ),
        }
    }
}
