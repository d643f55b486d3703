//! The `sealFields` option: the fields a sealed series chains with every number (see
//! [`crate::seal`]). Only a gapless trigger seals: a number is sealed once it is final, which
//! only the gapless protocol knows; every other way of taking numbers refuses a sealed sequence
//! ([`SequenceSpec::refuse_sealed`]).

use serde_json::Value;

use super::{invalid, SequenceSpec};
use crate::ejson;
use crate::error::SeqError;
use crate::sequence::field::path_problem;

/// The most fields one series seals (a link is hashed per number: keep it a handful of values).
pub const MAX_SEAL_FIELDS: usize = 64;

/// The field a sealed series keeps each number's seal in, beside the number: `<field>Seal`
/// (`{hash, previous}`, see [`crate::seal`]).
pub fn seal_field(field: &str) -> String {
    format!("{field}Seal")
}

pub(super) fn parse_seal_fields(raw: Option<&Value>) -> Result<Vec<String>, SeqError> {
    let items = match raw {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(Value::Array(items)) => items,
        Some(other) => {
            return Err(invalid(
                "sealFields",
                format!(
                    "must be an array of field paths, got {}",
                    ejson::describe(other)
                ),
            ))
        }
    };
    if items.len() > MAX_SEAL_FIELDS {
        return Err(invalid(
            "sealFields",
            format!("at most {MAX_SEAL_FIELDS} fields, got {}", items.len()),
        ));
    }
    let mut fields: Vec<String> = Vec::with_capacity(items.len());
    for item in items {
        let Value::String(field) = item else {
            return Err(invalid(
                "sealFields",
                format!("entries must be strings, got {}", ejson::describe(item)),
            ));
        };
        if let Some(reason) = path_problem(field, true) {
            return Err(invalid(
                "sealFields",
                format!("{}: {reason}", ejson::quoted(&ejson::truncate(field))),
            ));
        }
        if fields.contains(field) {
            return Err(invalid(
                "sealFields",
                format!("{} is listed twice", ejson::quoted(field)),
            ));
        }
        fields.push(field.clone());
    }
    Ok(fields)
}

impl SequenceSpec {
    /// The fields each link of the series seals besides its number, period and series (empty:
    /// not sealed).
    pub fn seal_fields(&self) -> &[String] {
        &self.seal_fields
    }

    /// Whether the series is sealed.
    pub fn sealed(&self) -> bool {
        !self.seal_fields.is_empty()
    }

    /// `SEAL_NEEDS_GAPLESS` for a sealed sequence taken from otherwise than by a gapless trigger
    /// (`how`: what was asked, e.g. "next()"): only the gapless protocol knows when a number is
    /// final, and a seal is written once, on a final number.
    pub fn refuse_sealed(&self, how: &str) -> Result<(), SeqError> {
        if self.sealed() && !self.gapless {
            return Err(invalid(
                "sealFields",
                format!(
                    "sequence `{}` is sealed: only a gapless trigger numbers it (a seal is written once, on a final number), not {how}",
                    self.name
                ),
            ));
        }
        Ok(())
    }
}
