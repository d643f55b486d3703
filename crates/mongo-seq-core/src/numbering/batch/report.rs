//! What a batch did: [`BatchReport`].

use serde::Serialize;
use serde_json::Value;

use crate::error::SeqError;
use crate::sequence::period::Period;

/// What numbering a batch did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BatchReport {
    /// Documents that received a number.
    pub numbered: u64,
    /// Documents inserted already carrying a number (left as they are, counter moved past).
    pub prenumbered: u64,
    /// Documents that had a number by the time the batch ran (redelivered events).
    pub already: u64,
    /// Documents that cannot be numbered (missing or unusable scope field; see the notes).
    pub skipped: u64,
    /// Numbers refused by the unique index (another document holds them): renumbered.
    pub collisions: u64,
    /// The numbers written that the server did not refuse, `(_id, number, period)` in order (a
    /// statement whose document was numbered or stopped matching meanwhile applies to nothing:
    /// read the documents back to know).
    #[serde(skip)]
    pub(crate) written: Vec<(Value, i64, Option<Period>)>,
    /// The skipped documents' `_id`s and why (the notes say it too).
    #[serde(skip)]
    pub(crate) passed: Vec<(Value, SeqError)>,
}

impl BatchReport {
    /// The skipped documents' `_id`s and why, in order (a backfill leaves them out of its next
    /// pages).
    pub fn passed(&self) -> &[(Value, SeqError)] {
        &self.passed
    }
}
