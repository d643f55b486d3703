//! What the holder of a trigger's lease carries: its epoch, and until when (monotonic) it may
//! act. Checked before every write of the holder (counters, intents, the state document); the
//! [`LeaseKeeper`](crate::lease_keeper::LeaseKeeper) extends it on each renewal and marks it
//! lost when the lease is.

use std::sync::Mutex;

use tokio::time::Instant;

use crate::error::SidecarError;
use crate::lock::lock;

/// What the holder of a lease carries: its epoch, and until when (monotonic) it may act.
#[derive(Debug)]
pub struct Fence {
    pub owner: String,
    pub epoch: i64,
    valid_until: Mutex<Instant>,
    lost: tokio_util::sync::CancellationToken,
}

impl Fence {
    pub fn new(owner: &str, epoch: i64, valid_until: Instant) -> Self {
        Self {
            owner: owner.to_owned(),
            epoch,
            valid_until: Mutex::new(valid_until),
            lost: tokio_util::sync::CancellationToken::new(),
        }
    }

    pub(crate) fn valid_until(&self) -> Instant {
        *lock(&self.valid_until)
    }

    pub(crate) fn extend(&self, until: Instant) {
        let mut valid = lock(&self.valid_until);
        *valid = (*valid).max(until);
    }

    /// Marks the lease lost.
    pub fn lose(&self) {
        self.lost.cancel();
    }

    /// Cancelled when the lease is lost.
    pub fn lost(&self) -> &tokio_util::sync::CancellationToken {
        &self.lost
    }

    /// `Err(LeaseLost)` once the lease is lost or may have expired: called before every write.
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
