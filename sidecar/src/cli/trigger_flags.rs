//! A trigger described by flags instead of a config file's `[[trigger]]`, for the tools that act
//! on one series (`check`, `void`, `retry`): where it is (`--uri`, `--db`, `--collection`,
//! `--field`, `--counters`, `--ledger`, `--state`), the sequence's options (the flags of
//! `SequenceFlags`, from the core's option table), the field of the formatted ids and the
//! trigger's `match`. They fill the raw trigger the file gives (`RawTrigger`), validated by the
//! same path (`config::validate_trigger`), errors named by flag; the tool then runs as with a
//! config holding that one trigger.

use clap::Args;
use serde_json::{Map, Value};

use super::sequence::SEQUENCE_FLAGS;
use super::{CliError, SequenceFlags, UriArg};
use crate::config::{
    self, default_instance_id, Config, Key, Keys, Namespace, RawTrigger, Settings, TriggerSpec,
    INSTANCE_ENV,
};

/// The ids of the flags that describe a trigger: `--config` conflicts with each (it gives them;
/// with `--sequence`, where the tool has it).
pub const TRIGGER_FLAGS: [&str; 10] = [
    "uri",
    "db",
    "collection",
    "field",
    "counters",
    "ledger",
    "state",
    "format_field",
    "filter",
    SEQUENCE_FLAGS,
];

#[derive(Debug, Args)]
pub struct TriggerFlags {
    #[command(flatten)]
    pub uri: UriArg,
    /// Database of the collection (without --config).
    #[arg(long, required_unless_present = "config")]
    pub db: Option<String>,
    /// The numbered collection (without --config).
    #[arg(long, required_unless_present = "config")]
    pub collection: Option<String>,
    /// The field holding the number.
    #[arg(long, default_value = "seq")]
    pub field: String,
    /// Counters collection: `collection` in --db, or `database.collection`.
    #[arg(long, default_value = "counters")]
    pub counters: String,
    /// The ledger of voided and deleted numbers: `collection` in the counters' database, or
    /// `database.collection` (with --config: its `[mongodb] ledger`).
    #[arg(long, default_value = config::LEDGER_DEFAULT)]
    pub ledger: String,
    /// The sidecar's state collection, where its dead letters are: `collection` in the
    /// counters' database, or `database.collection` (with --config: its `[mongodb] state`).
    #[arg(long, default_value = "mongo_seq_state")]
    pub state: String,
    /// The sequence's options, as the file's `[[trigger]]` keys of the same names.
    #[command(flatten)]
    pub options: SequenceFlags,
    /// The field holding the formatted id (with --format).
    #[arg(long, value_name = "FIELD")]
    pub format_field: Option<String>,
    /// The trigger's `match`, as JSON, e.g. '{"type": "order"}'.
    #[arg(long = "match", id = "filter", value_name = "JSON")]
    pub filter: Option<String>,
}

/// The trigger keys a tool sets beside the flags: its name, sequence, mode, date field.
#[derive(Debug, Default)]
pub struct TriggerKeys {
    pub name: Option<String>,
    pub sequence: Option<String>,
    pub gapless: bool,
    pub date_field: Option<String>,
    /// The formatted ids are not read nor written: a `--format` needs no `--format-field`.
    pub numbers_only: bool,
}

impl TriggerFlags {
    /// The config these flags describe — their one trigger, validated as a file's (errors name
    /// the flags), where the flags say, with the default settings — and that trigger.
    pub(super) fn config(&self, keys: TriggerKeys) -> Result<(Config, TriggerSpec), CliError> {
        let (Some(db), Some(collection)) = (&self.db, &self.collection) else {
            return Err(CliError::usage(anyhow::anyhow!(
                "pass --config, or --db and --collection"
            )));
        };
        let mut raw = RawTrigger {
            name: keys.name,
            database: db.clone(),
            collection: collection.clone(),
            field: self.field.clone(),
            sequence: keys.sequence,
            filter: self.filter.as_deref().map(match_flag).transpose()?,
            gapless: Some(keys.gapless),
            date_field: keys.date_field,
            ..RawTrigger::default()
        };
        self.options.fill(&mut raw);
        raw.format_field = self.format_field.clone();
        if keys.numbers_only && raw.format.is_some() && raw.format_field.is_none() {
            // The format is checked with the sequence; no field is needed for it.
            config::validate_sequence(&raw, &format!("{db}.{collection}"), Keys::Flags)?;
            raw.format = None;
        }
        let trigger = config::validate_trigger(raw, Keys::Flags)?;
        let counters = Namespace::parse(&Key::flag("--counters"), &self.counters, Some(db))?;
        let ledger = Namespace::parse(&Key::flag("--ledger"), &self.ledger, Some(&counters.db))?;
        let state = Namespace::parse(&Key::flag("--state"), &self.state, Some(&counters.db))?;
        let mut settings = Settings::default();
        settings.lease.instance_id =
            config::env_var(INSTANCE_ENV).unwrap_or_else(default_instance_id);
        let config = Config {
            uri: self.uri.resolve()?,
            counters,
            state,
            ledger,
            settings,
            http: None,
            triggers: vec![trigger.clone()],
        };
        Ok((config, trigger))
    }
}

/// `--match` as written: a JSON object (validated with the trigger, as a file's `match`).
fn match_flag(text: &str) -> Result<Map<String, Value>, CliError> {
    match serde_json::from_str(text) {
        Ok(Value::Object(filter)) => Ok(filter),
        Ok(_) => Err(CliError::usage(anyhow::anyhow!(
            "--match: must be a JSON object"
        ))),
        Err(e) => Err(CliError::usage(anyhow::anyhow!(
            "--match: not JSON ({e}): {text}"
        ))),
    }
}
