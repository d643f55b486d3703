//! Prometheus metrics of the sidecar (one registry per server, served at `/metrics`).
//!
//! `mongo_seq_commands_total` is fed by the driver's command monitoring, so every command on
//! the wire is counted, including the `getMore`s of change streams and cursors and the
//! `killCursors` the driver sends by itself. Each is labelled with the trigger whose task sent
//! it (a task-local set by [`for_trigger`]; [`lease_traffic`] marks lease commands as
//! `lease:<command>`), or, for what the driver sends from its own tasks, the trigger watching
//! the command's collection.

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::Arc;

use mongodb::event::command::CommandEvent;
use mongodb::event::EventHandler;
use prometheus::{Encoder, GaugeVec, IntCounterVec, IntGaugeVec, Opts, Registry, TextEncoder};

/// Who sends the commands of the current task.
#[derive(Debug, Clone, Default)]
struct Sender {
    trigger: String,
    lease: bool,
}

tokio::task_local! {
    static SENDER: Sender;
}

/// Runs `future` with its commands counted under `trigger`.
pub async fn for_trigger<F: Future>(trigger: &str, future: F) -> F::Output {
    let sender = Sender {
        trigger: trigger.to_owned(),
        lease: false,
    };
    SENDER.scope(sender, future).await
}

/// Runs `future` with its commands counted as lease traffic (`lease:<command>`).
pub async fn lease_traffic<F: Future>(future: F) -> F::Output {
    let mut sender = SENDER.try_with(Sender::clone).unwrap_or_default();
    sender.lease = true;
    SENDER.scope(sender, future).await
}

/// `mongo_seq_resume_token_age_seconds{trigger}`: seconds since this instance, as the trigger's
/// lease holder, last stored the trigger's resume token (or since the token it resumed from was
/// stored), computed when scraped, so it keeps growing while the trigger is stuck (failing,
/// retrying, hung). Once it nears the oplog window the stored token is about to fall out of the
/// oplog (history lost: a backfill instead of the stream). Only the holder exports the series.
#[derive(Clone)]
pub struct TokenAge {
    stored_ms: Arc<std::sync::Mutex<BTreeMap<String, i64>>>,
    desc: prometheus::core::Desc,
}

const TOKEN_AGE: &str = "mongo_seq_resume_token_age_seconds";
const TOKEN_AGE_HELP: &str =
    "Seconds since the lease holder last stored the trigger's resume token (alert well before the oplog window).";

impl TokenAge {
    fn new() -> Self {
        Self {
            stored_ms: Arc::default(),
            desc: prometheus::core::Desc::new(
                TOKEN_AGE.to_owned(),
                TOKEN_AGE_HELP.to_owned(),
                vec!["trigger".to_owned()],
                std::collections::HashMap::new(),
            )
            .expect("valid metric"),
        }
    }

    fn stored(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, i64>> {
        crate::lock::lock(&self.stored_ms)
    }

    /// `trigger`'s token was stored at `at_ms` (wall clock); `only_if_unknown`: unless a newer
    /// store is known already.
    pub fn set(&self, trigger: &str, at_ms: i64, only_if_unknown: bool) {
        let mut stored = self.stored();
        if !(only_if_unknown && stored.contains_key(trigger)) {
            stored.insert(trigger.to_owned(), at_ms);
        }
    }

    /// This instance no longer holds `trigger`: it stops exporting the age.
    pub fn forget(&self, trigger: &str) {
        self.stored().remove(trigger);
    }

    /// The age at `now_ms`, seconds.
    pub fn age_secs(&self, trigger: &str, now_ms: i64) -> Option<f64> {
        self.stored()
            .get(trigger)
            .map(|at| ((now_ms - at) as f64 / 1000.0).max(0.0))
    }
}

impl prometheus::core::Collector for TokenAge {
    fn desc(&self) -> Vec<&prometheus::core::Desc> {
        vec![&self.desc]
    }

    fn collect(&self) -> Vec<prometheus::proto::MetricFamily> {
        let now_ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
            .unwrap_or(0);
        let gauge = GaugeVec::new(Opts::new(TOKEN_AGE, TOKEN_AGE_HELP), &["trigger"])
            .expect("valid metric");
        let triggers: Vec<String> = self.stored().keys().cloned().collect();
        for trigger in triggers {
            if let Some(age) = self.age_secs(&trigger, now_ms) {
                gauge.with_label_values(&[&trigger]).set(age);
            }
        }
        prometheus::core::Collector::collect(&gauge)
    }
}

#[derive(Clone)]
pub struct Metrics {
    registry: Registry,
    pub token_age: TokenAge,
    pub events: IntCounterVec,
    pub numbered: IntCounterVec,
    pub prenumbered: IntCounterVec,
    pub skipped: IntCounterVec,
    pub batches: IntCounterVec,
    pub commands: IntCounterVec,
    pub errors: IntCounterVec,
    pub lag: GaugeVec,
    pub backfill_remaining: IntGaugeVec,
    pub healthy: IntGaugeVec,
    pub lease_held: IntGaugeVec,
    pub lease_acquired: IntCounterVec,
    pub lease_lost: IntCounterVec,
    pub fenced: IntCounterVec,
    pub intents_completed: IntCounterVec,
    pub gapless_renumbered: IntCounterVec,
    pub dead_letters: IntGaugeVec,
    pub dead_letters_recorded: IntCounterVec,
    pub dead_letters_resolved: IntCounterVec,
}

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}

impl Metrics {
    pub fn new() -> Self {
        let registry = Registry::new();
        let counter = |name: &str, help: &str, labels: &[&str]| {
            let c = IntCounterVec::new(Opts::new(name, help), labels).expect("valid metric");
            registry
                .register(Box::new(c.clone()))
                .expect("register metric");
            c
        };
        let events = counter(
            "mongo_seq_events_total",
            "Insert events read from change streams.",
            &["trigger"],
        );
        let numbered = counter(
            "mongo_seq_documents_numbered_total",
            "Documents given a number.",
            &["trigger"],
        );
        let prenumbered = counter(
            "mongo_seq_documents_prenumbered_total",
            "Documents inserted already carrying a number (left as they are).",
            &["trigger"],
        );
        let skipped = counter(
            "mongo_seq_documents_skipped_total",
            "Documents that could not be numbered (e.g. missing scope field).",
            &["trigger"],
        );
        let batches = counter(
            "mongo_seq_batches_total",
            "Batches applied (change stream and backfill).",
            &["trigger"],
        );
        let commands = counter(
            "mongo_seq_commands_total",
            "Commands sent to MongoDB (every one, from the driver's command monitoring): lease traffic as lease:<command>.",
            &["trigger", "command"],
        );
        let errors = counter(
            "mongo_seq_errors_total",
            "Errors by kind (transient, counter, core, history_lost, lease, other).",
            &["trigger", "kind"],
        );
        let lag = GaugeVec::new(
            Opts::new(
                "mongo_seq_lag_seconds",
                "Seconds between now and the cluster time of the last processed event.",
            ),
            &["trigger"],
        )
        .expect("valid metric");
        registry
            .register(Box::new(lag.clone()))
            .expect("register metric");
        let gauge = |name: &str, help: &str| {
            let g = IntGaugeVec::new(Opts::new(name, help), &["trigger"]).expect("valid metric");
            registry
                .register(Box::new(g.clone()))
                .expect("register metric");
            g
        };
        let backfill_remaining = gauge(
            "mongo_seq_backfill_remaining",
            "Documents the running backfill still has to number.",
        );
        let healthy = gauge(
            "mongo_seq_trigger_healthy",
            "1 when the trigger is running without error, else 0.",
        );
        let lease_held = gauge(
            "mongo_seq_lease_held",
            "1 while this instance holds the trigger's lease (the active instance), else 0.",
        );
        let lease_acquired = counter(
            "mongo_seq_lease_acquired_total",
            "Times this instance acquired the trigger's lease (a new epoch).",
            &["trigger"],
        );
        let lease_lost = counter(
            "mongo_seq_lease_lost_total",
            "Times this instance lost the lease (taken over, or not renewed in time).",
            &["trigger"],
        );
        let fenced = counter(
            "mongo_seq_fenced_total",
            "Writes refused because a later lease holder (higher epoch) had touched the counter or state document.",
            &["trigger"],
        );
        let intents_completed = counter(
            "mongo_seq_intents_completed_total",
            "Gapless intents left pending by an interrupted batch and completed.",
            &["trigger"],
        );
        let gapless_renumbered = counter(
            "mongo_seq_gapless_renumbered_total",
            "Numbers of a pending gapless intent moved down because a document before them was deleted while the batch was written.",
            &["trigger"],
        );
        let dead_letters = gauge(
            "mongo_seq_dead_letters",
            "Documents the trigger cannot number, waiting as dead letters (as this instance, while the lease holder, last saw them).",
        );
        let dead_letters_recorded = counter(
            "mongo_seq_dead_letters_recorded_total",
            "Dead letters recorded (documents the trigger cannot number: no usable scope value, no date, a number field that is not a number).",
            &["trigger"],
        );
        let dead_letters_resolved = counter(
            "mongo_seq_dead_letters_resolved_total",
            "Dead letters resolved: their document numbered after a repair, or gone.",
            &["trigger"],
        );
        let token_age = TokenAge::new();
        registry
            .register(Box::new(token_age.clone()))
            .expect("register metric");
        Self {
            registry,
            token_age,
            events,
            numbered,
            prenumbered,
            skipped,
            batches,
            commands,
            errors,
            lag,
            backfill_remaining,
            healthy,
            lease_held,
            lease_acquired,
            lease_lost,
            fenced,
            intents_completed,
            gapless_renumbered,
            dead_letters,
            dead_letters_recorded,
            dead_letters_resolved,
        }
    }

    /// The registry behind `/metrics` (tests read it).
    pub fn registry(&self) -> &Registry {
        &self.registry
    }

    /// A command monitor counting every command started, under the sending task's trigger,
    /// else the trigger watching the command's `(database, collection)` in `watched`; it
    /// passes each event on to `next` (a monitor the caller had set).
    pub fn command_monitor(
        &self,
        watched: BTreeMap<(String, String), String>,
        next: Option<EventHandler<CommandEvent>>,
    ) -> EventHandler<CommandEvent> {
        let commands = self.commands.clone();
        let watched = Arc::new(watched);
        EventHandler::callback(move |event: CommandEvent| {
            if let CommandEvent::Started(started) = &event {
                let sender = SENDER.try_with(Sender::clone).unwrap_or_else(|_| {
                    let collection = started
                        .command
                        .iter()
                        .next()
                        .and_then(|(_, v)| v.as_str())
                        .unwrap_or_default();
                    Sender {
                        trigger: watched
                            .get(&(started.db.clone(), collection.to_owned()))
                            .cloned()
                            .unwrap_or_default(),
                        lease: false,
                    }
                });
                let name = if sender.lease {
                    format!("lease:{}", started.command_name)
                } else {
                    started.command_name.clone()
                };
                commands.with_label_values(&[&sender.trigger, &name]).inc();
            }
            match &next {
                Some(EventHandler::Callback(callback)) => callback(event),
                Some(EventHandler::AsyncCallback(callback)) => {
                    tokio::spawn(callback(event));
                }
                Some(EventHandler::TokioMpsc(sender)) => {
                    let _ = sender.try_send(event);
                }
                _ => {}
            }
        })
    }

    /// The Prometheus text exposition.
    pub fn render(&self) -> String {
        let mut out = Vec::new();
        TextEncoder::new()
            .encode(&self.registry.gather(), &mut out)
            .expect("encode metrics");
        String::from_utf8(out).unwrap_or_default()
    }
}
