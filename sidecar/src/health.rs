//! Per-trigger health, served as JSON at `/healthz`.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum State {
    Starting,
    Backfilling,
    Running,
    /// An error stopped the trigger; it retries with backoff.
    Retrying,
    Stopped,
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
}

#[derive(Clone, Default)]
pub struct Health {
    inner: Arc<Mutex<BTreeMap<String, TriggerHealth>>>,
}

fn now_ms() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_millis() as u64).unwrap_or(0)
}

impl Health {
    fn update(&self, trigger: &str, f: impl FnOnce(&mut TriggerHealth)) {
        let mut map = self.inner.lock().expect("health lock");
        let entry = map.entry(trigger.to_owned()).or_insert_with(|| TriggerHealth {
            state: State::Starting,
            healthy: true,
            last_error: None,
            last_error_code: None,
            consecutive_errors: 0,
            numbered: 0,
            last_batch_unix_ms: None,
        });
        f(entry);
    }

    pub fn set_state(&self, trigger: &str, state: State) {
        self.update(trigger, |h| {
            h.state = state;
            if matches!(state, State::Running | State::Backfilling) {
                h.healthy = true;
            }
        });
    }

    pub fn batch_applied(&self, trigger: &str, numbered: u64) {
        self.update(trigger, |h| {
            h.numbered += numbered;
            h.last_batch_unix_ms = Some(now_ms());
            h.consecutive_errors = 0;
            h.healthy = true;
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

    /// Every trigger's health, and whether all are healthy.
    pub fn snapshot(&self) -> (bool, BTreeMap<String, TriggerHealth>) {
        let map = self.inner.lock().expect("health lock").clone();
        (map.values().all(|h| h.healthy), map)
    }
}
