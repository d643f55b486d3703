//! The holder's retries of its trigger's dead letters (`crate::dead_letters`): at the start
//! of a session when the state's read found some, then every `dead_letter_retry_ms` while some
//! wait. Periodic rather than watching updates of the dead-lettered documents: the trigger's
//! stream sees only inserts (and, with `on = "match"`, documents coming to match), so watching
//! repairs would take a second change stream per trigger, or reopening the stream whenever the
//! list changes; a retry costs at most three `find`s per interval, and only while dead letters
//! wait. A repair is numbered within one interval. `mongo-seq retry` runs one round of a
//! gapless trigger's retries the same way, as the holder of the lease while it is free.

use mongo_seq_core::LeaseInfo;

use super::Trigger;
use crate::dead_letters::{self, RetryOutcome};
use crate::error::SidecarError;
use crate::fence::Fence;
use crate::lease_keeper::Acquired;
use crate::mongo::Mongo;

impl<M: Mongo> Trigger<M> {
    /// One retry round as the holder of `fence`.
    pub(super) async fn retry_dead_letters(&self, fence: &Fence) -> Result<(), SidecarError> {
        let stored = dead_letters::waiting(&self.mongo, self.id()).await?;
        if stored.is_empty() {
            self.probe.dead_letters_waiting([], 0);
            return Ok(());
        }
        fence.check()?;
        let result = dead_letters::retry(
            &self.mongo,
            &self.spec,
            &stored,
            Some(fence.epoch),
            || fence.check(),
            |n| self.probe.note(n),
            |time| self.wrote(time),
        )
        .await;
        self.fenced_if(&result, fence);
        let outcome = result?;
        self.probe.numbered(&outcome.report);
        let resolved = outcome.numbered.len() + outcome.gone.len();
        self.probe.dead_letters_waiting(
            outcome.waiting.iter().map(|l| l.id.to_string()),
            u64::try_from(resolved).unwrap_or(u64::MAX),
        );
        Ok(())
    }

    /// One retry round by a process that does not run the trigger (`mongo-seq retry`, for a
    /// gapless trigger, whose numbers only a lease holder gives): takes the lease if it is free,
    /// completes what a holder left pending (as every new holder does first), retries, and
    /// releases it. `Err(holder)`: someone holds the lease (a running sidecar, which retries
    /// them itself every `dead_letter_retry_ms`); nothing was done.
    pub async fn retry_dead_letters_once(
        &self,
        stored: &[serde_json::Value],
    ) -> Result<Result<RetryOutcome, LeaseInfo>, SidecarError> {
        let fence = match self.lease.acquire().await? {
            Acquired::Held(fence) => fence,
            Acquired::Busy(holder) => return Ok(Err(holder)),
        };
        let round = async {
            self.complete_pending(&fence).await?;
            fence.check()?;
            dead_letters::retry(
                &self.mongo,
                &self.spec,
                stored,
                Some(fence.epoch),
                || fence.check(),
                |n| self.probe.note(n),
                |time| self.wrote(time),
            )
            .await
        }
        .await;
        self.lease.release(&fence).await;
        round.map(Ok)
    }
}
