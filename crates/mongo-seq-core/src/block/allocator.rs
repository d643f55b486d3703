//! Hi/lo block allocation: reserve many numbers per round trip, hand them out locally.
//!
//! [`BlockAllocator`] is a plain struct (JS is single-threaded); [`SharedBlockAllocator`]
//! wraps it in a `Mutex` for Rust users. Neither does I/O: when the block runs dry the caller
//! runs a [`Reservation`](crate::Reservation) with [`BlockAllocator::refill_request`] and
//! passes the resulting range to [`BlockAllocator::refill`].
//!
//! Numbers of a block that is never fully used (process exit, `discard` after `setNext`)
//! are lost: a gap in the sequence, as with PostgreSQL's `CACHE`. Across processes, numbers
//! are unique but not in global order.

use std::sync::Mutex;

use crate::counter::range::ReservedRange;
use crate::counter::reservation::ReserveRequest;
use crate::error::SeqError;

/// The numbers still held locally.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlockAllocator {
    block: u64,
    next: i64,
    step: i64,
    remaining: u64,
}

impl BlockAllocator {
    /// An empty allocator refilling `block` numbers at a time (≥ 1).
    pub fn new(block: u64) -> Result<Self, SeqError> {
        if block == 0 {
            return Err(SeqError::invalid_argument("block", "must be at least 1"));
        }
        Ok(Self {
            block,
            next: 0,
            step: 1,
            remaining: 0,
        })
    }

    /// Numbers left before a refill is needed.
    pub fn remaining(&self) -> u64 {
        self.remaining
    }

    /// True when the next `next()` would return `None`: time to refill.
    pub fn is_empty(&self) -> bool {
        self.remaining == 0
    }

    /// The reservation to run so that `wanted` more numbers can be served: the missing
    /// amount, but at least one block; `minCount: 1` so the tail before a bound is usable.
    pub fn refill_request(&self, counter_id: &str, wanted: u64) -> ReserveRequest {
        let missing = wanted.saturating_sub(self.remaining).max(1);
        let mut request = ReserveRequest::new(counter_id, missing.max(self.block));
        request.min_count = Some(1);
        request
    }

    /// Loads a freshly reserved range. Only allowed when empty, so no number is dropped.
    pub fn refill(&mut self, range: ReservedRange) -> Result<(), SeqError> {
        range.validate()?;
        if self.remaining > 0 {
            return Err(SeqError::invalid_argument(
                "range",
                format!(
                    "the block still holds {} number(s); take or discard them first",
                    self.remaining
                ),
            ));
        }
        self.next = range.first;
        self.step = range.step;
        self.remaining = range.count;
        Ok(())
    }

    /// The number `next()` would return, without taking it.
    pub fn peek(&self) -> Option<i64> {
        (self.remaining > 0).then_some(self.next)
    }

    /// The next number, or `None` when a refill is needed. (Named like the JS API; not an
    /// `Iterator` because `None` means "refill", not "finished".)
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> Option<i64> {
        self.take(1).map(|range| range.first)
    }

    /// Up to `max` consecutive numbers of the block as a range (fewer when the block runs
    /// out), or `None` when empty or `max` is 0.
    pub fn take(&mut self, max: u64) -> Option<ReservedRange> {
        let count = max.min(self.remaining);
        if count == 0 {
            return None;
        }
        let offset = i64::try_from(count.saturating_sub(1))
            .ok()?
            .checked_mul(self.step)?;
        let range = ReservedRange {
            first: self.next,
            last: self.next.checked_add(offset)?,
            step: self.step,
            count,
        };
        self.remaining = self.remaining.saturating_sub(count);
        if self.remaining > 0 {
            self.next = range.last.checked_add(self.step)?;
        }
        Some(range)
    }

    /// Drops the rest of the block (e.g. after `setNext`); returns how many were dropped.
    pub fn discard(&mut self) -> u64 {
        std::mem::take(&mut self.remaining)
    }
}

/// [`BlockAllocator`] behind a `Mutex`, for sharing across threads. A poisoned lock is
/// recovered (the state is always consistent between calls).
#[derive(Debug)]
pub struct SharedBlockAllocator {
    inner: Mutex<BlockAllocator>,
}

impl SharedBlockAllocator {
    pub fn new(block: u64) -> Result<Self, SeqError> {
        Ok(Self {
            inner: Mutex::new(BlockAllocator::new(block)?),
        })
    }

    fn with<R>(&self, f: impl FnOnce(&mut BlockAllocator) -> R) -> R {
        let mut guard = self
            .inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        f(&mut guard)
    }

    pub fn remaining(&self) -> u64 {
        self.with(|a| a.remaining())
    }
    pub fn is_empty(&self) -> bool {
        self.with(|a| a.is_empty())
    }
    pub fn refill_request(&self, counter_id: &str, wanted: u64) -> ReserveRequest {
        self.with(|a| a.refill_request(counter_id, wanted))
    }
    pub fn refill(&self, range: ReservedRange) -> Result<(), SeqError> {
        self.with(|a| a.refill(range))
    }
    pub fn next(&self) -> Option<i64> {
        self.with(BlockAllocator::next)
    }
    pub fn take(&self, max: u64) -> Option<ReservedRange> {
        self.with(|a| a.take(max))
    }
    pub fn discard(&self) -> u64 {
        self.with(BlockAllocator::discard)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hands_out_in_order() {
        let mut block = BlockAllocator::new(3).expect("valid");
        assert_eq!(block.next(), None);
        block
            .refill(ReservedRange {
                first: 10,
                last: 14,
                step: 2,
                count: 3,
            })
            .expect("valid");
        assert_eq!(block.next(), Some(10));
        assert_eq!(
            block.take(5),
            Some(ReservedRange {
                first: 12,
                last: 14,
                step: 2,
                count: 2
            })
        );
        assert!(block.is_empty());
        assert_eq!(block.refill_request("c", 1).count, 3);
        assert_eq!(block.refill_request("c", 7).count, 7);
    }

    #[test]
    fn edge_of_i64() {
        let mut block = BlockAllocator::new(1).expect("valid");
        block
            .refill(ReservedRange {
                first: i64::MAX - 1,
                last: i64::MAX,
                step: 1,
                count: 2,
            })
            .expect("valid");
        assert_eq!(block.next(), Some(i64::MAX - 1));
        assert_eq!(block.next(), Some(i64::MAX));
        assert_eq!(block.next(), None);
    }

    #[test]
    fn shared_across_threads() {
        let shared = std::sync::Arc::new(SharedBlockAllocator::new(1).expect("valid"));
        shared
            .refill(ReservedRange {
                first: 1,
                last: 100,
                step: 1,
                count: 100,
            })
            .expect("valid");
        let handles: Vec<_> = (0..4)
            .map(|_| {
                let shared = std::sync::Arc::clone(&shared);
                std::thread::spawn(move || {
                    (0..25).filter_map(|_| shared.next()).collect::<Vec<_>>()
                })
            })
            .collect();
        let mut all: Vec<i64> = handles
            .into_iter()
            .flat_map(|h| h.join().unwrap_or_default())
            .collect();
        all.sort_unstable();
        assert_eq!(all, (1..=100).collect::<Vec<_>>());
    }
}
