//! Prometheus metrics of the sidecar (one registry per server, served at `/metrics`).

use prometheus::{Encoder, GaugeVec, IntCounterVec, IntGaugeVec, Opts, Registry, TextEncoder};

#[derive(Clone)]
pub struct Metrics {
    registry: Registry,
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
            registry.register(Box::new(c.clone())).expect("register metric");
            c
        };
        let events = counter("mongo_seq_events_total", "Insert events read from change streams.", &["trigger"]);
        let numbered = counter("mongo_seq_documents_numbered_total", "Documents given a number.", &["trigger"]);
        let prenumbered =
            counter("mongo_seq_documents_prenumbered_total", "Documents inserted already carrying a number (left as they are).", &["trigger"]);
        let skipped = counter("mongo_seq_documents_skipped_total", "Documents that could not be numbered (e.g. missing scope field).", &["trigger"]);
        let batches = counter("mongo_seq_batches_total", "Batches applied (change stream and backfill).", &["trigger"]);
        let commands = counter("mongo_seq_commands_total", "Database commands issued by the numbering pipeline.", &["trigger", "command"]);
        let errors = counter("mongo_seq_errors_total", "Errors by kind (transient, counter, config, other).", &["trigger", "kind"]);
        let lag = GaugeVec::new(
            Opts::new("mongo_seq_lag_seconds", "Seconds between now and the cluster time of the last processed event."),
            &["trigger"],
        )
        .expect("valid metric");
        registry.register(Box::new(lag.clone())).expect("register metric");
        let gauge = |name: &str, help: &str| {
            let g = IntGaugeVec::new(Opts::new(name, help), &["trigger"]).expect("valid metric");
            registry.register(Box::new(g.clone())).expect("register metric");
            g
        };
        let backfill_remaining = gauge("mongo_seq_backfill_remaining", "Documents the running backfill still has to number.");
        let healthy = gauge("mongo_seq_trigger_healthy", "1 when the trigger is running without error, else 0.");
        Self { registry, events, numbered, prenumbered, skipped, batches, commands, errors, lag, backfill_remaining, healthy }
    }

    /// Counts one command issued for `trigger`.
    pub fn command(&self, trigger: &str, command: &str) {
        self.commands.with_label_values(&[trigger, command]).inc();
    }

    /// The Prometheus text exposition.
    pub fn render(&self) -> String {
        let mut out = Vec::new();
        TextEncoder::new().encode(&self.registry.gather(), &mut out).expect("encode metrics");
        String::from_utf8(out).unwrap_or_default()
    }
}
