//! Known protocol mutants, for the simulator (`sim/`) to show it catches each one.
//!
//! A mutant is only compiled with the `mutants` feature, which only the simulator's crate
//! enables; without it [`active`] is a constant `false` and every mutant branch is dead code the
//! compiler removes. With it, a mutant is off until the simulator switches one on for its own
//! thread (`switch`, with the feature): a build that merely unifies the feature (a workspace build) still runs
//! the honest protocol.

use std::fmt;
use std::str::FromStr;

/// One known way to get the protocol wrong.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Mutant {
    /// Counter updates without the epoch condition (a fenced holder keeps reserving).
    NoEpochCondition,
    /// The resume token stored before the batch is applied.
    TokenBeforeBatch,
    /// The token of a batch read ahead (while the previous one was written) taken as applied
    /// with the previous batch, so stored before its own documents are numbered.
    ReadAheadToken,
    /// A pending intent not completed before new reservations.
    SkipPendingIntent,
    /// A lease renewed without checking its epoch.
    RenewWithoutEpoch,
    /// Counter writes with `w: 1`.
    CounterW1,
    /// A gapless intent completed without claiming it on the counter and without fencing its
    /// documents' moves (a stale holder moves numbers of an intent its successor finished).
    UnfencedCompletion,
    /// The sidecar decides that an event's document needs no number (numbered, or gone) on a
    /// read that is not causally after the event (no `afterClusterTime`: the product before
    /// the stale-read fixes).
    UnanchoredSkipRead,
    /// A first number written without the numbering's condition (a document seen through a
    /// stale `updateLookup`, a draft, gets numbered).
    UnconditionedNumbering,
    /// A gapless plan's reads of its documents anchored at the events only, not also after the
    /// plan's own writes (a secondary may answer from before them: the product before the fix
    /// of seed 8,234,182).
    ReadBeforeOwnWrites,
    /// A reservation without its counter definition's condition: a process with
    /// other options reserves from a counter another definition numbers.
    IgnoreDefinition,
    /// A gapless trigger does not record a deleted document's number in the ledger.
    SkipDeletionRecord,
    /// A trigger's batch reads anchored at the batch's events only, not also after the
    /// trigger's earlier writes to its documents (with `on = "match"`, a document numbered by
    /// one batch comes again in the next, and a secondary may answer from before the number:
    /// the product before the fix of simulator CI seed 1,287).
    BatchReadBeforeOwnWrites,
    /// A sealed series' seals written with the numbers, before the intent is cleared (a number
    /// a completion later moves keeps the seal of the number it held first).
    SealBeforeFinal,
    /// A void of a sealed series recorded without its link in the chain.
    VoidOutsideChain,
}

impl Mutant {
    /// Every mutant, the names [`FromStr`] reads.
    pub const KNOWN: [Mutant; 15] = [
        Mutant::NoEpochCondition,
        Mutant::TokenBeforeBatch,
        Mutant::ReadAheadToken,
        Mutant::SkipPendingIntent,
        Mutant::RenewWithoutEpoch,
        Mutant::CounterW1,
        Mutant::UnfencedCompletion,
        Mutant::UnanchoredSkipRead,
        Mutant::UnconditionedNumbering,
        Mutant::ReadBeforeOwnWrites,
        Mutant::IgnoreDefinition,
        Mutant::SkipDeletionRecord,
        Mutant::BatchReadBeforeOwnWrites,
        Mutant::SealBeforeFinal,
        Mutant::VoidOutsideChain,
    ];

    /// The mutants the simulator's workload can catch (its mutant check runs each; every
    /// known one: `UnconditionedNumbering` by the `on = "match"` triggers).
    pub const ALL: [Mutant; 15] = Mutant::KNOWN;

    pub fn name(self) -> &'static str {
        match self {
            Mutant::NoEpochCondition => "no-epoch-condition",
            Mutant::TokenBeforeBatch => "token-before-batch",
            Mutant::ReadAheadToken => "read-ahead-token",
            Mutant::SkipPendingIntent => "skip-pending-intent",
            Mutant::RenewWithoutEpoch => "renew-without-epoch",
            Mutant::CounterW1 => "counter-w1",
            Mutant::UnfencedCompletion => "unfenced-completion",
            Mutant::UnanchoredSkipRead => "unanchored-skip-read",
            Mutant::UnconditionedNumbering => "unconditioned-numbering",
            Mutant::ReadBeforeOwnWrites => "read-before-own-writes",
            Mutant::IgnoreDefinition => "ignore-definition",
            Mutant::SkipDeletionRecord => "skip-deletion-record",
            Mutant::BatchReadBeforeOwnWrites => "batch-read-before-own-writes",
            Mutant::SealBeforeFinal => "seal-before-final",
            Mutant::VoidOutsideChain => "void-outside-chain",
        }
    }
}

impl fmt::Display for Mutant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Mutant {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Mutant::KNOWN
            .into_iter()
            .find(|m| m.name() == s)
            .ok_or_else(|| {
                let known: Vec<&str> = Mutant::KNOWN.iter().map(|m| m.name()).collect();
                format!("unknown mutant {s:?} (known: {})", known.join(", "))
            })
    }
}

#[cfg(feature = "mutants")]
thread_local! {
    static ACTIVE: std::cell::Cell<Option<Mutant>> = const { std::cell::Cell::new(None) };
}

/// Whether `mutant` is switched on (always `false` without the `mutants` feature).
#[inline]
pub fn active(mutant: Mutant) -> bool {
    #[cfg(feature = "mutants")]
    {
        ACTIVE.with(|a| a.get() == Some(mutant))
    }
    #[cfg(not(feature = "mutants"))]
    {
        let _ = mutant;
        false
    }
}

/// Switches `mutant` on (or every mutant off) for the calling thread.
#[cfg(feature = "mutants")]
pub fn switch(mutant: Option<Mutant>) {
    ACTIVE.with(|a| a.set(mutant));
}
