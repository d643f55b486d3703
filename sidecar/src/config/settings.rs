//! `[sidecar]` and `[lease]`: timings, batch size, the instance id; defaults and ranges.

use std::time::Duration;

use super::error::{invalid, invalid_key, ConfigError, Key};
use super::raw::{RawLease, RawSidecar};

/// Environment variable that overrides `[lease].instance_id`.
pub const INSTANCE_ENV: &str = "MONGO_SEQ_INSTANCE_ID";

/// Longest retry delay accepted (1 hour).
const MAX_BACKOFF_MS: u64 = 3_600_000;

#[derive(Debug, Clone)]
pub struct Settings {
    pub batch_size: usize,
    pub poll_interval: Duration,
    pub max_await: Duration,
    /// Longest wait for a batch that is not full to fill while inserts are coming.
    pub batch_delay: Duration,
    /// Longest a read of the stream waits to gather a small batch at a moderate rate.
    pub linger: Duration,
    /// After numbered batches, the resume token is stored at most this often.
    pub checkpoint: Duration,
    pub heartbeat: Duration,
    pub backoff_initial: Duration,
    pub backoff_max: Duration,
    pub progress: Duration,
    /// How often a holder retries its trigger's dead letters (while it has some).
    pub dead_letter_retry: Duration,
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
            linger: Duration::from_millis(10),
            checkpoint: Duration::from_secs(1),
            heartbeat: Duration::from_secs(10),
            backoff_initial: Duration::from_millis(200),
            backoff_max: Duration::from_secs(30),
            progress: Duration::from_secs(2),
            dead_letter_retry: Duration::from_secs(30),
            lease: LeaseSettings::default(),
        }
    }
}

/// `[sidecar]` and `[lease]` → validated settings.
pub(super) fn settings(
    s: RawSidecar,
    lease: RawLease,
    env: &impl Fn(&str) -> Option<String>,
) -> Result<Settings, ConfigError> {
    let d = Settings::default();
    let batch_size = match s.batch_size {
        None => d.batch_size,
        Some(n @ 1..=100_000) => n as usize,
        Some(n) => {
            return Err(invalid_key(
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
        return Err(invalid_key(
            "sidecar.backoff_max_ms",
            format!(
                "must be at least sidecar.backoff_initial_ms ({} ms), got {} ms",
                backoff_initial.as_millis(),
                backoff_max.as_millis()
            ),
        ));
    }
    Ok(Settings {
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
        linger: duration(
            "sidecar.linger_ms",
            s.linger_ms,
            d.linger,
            0..=1_000,
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
        dead_letter_retry: duration(
            "sidecar.dead_letter_retry_ms",
            s.dead_letter_retry_ms,
            d.dead_letter_retry,
            100..=3_600_000,
            Unit::Ms,
        )?,
        lease: lease_settings(lease, env)?,
    })
}

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
        Some(v) => Err(invalid_key(
            key,
            format!(
                "must be {}..={} {unit_name}, got {v} {unit_name}",
                range.start(),
                range.end()
            ),
        )),
    }
}

fn lease_settings(
    raw: RawLease,
    env: &impl Fn(&str) -> Option<String>,
) -> Result<LeaseSettings, ConfigError> {
    let ttl = raw.ttl_ms.unwrap_or(10_000);
    if !(300..=3_600_000).contains(&ttl) {
        return Err(invalid_key(
            "lease.ttl_ms",
            format!("must be 300..=3600000 ms, got {ttl} ms"),
        ));
    }
    let renew = raw.renew_ms.unwrap_or(ttl / 3);
    let margin = raw.margin_ms.unwrap_or(ttl / 5);
    if margin >= ttl {
        return Err(invalid_key(
            "lease.margin_ms",
            format!("must be below lease.ttl_ms ({ttl} ms), got {margin} ms"),
        ));
    }
    if renew == 0 || renew >= ttl - margin {
        return Err(invalid_key(
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
            let key = match from_env {
                Some(_) => Key::Env {
                    key: "lease.instance_id".to_owned(),
                    var: INSTANCE_ENV,
                },
                None => Key::file("lease.instance_id"),
            };
            return Err(invalid(
                key,
                "must be 1..=200 bytes without control characters",
            ));
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
