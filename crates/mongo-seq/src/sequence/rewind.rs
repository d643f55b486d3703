//! Setting every counter of a sequence back to `start` (`rewind_all`).

use mongo_seq_core::{RewindOutcome, RewindSequence};

use super::Sequence;
use crate::counter::Counters;
use crate::error::Result;

impl Sequence {
    /// Every counter of the sequence — unscoped and each scope's — back to `start`
    /// (mongoose-sequence's `counterReset(id)` without a reference): for a collection whose
    /// documents were removed, since numbers already stored would be issued again. Counters a
    /// `mongo-seq` sidecar keeps (a lease `epoch`, a pending gapless `intent`) are
    /// `REWIND_REFUSED`, nothing written (see [`rewind_all_forced`](Self::rewind_all_forced)).
    /// Drops the numbers this process holds for the sequence. Returns how many counters were set
    /// back and the number each issues next.
    ///
    /// ```no_run
    /// # async fn example(seqs: mongo_seq::Sequences) -> mongo_seq::Result<()> {
    /// let ids = seqs.sequence("ids", None)?;
    /// ids.next_many(10).await?;
    /// let outcome = ids.rewind_all().await?;
    /// assert_eq!((outcome.rewound, outcome.next), (1, 1));
    /// assert_eq!(ids.next().await?, 1);
    /// # Ok(()) }
    /// ```
    pub async fn rewind_all(&self) -> Result<RewindOutcome> {
        self.rewind_all_with(false).await
    }

    /// [`rewind_all`](Self::rewind_all), also over the counters a sidecar keeps.
    ///
    /// ```no_run
    /// # async fn example(seqs: mongo_seq::Sequences) -> mongo_seq::Result<()> {
    /// seqs.sequence("ids", None)?.rewind_all_forced().await?;
    /// # Ok(()) }
    /// ```
    pub async fn rewind_all_forced(&self) -> Result<RewindOutcome> {
        self.rewind_all_with(true).await
    }

    async fn rewind_all_with(&self, force: bool) -> Result<RewindOutcome> {
        let mut plan = RewindSequence::new(&self.shared.spec, force, None);
        let mut discard = DiscardAll(Some(&self.shared.counters));
        let outcome = self.run(&mut plan).await;
        if outcome.is_err() {
            discard.0 = None;
        }
        outcome
    }
}

/// Drops every counter's block when dropped, unless disarmed (see `rewind_all`).
struct DiscardAll<'a>(Option<&'a Counters>);

impl Drop for DiscardAll<'_> {
    fn drop(&mut self) {
        if let Some(counters) = self.0 {
            counters.discard_all();
        }
    }
}
