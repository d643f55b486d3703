//! This process's clocks: the precise wall clock (`now_ms`), and the coarse one the warm path
//! of a periodic `next()` reads.
//!
//! **The coarse clock.** The warm path of `next()` reads Linux's `CLOCK_REALTIME_COARSE` (the
//! kernel's wall time as of its last tick, a few ns through the vDSO, against ~20 ns or more for
//! the precise clock) and uses the window only when the whole interval the precise time can be in,
//! `[reading, reading + lag]`, is inside it. A reading is never ahead of the precise clock, so
//! `from` needs no margin; it is behind by the time since the kernel last updated it (one tick,
//! 1–10 ms, normally), and `lag` allows `COARSE_LAG_MS` (1 s, a hundred ticks or more, for an
//! update that comes late) before the period's end. In that last second,
//! and in the first tick of a period, the precise clock decides: a number issued at
//! 23:59:59.999 on 31 December by the precise clock is numbered in that year.

/// Milliseconds since the epoch, by this process's clock.
pub(crate) fn now_ms() -> i64 {
    let now = std::time::SystemTime::now();
    match now.duration_since(std::time::UNIX_EPOCH) {
        Ok(after) => i64::try_from(after.as_millis()).unwrap_or(i64::MAX),
        Err(before) => i64::try_from(before.duration().as_millis()).map_or(i64::MIN, |ms| -ms),
    }
}

/// The coarse real-time clock (Linux's `CLOCK_REALTIME_COARSE`: the time of the last tick, read
/// without the hardware counter) and how far behind the precise clock it may be, or `None`
/// where there is none (then the warm path reads the precise clock).
#[cfg(target_os = "linux")]
pub(crate) fn coarse_clock() -> Option<CoarseClock> {
    use rustix::time::{clock_getres, ClockId};
    let tick = clock_getres(ClockId::RealtimeCoarse);
    let tick_ms = tick.tv_sec.saturating_mul(1000) + tick.tv_nsec / 1_000_000 + 1;
    // Behind by at most one tick (a few when a CPU stalls); a hundred ticks and at least 1 s.
    Some(CoarseClock {
        lag_ms: tick_ms.saturating_mul(100).max(COARSE_LAG_MS),
    })
}

#[cfg(not(target_os = "linux"))]
pub(crate) fn coarse_clock() -> Option<CoarseClock> {
    None
}

/// The least margin the coarse clock keeps before a period's end (see the module docs).
pub(crate) const COARSE_LAG_MS: i64 = 1_000;

/// See [`coarse_clock`].
#[derive(Debug, Clone, Copy)]
pub(crate) struct CoarseClock {
    /// How far behind the precise clock a reading may be, in ms.
    pub(crate) lag_ms: i64,
}

impl CoarseClock {
    /// A reading, in ms since the epoch: now is in `[reading, reading + lag_ms]`.
    #[cfg(target_os = "linux")]
    pub(crate) fn now_ms(self) -> i64 {
        let now = rustix::time::clock_gettime(rustix::time::ClockId::RealtimeCoarse);
        now.tv_sec.saturating_mul(1000) + now.tv_nsec / 1_000_000
    }

    #[cfg(not(target_os = "linux"))]
    pub(crate) fn now_ms(self) -> i64 {
        now_ms()
    }
}
