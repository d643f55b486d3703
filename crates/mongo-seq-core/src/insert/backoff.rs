//! Backoff between the attempts of a loop that lost a race (the optimistic insert): exponential
//! with full jitter. The core says how long the caller may wait — a window; the caller draws a
//! duration uniformly from it and sleeps (the core reads no clock and draws no random numbers).
//!
//! Without a wait, the processes that collided on one candidate all read the same largest
//! number again and collide again; spreading their retries over a window that doubles with
//! each lost race lets one of them win each round. Full jitter (`0..=cap`) spreads them best.

use serde::{Deserialize, Serialize};

/// The wait before the next attempt, in milliseconds: draw uniformly from `min_ms..=max_ms`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WaitWindow {
    pub min_ms: u64,
    pub max_ms: u64,
}

/// An exponential backoff schedule: the window after the `n`-th lost race is
/// `0..=min(max_ms, first_ms · 2^(n-1))`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Backoff {
    pub first_ms: u64,
    pub max_ms: u64,
}

impl Backoff {
    /// The optimistic insert loop's schedule: 2, 4, 8, … up to 100 ms.
    pub const OPTIMISTIC: Self = Self {
        first_ms: 2,
        max_ms: 100,
    };

    /// The window to wait in after the `lost`-th lost race (1 for the first).
    pub fn window(&self, lost: u32) -> WaitWindow {
        let doublings = lost.saturating_sub(1).min(63);
        let cap = self
            .first_ms
            .checked_mul(1_u64 << doublings)
            .map_or(self.max_ms, |cap| cap.min(self.max_ms));
        WaitWindow {
            min_ms: 0,
            max_ms: cap,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn doubles_up_to_the_cap() {
        let caps: Vec<u64> = (1..=9)
            .map(|lost| Backoff::OPTIMISTIC.window(lost).max_ms)
            .collect();
        assert_eq!(caps, [2, 4, 8, 16, 32, 64, 100, 100, 100]);
        assert_eq!(Backoff::OPTIMISTIC.window(0).max_ms, 2);
        assert_eq!(Backoff::OPTIMISTIC.window(u32::MAX).max_ms, 100);
        assert_eq!(Backoff::OPTIMISTIC.window(5).min_ms, 0);
    }
}
