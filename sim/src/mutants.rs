//! Known protocol mutants, switched on one at a time, to show the simulation catches them.

use std::fmt;
use std::str::FromStr;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mutant {
    /// Counter updates without the epoch condition (a fenced holder keeps reserving).
    NoEpochCondition,
    /// The resume token stored before the batch is applied.
    TokenBeforeBatch,
    /// A pending intent not completed before new reservations.
    SkipPendingIntent,
    /// A lease renewed without checking its epoch.
    RenewWithoutEpoch,
    /// Counter writes with `w: 1`.
    CounterW1,
}

impl Mutant {
    pub const ALL: [Mutant; 5] = [
        Mutant::NoEpochCondition,
        Mutant::TokenBeforeBatch,
        Mutant::SkipPendingIntent,
        Mutant::RenewWithoutEpoch,
        Mutant::CounterW1,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Mutant::NoEpochCondition => "no-epoch-condition",
            Mutant::TokenBeforeBatch => "token-before-batch",
            Mutant::SkipPendingIntent => "skip-pending-intent",
            Mutant::RenewWithoutEpoch => "renew-without-epoch",
            Mutant::CounterW1 => "counter-w1",
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
        Mutant::ALL
            .into_iter()
            .find(|m| m.name() == s)
            .ok_or_else(|| {
                let known: Vec<&str> = Mutant::ALL.iter().map(|m| m.name()).collect();
                format!("unknown mutant {s:?} (known: {})", known.join(", "))
            })
    }
}
