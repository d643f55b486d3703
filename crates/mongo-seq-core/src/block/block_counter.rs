//! `BlockCounter`: one counter's numbers as a client process hands them out — the block it
//! holds, the callers waiting for numbers, the refill in flight, and the `setNext` generation.
//! No I/O: a refill is a [`Reservation`] the caller runs with its driver.
//!
//! ```text
//! take(n) ──▶ the block holds n and nobody waits ──▶ numbers (no round trip)
//!    │
//!    └──▶ otherwise: what the block holds now, and a ticket for the rest (queued in order)
//! refill(ticket) ──▶ a Reservation to run (none while one is in flight: wait for it)
//!    ├─ done ──▶ refilled(id, range): waiters served in arrival order ──▶ ready(ticket)
//!    └─ failed ─▶ refill_failed(id): the waiter that ran it gives up, the numbers it was
//!                given go back (first in line); the others run their own
//! discard() (after setNext): the block is dropped and the refill in flight no longer counts
//! withdraw(ticket) (a caller gone, e.g. a cancelled Rust future): out of the queue; what it
//!    was given is dropped (a gap); a refill it runs stays in flight and serves the others
//!
//! refillAhead: true ──▶ take_one() says no once half the block is gone (nobody waiting, no refill
//!    in flight) ──▶ take(n) serves the caller ──▶ refill_ahead(): a Reservation nobody waits for
//!    └─ done: the range waits behind the block ("ahead") / failed: nothing (the next caller who
//!       finds the block dry runs its own refill and sees the error)
//! ```
//!
//! **Refilling ahead** (`refillAhead`, `block` ≥ 2). Without it, the caller who finds the block
//! dry, and every caller after it, waits one round trip per `block` numbers. With it, the next
//! block is reserved when half of the current one is left, so callers find numbers in hand
//! unless they take half a block faster than one round trip. One refill is in flight at a time.
//! The cost: a process holds up to one and a half blocks (the rest of its block and the block
//! ahead), all lost when it exits or crashes (a gap; never a repeat), instead of up to one; and
//! a process that stops before using the block ahead reserved it for nothing. Numbers from one
//! process still increase: the block ahead is served only after the block in hand.
//!
//! **A block that grows under load** (`maxBlock`, default 10 × `block`; like the segment step of
//! Meituan's Leaf). The host gives the time of each refill (`now_ms`; the core reads no
//! clock). A refill that comes less than [`GROW_WITHIN_MS`] after the one before doubles the
//! block, up to `maxBlock`; one that comes more than [`SHRINK_AFTER_MS`] after halves it, down to
//! `block`. So a process that takes numbers fast holds up to about a second's worth of them,
//! and one round trip serves that second instead of one `block`; a quiet process keeps to
//! `block`. The bound a process can leave as a gap at exit becomes `maxBlock` (one and a half
//! with `refillAhead`) instead of `block`. `block: 1` never grows (its default `maxBlock` is 1),
//! nor a refill given no time, nor `maxBlock: block`.
//!
//! **What a refill reserves.** At least one `block` (the grown one), and at least what the waiters need up to
//! and including the one running it (its `minCount`: near the bound the range may come back
//! shorter than asked, never shorter than that). With `block: 1` the counter holds no numbers
//! between calls, so a refill reserves exactly what every waiting caller asked for: concurrent
//! callers share one `$inc` and get their numbers in arrival order, with no gap (coalescing;
//! with larger blocks each refill is one block, so one round trip per `block` numbers).
//!
//! **Order.** Waiters are served first come, first served, each from consecutive numbers of the
//! block (a caller that found part of its numbers in the block gets the rest from the refill).
//! While anyone waits, the block is empty, so nobody overtakes a waiter.
//!
//! **A refused caller keeps nothing and loses nothing.** A caller is served all its numbers or
//! none: near a bound, a refill needs what the callers up to the one running it wait for (its
//! `minCount`) and takes more only if it is there; with less left it is refused
//! (`SEQUENCE_EXHAUSTED`, nothing reserved). The numbers the refused caller had been given (part
//! of the block, when it queued) go back, first in line: the next caller gets them, so every
//! number up to the bound is handed out before the last caller is refused. The refusal reports
//! what the caller asked for and what is left for it, the numbers its block held counted (see
//! [`crate::counter::reservation`]), never the size of the grown block.
//!
//! **setNext.** Numbers reserved before a `setNext` must not be handed out after it: `discard`
//! drops the block (a gap, never a repeat) and a refill in flight during it is dropped when it
//! comes back; its waiters run a new one. Numbers already handed to a waiter stay its own.

use std::collections::VecDeque;

use serde::Serialize;

use crate::block::allocator::BlockAllocator;
use crate::counter::definition::CounterDefinition;
use crate::counter::range::ReservedRange;
use crate::counter::reservation::{RefillCaller, Reservation, ReserveRequest};
use crate::error::SeqError;
use crate::sequence::limits::MAX_COUNT;
use crate::sequence::options::SequenceSpec;

/// A refill this soon after the one before doubles the block (see the module docs).
pub const GROW_WITHIN_MS: i64 = 1_000;
/// A refill this long after the one before halves the block.
pub const SHRINK_AFTER_MS: i64 = 2 * GROW_WITHIN_MS;

/// Numbers handed to one caller, in order: one range, or two when the block held part of them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Numbers(Vec<ReservedRange>);

impl Numbers {
    /// Every number, in order.
    pub fn values(&self) -> impl Iterator<Item = i64> + '_ {
        self.0.iter().flat_map(ReservedRange::iter)
    }

    /// How many numbers.
    pub fn count(&self) -> u64 {
        self.0.iter().map(|range| range.count).sum()
    }

    fn push(&mut self, range: ReservedRange) {
        self.0.push(range);
    }
}

impl Serialize for Numbers {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.values())
    }
}

/// What [`BlockCounter::take`] gives: the numbers now, or a ticket to wait with.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Take {
    Numbers(Numbers),
    Ticket(u64),
}

/// A refill to run: the reservation, and its id for [`BlockCounter::refilled`] /
/// [`BlockCounter::refill_failed`].
#[derive(Debug, Clone)]
pub struct Refill {
    pub id: u64,
    pub plan: Reservation,
}

#[derive(Debug, Clone)]
struct Waiter {
    ticket: u64,
    /// Numbers still missing.
    wanted: u64,
    taken: Numbers,
    /// The `setNext` generation its numbers were given in: they go back to the block only in
    /// that one (numbers from before a `setNext` are never handed out after it).
    generation: u64,
}

#[derive(Debug, Clone, Copy)]
struct InFlight {
    id: u64,
    generation: u64,
    /// The waiter running it: the one a failure fails (none for a refill ahead).
    owner: Option<u64>,
}

/// See the module docs.
#[derive(Debug, Clone)]
pub struct BlockCounter {
    spec: SequenceSpec,
    /// The spec's counter definition, built once (its digest is a SHA-256) for every refill.
    definition: CounterDefinition,
    counter_id: String,
    block: BlockAllocator,
    /// Numbers held behind the block, in order, served once it is dry: the range a refill
    /// ahead reserved, or numbers a refused caller gave back.
    behind: VecDeque<ReservedRange>,
    waiting: VecDeque<Waiter>,
    /// Served waiters whose numbers were not collected yet.
    ready: Vec<(u64, Numbers)>,
    in_flight: Option<InFlight>,
    generation: u64,
    last_ticket: u64,
    last_refill: u64,
    /// The size of the next refill: `block`, grown under load up to `maxBlock`.
    grown: u64,
    /// When the last refill was asked for (the host's clock), if it said.
    last_refill_at: Option<i64>,
}

impl BlockCounter {
    /// The counter `counter_id` of the sequence `spec` (see [`SequenceSpec::counter_id`]),
    /// holding no numbers yet.
    pub fn new(spec: &SequenceSpec, counter_id: &str) -> Result<Self, SeqError> {
        spec.check_counter_id(counter_id)?;
        Ok(Self {
            spec: spec.clone(),
            definition: CounterDefinition::of(spec),
            counter_id: counter_id.to_owned(),
            block: BlockAllocator::new(spec.block())?,
            behind: VecDeque::new(),
            waiting: VecDeque::new(),
            ready: Vec::new(),
            in_flight: None,
            generation: 0,
            last_ticket: 0,
            last_refill: 0,
            grown: spec.block(),
            last_refill_at: None,
        })
    }

    /// The counter id.
    pub fn counter_id(&self) -> &str {
        &self.counter_id
    }

    /// The number [`Self::take_one`] would hand out now, without taking it.
    pub fn peek(&self) -> Option<i64> {
        if !self.waiting.is_empty() || self.refill_ahead_due() {
            return None;
        }
        self.block
            .peek()
            .or_else(|| self.behind.front().map(|range| range.first))
    }

    /// One number from the block when it holds one and nobody waits (the warm path); `None`:
    /// go through [`Self::take`] (also when a refill ahead is due: `take` serves the caller,
    /// then [`Self::refill_ahead`] gives the refill to start).
    pub fn take_one(&mut self) -> Option<i64> {
        self.peek()?;
        self.take_held(1).map(|range| range.first)
    }

    /// `count` numbers (0 to [`MAX_COUNT`]): at once when the block holds them and nobody
    /// waits; otherwise a ticket (the block's numbers are taken now, the rest wait for a refill).
    pub fn take(&mut self, count: u64) -> Result<Take, SeqError> {
        if count > MAX_COUNT {
            return Err(SeqError::invalid_argument(
                "count",
                format!("must be an integer from 0 to {MAX_COUNT}, got {count}"),
            ));
        }
        let mut taken = Numbers::default();
        if self.waiting.is_empty() {
            while let Some(range) = self.take_held(count.saturating_sub(taken.count())) {
                taken.push(range);
            }
            if taken.count() == count {
                return Ok(Take::Numbers(taken));
            }
        }
        self.last_ticket = self.last_ticket.saturating_add(1);
        self.waiting.push_back(Waiter {
            ticket: self.last_ticket,
            wanted: count.saturating_sub(taken.count()),
            taken,
            generation: self.generation,
        });
        Ok(Take::Ticket(self.last_ticket))
    }

    /// Up to `max` numbers held: from the block, or from the numbers behind it once it is dry.
    fn take_held(&mut self, max: u64) -> Option<ReservedRange> {
        if self.block.is_empty() {
            let next = self.behind.pop_front()?;
            // The block is empty: a refill cannot drop a number.
            self.block.refill(next).ok()?;
        }
        self.block.take(max)
    }

    /// Serves the waiters, in order, from the numbers held.
    fn serve(&mut self) {
        while let Some(waiter) = self.waiting.front() {
            let Some(range) = self.take_held(waiter.wanted) else {
                break;
            };
            let generation = self.generation;
            let Some(waiter) = self.waiting.front_mut() else {
                break;
            };
            waiter.wanted = waiter.wanted.saturating_sub(range.count);
            waiter.taken.push(range);
            waiter.generation = generation;
            if waiter.wanted > 0 {
                break;
            }
            if let Some(served) = self.waiting.pop_front() {
                self.ready.push((served.ticket, served.taken));
            }
        }
    }

    /// The waiter `ticket` gives up (refused, or its refill failed): it leaves the queue and the
    /// numbers it was given go back, before every number held, to serve the waiters behind it
    /// and later callers — unless a `setNext` came since (then they are a gap).
    fn give_up(&mut self, ticket: u64) {
        let Some(position) = self.waiting.iter().position(|w| w.ticket == ticket) else {
            return;
        };
        let Some(waiter) = self.waiting.remove(position) else {
            return;
        };
        if waiter.generation != self.generation || waiter.taken.count() == 0 {
            return;
        }
        // Its numbers come before the block's (given out first, in order).
        let rest = self.block.remaining();
        if let Some(range) = self.block.take(rest) {
            self.behind.push_front(range);
        }
        for range in waiter.taken.0.into_iter().rev() {
            self.behind.push_front(range);
        }
        self.serve();
    }

    /// True when this counter refills ahead and it is time: half the block or less is left
    /// (none ahead), nobody waits and no refill is in flight.
    fn refill_ahead_due(&self) -> bool {
        self.spec.refill_ahead()
            && self.in_flight.is_none()
            && self.behind.is_empty()
            && self.waiting.is_empty()
            && self.block.remaining().saturating_mul(2) <= self.grown
    }

    /// How many numbers a refill reserves now (at least): `block`, or more under load.
    pub fn block_size(&self) -> u64 {
        self.grown
    }

    /// A refill is asked for at `now_ms` (if the host said): the block grows or shrinks with
    /// the time since the one before (see the module docs).
    fn adapt(&mut self, now_ms: Option<i64>) {
        let Some(now) = now_ms else {
            return;
        };
        if let Some(before) = self.last_refill_at {
            let since = now.saturating_sub(before);
            if since < GROW_WITHIN_MS {
                self.grown = self.grown.saturating_mul(2).min(self.spec.max_block());
            } else if since > SHRINK_AFTER_MS {
                self.grown = (self.grown / 2).max(self.spec.block());
            }
        }
        self.last_refill_at = Some(now);
    }

    /// The refill ahead to start now, in the background (`refillAhead`; see the module docs),
    /// or `None` when none is due. Nobody waits for it: when it fails, the caller that next finds
    /// the block dry runs its own refill (and gets its error). `now_ms`: the host's clock, by
    /// which the block grows under load (`None`: it keeps its size).
    pub fn refill_ahead(&mut self, now_ms: Option<i64>) -> Option<Refill> {
        if !self.refill_ahead_due() {
            return None;
        }
        self.adapt(now_ms);
        let mut request = ReserveRequest::new(&self.counter_id, self.grown);
        request.min_count = Some(1); // near the bound, what is left
        let plan = Reservation::with_definition(&self.spec, &request, &self.definition).ok()?;
        self.last_refill = self.last_refill.saturating_add(1);
        self.in_flight = Some(InFlight {
            id: self.last_refill,
            generation: self.generation,
            owner: None,
        });
        Some(Refill {
            id: self.last_refill,
            plan,
        })
    }

    /// The numbers of a served waiter (once), or `None` while it waits.
    pub fn ready(&mut self, ticket: u64) -> Option<Numbers> {
        let index = self.ready.iter().position(|(t, _)| *t == ticket)?;
        Some(self.ready.swap_remove(index).1)
    }

    /// The refill the waiter `ticket` should run, or `None` when there is nothing to run: one
    /// is in flight (wait for it), or the waiter was served (collect with [`Self::ready`]).
    /// When the reservation cannot even be built (`OVERFLOW`), the waiter gives up with it.
    /// `now_ms`: the host's clock, by which the block grows under load (`None`: it keeps its
    /// size).
    pub fn refill(&mut self, ticket: u64, now_ms: Option<i64>) -> Result<Option<Refill>, SeqError> {
        if self.in_flight.is_some() || self.ready.iter().any(|(t, _)| *t == ticket) {
            return Ok(None);
        }
        let Some(position) = self.waiting.iter().position(|w| w.ticket == ticket) else {
            return Err(SeqError::invalid_argument(
                "ticket",
                format!(
                    "no caller of counter `{}` waits with ticket {ticket}",
                    self.counter_id
                ),
            ));
        };
        let sum = |waiters: usize| -> u64 {
            self.waiting
                .iter()
                .take(waiters)
                .fold(0, |sum: u64, w| sum.saturating_add(w.wanted))
        };
        let before = sum(position);
        let through_owner = sum(position.saturating_add(1));
        let caller = self
            .waiting
            .get(position)
            .map_or_else(RefillCaller::default, |owner| {
                let held = owner.taken.count();
                RefillCaller {
                    requested: owner.wanted.saturating_add(held),
                    held,
                    before,
                }
            });
        let count = if self.spec.block() == 1 {
            sum(self.waiting.len())
        } else {
            self.adapt(now_ms);
            through_owner.max(self.grown)
        }
        .clamp(1, MAX_COUNT);
        // Near the bound: what the callers through this one need, and more only if it is there.
        let mut request = ReserveRequest::new(&self.counter_id, count);
        request.min_count = Some(through_owner.clamp(1, count));
        match Reservation::for_caller(&self.spec, &request, caller, &self.definition) {
            Ok(plan) => {
                self.last_refill = self.last_refill.saturating_add(1);
                self.in_flight = Some(InFlight {
                    id: self.last_refill,
                    generation: self.generation,
                    owner: Some(ticket),
                });
                Ok(Some(Refill {
                    id: self.last_refill,
                    plan,
                }))
            }
            Err(error) => {
                self.give_up(ticket);
                Err(error)
            }
        }
    }

    /// The refill `id` reserved `range`: the waiters are served from it in order, the rest
    /// stays in the block (or waits behind it: a refill ahead that comes back while the block
    /// still holds numbers). A refill that a [`Self::discard`] overtook is dropped (a gap).
    pub fn refilled(&mut self, id: u64, range: ReservedRange) {
        let Some(in_flight) = self.in_flight.filter(|f| f.id == id) else {
            return;
        };
        self.in_flight = None;
        if in_flight.generation != self.generation || range.validate().is_err() {
            return; // a Reservation's range is always valid
        }
        // Behind every number held (while anyone waits, none is: it goes to the waiters).
        self.behind.push_back(range);
        self.serve();
    }

    /// The refill `id` failed (its driver error or the core's, `SEQUENCE_EXHAUSTED` near the
    /// bound, goes to the waiter that ran it): that waiter gives up and the numbers it was
    /// given go back (see the module docs); the others run a refill of their own.
    pub fn refill_failed(&mut self, id: u64) {
        if let Some(in_flight) = self.in_flight.filter(|f| f.id == id) {
            self.in_flight = None;
            if let Some(owner) = in_flight.owner {
                self.give_up(owner);
            }
        }
    }

    /// The caller waiting with `ticket` is gone (a cancelled future): it leaves the queue, and
    /// the numbers it was already given (from the block when it queued, or served since) are
    /// dropped — a gap, never a number handed to two callers. A refill it was running stays in
    /// flight: when it comes back, its range serves the callers behind it (and what is left
    /// stays in the block). Returns how many numbers were dropped; an unknown ticket drops none.
    pub fn withdraw(&mut self, ticket: u64) -> u64 {
        if let Some(position) = self.waiting.iter().position(|w| w.ticket == ticket) {
            return self
                .waiting
                .remove(position)
                .map_or(0, |waiter| waiter.taken.count());
        }
        match self.ready.iter().position(|(t, _)| *t == ticket) {
            Some(index) => self.ready.swap_remove(index).1.count(),
            None => 0,
        }
    }

    /// Drops the numbers of the block and those behind it (after `setNext`; a gap) and
    /// invalidates the refill in flight; returns how many numbers were dropped.
    pub fn discard(&mut self) -> u64 {
        self.generation = self.generation.wrapping_add(1);
        let behind = self
            .behind
            .drain(..)
            .fold(0, |sum: u64, range| sum.saturating_add(range.count));
        self.block.discard().saturating_add(behind)
    }
}

#[cfg(test)]
mod tests;
