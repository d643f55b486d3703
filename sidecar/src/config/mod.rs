//! Configuration: raw (as written: the TOML file, [`RawConfig`], or a tool's flags filling the
//! same structures) → validated ([`Config`], [`TriggerSpec`]), through one validation whose
//! errors name the key as it was given (a TOML key, an environment variable, a flag: [`Key`]).
//! A trigger's sequence keys (start, step, min, max, scope, format, the name) go to the core
//! as written (`SequenceSpec::parse_trigger`: the JS package's schema and messages), its
//! numbering (field, format field, gapless) too (`NumberingSpec::new`). This module checks
//! what is the sidecar's own. Every key is documented in `sidecar/CONFIG.md`.
//!
//! - `raw.rs`: the structures as written;
//! - `trigger.rs`: a trigger (namespace, sequence, numbering, `match`);
//! - `filter.rs`: the `match`, checked against what a change stream's `$match` accepts;
//! - `namespace.rs`: database and collection names;
//! - `settings.rs`: `[sidecar]` and `[lease]`;
//! - `uri.rs`, `http.rs`: where to connect and where to listen;
//! - `error.rs`: [`ConfigError`] and [`Key`].

mod error;
mod filter;
mod http;
mod namespace;
mod raw;
mod settings;
mod trigger;
mod uri;

#[cfg(test)]
mod tests;

use std::net::SocketAddr;
use std::path::Path;

pub use error::{invalid, ConfigError, Key};
pub use filter::FIELD_OPERATORS;
pub use http::{HTTP_BIND_ENV, HTTP_PORT_ENV};
pub use namespace::Namespace;
pub use raw::{RawConfig, RawHttp, RawLease, RawMongo, RawSidecar, RawTrigger};
pub use settings::{default_instance_id, hostname, LeaseSettings, Settings, INSTANCE_ENV};
pub use trigger::{validate_sequence, validate_trigger, Keys, On, TriggerSpec};
pub use uri::{check_uri, resolve_uri, FALLBACK_URI_ENV, URI_ENV};

use error::invalid_key;
use namespace::check_db_name;

/// The ledger collection's name when `[mongodb] ledger` is not set (in the counters' database).
pub const LEDGER_DEFAULT: &str = "mongo_seq_ledger";

#[derive(Debug, Clone)]
pub struct Config {
    pub uri: String,
    pub counters: Namespace,
    pub state: Namespace,
    /// The ledger: voided numbers and deleted documents' numbers (`mongodb.ledger`, default
    /// `mongo_seq_ledger` in the counters' database); `check` reads it.
    pub ledger: Namespace,
    pub settings: Settings,
    /// `None` when `[http].enabled = false`.
    pub http: Option<SocketAddr>,
    pub triggers: Vec<TriggerSpec>,
}

/// Reads and validates a config file.
pub fn load(path: &Path) -> Result<Config, ConfigError> {
    let display = path.display().to_string();
    parse(&raw::read(path)?, &display)
}

/// Parses TOML text (`origin` names it in messages) and validates it.
pub fn parse(text: &str, origin: &str) -> Result<Config, ConfigError> {
    validate(raw::parse_raw(text, origin)?, env_var)
}

/// Raw → validated. `env` looks up environment variables (injected for tests).
pub fn validate(
    raw: RawConfig,
    env: impl Fn(&str) -> Option<String>,
) -> Result<Config, ConfigError> {
    let from_env = |var: &'static str| {
        let key = Key::Env {
            key: "mongodb.uri".to_owned(),
            var,
        };
        (env(var), key)
    };
    let uri = resolve_uri([
        from_env(URI_ENV),
        (raw.mongodb.uri.clone(), Key::file("mongodb.uri")),
        from_env(FALLBACK_URI_ENV),
    ])?
    .ok_or_else(|| invalid_key("mongodb.uri", format!("missing (or set {URI_ENV})")))?;
    if raw.triggers.is_empty() {
        return Err(invalid_key(
            "trigger",
            "at least one [[trigger]] is required",
        ));
    }

    let mut triggers: Vec<TriggerSpec> = Vec::with_capacity(raw.triggers.len());
    for (index, raw_trigger) in raw.triggers.into_iter().enumerate() {
        let trigger = validate_trigger(raw_trigger, Keys::File { index })?;
        check_distinct(&triggers, &trigger, index)?;
        triggers.push(trigger);
    }

    let default_db = raw.mongodb.database.clone().or_else(|| {
        let first = &triggers[0].ns.db;
        triggers
            .iter()
            .all(|t| &t.ns.db == first)
            .then(|| first.clone())
    });
    if let Some(db) = &raw.mongodb.database {
        check_db_name(Key::file("mongodb.database"), db)?;
    }
    let counters = Namespace::parse(
        &Key::file("mongodb.counters"),
        raw.mongodb.counters.as_deref().unwrap_or("counters"),
        default_db.as_deref(),
    )?;
    let state = match raw.mongodb.state.as_deref() {
        Some(state) => Namespace::parse(&Key::file("mongodb.state"), state, Some(&counters.db))?,
        None => Namespace {
            db: counters.db.clone(),
            coll: "mongo_seq_state".to_owned(),
        },
    };
    if state == counters {
        return Err(invalid_key(
            "mongodb.state",
            "must differ from mongodb.counters",
        ));
    }
    let ledger = match raw.mongodb.ledger.as_deref() {
        Some(ledger) => Namespace::parse(&Key::file("mongodb.ledger"), ledger, Some(&counters.db))?,
        None => Namespace {
            db: counters.db.clone(),
            coll: LEDGER_DEFAULT.to_owned(),
        },
    };
    if ledger == counters || ledger == state {
        return Err(invalid_key(
            "mongodb.ledger",
            "must differ from mongodb.counters and mongodb.state",
        ));
    }

    Ok(Config {
        uri,
        counters,
        state,
        ledger,
        settings: settings::settings(raw.sidecar, raw.lease, &env)?,
        http: http::http_addr(&raw.http, &env)?,
        triggers,
    })
}

/// Each trigger numbers its own field with its own sequence (its lease fences its counters)
/// under its own name.
fn check_distinct(
    triggers: &[TriggerSpec],
    trigger: &TriggerSpec,
    index: usize,
) -> Result<(), ConfigError> {
    if let Some(other) = triggers
        .iter()
        .find(|o| o.ns == trigger.ns && o.numbering.field() == trigger.numbering.field())
    {
        return Err(invalid_key(
            format!("trigger[{index}]"),
            format!(
                "duplicate trigger: `{}` field `{}` is already numbered by trigger `{}`",
                trigger.ns,
                trigger.numbering.field(),
                other.id
            ),
        ));
    }
    if let Some(other) = triggers
        .iter()
        .find(|o| o.numbering.sequence().name() == trigger.numbering.sequence().name())
    {
        return Err(invalid_key(
            format!("trigger[{index}].sequence"),
            format!(
                "sequence `{}` is already used by trigger `{}`: each trigger needs its own sequence (its lease fences its counters)",
                trigger.numbering.sequence().name(),
                other.id
            ),
        ));
    }
    if triggers.iter().any(|o| o.id == trigger.id) {
        return Err(invalid_key(
            format!("trigger[{index}].name"),
            format!("duplicate trigger name `{}`", trigger.id),
        ));
    }
    Ok(())
}

/// The address a config file serves `/healthz` on (for `mongo-seq health`): the file must parse,
/// but only `[http]` is validated, so the check works wherever the file is readable.
pub fn load_http_addr(path: &Path) -> Result<Option<SocketAddr>, ConfigError> {
    let raw = raw::parse_raw(&raw::read(path)?, &path.display().to_string())?;
    http::http_addr(&raw.http, &env_var)
}

/// A set, non-blank environment variable.
pub fn env_var(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}
