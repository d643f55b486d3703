//! A sequence's options as flags (`--start`, `--step`, `--scope`, `--counter-field`, …: one per
//! option a `[[trigger]]` may set, built from the core's option table `SequenceSpec::OPTIONS`,
//! its flag names and descriptions), for the tools that work on any counter — one a trigger of
//! `--config` uses, or one the npm package or the mongoose plugin keeps — without a config: they
//! fill the keys a `[[trigger]]` would (`RawTrigger`), validated by the same path as the file's
//! (`config::validate_sequence`), errors named by flag.

use std::collections::BTreeMap;
use std::path::Path;

use clap::{Arg, ArgAction, ArgGroup, ArgMatches, Command, FromArgMatches};
use mongo_seq_core::{OptionValue, SequenceOption, SequenceSpec};
use serde_json::{json, Value};

use super::{load_config, CliError};
use crate::config::{self, Keys, RawTrigger};

/// The id of the group of every sequence flag (a tool's `conflicts_with` names it).
pub const SEQUENCE_FLAGS: &str = "sequence_options";

/// The sequence's options, as the file's `[[trigger]]` keys of the same names: the flags given,
/// by the core's option key, as written.
#[derive(Debug, Default, Clone)]
pub struct SequenceFlags {
    given: BTreeMap<&'static str, Vec<String>>,
}

/// The flag of `option` (its id: the file's key, `counter_field`).
fn flag(option: &'static SequenceOption) -> Arg {
    let arg = Arg::new(option.snake)
        .long(option.flag)
        .help(option.doc)
        .action(ArgAction::Set);
    match option.value {
        OptionValue::Integer => arg.allow_hyphen_values(true).value_name("INTEGER"),
        OptionValue::Boolean => arg.value_name("BOOL"),
        OptionValue::Text => arg.value_name("TEXT"),
        OptionValue::Fields => arg
            .value_delimiter(',')
            .action(ArgAction::Append)
            .value_name("FIELDS"),
        OptionValue::CounterId => arg.value_name("ID"),
    }
}

impl clap::Args for SequenceFlags {
    fn augment_args(command: Command) -> Command {
        let ids: Vec<&'static str> = SequenceSpec::trigger_options().map(|o| o.snake).collect();
        SequenceSpec::trigger_options()
            .fold(command, |command, option| command.arg(flag(option)))
            .group(ArgGroup::new(SEQUENCE_FLAGS).args(ids).multiple(true))
    }

    fn augment_args_for_update(command: Command) -> Command {
        Self::augment_args(command)
    }
}

impl FromArgMatches for SequenceFlags {
    fn from_arg_matches(matches: &ArgMatches) -> Result<Self, clap::Error> {
        let mut flags = Self::default();
        flags.update_from_arg_matches(matches)?;
        Ok(flags)
    }

    fn update_from_arg_matches(&mut self, matches: &ArgMatches) -> Result<(), clap::Error> {
        for option in SequenceSpec::trigger_options() {
            if let Some(values) = matches.get_many::<String>(option.snake) {
                self.given.insert(option.key, values.cloned().collect());
            }
        }
        Ok(())
    }
}

impl SequenceFlags {
    /// Whether any option was given.
    pub(super) fn any(&self) -> bool {
        !self.given.is_empty()
    }

    /// The value of option `key` as given, if it was.
    pub fn given(&self, key: &str) -> Option<&[String]> {
        self.given.get(key).map(Vec::as_slice)
    }

    /// Fills the sequence keys of `raw` (a `[[trigger]]` as the flags give it), as written: an
    /// integer flag that is not one reaches the core as the string it is, and is refused there
    /// like the file's `start = "one"`.
    pub(super) fn fill(&self, raw: &mut RawTrigger) {
        for (key, values) in &self.given {
            let (Some(option), Some(slot)) =
                (SequenceSpec::option(key), raw.sequence_option_mut(key))
            else {
                continue;
            };
            let text = values.first().map(String::as_str).unwrap_or_default();
            *slot = Some(match option.value {
                OptionValue::Integer => integer(text),
                OptionValue::Boolean => text
                    .parse::<bool>()
                    .map_or_else(|_| json!(text), Value::Bool),
                OptionValue::Text => Value::String(text.to_owned()),
                OptionValue::Fields => json!(values),
                OptionValue::CounterId => counter_id(text),
            });
        }
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

/// The sequence flags, as a message lists them: `--start, --step, …`.
pub(super) fn flag_list() -> String {
    SequenceSpec::trigger_options()
        .map(|option| format!("--{}", option.flag))
        .collect::<Vec<_>>()
        .join(", ")
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
            "{tool} needs the options of sequence `{name}` (start, step, min, max, scope, counter field, reset) to store the right counter value: pass --config with the sidecar config whose trigger uses it, or the options as flags ({}; --step 1 for a sequence with the defaults)",
            flag_list()
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
