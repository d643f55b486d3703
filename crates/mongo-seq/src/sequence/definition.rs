//! [`Sequence::adopt_definition`]: the counter's recorded definition rewritten on purpose.

use mongo_seq_core::{AdoptDefinition, AdoptOutcome};

use super::Sequence;
use crate::error::Result;

impl Sequence {
    /// Rewrites the definition the counter records (every reservation refuses another
    /// one, `SEQUENCE_CONFLICT`) to this sequence's options, on purpose; the number stays.
    /// Returns the definition before (`null`: none), now, and the options that changed; a
    /// counter that does not exist is refused (`INVALID_ARGUMENT`), nothing written.
    ///
    /// ```no_run
    /// # async fn example(seqs: mongo_seq::Sequences) -> mongo_seq::Result<()> {
    /// let bounded = seqs.sequence("ids", mongo_seq::SequenceOptions::new().max(1_000_000))?;
    /// assert_eq!(bounded.adopt_definition().await?.changed, ["max"]);
    /// # Ok(()) }
    /// ```
    pub async fn adopt_definition(&self) -> Result<AdoptOutcome> {
        let mut plan = AdoptDefinition::new(&self.shared.spec, &self.bound()?.counter_id)?;
        self.run(&mut plan).await
    }
}
