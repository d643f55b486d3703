//! Per-trigger health, served as JSON at `/healthz`.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use serde::Serialize;

use crate::lock::lock;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum State {
    Starting,
    /// Another instance holds the trigger's lease; this one waits to take over.
    Standby,
    Backfilling,
    Running,
    /// An error stopped the trigger; it retries with backoff.
    Retrying,
    Stopped,
}

/// `/healthz`'s `status`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Ok,
    /// Healthy, with dead letters waiting (HTTP 200: not down).
    Degraded,
    /// HTTP 503.
    Unhealthy,
}

#[derive(Debug, Clone, Serialize)]
pub struct TriggerHealth {
    pub state: State,
    pub healthy: bool,
    pub last_error: Option<String>,
    pub last_error_code: Option<String>,
    pub consecutive_errors: u32,
    pub numbered: u64,
    pub last_batch_unix_ms: Option<u64>,
    /// Whether this instance holds the trigger's lease (is the active one).
    pub lease_held: bool,
    /// The epoch held, or the holder's when standing by.
    pub lease_epoch: Option<i64>,
    /// The lease holder's instance id, as last seen.
    pub lease_owner: Option<String>,
    /// Documents this trigger cannot number, waiting as dead letters (as the holder last saw
    /// them): the trigger is degraded, not down (it numbers the others).
    pub dead_letters: u64,
    /// The unique index on the number is in place (`false`: `unique_index = false`, on a
    /// collection whose shard key refuses it; `warning` says what is given up).
    pub unique_index: bool,
    /// What the trigger gives up as configured (without the unique index: numbers written by
    /// hand or by another tool are not refused), while it still numbers.
    pub warning: Option<String>,
}

#[derive(Clone, Default)]
pub struct Health {
    inner: Arc<Mutex<BTreeMap<String, TriggerHealth>>>,
    instance: Arc<Mutex<String>>,
}

impl Health {
    fn update(&self, trigger: &str, f: impl FnOnce(&mut TriggerHealth)) {
        let mut map = lock(&self.inner);
        let entry = map
            .entry(trigger.to_owned())
            .or_insert_with(|| TriggerHealth {
                state: State::Starting,
                healthy: true,
                last_error: None,
                last_error_code: None,
                consecutive_errors: 0,
                numbered: 0,
                last_batch_unix_ms: None,
                lease_held: false,
                lease_epoch: None,
                lease_owner: None,
                dead_letters: 0,
                unique_index: true,
                warning: None,
            });
        f(entry);
    }

    /// What the trigger is doing. It does not change `healthy`: a trigger that failed stays
    /// unhealthy while it retries, until [`Health::succeeded`] or [`Health::batch_applied`].
    pub fn set_state(&self, trigger: &str, state: State) {
        self.update(trigger, |h| h.state = state);
    }

    /// The trigger did its work without error (caught up with its stream, finished a
    /// backfill, or stands by for a healthy holder).
    pub fn succeeded(&self, trigger: &str) {
        self.update(trigger, |h| {
            h.consecutive_errors = 0;
            h.healthy = true;
        });
    }

    /// Records a batch done at `now_ms` (the caller then reports [`Health::succeeded`]).
    pub fn batch_applied(&self, trigger: &str, numbered: u64, now_ms: i64) {
        self.update(trigger, |h| {
            h.numbered += numbered;
            h.last_batch_unix_ms = u64::try_from(now_ms).ok();
        });
    }

    pub fn error(&self, trigger: &str, code: &str, message: &str) {
        self.update(trigger, |h| {
            h.state = State::Retrying;
            h.healthy = false;
            h.last_error = Some(message.to_owned());
            h.last_error_code = Some(code.to_owned());
            h.consecutive_errors += 1;
        });
    }

    /// This instance's id (shown by `/healthz`).
    pub fn set_instance(&self, id: &str) {
        *lock(&self.instance) = id.to_owned();
    }

    pub fn instance(&self) -> String {
        lock(&self.instance).clone()
    }

    /// Records who holds the trigger's lease.
    pub fn lease(&self, trigger: &str, held: bool, epoch: Option<i64>, owner: Option<&str>) {
        self.update(trigger, |h| {
            h.lease_held = held;
            h.lease_epoch = epoch;
            h.lease_owner = owner.map(str::to_owned);
        });
    }

    /// The trigger's dead letters waiting.
    pub fn dead_letters(&self, trigger: &str, waiting: u64) {
        self.update(trigger, |h| h.dead_letters = waiting);
    }

    /// The trigger numbers without its unique index, giving up what `warning` says.
    pub fn without_unique_index(&self, trigger: &str, warning: &str) {
        self.update(trigger, |h| {
            h.unique_index = false;
            h.warning = Some(warning.to_owned());
        });
    }

    /// The verdict of `/healthz`: `ok`, `degraded` (every trigger healthy, some with dead
    /// letters waiting: documents wait, the others are numbered) or `unhealthy`.
    pub fn status(&self) -> Status {
        let (healthy, triggers) = self.snapshot();
        if !healthy {
            Status::Unhealthy
        } else if triggers.values().any(|h| h.dead_letters > 0) {
            Status::Degraded
        } else {
            Status::Ok
        }
    }

    /// Every trigger's health, and whether all are healthy.
    pub fn snapshot(&self) -> (bool, BTreeMap<String, TriggerHealth>) {
        let map = lock(&self.inner).clone();
        (map.values().all(|h| h.healthy), map)
    }
}
