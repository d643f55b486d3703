//! One counter's numbers in this process, shared by every task: the core's [`BlockCounter`]
//! (the block, the callers waiting in order, the refill to run and its coalescing, when to
//! refill ahead, the `setNext` generation) behind a lock held for a few calls into the core and
//! never across an `.await`, and the async waiting around it (js/src/sequence.js is the npm
//! package's twin).
//!
//! ```text
//! take(n) ─▶ the core: numbers now ─────────────────────────────────────▶ done
//!          └▶ a ticket ─▶ yield once (callers of this moment queue behind it: one refill)
//!               └▶ loop: ready(ticket)? ─▶ done
//!                        refill(ticket) ─▶ a Reservation: run it in a task of this counter,
//!                        │                 await its outcome (its error is this caller's)
//!                        └▶ none (one in flight) ─▶ wait until the counter changes
//! ```
//!
//! **One refill in flight, in a task the counter owns.** A refill runs in a task spawned for it
//! (its `JoinHandle` awaited by the caller that started it, its abort handle kept here and used
//! when the counter is dropped), so a caller that goes away does not take the reservation with
//! it: the range still reaches the block and serves the callers behind it. When the task ends it
//! tells the core (`refilled`/`refill_failed`) and wakes every waiter.
//!
//! **Cancel safety.** A future dropped while it waits withdraws its ticket (the core's
//! `withdraw`): the numbers it had been given are a gap, never handed to another caller, and
//! nobody waits on its behalf. Nothing here is half-written on the server: every counter write
//! is one atomic command, run to its end by its task.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};

use mongo_seq_core::{BlockCounter, Numbers, Refill, SequenceSpec, Take};
use tokio::sync::Notify;
use tokio::task::AbortHandle;

use mongo_seq_core::SeqError;

use crate::error::Result;
use crate::executor::Executor;
use crate::run::run_plan;
use crate::target::Target;

/// See the module docs.
pub(crate) struct Counter {
    state: Mutex<State>,
    /// Wakes the waiters when a refill ends (served, or free to run their own).
    changed: Notify,
}

struct State {
    core: BlockCounter,
    /// The refill task in flight (aborted with the counter).
    task: Option<AbortHandle>,
}

impl Counter {
    pub(crate) fn new(spec: &SequenceSpec, counter_id: &str) -> Result<Arc<Self>> {
        Ok(Arc::new(Self {
            state: Mutex::new(State {
                core: BlockCounter::new(spec, counter_id)?,
                task: None,
            }),
            changed: Notify::new(),
        }))
    }

    /// The lock, for a few calls into the core. A panic cannot leave the core's state half
    /// changed (it never panics on input), so a poisoned lock is used as it is.
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// One number from the block in hand, when the core can hand it out without waiting.
    pub(crate) fn take_one(&self) -> Option<i64> {
        self.lock().core.take_one()
    }

    /// `count` numbers: from the block, or after a refill (see the module docs).
    pub(crate) async fn take(self: &Arc<Self>, count: u64, executor: &Executor) -> Result<Numbers> {
        let ticket = {
            let mut state = self.lock();
            match state.core.take(count)? {
                Take::Numbers(numbers) => {
                    self.refill_ahead(&mut state, executor);
                    return Ok(numbers);
                }
                Take::Ticket(ticket) => ticket,
            }
        };
        let mut waiter = Waiter {
            counter: self,
            ticket: Some(ticket),
        };
        // The callers of this moment queue first: one refill serves them all (with `block: 1`,
        // one `$inc` of exactly what they asked for).
        tokio::task::yield_now().await;
        loop {
            // Registered before looking, so a refill that ends in between still wakes it.
            let changed = self.changed.notified();
            let refill = {
                let mut state = self.lock();
                if let Some(numbers) = state.core.ready(ticket) {
                    waiter.ticket = None;
                    self.refill_ahead(&mut state, executor);
                    return Ok(numbers);
                }
                match state.core.refill(ticket, Some(crate::clock::now_ms())) {
                    Ok(refill) => {
                        refill.map(|refill| (refill.id, self.spawn(&mut state, refill, executor)))
                    }
                    Err(error) => {
                        waiter.ticket = None; // the core dropped it
                        return Err(error.into());
                    }
                }
            };
            match refill {
                None => changed.await,
                Some((id, task)) => match task.await {
                    Ok(Ok(())) => {}
                    Ok(Err(error)) => {
                        waiter.ticket = None; // the core dropped the owner of a failed refill
                        return Err(error);
                    }
                    Err(join) if join.is_panic() => std::panic::resume_unwind(join.into_panic()),
                    // Cancelled before it reported (the runtime is shutting down): the others
                    // run their own.
                    Err(_) => {
                        self.lock().core.refill_failed(id);
                        self.changed.notify_waiters();
                        waiter.ticket = None;
                        return Err(SeqError::UnexpectedReply {
                            reason:
                                "the refill's task was cancelled (is the runtime shutting down?)"
                                    .to_owned(),
                        }
                        .into());
                    }
                },
            }
        }
    }

    /// Drops the numbers this process holds (after `setNext`); the refill in flight no longer
    /// counts when it comes back.
    pub(crate) fn discard(&self) {
        self.lock().core.discard();
    }

    /// Starts the refill ahead the core asks for (option `refillAhead`): nobody waits for it; if
    /// it fails, the next caller that finds the block dry runs its own and gets the error.
    fn refill_ahead(self: &Arc<Self>, state: &mut State, executor: &Executor) {
        if let Some(refill) = state.core.refill_ahead(Some(crate::clock::now_ms())) {
            drop(self.spawn(state, refill, executor));
        }
    }

    /// Runs `refill` in a task of this counter; its handle resolves once the core knows how it
    /// ended.
    fn spawn(
        self: &Arc<Self>,
        state: &mut State,
        refill: Refill,
        executor: &Executor,
    ) -> tokio::task::JoinHandle<Result<()>> {
        let Refill { id, mut plan } = refill;
        let counter: Weak<Self> = Arc::downgrade(self);
        let executor = executor.clone();
        let task = tokio::spawn(async move {
            let result = run_plan(&mut plan, &mut Target::counters(&executor)).await;
            if let Some(counter) = counter.upgrade() {
                {
                    let mut state = counter.lock();
                    state.task = None;
                    match &result {
                        Ok(range) => state.core.refilled(id, *range),
                        Err(_) => state.core.refill_failed(id),
                    }
                }
                counter.changed.notify_waiters();
            }
            result.map(drop)
        });
        state.task = Some(task.abort_handle());
        task
    }
}

impl Drop for Counter {
    fn drop(&mut self) {
        if let Some(task) = self.lock().task.take() {
            task.abort();
        }
    }
}

/// A caller waiting with a ticket; dropped before it is served (a cancelled future), it leaves
/// the queue.
struct Waiter<'a> {
    counter: &'a Counter,
    ticket: Option<u64>,
}

impl Drop for Waiter<'_> {
    fn drop(&mut self) {
        if let Some(ticket) = self.ticket {
            self.counter.lock().core.withdraw(ticket);
        }
    }
}

/// The counters of one sequence, by counter id (one per scope value combination), made on
/// first use.
#[derive(Default)]
pub(crate) struct Counters {
    by_id: Mutex<HashMap<String, Arc<Counter>>>,
}

impl Counters {
    /// The counter `counter_id` (checked by the core: it must belong to `spec`).
    pub(crate) fn get(&self, spec: &SequenceSpec, counter_id: &str) -> Result<Arc<Counter>> {
        let mut by_id = self.by_id.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(counter) = by_id.get(counter_id) {
            return Ok(Arc::clone(counter));
        }
        let counter = Counter::new(spec, counter_id)?;
        by_id.insert(counter_id.to_owned(), Arc::clone(&counter));
        Ok(counter)
    }

    /// Drops the numbers every counter holds (after `rewindAll`).
    pub(crate) fn discard_all(&self) {
        let by_id = self.by_id.lock().unwrap_or_else(PoisonError::into_inner);
        for counter in by_id.values() {
            counter.discard();
        }
    }
}
