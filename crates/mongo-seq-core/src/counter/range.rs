//! A reserved run of sequence numbers: `first, first + step, …, last` (`count` values).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::ejson;
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

    /// Parses a range handed back by a caller (`{first, last, step, count}`, integers in any
    /// accepted form), with errors naming the key, and checks it.
    pub fn from_json(raw: &Value) -> Result<Self, SeqError> {
        let bad = |reason: String| SeqError::invalid_argument("range", reason);
        let Value::Object(map) = raw else {
            return Err(bad(format!(
                "must be an object {{ first, last, step, count }}, got {}",
                ejson::describe(raw)
            )));
        };
        if let Some(key) = map
            .keys()
            .find(|key| !["first", "last", "step", "count"].contains(&key.as_str()))
        {
            return Err(bad(format!(
                "has an unknown key `{}`",
                ejson::truncate(key)
            )));
        }
        let int = |key: &str| match map.get(key) {
            None => Err(bad(format!("has no `{key}`"))),
            Some(value) => {
                ejson::read_i64(value).map_err(|reason| bad(format!("`{key}` {reason}")))
            }
        };
        let count = int("count")?;
        let range = Self {
            first: int("first")?,
            last: int("last")?,
            step: int("step")?,
            count: u64::try_from(count)
                .map_err(|_| bad(format!("`count` must not be negative, got {count}")))?,
        };
        range.validate()?;
        Ok(range)
    }

    /// Checks internal consistency (ranges may come back from JS).
    pub fn validate(&self) -> Result<(), SeqError> {
        let bad = |reason: &str| {
            SeqError::invalid_argument(
                "range",
                format!(
                    "{}..={} with step {} and count {} {reason}",
                    self.first, self.last, self.step, self.count
                ),
            )
        };
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
