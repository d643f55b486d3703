//! The readable trace of a schedule: who sent what, what the model did, which fault struck.
//! Recorded only when asked (a failing seed is run again with the trace on: the replay is
//! exact, and the runner checks it finds the same violations).

use std::fmt::Write;

#[derive(Debug, Default)]
pub struct Trace {
    pub enabled: bool,
    lines: Vec<String>,
    /// A running hash of every traced event, on or off: two runs of one seed must agree.
    pub fingerprint: u64,
}

impl Trace {
    pub fn new(enabled: bool) -> Self {
        Self {
            enabled,
            lines: Vec::new(),
            fingerprint: 0xcbf2_9ce4_8422_2325,
        }
    }

    /// Records `what` by `who` at `ms` (simulated milliseconds since the start). `what` is
    /// only formatted when the trace is on.
    pub fn note(&mut self, ms: u64, who: &str, what: impl FnOnce() -> String, kind: u64) {
        self.mix(ms);
        self.mix(kind);
        for b in who.bytes() {
            self.mix(u64::from(b));
        }
        if self.enabled {
            let mut line = String::new();
            let _ = write!(
                line,
                "{:>9}.{:03}s {:<10} {}",
                ms / 1000,
                ms % 1000,
                who,
                what()
            );
            if std::env::var_os("SIM_LIVE").is_some() {
                eprintln!("{line}");
            }
            self.lines.push(line);
        }
    }

    fn mix(&mut self, value: u64) {
        // FNV-1a over the value's bytes.
        for b in value.to_le_bytes() {
            self.fingerprint ^= u64::from(b);
            self.fingerprint = self.fingerprint.wrapping_mul(0x0100_0000_01b3);
        }
    }

    pub fn lines(&self) -> &[String] {
        &self.lines
    }
}
