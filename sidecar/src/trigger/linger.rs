//! Whether a batch that is not full waits for more events: the insert rate seen on the stream
//! ([`ArrivalRate`]) and the wait it implies ([`linger`]).

use std::time::Duration;

use tokio::time::Instant;

/// How far back the insert rate looks, roughly (older reads weigh exponentially less).
const HORIZON_SECS: f64 = 1.0;

/// Inserts per second seen on the stream, over about the last second of reads. One read's own
/// window is not enough: on a busy stream reads come every few milliseconds with a handful of
/// events each, and how many fell in one window says little (8 events in 20 ms reads as 400/s
/// in a stream of 1,000/s), so a rate near the bar to wait was mostly read below it.
#[derive(Debug, Clone)]
pub(super) struct ArrivalRate {
    last_read: Instant,
    /// Events and seconds seen, each read's weighed by `e^(-age / HORIZON_SECS)`.
    events: f64,
    seconds: f64,
}

impl ArrivalRate {
    /// No events seen yet; the first read's window starts at `now` (the stream opened).
    pub(super) fn new(now: Instant) -> Self {
        Self {
            last_read: now,
            events: 0.0,
            seconds: 0.0,
        }
    }

    /// A read that brought `events` (empty reads too: a quiet stream's rate falls) at `now`.
    pub(super) fn read(&mut self, events: usize, now: Instant) {
        let window = now.saturating_duration_since(self.last_read).as_secs_f64();
        self.last_read = now;
        let keep = (-window / HORIZON_SECS).exp();
        #[allow(clippy::cast_precision_loss)] // event counts
        let events = events as f64;
        self.events = self.events * keep + events;
        self.seconds = self.seconds * keep + window;
    }

    /// Events per second (0 before any time has passed).
    pub(super) fn per_sec(&self) -> f64 {
        if self.seconds <= 0.0 {
            return 0.0;
        }
        self.events / self.seconds
    }
}

/// How long a batch of `got` events, `missing` short of full, waits for more: the time the
/// stream's rate (`per_sec`) needs to bring the missing ones, at most `cap`. Nothing when the
/// batch is full, or when even that wait would not bring it to a quarter full: a trickle or a
/// moderate rate (for batch 1,000 and the default 500 ms, below ~500 inserts/s) is numbered at
/// once, since latency matters more there than the few commands a bigger batch would save.
pub(super) fn linger(got: usize, missing: usize, per_sec: f64, cap: Duration) -> Duration {
    if missing == 0 || cap.is_zero() || per_sec <= 0.0 {
        return Duration::ZERO;
    }
    #[allow(clippy::cast_precision_loss)] // event counts
    let (got, missing) = (got as f64, missing as f64);
    let fill = (missing / per_sec).min(cap.as_secs_f64());
    if got + per_sec * fill < (got + missing) / 4.0 {
        return Duration::ZERO;
    }
    Duration::from_secs_f64(fill)
}

#[cfg(test)]
mod tests {
    use super::*;

    const CAP: Duration = Duration::from_millis(500);

    /// The rate after reads of `events` every `every_ms`, for `seconds`.
    fn steady(reads: &[(usize, u64)], seconds: u64) -> ArrivalRate {
        let start = Instant::now();
        let mut rate = ArrivalRate::new(start);
        let mut at = start;
        while at < start + Duration::from_secs(seconds) {
            for &(events, every_ms) in reads {
                at += Duration::from_millis(every_ms);
                rate.read(events, at);
            }
        }
        rate
    }

    #[test]
    fn a_full_batch_or_no_delay_does_not_wait() {
        assert_eq!(linger(1000, 0, 5000.0, CAP), Duration::ZERO);
        assert_eq!(linger(10, 990, 5000.0, Duration::ZERO), Duration::ZERO);
        assert_eq!(linger(10, 990, 0.0, CAP), Duration::ZERO);
    }

    #[test]
    fn a_busy_stream_waits_as_long_as_its_rate_needs_to_fill_the_batch() {
        // 1,500/s: 850 missing need 567 ms, capped at 500 ms.
        assert_eq!(linger(150, 850, 1500.0, CAP), CAP);
        // 5,000/s: 500 missing need 100 ms.
        let wait = linger(500, 500, 5000.0, CAP);
        assert!((wait.as_secs_f64() - 0.1).abs() < 1e-9, "{wait:?}");
    }

    #[test]
    fn a_trickle_or_a_moderate_rate_is_numbered_at_once() {
        // One event in 5 s: not one more expected within the cap.
        assert_eq!(linger(1, 999, 0.2, CAP), Duration::ZERO);
        // 200/s: 500 ms bring 100 more, far from a quarter of 1,000.
        assert_eq!(linger(20, 980, 200.0, CAP), Duration::ZERO);
    }

    #[test]
    fn a_stream_of_1000_per_second_read_in_small_uneven_windows_waits() {
        // 1,000/s read every 5 to 22 ms, a handful of events each (what the benchmark's
        // 1,000/s run showed): each window alone reads 385–3,400/s; over a second, 1,000/s.
        let rate = steady(&[(8, 20), (30, 22), (5, 13), (17, 5)], 5);
        assert!((rate.per_sec() - 1000.0).abs() < 20.0, "{}", rate.per_sec());
        assert_eq!(linger(8, 992, rate.per_sec(), CAP), CAP);
        // Read from the last window alone (8 events in 20 ms: 400/s), it would not wait.
        assert_eq!(linger(8, 992, 400.0, CAP), Duration::ZERO);
    }

    #[test]
    fn the_rate_follows_the_stream_within_about_a_second() {
        let start = Instant::now();
        let mut rate = ArrivalRate::new(start);
        for i in 1..=100 {
            rate.read(20, start + Duration::from_millis(i * 10)); // 2,000/s for 1 s
        }
        assert!((rate.per_sec() - 2000.0).abs() < 1.0, "{}", rate.per_sec());
        for i in 101..=400 {
            rate.read(0, start + Duration::from_millis(i * 10)); // then quiet for 3 s
        }
        assert!(rate.per_sec() < 200.0, "{}", rate.per_sec());
        assert_eq!(linger(1, 999, rate.per_sec(), CAP), Duration::ZERO);
    }
}
