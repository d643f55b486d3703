//! A sequence's bounds: the values its counters may hold and the numbers they may still issue
//! (`min`, `max`, the direction of `step`, the 64-bit range).

use super::SequenceSpec;
use crate::error::SeqError;

impl SequenceSpec {
    /// Value a counter holds before anything was issued (start - step; checked at parse time).
    pub(crate) fn initial_counter(&self) -> i64 {
        self.start.saturating_sub(self.step)
    }

    /// The bound in the counting direction and whether the user set it (else it is the
    /// i64 limit, and running into it is an overflow rather than exhaustion).
    pub(crate) fn limit(&self) -> (i64, bool) {
        let (explicit, implicit) = if self.step > 0 {
            (self.max, i64::MAX)
        } else {
            (self.min, i64::MIN)
        };
        (explicit.unwrap_or(implicit), explicit.is_some())
    }

    /// The values a well-formed counter can hold: from the value before the first number the
    /// bounds allow (`min - step` when counting up) to the bound (`max`), or the mirror image
    /// when counting down. A fresh counter (`start - step`), every reservation, `setNext` and
    /// `seedFromMax` keep a counter in this range; outside it a counter is malformed.
    pub(crate) fn counter_range(&self) -> (i64, i64) {
        let before = |bound: i64| bound.saturating_sub(self.step);
        if self.step > 0 {
            (
                self.min.map_or(i64::MIN, before),
                self.max.unwrap_or(i64::MAX),
            )
        } else {
            (
                self.min.unwrap_or(i64::MIN),
                self.max.map_or(i64::MAX, before),
            )
        }
    }

    /// `MALFORMED_COUNTER` when a counter read back lies outside [`Self::counter_range`].
    pub(crate) fn check_counter(&self, counter_id: &str, last: i64) -> Result<i64, SeqError> {
        let (low, high) = self.counter_range();
        if (low..=high).contains(&last) {
            return Ok(last);
        }
        Err(SeqError::malformed_counter(
            counter_id,
            format!(
                "holds {last}, outside the range a counter of this sequence can hold ({low}..={high}); nothing was written (repair with setNext force)"
            ),
        ))
    }

    /// Whether `value` lies within `[min, max]`.
    pub(crate) fn in_bounds(&self, value: i64) -> bool {
        self.min.map_or(true, |min| value >= min) && self.max.map_or(true, |max| value <= max)
    }

    pub(crate) fn out_of_bounds(&self, argument: &str, value: i64) -> SeqError {
        SeqError::OutOfBounds {
            argument: argument.to_owned(),
            value,
            min: self.min,
            max: self.max,
        }
    }

    /// How many numbers are still issuable after `last` before passing the bound.
    pub(crate) fn available_after(&self, last: i64) -> u64 {
        let (bound, _) = self.limit();
        let span = i128::from(bound).saturating_sub(i128::from(last));
        let count = span.checked_div(i128::from(self.step)).unwrap_or(0);
        u64::try_from(count.max(0)).unwrap_or(u64::MAX)
    }

    /// The value issued after `last`, if it exists and lies within the bounds.
    pub(crate) fn next_after(&self, last: i64) -> Option<i64> {
        last.checked_add(self.step)
            .filter(|next| self.in_bounds(*next))
    }

    /// The error for "fewer than `requested` numbers left after `last`".
    pub(crate) fn exhausted(
        &self,
        counter_id: &str,
        last: Option<i64>,
        requested: u64,
    ) -> SeqError {
        let available = self.available_after(last.unwrap_or_else(|| self.initial_counter()));
        self.exhausted_with(counter_id, last, requested, available)
    }

    /// [`Self::exhausted`] with what is left given (a block refill's caller also counts the
    /// numbers its block holds for it).
    pub(crate) fn exhausted_with(
        &self,
        counter_id: &str,
        last: Option<i64>,
        requested: u64,
        available: u64,
    ) -> SeqError {
        let (bound, explicit) = self.limit();
        if explicit {
            SeqError::SequenceExhausted {
                counter_id: counter_id.to_owned(),
                last,
                requested,
                available,
                bound,
            }
        } else {
            SeqError::overflow(format!(
                "counter `{counter_id}` cannot issue {requested} more number(s) within the 64-bit range ({available} left)"
            ))
        }
    }
}
