//! A reserved run of sequence numbers: `first, first + step, …, last` (`count` values).

use serde::{Deserialize, Serialize};

use crate::error::SeqError;

/// Numbers reserved by one round trip. Serialized with plain JSON numbers (they may exceed
/// 2^53; the Wasm shim hands those to JS as BigInt).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ReservedRange {
    pub first: i64,
    pub last: i64,
    pub step: i64,
    pub count: u64,
}

impl ReservedRange {
    /// The range of `count` numbers ending at `last` (the counter value after a `$inc`).
    pub(crate) fn ending_at(last: i64, step: i64, count: u64) -> Result<Self, SeqError> {
        let offset = count
            .checked_sub(1)
            .and_then(|n| i64::try_from(n).ok())
            .and_then(|n| n.checked_mul(step))
            .ok_or_else(|| SeqError::overflow(format!("{count} × step {step}")))?;
        let first = last.checked_sub(offset).ok_or_else(|| {
            SeqError::overflow(format!("first number of a range ending at {last}"))
        })?;
        Ok(Self {
            first,
            last,
            step,
            count,
        })
    }

    /// Checks internal consistency (ranges may come back from JS).
    pub fn validate(&self) -> Result<(), SeqError> {
        let bad = |reason: &str| SeqError::invalid_argument("range", format!("{self:?} {reason}"));
        if self.count == 0 {
            return Err(bad("is empty"));
        }
        if self.step == 0 {
            return Err(bad("has step 0"));
        }
        match Self::ending_at(self.last, self.step, self.count) {
            Ok(expected) if expected.first == self.first => Ok(()),
            _ => Err(bad(
                "is inconsistent: last must equal first + (count - 1) × step",
            )),
        }
    }

    /// The `index`-th number (0-based), if inside the range.
    pub fn get(&self, index: u64) -> Option<i64> {
        if index >= self.count {
            return None;
        }
        i64::try_from(index)
            .ok()?
            .checked_mul(self.step)?
            .checked_add(self.first)
    }

    /// All numbers in order.
    pub fn iter(&self) -> impl Iterator<Item = i64> + '_ {
        (0..self.count).map_while(|i| self.get(i))
    }
}
