//! A sequence's options as flags (`--start`, `--step`, `--min`, `--max`, `--scope`, `--format`,
//! `--counter-field`, `--counter-id`, `--reset`, `--time-zone`, `--year-start`), for the tools that work on any counter — one a trigger of
//! `--config` uses, or one the npm package or the mongoose plugin keeps — without a config: they
//! fill the keys a `[[trigger]]` would (`RawTrigger`), validated by the same path as the file's
//! (`config::validate_sequence`), errors named by flag.

use std::path::Path;

use clap::Args;
use mongo_seq_core::SequenceSpec;
use serde_json::{json, Value};

use super::{load_config, CliError};
use crate::config::{self, Keys, RawTrigger};

/// The sequence's options, as the file's `[[trigger]]` keys of the same names.
#[derive(Debug, Default, Args)]
pub struct SequenceFlags {
    /// First number of the sequence [default: 1].
    #[arg(long, allow_hyphen_values = true, value_name = "INTEGER")]
    pub start: Option<String>,
    /// Step between numbers, negative to count down [default: 1].
    #[arg(long, allow_hyphen_values = true, value_name = "INTEGER")]
    pub step: Option<String>,
    /// Lowest number ever issued (the bound when counting down).
    #[arg(long, allow_hyphen_values = true, value_name = "INTEGER")]
    pub min: Option<String>,
    /// Highest number ever issued (the bound when counting up).
    #[arg(long, allow_hyphen_values = true, value_name = "INTEGER")]
    pub max: Option<String>,
    /// Scope fields (one counter per value combination), comma-separated.
    #[arg(long, value_delimiter = ',', value_name = "FIELDS")]
    pub scope: Vec<String>,
    /// The formatted id's template, e.g. `ORD-{seq:06}`.
    #[arg(long, value_name = "TEMPLATE")]
    pub format: Option<String>,
    /// The counter documents' number field [default: seq] (`seq_value` for the Atlas recipe's).
    #[arg(long, value_name = "FIELD")]
    pub counter_field: Option<String>,
    /// The counter's `_id` when it is not the sequence name: a string, or a JSON document such as
    /// the Atlas recipe's '{"db": "shop", "coll": "orders"}' (fields in that order).
    #[arg(long, value_name = "ID")]
    pub counter_id: Option<String>,
    /// A series that restarts every period: yearly, monthly or daily [default: never]. Its
    /// counters are one per period, the period last in the id (`invoices/2026`,
    /// `invoices/tenantId=acme/2026-05`).
    #[arg(long, value_name = "PERIOD")]
    pub reset: Option<String>,
    /// The IANA time zone whose local dates place numbers in periods [default: UTC], e.g.
    /// Europe/Paris (with --reset).
    #[arg(long, value_name = "ZONE")]
    pub time_zone: Option<String>,
    /// The month (1-12) a yearly series' fiscal year starts [default: 1]; the fiscal year is
    /// named after the calendar year it ends in (with --reset yearly).
    #[arg(long, allow_hyphen_values = true, value_name = "MONTH")]
    pub year_start: Option<String>,
}

impl SequenceFlags {
    /// Whether any option was given.
    pub(super) fn any(&self) -> bool {
        let Self {
            start,
            step,
            min,
            max,
            scope,
            format,
            counter_field,
            counter_id,
            reset,
            time_zone,
            year_start,
        } = self;
        [
            start,
            step,
            min,
            max,
            format,
            counter_field,
            counter_id,
            reset,
            time_zone,
            year_start,
        ]
        .iter()
        .any(|flag| flag.is_some())
            || !scope.is_empty()
    }

    /// Fills the sequence keys of `raw` (a `[[trigger]]` as the flags give it), as written: an
    /// integer flag that is not one reaches the core as the string it is, and is refused there
    /// like the file's `start = "one"`.
    pub(super) fn fill(&self, raw: &mut RawTrigger) {
        raw.start = self.start.as_deref().map(integer);
        raw.step = self.step.as_deref().map(integer);
        raw.min = self.min.as_deref().map(integer);
        raw.max = self.max.as_deref().map(integer);
        raw.scope = (!self.scope.is_empty()).then(|| json!(self.scope));
        raw.format = self.format.clone().map(Value::String);
        raw.counter_field = self.counter_field.clone().map(Value::String);
        raw.counter_id = self.counter_id.as_deref().map(counter_id);
        raw.reset = self.reset.clone().map(Value::String);
        raw.time_zone = self.time_zone.clone().map(Value::String);
        raw.year_start = self.year_start.as_deref().map(integer);
    }

    /// The sequence `name` with these options, validated as a file's trigger is (a usage error
    /// naming the flag).
    pub(super) fn spec(&self, name: &str) -> Result<SequenceSpec, CliError> {
        let mut raw = RawTrigger {
            sequence: Some(name.to_owned()),
            ..RawTrigger::default()
        };
        self.fill(&mut raw);
        Ok(config::validate_sequence(&raw, name, Keys::Flags)?)
    }
}

/// An integer flag: a JSON number when it is one, else the text (which the core refuses).
fn integer(text: &str) -> Value {
    text.trim()
        .parse::<i64>()
        .map_or_else(|_| Value::String(text.to_owned()), |n| json!(n))
}

/// `--counter-id`: a JSON document when it is one, else the id as a string.
fn counter_id(text: &str) -> Value {
    match serde_json::from_str::<Value>(text) {
        Ok(document @ Value::Object(_)) => document,
        _ => Value::String(text.to_owned()),
    }
}

/// The sequence `name` a tool works on, with whether it is gapless when that is known: from the
/// trigger of `config` that uses it, else from `flags` (gapless unknown), else refused — a tool
/// that stores counter values never guesses the options (`tool` names it in the message).
pub(super) fn of(
    name: &str,
    config: Option<&Path>,
    flags: &SequenceFlags,
    tool: &str,
) -> Result<(SequenceSpec, Option<bool>), CliError> {
    let Some(path) = config else {
        if flags.any() {
            return Ok((flags.spec(name)?, None));
        }
        return Err(CliError::usage(anyhow::anyhow!(
            "{tool} needs the options of sequence `{name}` (start, step, min, max, scope, counter field, reset) to store the right counter value: pass --config with the sidecar config whose trigger uses it, or the options as flags (--start, --step, --min, --max, --scope, --counter-field, --counter-id, --reset, --time-zone, --year-start; --step 1 for a sequence with the defaults)"
        )));
    };
    if flags.any() {
        return Err(CliError::usage(anyhow::anyhow!(
            "--config gives the sequence's options: pass either --config or --start/--step/… flags, not both"
        )));
    }
    let config = load_config(path)?;
    let triggers = &config.triggers;
    if let Some(trigger) = triggers
        .iter()
        .find(|t| t.numbering.sequence().name() == name)
    {
        return Ok((
            trigger.numbering.sequence().clone(),
            Some(trigger.numbering.gapless()),
        ));
    }
    let known: Vec<String> = triggers
        .iter()
        .map(|t| format!("`{}`", t.numbering.sequence().name()))
        .collect();
    Err(CliError::usage(anyhow::anyhow!(
        "no trigger of {} uses sequence `{name}` (its sequences: {}); pass the sequence's options as flags (--start, --step, …) instead of --config for a sequence no trigger uses",
        path.display(),
        known.join(", ")
    )))
}
