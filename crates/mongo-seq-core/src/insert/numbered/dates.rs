//! Where the numbers of an insert take their periods from: each document's `dateField`, or
//! the caller's "now" for the whole call (a sequence that resets).

use serde_json::Value;

use crate::error::SeqError;
use crate::sequence::field::check_field_path;
use crate::sequence::instant::{check_instant, document_instant};
use crate::sequence::options::SequenceSpec;

/// Where the numbers of an insert take their periods from, for a sequence that resets (a
/// sequence that never does has no period, and ignores `now_ms`): each document's
/// `date_field` (a BSON date), else `now_ms` (the caller's clock, milliseconds since the epoch)
/// for the whole call.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct InsertDates {
    pub date_field: Option<String>,
    pub now_ms: Option<i64>,
}

impl InsertDates {
    /// The caller's clock, for the whole call.
    pub fn now(now_ms: i64) -> Self {
        Self {
            date_field: None,
            now_ms: Some(now_ms),
        }
    }
}

/// The instants whose local dates place the documents of a sequence that resets: each
/// document's `dateField`, or the caller's "now" once; none for a sequence that never resets
/// (a `dateField` there is refused: it would do nothing).
pub(super) fn instants(
    spec: &SequenceSpec,
    field: &str,
    dates: &InsertDates,
    count: usize,
    documents: Option<&[Value]>,
) -> Result<Vec<i64>, SeqError> {
    if let Some(date_field) = &dates.date_field {
        check_field_path("dateField", date_field)?;
        if !spec.reset().is_periodic() {
            return Err(SeqError::invalid_argument(
                "dateField",
                format!(
                    "sequence `{}` never resets: its numbers have no period for a date to choose",
                    spec.name()
                ),
            ));
        }
        if date_field == field {
            return Err(SeqError::invalid_argument(
                "dateField",
                "must differ from `field`, which the insert writes",
            ));
        }
    }
    if !spec.reset().is_periodic() || count == 0 {
        return Ok(Vec::new());
    }
    let Some(date_field) = &dates.date_field else {
        let now = dates.now_ms.ok_or_else(|| {
            SeqError::invalid_argument(
                "now",
                format!(
                    "sequence `{}` resets {}: the insert needs the time now, or a dateField",
                    spec.name(),
                    spec.reset().name()
                ),
            )
        })?;
        return Ok(vec![check_instant("date", None, now)?]);
    };
    let mut instants = Vec::with_capacity(count);
    for (index, document) in (0u64..).zip(documents.unwrap_or_default()) {
        instants.push(document_instant(document, date_field, index)?);
    }
    Ok(instants)
}
