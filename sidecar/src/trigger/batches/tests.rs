//! The batch loop's waits: how long a read waits to gather, a batch to fill, a stream after
//! an empty read.

use super::*;

const POLL: Duration = Duration::from_millis(100);
const CAP: Duration = Duration::from_millis(500);

#[test]
fn a_full_batch_or_no_delay_does_not_wait() {
    assert_eq!(linger(1000, 0, 100_000.0, CAP), Duration::ZERO);
    assert_eq!(linger(10, 990, 100_000.0, Duration::ZERO), Duration::ZERO);
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
    // One event in 5 s: not one more expected within the cap; nothing seen: no wait.
    assert_eq!(linger(1, 999, 0.2, CAP), Duration::ZERO);
    assert_eq!(linger(1, 999, 0.0, CAP), Duration::ZERO);
    // 200/s: 500 ms bring 100 more, far from half of 1,000.
    assert_eq!(linger(20, 980, 200.0, CAP), Duration::ZERO);
    // 500/s: 500 ms bring 250, not half of 1,000.
    assert_eq!(linger(5, 995, 500.0, CAP), Duration::ZERO);
}

#[test]
fn a_backlog_that_is_already_a_batch_does_not_wait() {
    // 500/s and 300 events waiting (after a slow write): 500 ms would bring 250 more.
    assert_eq!(linger(300, 700, 500.0, CAP), Duration::ZERO);
    // 2,000/s and 300 waiting: the wait brings 700, more than the batch holds.
    assert!(linger(300, 700, 2000.0, CAP) > Duration::ZERO);
}

#[test]
fn a_burst_in_a_moderate_stream_is_not_a_sustained_rate() {
    // 500/s read every 20 ms for 3 s, then writers catching up: 1,500/s for 250 ms.
    let start = Instant::now();
    let mut reads = Reads::new();
    reads.sent = start;
    let mut at = 0;
    for _ in 0..150 {
        at += 20;
        reads.record(start + Duration::from_millis(at), 10);
    }
    for _ in 0..12 {
        at += 20;
        reads.record(start + Duration::from_millis(at), 30);
    }
    assert!(reads.per_sec > 1000.0, "{}", reads.per_sec);
    assert!(
        reads.sustained_per_sec < 700.0,
        "{}",
        reads.sustained_per_sec
    );
    // A batch of what arrived during a write (about 30 events) does not wait.
    let got = 30;
    assert_eq!(
        linger(got, 1000 - got, reads.sustained_per_sec, CAP),
        Duration::ZERO
    );
    // Still busy three seconds later: 1,500/s is sustained, and batches wait.
    for _ in 0..150 {
        at += 20;
        reads.record(start + Duration::from_millis(at), 30);
    }
    assert!(
        reads.sustained_per_sec > 1200.0,
        "{}",
        reads.sustained_per_sec
    );
    assert!(linger(got, 1000 - got, reads.sustained_per_sec, CAP) > Duration::ZERO);
}

#[test]
fn the_rate_is_averaged_over_a_window_not_taken_between_two_reads() {
    // 500/s read every 10 ms for a second, then two reads 1 ms apart: still about 500/s.
    let start = Instant::now();
    let mut reads = Reads::new();
    reads.sent = start;
    for i in 1..=100 {
        reads.record(start + Duration::from_millis(10 * i), 5);
    }
    reads.record(start + Duration::from_millis(1001), 5);
    assert!((450.0..550.0).contains(&reads.per_sec), "{}", reads.per_sec);
    // A backlog after a slow write (300 events after 600 ms): 500/s, not a burst.
    reads.record(start + Duration::from_millis(1601), 300);
    assert!((450.0..550.0).contains(&reads.per_sec), "{}", reads.per_sec);
    // A stream that dried up: half a second later the rate is about an eighth of it.
    reads.record(start + Duration::from_millis(2101), 0);
    assert!(reads.per_sec < 100.0, "{}", reads.per_sec);
}

#[test]
fn a_moderate_rate_gathers_a_few_events_before_a_read() {
    let linger = Duration::from_millis(10);
    // 500/s: 8 events need 16 ms, capped at 10 ms (about 5 events).
    assert_eq!(gather_time(500.0, linger), linger);
    // 2,000/s: 4 ms bring 8.
    let wait = gather_time(2000.0, linger);
    assert!((wait.as_secs_f64() - 0.004).abs() < 1e-9, "{wait:?}");
    // 100,000/s: a fraction of a millisecond (a write gathers more anyway).
    assert!(gather_time(100_000.0, linger) < Duration::from_millis(1));
}

#[test]
fn a_trickle_or_no_linger_reads_at_once() {
    let linger = Duration::from_millis(10);
    // 100/s: one event in 10 ms, not worth the wait.
    assert_eq!(gather_time(100.0, linger), Duration::ZERO);
    assert_eq!(gather_time(0.0, linger), Duration::ZERO);
    assert_eq!(gather_time(500.0, Duration::ZERO), Duration::ZERO);
}

#[test]
fn the_wait_to_gather_counts_from_the_last_read() {
    // The write in flight took longer than the wait: no more waiting.
    let reads = Reads {
        sent: Instant::now() - Duration::from_millis(50),
        per_sec: 500.0,
        sustained_per_sec: 500.0,
        took: Duration::from_millis(1),
        events_at: None,
    };
    assert_eq!(
        reads.wait_to_gather(Duration::from_millis(10)),
        Duration::ZERO
    );
}

#[test]
fn a_quiet_stream_is_read_every_poll_interval() {
    assert_eq!(quiet_wait(Duration::from_millis(2), None, POLL), POLL);
    // The last events are older than a poll interval.
    let long_ago = Some(Duration::from_secs(3));
    assert_eq!(quiet_wait(Duration::from_millis(2), long_ago, POLL), POLL);
}

#[test]
fn a_stream_caught_up_with_arriving_inserts_is_read_again_after_as_long_as_a_read_takes() {
    let just_now = Some(Duration::from_millis(5));
    assert_eq!(
        quiet_wait(Duration::from_millis(3), just_now, POLL),
        Duration::from_millis(3)
    );
    // Never a busy loop, never longer than the poll interval.
    assert_eq!(quiet_wait(Duration::ZERO, just_now, POLL), MIN_POLL);
    assert_eq!(quiet_wait(Duration::from_secs(1), just_now, POLL), POLL);
}

#[test]
fn a_server_that_waited_inside_its_get_more_is_read_again_at_once() {
    // The wait counts from the empty read's start: a real server's `max_await` covers it.
    let reads = Reads {
        sent: Instant::now() - Duration::from_millis(500),
        per_sec: 0.0,
        sustained_per_sec: 0.0,
        took: Duration::from_millis(500),
        events_at: None,
    };
    assert_eq!(reads.wait_after_empty(POLL), Duration::ZERO);
}
