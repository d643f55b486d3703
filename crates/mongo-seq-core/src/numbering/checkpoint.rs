//! When a change-stream consumer (the sidecar's trigger) stores its resume token.
//!
//! The stored token is where the next holder of the trigger, or this one after a crash, resumes.
//! **Safety:** a token is offered here only once every event before it has been applied
//! (numbered, or left alone as already numbered); a token stored later than that is always
//! safe, because replaying events is idempotent: a redelivered document that holds its number
//! already is left alone (the batch's check for documents numbered meanwhile). So the token
//! need not be written after every batch:
//!
//! ```text
//! batch applied ──▶ due? (≥ `after_batches` since the last store) ── yes ─▶ store
//!                                      └─ no: the newest token waits (unstored)
//! quiet stream  ──▶ unstored batches and ≥ `after_batches` since the last store ─▶ store
//!               └─▶ the stream's token moved and ≥ `when_quiet` since the last store ─▶ store
//! stopping      ──▶ anything unstored ─▶ store
//! ```
//!
//! What a crash costs: the events of at most `after_batches` (a duration) are read and
//! checked again; nothing is numbered twice and nothing is skipped. Times are the caller's
//! monotonic milliseconds (`now_ms`, any origin).

/// The resume-token store policy of one change stream.
#[derive(Debug, Clone)]
pub struct Checkpoint {
    after_batches_ms: u64,
    when_quiet_ms: u64,
    last_store_ms: Option<u64>,
    /// A batch was applied since the last store: its token is newer than the stored one.
    unstored: bool,
}

impl Checkpoint {
    /// Stores after applied batches at most every `after_batches_ms` (0: after every batch),
    /// and on a quiet stream the token it moved to at most every `when_quiet_ms`.
    pub fn new(after_batches_ms: u64, when_quiet_ms: u64) -> Self {
        Self {
            after_batches_ms,
            when_quiet_ms,
            last_store_ms: None,
            unstored: false,
        }
    }

    /// A batch was applied; its token is the newest. Whether to store it now.
    pub fn batch_applied(&mut self, now_ms: u64) -> bool {
        self.unstored = true;
        self.elapsed(now_ms, self.after_batches_ms)
    }

    /// The stream had nothing; `moved`: its token is past the one stored. Whether to store the
    /// stream's token now.
    pub fn quiet(&self, now_ms: u64, moved: bool) -> bool {
        (self.unstored && self.elapsed(now_ms, self.after_batches_ms))
            || (moved && self.elapsed(now_ms, self.when_quiet_ms))
    }

    /// Stopping (a graceful shutdown): whether an applied batch's token still waits to be stored.
    pub fn unstored(&self) -> bool {
        self.unstored
    }

    /// The newest token was stored at `now_ms`.
    pub fn stored(&mut self, now_ms: u64) {
        self.last_store_ms = Some(now_ms);
        self.unstored = false;
    }

    fn elapsed(&self, now_ms: u64, interval_ms: u64) -> bool {
        self.last_store_ms
            .map_or(true, |at| now_ms.saturating_sub(at) >= interval_ms)
    }
}

#[cfg(test)]
mod tests {
    use super::Checkpoint;

    #[test]
    fn batches_store_at_most_once_per_interval() {
        let mut checkpoint = Checkpoint::new(1000, 10_000);
        assert!(checkpoint.batch_applied(0), "the first batch stores");
        checkpoint.stored(0);
        assert!(!checkpoint.batch_applied(300));
        assert!(!checkpoint.batch_applied(999));
        assert!(checkpoint.unstored());
        assert!(checkpoint.batch_applied(1000));
        checkpoint.stored(1000);
        assert!(!checkpoint.unstored());
    }

    #[test]
    fn zero_interval_stores_every_batch() {
        let mut checkpoint = Checkpoint::new(0, 10_000);
        for now in [0, 0, 1, 1] {
            assert!(checkpoint.batch_applied(now));
            checkpoint.stored(now);
        }
    }

    #[test]
    fn a_quiet_stream_stores_what_batches_left_then_what_it_moved_to() {
        let mut checkpoint = Checkpoint::new(1000, 10_000);
        assert!(checkpoint.batch_applied(0));
        checkpoint.stored(0);
        assert!(!checkpoint.batch_applied(500));
        assert!(!checkpoint.quiet(900, false), "not due yet");
        assert!(
            checkpoint.quiet(1000, false),
            "an applied batch's token is due"
        );
        checkpoint.stored(1000);
        assert!(
            !checkpoint.quiet(5000, true),
            "moved, but the quiet interval has not passed"
        );
        assert!(!checkpoint.quiet(11_000, false), "nothing moved");
        assert!(checkpoint.quiet(11_000, true));
    }

    #[test]
    fn nothing_stored_yet_is_always_due() {
        let checkpoint = Checkpoint::new(1000, 10_000);
        assert!(checkpoint.quiet(0, true));
        assert!(!checkpoint.quiet(0, false));
        assert!(!checkpoint.unstored());
    }
}
