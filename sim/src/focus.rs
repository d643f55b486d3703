//! Focused schedules: the same seeds and the same product code, with the fault rates drawn
//! toward one rare interleaving (FoundationDB's "buggify", per schedule). A mutant whose
//! interleaving common schedules meet about once in thousands is hunted on schedules focused on
//! it, so the hunt catches it within its budget whatever the product's commands are, instead of
//! on one listed seed that any change to those commands moves.

use std::fmt;
use std::str::FromStr;

use crate::world::Config;

/// What a focused schedule stresses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Focus {
    /// Sidecar processes frozen and replaced by a new process with their instance id, which
    /// takes the lease over at once; the frozen one wakes up later with its batch in flight (a
    /// stale holder completing an intent its successor finished: `unfenced-completion`).
    StaleIncarnations,
    /// A sealed gapless series' newest documents deleted often, each number voided at once by a
    /// clerk (the void races the deletion's record), and numbers moved by completions
    /// (`seal-before-final`, `void-outside-chain`).
    SealedDeletions,
}

impl Focus {
    pub const ALL: [Focus; 2] = [Focus::StaleIncarnations, Focus::SealedDeletions];

    pub fn name(self) -> &'static str {
        match self {
            Focus::StaleIncarnations => "stale-incarnations",
            Focus::SealedDeletions => "sealed-deletions",
        }
    }

    /// Redraws nothing: overrides the rates a seed drew (every other draw stays the seed's).
    pub fn apply(self, config: &mut Config) {
        match self {
            Focus::StaleIncarnations => {
                // Measured on the mutant unfenced-completion (seeds 1..1,000): 15, 1 schedule in
                // 67 catches it (common schedules: none in 15,000 since the block counter's
                // give-back). What it takes: two processes of one instance id running side by
                // side, one recovering from a fault (so reading intents) while the other is
                // between an intent's moves and its close, and a document of that intent
                // deleted in between.
                config.sidecars = config.sidecars.max(2);
                config.sidecar_crash_every_s = 6.0;
                config.replaced_while_frozen = 0.9;
                config.frozen_killed_after_ms = (5_000, 15_000);
                config.wire_fault_rate = 0.08;
                config.failover_every_s = 3.0;
                config.delete_pause_ms = (50, 400);
                config.delete_newest = Some(12);
                config.delete_gapless_only = true;
            }
            Focus::SealedDeletions => {
                config.ledger = true;
                config.delete_pause_ms = (20, 200);
                config.delete_newest = Some(3);
                config.delete_gapless_only = true;
                config.void_after_delete = true;
            }
        }
    }
}

impl fmt::Display for Focus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Focus {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Focus::ALL
            .into_iter()
            .find(|focus| focus.name() == s)
            .ok_or_else(|| {
                let names: Vec<_> = Focus::ALL.iter().map(|f| f.name()).collect();
                format!("unknown focus {s:?}: expected one of {}", names.join(", "))
            })
    }
}
