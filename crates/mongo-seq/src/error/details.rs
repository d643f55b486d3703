//! The typed fields of an [`Error`]: the common details, read without matching the core's
//! variants or indexing a JSON value (whose keys and option names are the npm package's).

use mongo_seq_core::{spell, SeqError, Spelling};

use crate::Error;

impl Error {
    fn core(&self) -> Option<&SeqError> {
        match self {
            Self::Sequence(error) => Some(error),
            _ => None,
        }
    }

    /// The option or argument the error is about, in Rust's spelling (`time_zone`,
    /// `format_field`, `count`), for `UNKNOWN_OPTION`, `INVALID_OPTION`, `INVALID_STEP`,
    /// `INVALID_NAME`, `INVALID_SCOPE`, `INVALID_FORMAT`, `INVALID_ARGUMENT`, `INVALID_DATE`
    /// and `OUT_OF_BOUNDS`.
    pub fn option(&self) -> Option<&str> {
        let core = self.core()?;
        let name = match core {
            SeqError::OutOfBounds { argument, .. } => argument.as_str(),
            other => other.option_name()?,
        };
        Some(spell(name, Spelling::Snake))
    }

    /// The counter document's `_id` the error is about (`SEQUENCE_EXHAUSTED`,
    /// `MALFORMED_COUNTER`, `BACKWARDS_REFUSED`, `TOO_MANY_RETRIES`, `SEQUENCE_CONFLICT`, the
    /// void refusals, …).
    pub fn counter_id(&self) -> Option<&str> {
        match self.core()? {
            SeqError::SequenceExhausted { counter_id, .. }
            | SeqError::MalformedCounter { counter_id, .. }
            | SeqError::BackwardsRefused { counter_id, .. }
            | SeqError::TooManyRetries { counter_id, .. }
            | SeqError::ConditionNotMet { counter_id }
            | SeqError::Fenced { counter_id, .. }
            | SeqError::SequenceConflict { counter_id, .. }
            | SeqError::VoidRefused { counter_id, .. } => Some(counter_id),
            _ => None,
        }
    }

    /// `SEQUENCE_EXHAUSTED`: how many numbers the call asked for.
    pub fn requested(&self) -> Option<u64> {
        match self.core()? {
            SeqError::SequenceExhausted { requested, .. } => Some(*requested),
            _ => None,
        }
    }

    /// `SEQUENCE_EXHAUSTED`: how many numbers are left for the call (the numbers this process
    /// holds for it included).
    pub fn available(&self) -> Option<u64> {
        match self.core()? {
            SeqError::SequenceExhausted { available, .. } => Some(*available),
            _ => None,
        }
    }

    /// `SEQUENCE_EXHAUSTED`: the bound (`max`, or `min` counting down).
    pub fn bound(&self) -> Option<i64> {
        match self.core()? {
            SeqError::SequenceExhausted { bound, .. } => Some(*bound),
            _ => None,
        }
    }

    /// The last number the counter issued (`SEQUENCE_EXHAUSTED`, when the counter exists;
    /// `BACKWARDS_REFUSED`).
    pub fn last(&self) -> Option<i64> {
        match self.core()? {
            SeqError::SequenceExhausted { last, .. } => *last,
            SeqError::BackwardsRefused { last, .. } => Some(*last),
            _ => None,
        }
    }

    /// The number or value the error is about (`OUT_OF_BOUNDS`, `INVALID_STEP`, the void
    /// refusals).
    pub fn value(&self) -> Option<i64> {
        match self.core()? {
            SeqError::OutOfBounds { value, .. } | SeqError::InvalidStep { value } => Some(*value),
            SeqError::VoidRefused { number, .. } => Some(*number),
            _ => None,
        }
    }

    /// The field the error is about: a scope field (`MISSING_SCOPE_FIELD`,
    /// `INVALID_SCOPE_VALUE`, `INVALID_SCOPE`), a document's (`MALFORMED_DOCUMENT`), the one
    /// [`wait_for_number`](crate::Sequences::wait_for_number) waited for (`WAIT_TIMEOUT`).
    pub fn field(&self) -> Option<&str> {
        match self {
            Self::WaitTimeout { field, .. } => Some(field),
            Self::Sequence(
                SeqError::MissingScopeField { field, .. }
                | SeqError::InvalidScopeValue { field, .. }
                | SeqError::InvalidScope { field, .. }
                | SeqError::MalformedDocument { field, .. },
            ) => Some(field),
            _ => None,
        }
    }

    /// The document's position in the batch (`insert_many`'s `MISSING_SCOPE_FIELD`,
    /// `INVALID_SCOPE_VALUE`, `INVALID_DATE`).
    pub fn index(&self) -> Option<u64> {
        match self.core()? {
            SeqError::MissingScopeField { index, .. }
            | SeqError::InvalidScopeValue { index, .. }
            | SeqError::InvalidDate { index, .. } => *index,
            _ => None,
        }
    }
}
