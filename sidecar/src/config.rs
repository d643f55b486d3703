//! Configuration: the TOML file as written ([`RawConfig`], unknown keys rejected by serde) →
//! validated [`Config`]. A trigger's sequence keys (start, step, min, max, scope, format, the
//! name) go to the core as written (`SequenceSpec::parse_trigger`: the JS package's schema and
//! messages), its numbering (field, format field, gapless) too (`NumberingSpec::new`); an error
//! names the TOML key the core's `option_name` points at. This module checks what is the
//! sidecar's own. Every key is documented in `sidecar/CONFIG.md`.

use std::net::{IpAddr, SocketAddr};
use std::path::Path;
use std::time::Duration;

use mongo_seq_core::{NumberingSpec, SeqError, SequenceSpec};
use serde::Deserialize;
use serde_json::{Map, Value};

/// Environment variable that overrides `[mongodb].uri`.
pub const URI_ENV: &str = "MONGO_SEQ_URI";
/// Used when neither `MONGO_SEQ_URI` nor `[mongodb].uri` is set.
pub const FALLBACK_URI_ENV: &str = "MONGODB_URI";
/// Overrides `[http].port`: several sidecars on one host with one config file.
pub const HTTP_PORT_ENV: &str = "MONGO_SEQ_HTTP_PORT";

/// A configuration problem, naming the key at fault. Exit code 2.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read config file {path}: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    #[error("config file {path}: {message}")]
    Parse { path: String, message: String },
    #[error("config key `{key}`: {reason}")]
    Invalid { key: String, reason: String },
    /// A key whose value came from an environment variable.
    #[error("config key `{key}` (set by the environment variable {var}): {reason}")]
    InvalidEnv {
        key: String,
        var: &'static str,
        reason: String,
    },
}

fn invalid(key: impl Into<String>, reason: impl Into<String>) -> ConfigError {
    ConfigError::Invalid {
        key: key.into(),
        reason: reason.into(),
    }
}

// ---------------------------------------------------------------- raw (as written)

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
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawSidecar {
    pub batch_size: Option<u32>,
    pub poll_interval_ms: Option<u64>,
    pub max_await_ms: Option<u64>,
    pub batch_delay_ms: Option<u64>,
    pub checkpoint_ms: Option<u64>,
    pub heartbeat_secs: Option<u64>,
    pub backoff_initial_ms: Option<u64>,
    pub backoff_max_ms: Option<u64>,
    pub progress_secs: Option<u64>,
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

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawTrigger {
    pub name: Option<String>,
    pub database: String,
    pub collection: String,
    pub field: String,
    pub sequence: Option<String>,
    // The sequence's options, as written: the core checks them (types included).
    pub start: Option<toml::Value>,
    pub step: Option<toml::Value>,
    pub min: Option<toml::Value>,
    pub max: Option<toml::Value>,
    pub scope: Option<toml::Value>,
    pub format: Option<toml::Value>,
    pub format_field: Option<String>,
    /// The counter documents' number field (`seq` by default; the core's `counterField`).
    pub counter_field: Option<toml::Value>,
    #[serde(rename = "match")]
    pub filter: Option<toml::Table>,
    pub gapless: Option<bool>,
}

// ---------------------------------------------------------------- validated

/// `database.collection`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Namespace {
    pub db: String,
    pub coll: String,
}

impl Namespace {
    /// A namespace given by a tool's flags (`[db_flag, coll_flag]`), checked as the config's
    /// are; errors name the flag.
    pub fn from_flags(flags: [&str; 2], db: &str, coll: &str) -> anyhow::Result<Self> {
        let named = |e: ConfigError| match e {
            ConfigError::Invalid { key, reason } => anyhow::anyhow!("{key}: {reason}"),
            other => other.into(),
        };
        check_db_name(flags[0], db).map_err(named)?;
        check_coll_name(flags[1], db, coll).map_err(named)?;
        Ok(Self {
            db: db.to_owned(),
            coll: coll.to_owned(),
        })
    }
}

impl std::fmt::Display for Namespace {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}", self.db, self.coll)
    }
}

#[derive(Debug, Clone)]
pub struct Settings {
    pub batch_size: usize,
    pub poll_interval: Duration,
    pub max_await: Duration,
    /// Longest wait for a batch that is not full to fill while inserts are coming.
    pub batch_delay: Duration,
    /// After numbered batches, the resume token is stored at most this often.
    pub checkpoint: Duration,
    pub heartbeat: Duration,
    pub backoff_initial: Duration,
    pub backoff_max: Duration,
    pub progress: Duration,
    pub lease: LeaseSettings,
}

/// Leases (several sidecars with the same config): see CONFIG.md `[lease]`.
#[derive(Debug, Clone)]
pub struct LeaseSettings {
    /// This instance's id, unique among the running sidecars.
    pub instance_id: String,
    /// How long a lease lasts without renewal.
    pub ttl: Duration,
    /// How often the holder renews it (and a standby tries to take it).
    pub renew: Duration,
    /// The holder stops `margin` before the lease could expire (by its own monotonic clock):
    /// the tolerated clock skew between hosts.
    pub margin: Duration,
}

/// This machine's name (`HOSTNAME`, else `/etc/hostname`).
pub fn hostname() -> String {
    std::env::var("HOSTNAME")
        .ok()
        .or_else(|| std::fs::read_to_string("/etc/hostname").ok())
        .map(|h| h.trim().to_owned())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "host".to_owned())
}

/// `<hostname>:<pid>`.
pub fn default_instance_id() -> String {
    format!("{}:{}", hostname(), std::process::id())
}

impl Default for LeaseSettings {
    fn default() -> Self {
        Self {
            instance_id: default_instance_id(),
            ttl: Duration::from_secs(10),
            renew: Duration::from_millis(3333),
            margin: Duration::from_secs(2),
        }
    }
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            batch_size: 1000,
            poll_interval: Duration::from_millis(100),
            max_await: Duration::from_millis(500),
            batch_delay: Duration::from_millis(500),
            checkpoint: Duration::from_secs(1),
            heartbeat: Duration::from_secs(10),
            backoff_initial: Duration::from_millis(200),
            backoff_max: Duration::from_secs(30),
            progress: Duration::from_secs(2),
            lease: LeaseSettings::default(),
        }
    }
}

#[derive(Debug, Clone)]
pub struct TriggerSpec {
    /// Stable id: `name`, or `<db>.<collection>.<field>`; the key of the trigger's state document.
    pub id: String,
    pub ns: Namespace,
    /// The sequence, the numbered field, the formatted id's field, the mode (gapless or not).
    pub numbering: NumberingSpec,
    /// The `match` expression on the inserted document's fields (Extended JSON).
    pub filter: Option<Map<String, Value>>,
}

#[derive(Debug, Clone)]
pub struct Config {
    pub uri: String,
    pub counters: Namespace,
    pub state: Namespace,
    pub settings: Settings,
    /// `None` when `[http].enabled = false`.
    pub http: Option<SocketAddr>,
    pub triggers: Vec<TriggerSpec>,
}

/// Reads and validates a config file.
pub fn load(path: &Path) -> Result<Config, ConfigError> {
    let display = path.display().to_string();
    parse(&read(path)?, &display)
}

fn read(path: &Path) -> Result<String, ConfigError> {
    std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
        path: path.display().to_string(),
        source,
    })
}

/// Parses TOML text (`origin` names it in messages) and validates it.
pub fn parse(text: &str, origin: &str) -> Result<Config, ConfigError> {
    validate(parse_raw(text, origin)?, env_var)
}

fn parse_raw(text: &str, origin: &str) -> Result<RawConfig, ConfigError> {
    toml::from_str(text).map_err(|e| ConfigError::Parse {
        path: origin.to_owned(),
        message: e.to_string(),
    })
}

/// Raw → validated. `env` looks up environment variables (injected for tests).
pub fn validate(
    raw: RawConfig,
    env: impl Fn(&str) -> Option<String>,
) -> Result<Config, ConfigError> {
    let (uri, from) = match (env(URI_ENV), raw.mongodb.uri.clone(), env(FALLBACK_URI_ENV)) {
        (Some(uri), _, _) => (uri, Some(URI_ENV)),
        (None, Some(uri), _) => (uri, None),
        (None, None, Some(uri)) => (uri, Some(FALLBACK_URI_ENV)),
        (None, None, None) => {
            return Err(invalid(
                "mongodb.uri",
                format!("missing (or set {URI_ENV})"),
            ))
        }
    };
    check_uri(&uri).map_err(|reason| match from {
        Some(var) => ConfigError::InvalidEnv {
            key: "mongodb.uri".to_owned(),
            var,
            reason,
        },
        None => invalid("mongodb.uri", reason),
    })?;
    if raw.triggers.is_empty() {
        return Err(invalid("trigger", "at least one [[trigger]] is required"));
    }

    let mut triggers: Vec<TriggerSpec> = Vec::with_capacity(raw.triggers.len());
    for (index, t) in raw.triggers.into_iter().enumerate() {
        let trigger = validate_trigger(index, t)?;
        if let Some(other) = triggers
            .iter()
            .find(|o| o.ns == trigger.ns && o.numbering.field() == trigger.numbering.field())
        {
            return Err(invalid(
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
            return Err(invalid(
                format!("trigger[{index}].sequence"),
                format!(
                    "sequence `{}` is already used by trigger `{}`: each trigger needs its own sequence (its lease fences its counters)",
                    trigger.numbering.sequence().name(),
                    other.id
                ),
            ));
        }
        if triggers.iter().any(|o| o.id == trigger.id) {
            return Err(invalid(
                format!("trigger[{index}].name"),
                format!("duplicate trigger name `{}`", trigger.id),
            ));
        }
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
        check_db_name("mongodb.database", db)?;
    }
    let counters = namespace(
        "mongodb.counters",
        raw.mongodb.counters.as_deref().unwrap_or("counters"),
        default_db.as_deref(),
    )?;
    let state = match raw.mongodb.state.as_deref() {
        Some(state) => namespace("mongodb.state", state, Some(&counters.db))?,
        None => Namespace {
            db: counters.db.clone(),
            coll: "mongo_seq_state".to_owned(),
        },
    };
    if state == counters {
        return Err(invalid(
            "mongodb.state",
            "must differ from mongodb.counters",
        ));
    }

    let s = raw.sidecar;
    let d = Settings::default();
    let batch_size = match s.batch_size {
        None => d.batch_size,
        Some(n @ 1..=100_000) => n as usize,
        Some(n) => {
            return Err(invalid(
                "sidecar.batch_size",
                format!("must be 1..=100000 documents, got {n}"),
            ))
        }
    };
    let backoff_initial = duration(
        "sidecar.backoff_initial_ms",
        s.backoff_initial_ms,
        d.backoff_initial,
        1..=MAX_BACKOFF_MS,
        Unit::Ms,
    )?;
    let backoff_max = duration(
        "sidecar.backoff_max_ms",
        s.backoff_max_ms,
        d.backoff_max,
        1..=MAX_BACKOFF_MS,
        Unit::Ms,
    )?;
    if backoff_max < backoff_initial {
        return Err(invalid(
            "sidecar.backoff_max_ms",
            format!(
                "must be at least sidecar.backoff_initial_ms ({} ms), got {} ms",
                backoff_initial.as_millis(),
                backoff_max.as_millis()
            ),
        ));
    }
    let settings = Settings {
        batch_size,
        poll_interval: duration(
            "sidecar.poll_interval_ms",
            s.poll_interval_ms,
            d.poll_interval,
            1..=60_000,
            Unit::Ms,
        )?,
        max_await: duration(
            "sidecar.max_await_ms",
            s.max_await_ms,
            d.max_await,
            1..=60_000,
            Unit::Ms,
        )?,
        batch_delay: duration(
            "sidecar.batch_delay_ms",
            s.batch_delay_ms,
            d.batch_delay,
            0..=60_000,
            Unit::Ms,
        )?,
        checkpoint: duration(
            "sidecar.checkpoint_ms",
            s.checkpoint_ms,
            d.checkpoint,
            0..=3_600_000,
            Unit::Ms,
        )?,
        heartbeat: duration(
            "sidecar.heartbeat_secs",
            s.heartbeat_secs,
            d.heartbeat,
            1..=86_400,
            Unit::Secs,
        )?,
        backoff_initial,
        backoff_max,
        progress: duration(
            "sidecar.progress_secs",
            s.progress_secs,
            d.progress,
            1..=86_400,
            Unit::Secs,
        )?,
        lease: lease_settings(raw.lease, &env)?,
    };

    let http = http_addr(&raw.http, &env)?;

    Ok(Config {
        uri,
        counters,
        state,
        settings,
        http,
        triggers,
    })
}

/// Longest retry delay accepted (1 hour).
const MAX_BACKOFF_MS: u64 = 3_600_000;

/// The unit a duration key is written in (and its messages speak).
#[derive(Clone, Copy)]
enum Unit {
    Ms,
    Secs,
}

/// A duration key in `unit`, within `range`; the message in the same unit.
fn duration(
    key: &str,
    value: Option<u64>,
    default: Duration,
    range: std::ops::RangeInclusive<u64>,
    unit: Unit,
) -> Result<Duration, ConfigError> {
    let (make, unit_name): (fn(u64) -> Duration, &str) = match unit {
        Unit::Ms => (Duration::from_millis, "ms"),
        Unit::Secs => (Duration::from_secs, "seconds"),
    };
    match value {
        None => Ok(default),
        Some(v) if range.contains(&v) => Ok(make(v)),
        Some(v) => Err(invalid(
            key,
            format!(
                "must be {}..={} {unit_name}, got {v} {unit_name}",
                range.start(),
                range.end()
            ),
        )),
    }
}

/// Checks a connection string the way the driver reads it at startup (scheme, hosts, ports,
/// options and their combinations), without any network access: `mongodb+srv://` hosts are
/// looked up only when the sidecar connects. The reason never contains the password.
pub fn check_uri(uri: &str) -> Result<(), String> {
    use futures_util::FutureExt;
    use mongodb::options::{ClientOptions, ConnectionString};
    use std::future::IntoFuture;

    if !(uri.starts_with("mongodb://") || uri.starts_with("mongodb+srv://")) {
        return Err("must start with mongodb:// or mongodb+srv://".to_owned());
    }
    let parsed = ConnectionString::parse(uri).map_err(|e| uri_reason(uri, &e))?;
    if uri.starts_with("mongodb://") {
        // Without SRV the driver's full parse does no I/O: it is ready at the first poll.
        if let Some(Err(e)) = ClientOptions::parse(parsed).into_future().now_or_never() {
            return Err(uri_reason(uri, &e));
        }
    }
    Ok(())
}

/// What the driver says is wrong, without its debug fields or the password.
fn uri_reason(uri: &str, e: &mongodb::error::Error) -> String {
    let message = match e.kind.as_ref() {
        mongodb::error::ErrorKind::InvalidArgument { message, .. } => message.clone(),
        other => other.to_string(),
    };
    let mut message = crate::redact::redact(&message);
    if let Some(password) = password_of(uri) {
        message = mask_word(&message, password);
    }
    format!("invalid connection string: {message}")
}

/// `text` with every occurrence of `word` that stands alone (not inside a longer word) masked:
/// a password quoted by the driver goes, the letters of a one-letter password stay.
fn mask_word(text: &str, word: &str) -> String {
    let is_word = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric());
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(word) {
        let (before, after) = (
            rest[..at].chars().last(),
            rest[at + word.len()..].chars().next(),
        );
        out.push_str(&rest[..at]);
        out.push_str(if is_word(before) || is_word(after) {
            word
        } else {
            "****"
        });
        rest = &rest[at + word.len()..];
    }
    out.push_str(rest);
    out
}

/// The password part of `scheme://user:password@…`, if any.
fn password_of(uri: &str) -> Option<&str> {
    let rest = &uri[uri.find("://")? + 3..];
    let authority = &rest[..rest.find(['/', '?']).unwrap_or(rest.len())];
    let userinfo = &authority[..authority.rfind('@')?];
    let password = &userinfo[userinfo.find(':')? + 1..];
    (!password.is_empty()).then_some(password)
}

/// Environment variable that overrides `[http].bind` (a container image sets `0.0.0.0`).
pub const HTTP_BIND_ENV: &str = "MONGO_SEQ_HTTP_BIND";

/// `[http]` → where `/healthz` and `/metrics` are served; `None` when disabled.
fn http_addr(
    raw: &RawHttp,
    env: &impl Fn(&str) -> Option<String>,
) -> Result<Option<SocketAddr>, ConfigError> {
    if !raw.enabled.unwrap_or(true) {
        return Ok(None);
    }
    let (bind, key) = match env(HTTP_BIND_ENV) {
        Some(bind) => (bind, HTTP_BIND_ENV),
        None => (
            raw.bind.clone().unwrap_or_else(|| "127.0.0.1".to_owned()),
            "http.bind",
        ),
    };
    let ip: IpAddr = bind
        .trim()
        .parse()
        .map_err(|_| invalid(key, format!("{bind:?} is not an IP address")))?;
    let port = match env(HTTP_PORT_ENV) {
        Some(text) => text
            .trim()
            .parse::<u16>()
            .map_err(|_| ConfigError::InvalidEnv {
                key: "http.port".to_owned(),
                var: HTTP_PORT_ENV,
                reason: format!("must be a port number 0..=65535, got {text:?}"),
            })?,
        None => raw.port.unwrap_or(9464),
    };
    Ok(Some(SocketAddr::new(ip, port)))
}

/// The address a config file serves `/healthz` on (for `mongo-seq health`): the file must parse,
/// but only `[http]` is validated, so the check works wherever the file is readable.
pub fn load_http_addr(path: &Path) -> Result<Option<SocketAddr>, ConfigError> {
    let raw = parse_raw(&read(path)?, &path.display().to_string())?;
    http_addr(&raw.http, &env_var)
}

/// A set, non-blank environment variable.
fn env_var(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

/// Environment variable that overrides `[lease].instance_id`.
pub const INSTANCE_ENV: &str = "MONGO_SEQ_INSTANCE_ID";

fn lease_settings(
    raw: RawLease,
    env: &impl Fn(&str) -> Option<String>,
) -> Result<LeaseSettings, ConfigError> {
    let ttl = raw.ttl_ms.unwrap_or(10_000);
    if !(300..=3_600_000).contains(&ttl) {
        return Err(invalid(
            "lease.ttl_ms",
            format!("must be 300..=3600000 ms, got {ttl} ms"),
        ));
    }
    let renew = raw.renew_ms.unwrap_or(ttl / 3);
    let margin = raw.margin_ms.unwrap_or(ttl / 5);
    if margin >= ttl {
        return Err(invalid(
            "lease.margin_ms",
            format!("must be below lease.ttl_ms ({ttl} ms), got {margin} ms"),
        ));
    }
    if renew == 0 || renew >= ttl - margin {
        return Err(invalid(
            "lease.renew_ms",
            format!(
                "must be 1..{} ms (below lease.ttl_ms - lease.margin_ms), got {renew} ms",
                ttl - margin
            ),
        ));
    }
    let from_env = env(INSTANCE_ENV);
    let instance_id = match from_env.clone().or(raw.instance_id) {
        Some(id) if id.trim().is_empty() || id.chars().any(char::is_control) || id.len() > 200 => {
            let reason = "must be 1..=200 bytes without control characters".to_owned();
            return Err(match from_env {
                Some(_) => ConfigError::InvalidEnv {
                    key: "lease.instance_id".to_owned(),
                    var: INSTANCE_ENV,
                    reason,
                },
                None => invalid("lease.instance_id", reason),
            });
        }
        Some(id) => id,
        None => default_instance_id(),
    };
    Ok(LeaseSettings {
        instance_id,
        ttl: Duration::from_millis(ttl),
        renew: Duration::from_millis(renew),
        margin: Duration::from_millis(margin),
    })
}

fn validate_trigger(index: usize, t: RawTrigger) -> Result<TriggerSpec, ConfigError> {
    let key = |k: &str| format!("trigger[{index}].{k}");
    check_db_name(&key("database"), &t.database)?;
    check_coll_name(&key("collection"), &t.database, &t.collection)?;
    let ns = Namespace {
        db: t.database.clone(),
        coll: t.collection.clone(),
    };
    // The core's error names the option (its JS name); the operator reads the TOML key.
    let core = |e: SeqError| {
        let toml_key = match e.option_name() {
            Some("name") => key("sequence"),
            Some("formatField") => key("format_field"),
            Some("counterField") => key("counter_field"),
            Some(option) => key(option),
            None => format!("trigger[{index}]"),
        };
        let reason = match &e {
            SeqError::InvalidOption { reason, .. } | SeqError::InvalidArgument { reason, .. } => {
                reason.clone()
            }
            other => other.to_string(),
        };
        invalid(toml_key, format!("{reason} ({})", e.code()))
    };

    let name = t.sequence.clone().unwrap_or_else(|| ns.to_string());
    let mut options = Map::new();
    for (option, value) in [
        ("start", &t.start),
        ("step", &t.step),
        ("min", &t.min),
        ("max", &t.max),
        ("scope", &t.scope),
        ("format", &t.format),
        ("counterField", &t.counter_field),
    ] {
        if let Some(value) = value {
            let value =
                serde_json::to_value(value).map_err(|e| invalid(key(option), e.to_string()))?;
            options.insert(option.to_owned(), value);
        }
    }
    let sequence = SequenceSpec::parse_trigger(&name, &options).map_err(core)?;
    let numbering = NumberingSpec::new(
        sequence,
        &t.field,
        t.format_field.as_deref(),
        t.gapless.unwrap_or(false),
    )
    .map_err(core)?;

    let filter = match t.filter {
        None => None,
        Some(table) => {
            if let Some(op) = table
                .keys()
                .find(|k| k.starts_with('$') && !matches!(k.as_str(), "$and" | "$or" | "$nor"))
            {
                return Err(invalid(
                    key("match"),
                    format!(
                        "top-level `{op}` is not supported (use field conditions, $and, $or, $nor)"
                    ),
                ));
            }
            let json: Value =
                serde_json::to_value(&table).map_err(|e| invalid(key("match"), e.to_string()))?;
            // Checked as the BSON the server gets, kept as its canonical Extended JSON.
            match crate::ejson::to_doc(json) {
                Ok(doc) if !doc.is_empty() => match crate::ejson::from_doc(doc) {
                    Value::Object(filter) => Some(filter),
                    _ => return Err(invalid(key("match"), "must be a table")),
                },
                Ok(_) => return Err(invalid(key("match"), "must be a non-empty table")),
                Err(e) => return Err(invalid(key("match"), e)),
            }
        }
    };
    let id = match t.name {
        Some(name) if name.is_empty() || name.chars().any(char::is_control) => {
            return Err(invalid(
                key("name"),
                "must be a non-empty string without control characters",
            ))
        }
        Some(name) => name,
        None => format!("{ns}.{}", t.field),
    };
    Ok(TriggerSpec {
        id,
        ns,
        numbering,
        filter,
    })
}

fn namespace(key: &str, value: &str, default_db: Option<&str>) -> Result<Namespace, ConfigError> {
    let (db, coll) = match value.split_once('.') {
        Some((db, coll)) => (db.to_owned(), coll.to_owned()),
        None => match default_db {
            Some(db) => (db.to_owned(), value.to_owned()),
            None => {
                return Err(invalid(
                    key,
                    "no database: write `database.collection` or set mongodb.database (triggers use several databases)",
                ))
            }
        },
    };
    check_db_name(key, &db)?;
    check_coll_name(key, &db, &coll)?;
    Ok(Namespace { db, coll })
}

fn check_db_name(key: &str, name: &str) -> Result<(), ConfigError> {
    if name.is_empty() || name.len() > 63 {
        return Err(invalid(
            key,
            format!("database name {name:?} must be 1..=63 bytes"),
        ));
    }
    if let Some(c) = name
        .chars()
        .find(|c| "/\\. \"$*<>:|?".contains(*c) || c.is_control())
    {
        return Err(invalid(
            key,
            format!("database name {name:?} must not contain {c:?}"),
        ));
    }
    Ok(())
}

/// The core's collection-name rule (the package's `collection`/`counters` options use it too).
fn check_coll_name(key: &str, db: &str, name: &str) -> Result<(), ConfigError> {
    mongo_seq_core::name::check_collection_name(key, name, Some(db)).map_err(|error| {
        let reason = match error {
            SeqError::InvalidOption { reason, .. } => reason,
            other => other.to_string(),
        };
        invalid(key, format!("invalid collection name: {reason}"))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(text: &str) -> Result<Config, String> {
        let raw: RawConfig = toml::from_str(text).map_err(|e| e.to_string())?;
        validate(raw, |_| None).map_err(|e| e.to_string())
    }

    const BASE: &str = "[mongodb]\nuri = \"mongodb://u:p@h/\"\n";

    #[test]
    fn a_password_quoted_in_a_message_is_masked_only_where_it_stands_alone() {
        assert_eq!(
            mask_word("bad p in key-password", "p"),
            "bad **** in key-password"
        );
        assert_eq!(
            mask_word("s3cret: 's3cret' rejected", "s3cret"),
            "****: '****' rejected"
        );
        assert_eq!(password_of("mongodb://u:p%40ss@h/?x=1"), Some("p%40ss"));
        assert_eq!(password_of("mongodb://u@h/"), None);
    }

    #[test]
    fn minimal_config_gets_defaults() {
        let c = check(&format!(
            "{BASE}[[trigger]]\ndatabase = \"app\"\ncollection = \"orders\"\nfield = \"seq\"\n"
        ))
        .unwrap();
        assert_eq!(c.counters.to_string(), "app.counters");
        assert_eq!(c.state.to_string(), "app.mongo_seq_state");
        assert_eq!(c.triggers[0].numbering.sequence().name(), "app.orders");
        assert_eq!(c.triggers[0].id, "app.orders.seq");
        assert_eq!(c.settings.batch_size, 1000);
        assert_eq!(c.http.unwrap().to_string(), "127.0.0.1:9464");
    }

    #[test]
    fn http_bind_from_the_environment() {
        let text = format!(
            "{BASE}[http]\nbind = \"127.0.0.2\"\nport = 9500\n[[trigger]]\ndatabase = \"app\"\ncollection = \"orders\"\nfield = \"seq\"\n"
        );
        let with = |bind: &'static str| {
            let raw: RawConfig = toml::from_str(&text).unwrap();
            validate(raw, move |name| {
                (name == HTTP_BIND_ENV).then(|| bind.to_owned())
            })
        };
        assert_eq!(
            check(&text).unwrap().http.unwrap().to_string(),
            "127.0.0.2:9500"
        );
        assert_eq!(
            with("0.0.0.0").unwrap().http.unwrap().to_string(),
            "0.0.0.0:9500"
        );
        assert_eq!(with("::").unwrap().http.unwrap().to_string(), "[::]:9500");
        let err = with("everywhere").unwrap_err().to_string();
        assert!(err.contains(HTTP_BIND_ENV), "{err}");
    }

    #[test]
    fn errors_name_the_key() {
        let t = "[[trigger]]\ndatabase = \"app\"\ncollection = \"orders\"\nfield = \"seq\"\n";
        let cases = [
            (format!("{BASE}[sidecar]\nbacth_size = 1\n{t}"), "bacth_size"),
            (format!("{BASE}[[trigger]]\ndatabase = \"app\"\nfield = \"seq\"\n"), "collection"),
            (format!("{BASE}[[trigger]]\ndatabase = \"app\"\ncollection = 5\nfield = \"seq\"\n"), "collection"),
            (format!("{BASE}{t}sequence = \"a/b\"\n"), "trigger[0].sequence"),
            (format!("{BASE}{t}{t}"), "duplicate trigger"),
            (format!("{BASE}{t}format = \"X{{seq}}\"\n"), "trigger[0].format_field"),
            (format!("{BASE}{t}gapless = true\nformat = \"X{{seq}}\"\nformat_field = \"seqEpoch\"\n"), "trigger[0].format_field"),
            (format!("{BASE}{t}gapless = true\nscope = [\"seqEpoch\"]\n"), "trigger[0].scope"),
            (format!("{BASE}{t}counter_field = \"a.b\"\n"), "trigger[0].counter_field"),
            (format!("{BASE}{t}counter_field = 5\n"), "trigger[0].counter_field"),
            (format!("{BASE}[[trigger]]\ndatabase = \"app\"\ncollection = \"orders\"\nfield = \"_id\"\n"), "trigger[0].field"),
            (format!("{BASE}[[trigger]]\ndatabase = \"a.b\"\ncollection = \"orders\"\nfield = \"seq\"\n"), "trigger[0].database"),
            (BASE.to_string(), "trigger"),
            (format!("[mongodb]\n{t}"), "mongodb.uri"),
        ];
        for (text, key) in cases {
            let err = check(&text).expect_err(&text);
            assert!(err.contains(key), "{err:?} should name {key}");
        }
    }
}
