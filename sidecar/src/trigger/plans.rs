//! Numbering, as the core's plans do it: a batch of inserted documents is the core's
//! `NumberBatch` (default or gapless, as the trigger's `NumberingSpec` says; the protocol and
//! its diagram are in `crates/mongo-seq-core/src/numbering/batch.rs` and `gapless.rs`), and a
//! new holder first completes the intents left pending (`CompletePending`). The sidecar runs the
//! commands with its lease's fence checked before each write and reports the plans' notes; the
//! documents a batch cannot number are recorded as dead letters (`dead_letters.rs`).

use std::sync::Mutex;

use mongo_seq_core::{
    BatchReport, ClusterTime, CompletePending, DeadLetter, Note, NumberBatch, Plan,
};
use serde_json::Value;

use super::Trigger;
use crate::dead_letters;
use crate::error::SidecarError;
use crate::fence::Fence;
use crate::lock::lock;
use crate::mongo::Mongo;
use crate::run_plan::run_writing_plan;

impl<M: Mongo> Trigger<M> {
    /// Numbers a batch of inserted documents (Extended JSON, in the order the stream or the
    /// backfill delivered them), as the holder of `fence`. With `verify`, documents numbered
    /// meanwhile are dropped first (one `find`), so redelivered events waste no numbers.
    /// `after`: the newest cluster time of the events that delivered them (`None` for a
    /// backfill page), which the core's reads deciding a skip are causally after.
    pub async fn number(
        &self,
        documents: Vec<Value>,
        verify: bool,
        fence: &Fence,
        after: Option<ClusterTime>,
    ) -> Result<BatchReport, SidecarError> {
        self.number_dated(documents, &[], verify, fence, after)
            .await
    }

    /// [`Trigger::number`] with each document's event time (`times[i]`, ms), which places it in
    /// a period when the trigger's sequence resets and it has no `date_field`.
    pub async fn number_dated(
        &self,
        documents: Vec<Value>,
        times: &[Option<i64>],
        verify: bool,
        fence: &Fence,
        after: Option<ClusterTime>,
    ) -> Result<BatchReport, SidecarError> {
        fence.check()?;
        // Dead letters by their number field, whether or not the batch then drops them
        // (`verify` drops every document with a value there).
        let mut letters: Vec<DeadLetter> = documents
            .iter()
            .filter_map(|d| DeadLetter::of_document(&self.spec.numbering, d))
            .collect();
        let mut plan = NumberBatch::dated(
            &self.spec.numbering,
            documents,
            times,
            fence.epoch,
            verify,
            after,
        )?;
        let (report, noted) = self.run_held_collecting(&mut plan, fence).await?;
        self.probe.numbered(&report);
        letters.extend(noted);
        // Recorded before the caller stores a resume token past these documents' events.
        if !letters.is_empty() {
            fence.check()?;
            let new = dead_letters::record(&self.mongo, self.id(), &letters).await?;
            self.probe.dead_letters_recorded(&letters, new);
        }
        Ok(report)
    }

    /// Before numbering anything: completes every intent left pending on the trigger's counters.
    pub(super) async fn complete_pending(&self, fence: &Fence) -> Result<(), SidecarError> {
        // Mutant (simulator only): leave them pending.
        if mongo_seq_core::mutants::active(mongo_seq_core::mutants::Mutant::SkipPendingIntent) {
            return Ok(());
        }
        let mut plan = CompletePending::new(&self.spec.numbering, fence.epoch)?;
        self.run_held(&mut plan, fence).await?;
        Ok(())
    }

    /// Runs a core plan as the holder of `fence`: a write refused by a later holder's epoch is
    /// counted once, and the lease is then lost.
    pub(super) async fn run_held<P>(
        &self,
        plan: &mut P,
        fence: &Fence,
    ) -> Result<P::Output, SidecarError>
    where
        P: Plan + Send,
        P::Output: Send,
    {
        Ok(self.run_held_collecting(plan, fence).await?.0)
    }

    /// [`Trigger::run_held`], with the dead letters its notes report (the core decides which).
    pub(super) async fn run_held_collecting<P>(
        &self,
        plan: &mut P,
        fence: &Fence,
    ) -> Result<(P::Output, Vec<DeadLetter>), SidecarError>
    where
        P: Plan + Send,
        P::Output: Send,
    {
        let letters = Mutex::new(Vec::new());
        let note = |n: Note| {
            if let Some(letter) = DeadLetter::of_note(&n) {
                lock(&letters).push(letter);
            }
            self.probe.note(n);
        };
        let result = run_writing_plan(
            &self.mongo,
            plan,
            || fence.check(),
            note,
            |time| self.wrote(time),
        )
        .await;
        self.fenced_if(&result, fence);
        Ok((result?, letters.into_inner().unwrap_or_default()))
    }

    /// Keeps `time`, a plan's newest acknowledged write, if it is newer than those before: every
    /// plan the trigger runs, however it is left ([`run_writing_plan`]).
    pub(super) fn wrote(&self, time: Option<ClusterTime>) {
        let mut written = lock(&self.written);
        *written = (*written).max(time);
    }

    /// `after`, an anchor at a batch's events, moved at or after this trigger's own earlier
    /// writes: a document of the batch may have been numbered by an earlier batch (with
    /// `on = "match"`, two events of one document in consecutive batches) after the event that
    /// brings it again, and a read anchored at that event alone may be answered by a secondary
    /// from before that write (simulator CI seed 1,287). No anchor stays none (a local read).
    pub(super) fn after_own_writes(&self, after: Option<ClusterTime>) -> Option<ClusterTime> {
        // Mutant (simulator only): anchored at the events alone.
        if mongo_seq_core::mutants::active(
            mongo_seq_core::mutants::Mutant::BatchReadBeforeOwnWrites,
        ) {
            return after;
        }
        let written = *lock(&self.written);
        after.map(|events| events.max(written.unwrap_or(events)))
    }

    /// A write refused by a later holder's epoch: counted once, and the lease is then lost.
    pub(super) fn fenced_if<T>(&self, result: &Result<T, SidecarError>, fence: &Fence) {
        if let Err(SidecarError::Fenced(_)) = result {
            self.probe.fenced();
            fence.lose();
        }
    }
}
