//! `block`, `refillAhead` and `maxBlock`: how many numbers one process reserves at a time, and
//! how far its block may grow under load (see [`crate::BlockCounter`]).

use serde::Serialize;
use serde_json::{Map, Value};

use super::{integer, invalid};
use crate::ejson;
use crate::error::SeqError;
use crate::sequence::limits::MAX_BLOCK;

/// `maxBlock` with the `block` it defaults from (serialized as the number alone).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct MaxBlock {
    pub(super) value: u64,
    default: bool,
}

impl Serialize for MaxBlock {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_u64(self.value)
    }
}

pub(super) fn is_default_max_block(max_block: &MaxBlock) -> bool {
    max_block.default
}

/// How far a block grows by default: ten times `block` (1 for `block: 1`, which holds no
/// numbers between calls), at most [`MAX_BLOCK`].
fn default_max_block(block: u64) -> u64 {
    if block < 2 {
        block
    } else {
        block.saturating_mul(10).min(MAX_BLOCK)
    }
}

/// `block`, `refillAhead` and `maxBlock` of raw options, each checked on its own.
pub(super) fn parse_blocks(map: &Map<String, Value>) -> Result<(u64, bool, MaxBlock), SeqError> {
    let raw_block = integer(map, "block")?.unwrap_or(1);
    let block = match u64::try_from(raw_block) {
        Ok(block) if (1..=MAX_BLOCK).contains(&block) => block,
        _ => {
            return Err(invalid(
                "block",
                format!("must be at least 1 and at most {MAX_BLOCK}, got {raw_block}"),
            ))
        }
    };
    let refill_ahead = match map.get("refillAhead") {
        None | Some(Value::Null | Value::Bool(false)) => false,
        Some(Value::Bool(true)) if block >= 2 => true,
        Some(Value::Bool(true)) => {
            return Err(invalid(
                "refillAhead",
                "needs `block` of at least 2 (with block 1 no number is held between calls, so there is nothing to refill ahead of)",
            ))
        }
        Some(other) => {
            return Err(invalid(
                "refillAhead",
                format!("must be a boolean, got {}", ejson::describe(other)),
            ))
        }
    };
    let max_block = match integer(map, "maxBlock")? {
        None => MaxBlock {
            value: default_max_block(block),
            default: true,
        },
        Some(raw) => match u64::try_from(raw) {
            Ok(value) if (block..=MAX_BLOCK).contains(&value) => MaxBlock {
                value,
                default: value == default_max_block(block),
            },
            _ => {
                return Err(invalid(
                    "maxBlock",
                    format!(
                        "must be at least `block` ({block}) and at most {MAX_BLOCK}, got {raw}"
                    ),
                ))
            }
        },
    };
    Ok((block, refill_ahead, max_block))
}

/// `block × step` and `maxBlock × step` must fit in an int64 (a reservation's `$inc`); a
/// default `maxBlock` that does not falls back to `block`.
pub(super) fn check_block_steps(
    block: u64,
    max_block: MaxBlock,
    step: i64,
) -> Result<MaxBlock, SeqError> {
    if i64::try_from(block)
        .ok()
        .and_then(|b| b.checked_mul(step))
        .is_none()
    {
        return Err(invalid(
            "block",
            format!("block × step ({block} × {step}) must fit in a signed 64-bit integer"),
        ));
    }
    let max_block = if i64::try_from(max_block.value)
        .ok()
        .and_then(|b| b.checked_mul(step))
        .is_some()
    {
        max_block
    } else if max_block.default {
        // The default never makes valid options invalid: the block then stays `block`.
        MaxBlock {
            value: block,
            default: true,
        }
    } else {
        return Err(invalid(
            "maxBlock",
            format!(
                "maxBlock × step ({} × {step}) must fit in a signed 64-bit integer",
                max_block.value
            ),
        ));
    };

    Ok(max_block)
}
