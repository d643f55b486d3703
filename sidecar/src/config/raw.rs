//! The configuration as written: the TOML file's tables (unknown keys rejected by serde), and
//! the same structures filled from a tool's flags, so both go through one validation.

use std::path::Path;

use serde::Deserialize;
use serde_json::{Map, Value};

use super::error::ConfigError;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawConfig {
    pub mongodb: RawMongo,
    #[serde(default)]
    pub sidecar: RawSidecar,
    #[serde(default)]
    pub http: RawHttp,
    #[serde(default)]
    pub lease: RawLease,
    #[serde(default, rename = "trigger")]
    pub triggers: Vec<RawTrigger>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawMongo {
    pub uri: Option<String>,
    pub database: Option<String>,
    pub counters: Option<String>,
    pub state: Option<String>,
    pub ledger: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawSidecar {
    pub batch_size: Option<u32>,
    pub poll_interval_ms: Option<u64>,
    pub max_await_ms: Option<u64>,
    pub batch_delay_ms: Option<u64>,
    pub linger_ms: Option<u64>,
    pub checkpoint_ms: Option<u64>,
    pub heartbeat_secs: Option<u64>,
    pub backoff_initial_ms: Option<u64>,
    pub backoff_max_ms: Option<u64>,
    pub progress_secs: Option<u64>,
    pub dead_letter_retry_ms: Option<u64>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawHttp {
    pub enabled: Option<bool>,
    pub bind: Option<String>,
    pub port: Option<u16>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawLease {
    pub ttl_ms: Option<u64>,
    pub renew_ms: Option<u64>,
    pub margin_ms: Option<u64>,
    pub instance_id: Option<String>,
}

/// A `[[trigger]]`, or what a tool's flags say about one (`check --db … --step …`; a tool that
/// needs only a sequence fills only its keys, for `validate_sequence`).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawTrigger {
    pub name: Option<String>,
    pub database: String,
    pub collection: String,
    pub field: String,
    pub sequence: Option<String>,
    // The sequence's options, as written: the core checks them (types included).
    pub start: Option<Value>,
    pub step: Option<Value>,
    pub min: Option<Value>,
    pub max: Option<Value>,
    pub scope: Option<Value>,
    pub format: Option<Value>,
    pub format_field: Option<String>,
    /// The counter documents' number field (`seq` by default; the core's `counterField`).
    pub counter_field: Option<Value>,
    /// The counter's `_id` when it is not the sequence name (the core's `counterId`): a string,
    /// or a table such as the Atlas recipe's `{ db = "app", coll = "orders" }`.
    pub counter_id: Option<Value>,
    /// A series that restarts every period (the core's `reset`): `"yearly"`, `"monthly"`,
    /// `"daily"` (default `"never"`).
    pub reset: Option<Value>,
    /// The IANA zone whose local dates place numbers in periods (the core's `timeZone`,
    /// default `"UTC"`; checked against the compiled-in tz database).
    pub time_zone: Option<Value>,
    /// The month a yearly series' (fiscal) year starts (the core's `yearStart`, default 1).
    pub year_start: Option<Value>,
    /// A sealed series' fields (the core's `sealFields`; a gapless trigger only).
    pub seal_fields: Option<Value>,
    /// Extended JSON (a flag can say `null`, which TOML cannot).
    #[serde(rename = "match")]
    pub filter: Option<Map<String, Value>>,
    pub gapless: Option<bool>,
    /// When a document is numbered: `"insert"` (default) or `"match"` (when an insert, an
    /// update or a replace makes it match `match`).
    pub on: Option<String>,
    /// The document's date field that places it in a period (a sequence that resets).
    pub date_field: Option<String>,
    /// The field the backfill numbers in the order of (then `_id`); `_id` alone by default.
    pub backfill_sort: Option<String>,
    /// Record deleted documents' numbers in the ledger (gapless only; default: when gapless).
    pub record_deletions: Option<bool>,
    /// With `on = "match"`: read each update's post-image instead of looking the document up
    /// (exact issue order; MongoDB 6.0+, the collection's pre- and post-images enabled).
    pub post_images: Option<bool>,
    /// Create the unique index on the number (default `true`); `false` only where a sharded
    /// collection's shard key refuses it.
    pub unique_index: Option<bool>,
}

/// The `[[trigger]]` fields holding the core's sequence options (`SequenceSpec::trigger_options`),
/// by the core's key: the one place the file's field names meet the core's table (a test checks
/// that every option a trigger may set has its field).
macro_rules! sequence_option_fields {
    ($($key:literal => $field:ident),* $(,)?) => {
        impl RawTrigger {
            /// The value written for the core's option `key` (`None`: not a trigger's option).
            pub fn sequence_option(&self, key: &str) -> Option<&Option<Value>> {
                match key {
                    $($key => Some(&self.$field),)*
                    _ => None,
                }
            }

            /// [`RawTrigger::sequence_option`], to fill.
            pub fn sequence_option_mut(&mut self, key: &str) -> Option<&mut Option<Value>> {
                match key {
                    $($key => Some(&mut self.$field),)*
                    _ => None,
                }
            }
        }
    };
}

sequence_option_fields! {
    "start" => start,
    "step" => step,
    "min" => min,
    "max" => max,
    "scope" => scope,
    "format" => format,
    "reset" => reset,
    "timeZone" => time_zone,
    "yearStart" => year_start,
    "counterField" => counter_field,
    "counterId" => counter_id,
    "sealFields" => seal_fields,
}

pub(super) fn read(path: &Path) -> Result<String, ConfigError> {
    std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
        path: path.display().to_string(),
        source,
    })
}

/// TOML text (`origin` names it in messages) as written.
pub(super) fn parse_raw(text: &str, origin: &str) -> Result<RawConfig, ConfigError> {
    toml::from_str(text).map_err(|e| ConfigError::Parse {
        path: origin.to_owned(),
        message: e.to_string(),
    })
}
