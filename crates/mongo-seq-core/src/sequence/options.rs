//! Sequence options: raw JSON (from a JS object or TOML) → validated [`SequenceSpec`].
//!
//! | key      | type                 | default | rule                                                |
//! |----------|----------------------|---------|-----------------------------------------------------|
//! | `name`   | string               | —       | required, see [`crate::sequence::name`]                       |
//! | `start`  | integer              | 1       | first number issued; within `[min, max]`            |
//! | `step`   | integer              | 1       | non-zero; negative counts down                      |
//! | `min`    | integer or null      | none    | lowest value ever issued (the bound when step < 0)  |
//! | `max`    | integer or null      | none    | highest value ever issued (the bound when step > 0) |
//! | `block`  | integer              | 1       | numbers reserved per round trip, 1..=1,000,000      |
//! | `refillAhead` | boolean         | false   | reserve the next block when half the block is left (`block` ≥ 2), see [`crate::BlockCounter`] |
//! | `maxBlock` | integer            | 10 × `block` (`block` ≥ 2; capped at 1,000,000), else 1 | the most a refill reserves as the block grows under load, `block`..=1,000,000; `maxBlock: block` keeps every block at `block`, see [`crate::BlockCounter`] |
//! | `scope`  | array of field paths | `[]`    | one counter per value combination, see [`crate::sequence::scope`] |
//! | `format` | string or null       | none    | template, see [`crate::sequence::format`]; period tokens (`{yyyy}` …) need a `reset` |
//! | `reset`  | string or null       | `never` | `never`, `yearly`, `monthly` or `daily`: the series starts again each period, see [`crate::sequence::period`] |
//! | `timeZone` | string or null     | `UTC`   | the IANA zone whose local dates the periods follow (periodic sequences only; its syntax is checked here, its existence by the host) |
//! | `yearStart` | integer or null   | 1       | the month (1..=12) a `yearly` sequence's (fiscal) year starts in; the year is named after the calendar year it ends in |
//! | `counterField` | string         | `seq`   | the counter document's number field, see [`crate::sequence::counter_field`] |
//! | `counterId` | string or document or null | none | the counter's `_id` when it is not the name (unscoped only), see [`crate::sequence::counter_field`] |
//! | `sealFields` | array of field paths | `[]` | a sealed series: the fields each number's seal chains (gapless triggers only), see [`crate::seal`] |
//!
//! Integers may be JSON numbers, integral doubles up to 2^53, or Extended JSON
//! (`{"$numberLong": "…"}`), so values beyond 2^53 survive a trip through JavaScript.
//! `null` means "not set" for the optional keys. Unknown keys are rejected by name.
//! The normalized options leave out `maxBlock` when it is its default, `reset`, `timeZone` and
//! `yearStart` for a sequence that never resets, and fill in `timeZone` (and `yearStart` when yearly) for one that does.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::ejson;
use crate::error::SeqError;
use crate::sequence::counter_field::{
    check_counter_field, check_counter_key, DEFAULT_COUNTER_FIELD,
};
use crate::sequence::format::FormatTemplate;
use crate::sequence::name::validate_name;
use crate::sequence::period::{Period, Reset};
use crate::sequence::scope;
use crate::sequence::time_zone::UTC;

// The numbers a sequence's counters may hold and issue: its bounds, in a file of their own.
mod bounds;
// `reset`, `timeZone`, `yearStart` and the periods of a sequence that resets.
mod periodic;
// `block`, `refillAhead` and `maxBlock`: what one process reserves at a time.
mod blocks;
// The `scope` option and the counter ids.
mod counter_ids;
// `sealFields`: a sealed series.
mod sealing;
pub use sealing::{seal_field, MAX_SEAL_FIELDS};
// Every option's spellings and description: `SequenceSpec::OPTIONS`.
mod table;
use blocks::{check_block_steps, is_default_max_block, parse_blocks, MaxBlock};
use counter_ids::parse_scope;
use periodic::{parse_reset, parse_time_zone, parse_year_start};
pub use table::{OptionValue, SequenceOption};

/// Validated sequence options. Construct with [`SequenceSpec::parse`]; serializes to the
/// normalized options (defaults filled in), which parse back to an equal spec.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", try_from = "Value")]
pub struct SequenceSpec {
    name: String,
    start: i64,
    step: i64,
    min: Option<i64>,
    max: Option<i64>,
    block: u64,
    refill_ahead: bool,
    /// Left out of the normalized options when it is the default for `block`.
    #[serde(skip_serializing_if = "is_default_max_block")]
    max_block: MaxBlock,
    scope: Vec<String>,
    format: Option<FormatTemplate>,
    #[serde(skip_serializing_if = "is_never")]
    reset: Reset,
    /// Set (the default filled in) exactly when the sequence resets.
    #[serde(skip_serializing_if = "Option::is_none")]
    time_zone: Option<String>,
    /// Set (the default filled in) exactly when the sequence resets yearly.
    #[serde(skip_serializing_if = "Option::is_none")]
    year_start: Option<u8>,
    counter_field: String,
    /// The counter's `_id` when the options give one (else the name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    counter_id: Option<Value>,
    /// Left out of the normalized options when empty (not sealed).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    seal_fields: Vec<String>,
    /// Numbered by a gapless trigger: no option, but part of the counters' definition.
    #[serde(skip)]
    gapless: bool,
}

fn is_never(reset: &Reset) -> bool {
    !reset.is_periodic()
}

impl TryFrom<Value> for SequenceSpec {
    type Error = SeqError;
    fn try_from(raw: Value) -> Result<Self, SeqError> {
        Self::parse(&raw)
    }
}

fn invalid(option: &str, reason: impl Into<String>) -> SeqError {
    SeqError::InvalidOption {
        option: option.to_owned(),
        reason: reason.into(),
    }
}

/// Reads an optional integer option; `null` counts as absent.
fn integer(map: &Map<String, Value>, key: &str) -> Result<Option<i64>, SeqError> {
    match map.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(value) => ejson::read_i64(value)
            .map(Some)
            .map_err(|reason| invalid(key, reason)),
    }
}

impl SequenceSpec {
    /// Every option key, in the order of the table above: the first column of
    /// [`SequenceSpec::OPTIONS`] (the Wasm exports it as `optionKeys()`, for the mongoose plugin).
    pub const KEYS: [&'static str; 16] = table::keys_of(&Self::OPTIONS);

    /// The keys a trigger (the sidecar's `[[trigger]]`) does not set: `name` (the trigger
    /// names its sequence itself), `block`, `refillAhead` and `maxBlock` (a trigger reserves
    /// per batch).
    const NOT_FOR_TRIGGERS: [&'static str; 4] = ["name", "block", "refillAhead", "maxBlock"];

    /// The option keys a trigger may set: [`SequenceSpec::KEYS`] but `name`, `block`,
    /// `refillAhead`, `maxBlock` and `counterId`.
    pub fn trigger_keys() -> impl Iterator<Item = &'static str> {
        Self::KEYS
            .into_iter()
            .filter(|key| !Self::NOT_FOR_TRIGGERS.contains(key))
    }

    /// Validates raw options. Checks, in order: object shape, unknown keys, each key's type
    /// and value, then cross-field rules (bounds, start, block × step).
    pub fn parse(raw: &Value) -> Result<Self, SeqError> {
        let map = match raw {
            Value::Object(map) if !ejson::is_unrepresentable(raw) => map,
            _ => {
                return Err(invalid(
                    "options",
                    format!("must be an object, got {}", ejson::describe(raw)),
                ))
            }
        };
        if let Some(key) = map.keys().find(|k| !Self::KEYS.contains(&k.as_str())) {
            return Err(SeqError::UnknownOption {
                key: key.clone(),
                known: Self::KEYS.join(", "),
            });
        }

        let name = match map.get("name") {
            Some(Value::String(name)) => name.clone(),
            other => {
                return Err(SeqError::InvalidName {
                    name: None,
                    reason: format!(
                        "must be a string, got {}",
                        other.map_or_else(|| "nothing".to_owned(), ejson::describe)
                    ),
                })
            }
        };
        validate_name(&name)?;

        let start = integer(map, "start")?.unwrap_or(1);
        let step = integer(map, "step")?.unwrap_or(1);
        if step == 0 {
            return Err(SeqError::InvalidStep { value: step });
        }
        let min = integer(map, "min")?;
        let max = integer(map, "max")?;
        let (block, refill_ahead, max_block) = parse_blocks(map)?;
        let scope = parse_scope(map.get("scope"))?;
        let reset = parse_reset(map.get("reset"))?;
        let format = match map.get("format") {
            None | Some(Value::Null) => None,
            Some(Value::String(template)) => {
                let template = FormatTemplate::parse(template)?;
                template.check_period_tokens(reset)?;
                Some(template)
            }
            Some(other) => {
                return Err(invalid(
                    "format",
                    format!("must be a string, got {}", ejson::describe(other)),
                ))
            }
        };
        let time_zone = parse_time_zone(map.get("timeZone"), reset)?;
        let year_start = parse_year_start(map, reset)?;

        let counter_field = match map.get("counterField") {
            None | Some(Value::Null) => DEFAULT_COUNTER_FIELD.to_owned(),
            Some(Value::String(field)) => check_counter_field(field)?,
            Some(other) => {
                return Err(invalid(
                    "counterField",
                    format!("must be a string, got {}", ejson::describe(other)),
                ))
            }
        };

        let counter_id = match map.get("counterId") {
            None | Some(Value::Null) => None,
            Some(_) if reset.is_periodic() => {
                return Err(invalid(
                    "counterId",
                    format!(
                        "cannot name the counter of a sequence that resets {}: it has one counter per period",
                        reset.name()
                    ),
                ))
            }
            Some(value) => Some(check_counter_key(value, &scope)?),
        };

        if let (Some(min), Some(max)) = (min, max) {
            if min > max {
                return Err(SeqError::InvalidBounds {
                    reason: format!("min {min} is greater than max {max}"),
                });
            }
        }
        if min.is_some_and(|min| start < min) || max.is_some_and(|max| start > max) {
            return Err(SeqError::InvalidBounds {
                reason: format!(
                    "start {start} is outside [{}, {}]",
                    min.map_or("unbounded".to_owned(), |v| v.to_string()),
                    max.map_or("unbounded".to_owned(), |v| v.to_string())
                ),
            });
        }
        // The counter stores the last issued value, so a fresh counter holds start - step.
        if start.checked_sub(step).is_none() {
            return Err(invalid(
                "start",
                format!("start - step ({start} - {step}) must fit in a signed 64-bit integer"),
            ));
        }
        let max_block = check_block_steps(block, max_block, step)?;
        let seal_fields = sealing::parse_seal_fields(map.get("sealFields"))?;
        Ok(Self {
            name,
            start,
            step,
            min,
            max,
            block,
            refill_ahead,
            max_block,
            scope,
            format,
            reset,
            time_zone,
            year_start,
            counter_field,
            counter_id,
            seal_fields,
            gapless: false,
        })
    }

    /// The same sequence numbered by a gapless trigger (its counters' definition says so).
    #[must_use]
    pub fn with_gapless(self, gapless: bool) -> Self {
        Self { gapless, ..self }
    }
    pub fn gapless(&self) -> bool {
        self.gapless
    }

    /// Validates a trigger's sequence options: `keys` as written (raw values, e.g. TOML turned
    /// into JSON), among [`SequenceSpec::trigger_keys`], for the sequence `name`. Same rules and messages as
    /// [`SequenceSpec::parse`]; [`SeqError::option_name`] tells which key an error is about.
    pub fn parse_trigger(name: &str, keys: &Map<String, Value>) -> Result<Self, SeqError> {
        if let Some(key) = keys
            .keys()
            .find(|k| !Self::trigger_keys().any(|known| known == k.as_str()))
        {
            return Err(SeqError::UnknownOption {
                key: key.clone(),
                known: Self::trigger_keys().collect::<Vec<_>>().join(", "),
            });
        }
        let mut options = keys.clone();
        options.insert("name".to_owned(), Value::String(name.to_owned()));
        Self::parse(&Value::Object(options))
    }

    pub fn name(&self) -> &str {
        &self.name
    }
    pub fn start(&self) -> i64 {
        self.start
    }
    pub fn step(&self) -> i64 {
        self.step
    }
    pub fn min(&self) -> Option<i64> {
        self.min
    }
    pub fn max(&self) -> Option<i64> {
        self.max
    }
    pub fn block(&self) -> u64 {
        self.block
    }
    /// Whether a process reserves its next block before the one in hand runs out.
    pub fn refill_ahead(&self) -> bool {
        self.refill_ahead
    }
    /// The most one refill reserves as the block grows under load (≥ `block`); see
    /// [`crate::BlockCounter`].
    pub fn max_block(&self) -> u64 {
        self.max_block.value
    }
    pub fn scope(&self) -> &[String] {
        &self.scope
    }
    pub fn format(&self) -> Option<&FormatTemplate> {
        self.format.as_ref()
    }
    /// How often the sequence starts again.
    pub fn reset(&self) -> Reset {
        self.reset
    }
    /// The IANA zone whose local dates the periods follow (`UTC` by default; also for a
    /// sequence that never resets, where it plays no part).
    pub fn time_zone(&self) -> &str {
        self.time_zone.as_deref().unwrap_or(UTC)
    }
    /// The month (1..=12) a yearly sequence's year starts in (1 unless set).
    pub fn year_start(&self) -> u8 {
        self.year_start.unwrap_or(1)
    }

    /// The counter document's field holding the last number issued (`seq` by default).
    pub fn counter_field(&self) -> &str {
        &self.counter_field
    }

    /// The counter's `_id` given by the `counterId` option, if any.
    pub fn counter_key(&self) -> Option<&Value> {
        self.counter_id.as_ref()
    }

    /// The `_id` of the counter document `counter_id` names: the `counterId` option's value for
    /// the sequence's own counter when it has one, else the id itself.
    pub fn counter_document_id(&self, counter_id: &str) -> Value {
        match &self.counter_id {
            Some(key) if counter_id == self.name => key.clone(),
            _ => Value::String(counter_id.to_owned()),
        }
    }

    /// The counter id of a counter document's `_id` (the inverse of
    /// [`SequenceSpec::counter_document_id`]): the string itself, the name for the `counterId`
    /// option's document `_id`; `None` for an `_id` that is neither.
    pub fn counter_id_of(&self, id: Option<&Value>) -> Option<String> {
        match id? {
            Value::String(id) => Some(id.clone()),
            id if self.counter_id.as_ref() == Some(id) => Some(self.name.clone()),
            _ => None,
        }
    }

    /// `{ _id: <the counter document's _id> }`.
    pub(crate) fn id_filter(&self, counter_id: &str) -> Map<String, Value> {
        let mut filter = Map::new();
        filter.insert("_id".to_owned(), self.counter_document_id(counter_id));
        filter
    }

    /// `$or` branches matching every counter of the sequence (see [`crate::sequence::scope::counters_of`]),
    /// and the one `counterId` names.
    pub fn counters_of(&self) -> Value {
        let mut branches = scope::counters_of(&self.name);
        if let (Some(key), Value::Array(list)) = (&self.counter_id, &mut branches) {
            let mut branch = Map::new();
            branch.insert("_id".to_owned(), key.clone());
            list.push(Value::Object(branch));
        }
        branches
    }

    /// The number further along the counting direction (the larger counting up, the smaller
    /// counting down), to combine "furthest number" results such as those of several scopes.
    pub fn further(&self, a: Option<i64>, b: Option<i64>) -> Option<i64> {
        match (a, b) {
            (Some(a), Some(b)) if self.step > 0 => Some(a.max(b)),
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// The formatted id for `value` of `period` (the number's: see
    /// [`SequenceSpec::check_period`]), when a `format` is configured.
    pub fn format_value(&self, value: i64, period: Option<&Period>) -> Option<String> {
        self.format
            .as_ref()
            .map(|template| template.apply(value, period))
    }

    /// The formatted id for `value` taken from counter `counter_id` (its period, if any).
    pub(crate) fn format_in(&self, counter_id: &str, value: i64) -> Option<String> {
        let template = self.format.as_ref()?;
        Some(template.apply(value, self.period_of_counter_id(counter_id).as_ref()))
    }
}

#[cfg(test)]
mod tests;
