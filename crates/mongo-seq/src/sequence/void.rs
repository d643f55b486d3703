//! [`Sequence::void`]: numbers no document will hold, recorded in the ledger.

use mongo_seq_core::{VoidNumbers, VoidOutcome, VoidRequest};
use mongodb::Collection;

use super::Sequence;
use crate::error::Result;
use crate::plan_runner::PlanRunner;
use crate::run::run_plan;

impl Sequence {
    /// Voids `numbers` of this handle's counter: records each in the ledger (the builder's
    /// [`ledger`](crate::SequencesBuilder::ledger)) with `reason`, `by` and now, so it is never
    /// handed out again and an audit accounts for it. `collection` and `field` are where the
    /// documents hold the numbers: a number one holds is refused (`NUMBER_HELD`). Refused too,
    /// nothing written: a number the counter has not issued or a counter that does not exist
    /// (`NUMBER_NOT_ISSUED`), one already voided or recorded as deleted (`ALREADY_VOIDED`),
    /// while a sidecar's gapless intent is pending on the counter (`INTENT_PENDING`), a blank
    /// reason or a number off the grid (`INVALID_ARGUMENT`).
    ///
    /// ```no_run
    /// # async fn example(seqs: mongo_seq::Sequences, db: mongodb::Database) -> mongo_seq::Result<()> {
    /// use mongodb::bson::Document;
    ///
    /// let invoices = db.collection::<Document>("invoices");
    /// let seq = seqs.sequence("invoices", None)?;
    /// let outcome = seq.void(&invoices, "no", &[17], "cancelled before sending", "alice").await?;
    /// assert_eq!(outcome.numbers, [17]);
    /// # Ok(()) }
    /// ```
    pub async fn void<T: Send + Sync>(
        &self,
        collection: &Collection<T>,
        field: &str,
        numbers: &[i64],
        reason: &str,
        by: &str,
    ) -> Result<VoidOutcome> {
        let request = VoidRequest {
            counter_id: self.bound()?.counter_id.clone(),
            numbers: numbers.to_vec(),
            field: field.to_owned(),
            reason: reason.to_owned(),
            by: by.to_owned(),
            now_ms: crate::clock::now_ms(),
        };
        let mut plan = VoidNumbers::new(&self.shared.spec, &request)?;
        let executor = self
            .shared
            .executor
            .clone()
            .with_documents(collection.clone_with_type());
        run_plan(&mut plan, &mut PlanRunner::counters(&executor)).await
    }
}
