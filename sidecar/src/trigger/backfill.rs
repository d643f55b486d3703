//! The backfill: on first start, with `--backfill`, or once the stream's history is lost, the
//! documents without a number (that match `match`) are numbered in `_id` order, or in
//! `backfill_sort` order then `_id`, in pages of `batch_size`, with progress in the log. First
//! every counter moves past the numbers the collection already holds (the core's
//! `SeedFromExisting`).
//! The pages and the count are the core's (`BackfillReads`).

use mongo_seq_core::numbering::backfill::BackfillReads;
use mongo_seq_core::SeedFromExisting;
use serde_json::Value;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use tracing::info;

use super::Trigger;
use crate::error::SidecarError;
use crate::fence::Fence;
use crate::mongo::{documents, Mongo};

impl<M: Mongo> Trigger<M> {
    /// Numbers documents that lack a number, in `_id` order, reporting progress. Returns false
    /// when interrupted by shutdown (it resumes on the next start).
    pub(super) async fn backfill(
        &self,
        shutdown: &CancellationToken,
        fence: &Fence,
    ) -> Result<bool, SidecarError> {
        let numbering = &self.spec.numbering;
        let reads = BackfillReads::new(
            numbering,
            self.spec.filter.as_ref(),
            self.spec.backfill_sort.as_deref(),
            u64::try_from(self.settings.batch_size).unwrap_or(u64::MAX),
        );
        let mut seed = SeedFromExisting::new(numbering)?;
        self.run_held(&mut seed, fence).await?;
        let total = self.count(&reads).await?;
        info!(
            trigger = self.id(),
            unnumbered = total,
            order = self.spec.backfill_sort.as_deref().unwrap_or("_id"),
            "backfill: numbering documents without a number"
        );
        let started = Instant::now();
        let mut last_report = Instant::now();
        let mut done = 0u64;
        let mut last_id: Option<Value> = None;
        // The documents the core skipped, left out of the next pages (`backfill_sort` order).
        let mut passed: Vec<Value> = Vec::new();
        loop {
            if shutdown.is_cancelled() {
                info!(
                    trigger = self.id(),
                    numbered = done,
                    "backfill interrupted by shutdown; it continues on the next start"
                );
                return Ok(false);
            }
            let find = reads.page(last_id.as_ref(), &passed);
            let docs = documents(self.mongo.execute(find).await?, "backfill page")?;
            let Some(last) = docs.last().and_then(|d| d.get("_id").cloned()) else {
                break;
            };
            if last_id.as_ref() == Some(&last) && self.spec.backfill_sort.is_some() {
                // The same page again: nothing of it could be numbered (the core said why).
                break;
            }
            last_id = Some(last);
            let report = self.number(docs, false, fence, None).await?;
            passed.extend(report.passed().iter().map(|(id, _)| id.clone()));
            done += report.numbered;
            self.probe
                .batch_applied(report.numbered, self.mongo.now_ms());
            self.probe.succeeded();
            let remaining = total.saturating_sub(done);
            self.probe.backfill_remaining(remaining);
            if last_report.elapsed() >= self.settings.progress {
                info!(
                    trigger = self.id(),
                    numbered = done,
                    rate = format!("{:.0}/s", rate(done, started)),
                    remaining,
                    "backfill progress"
                );
                last_report = Instant::now();
            }
        }
        self.probe.backfill_remaining(0);
        self.probe.succeeded();
        info!(
            trigger = self.id(),
            numbered = done,
            seconds = format!("{:.1}", started.elapsed().as_secs_f64()),
            rate = format!("{:.0}/s", rate(done, started)),
            "backfill finished"
        );
        Ok(true)
    }

    /// How many documents the backfill numbers (the core's count).
    async fn count(&self, reads: &BackfillReads) -> Result<u64, SidecarError> {
        let groups = documents(self.mongo.execute(reads.count()).await?, "count")?;
        Ok(crate::mongo::count(
            groups.first().and_then(|group| group.get("n")),
        ))
    }
}

/// Documents per second since `started`.
fn rate(done: u64, started: Instant) -> f64 {
    done as f64 / started.elapsed().as_secs_f64().max(1e-3)
}
