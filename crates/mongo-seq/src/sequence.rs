//! One sequence: its numbers, its counters' state, and the operations on them.

use std::sync::Arc;

use mongo_seq_core::{
    CounterState, CurrentValue, Numbers, Period, SeedFromCollection, SeedFromMax, SequenceSpec,
    SetNext, SetNextOutcome,
};
use mongodb::bson::Document;
use mongodb::Collection;
use serde_json::Value;

use crate::counter::{Counter, Counters};
use crate::error::Result;
use crate::executor::{convert, Executor};
use crate::run::run_plan;
use crate::target::Target;

// The counter's recorded definition, rewritten on purpose.
mod definition;
mod periodic;
mod rewind;
mod void;

pub use periodic::Issued;
use periodic::Series;

/// A sequence of numbers: `1, 2, 3, …` (or as its [`SequenceOptions`](crate::SequenceOptions)
/// say), kept in a counter document `{ _id: <name>, seq: <last issued> }`. Made by
/// [`Sequences::sequence`](crate::Sequences::sequence).
///
/// A `Sequence` is a handle: cheap to clone, `Send + Sync`, shared by every task. Clones share
/// the block of numbers held in this process and its one refill in flight. A scoped sequence
/// (option `scope`) keeps one counter per scope value; [`Sequence::scoped`] gives the handle of
/// one of them, with the same methods.
///
/// ```no_run
/// # async fn example(db: mongodb::Database) -> mongo_seq::Result<()> {
/// use mongo_seq::{SequenceOptions, Sequences};
/// use mongodb::bson::doc;
///
/// let seqs = Sequences::new(&db);
/// let orders = seqs.sequence("orders", SequenceOptions::new().block(100))?;
/// let first = orders.next().await?; // 1: reserves 1..=100 in one round trip
/// let more = orders.next_many(3).await?; // [2, 3, 4]: from the block, no round trip
///
/// let invoices = seqs.sequence("invoices", SequenceOptions::new().scope(["tenant"]))?;
/// let acme = invoices.scoped(&doc! { "tenant": "acme" })?;
/// assert_eq!(acme.counter_id()?, "invoices/tenant=acme");
/// let number = acme.next().await?; // 1: acme's own counter
/// # let _ = (first, more, number); Ok(()) }
/// ```
#[derive(Clone)]
pub struct Sequence {
    shared: Arc<Shared>,
    binding: Binding,
}

struct Shared {
    spec: SequenceSpec,
    executor: Executor,
    counters: Counters,
    /// The periods of a sequence that resets (its zone checked to exist when it was defined).
    periods: Option<crate::period::Periods>,
    /// The cheap clock of the warm path of a sequence that resets, where there is one.
    clock: Option<crate::clock::CoarseClock>,
}

/// What a handle numbers from.
#[derive(Clone)]
enum Binding {
    /// A scoped sequence's own handle: no scope values yet.
    Unbound,
    /// One counter: the sequence's own (unscoped, never resets), one scope's
    /// ([`Sequence::scoped`]), or one period's ([`Sequence::in_period`]).
    Counter(Bound),
    /// A sequence that resets, unscoped or one scope's: one counter per period, the one of the
    /// instants at hand cached.
    Series(Arc<Series>),
}

#[derive(Clone)]
struct Bound {
    counter_id: String,
    /// The scope values as the core reads them (`None`: unscoped).
    scope: Option<Value>,
    counter: Arc<Counter>,
    /// The period of the counter, for a sequence that resets.
    period: Option<Period>,
}

impl std::fmt::Debug for Sequence {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let counter_id = match &self.binding {
            Binding::Counter(bound) => Some(bound.counter_id.as_str()),
            _ => None,
        };
        f.debug_struct("Sequence")
            .field("options", &self.shared.spec)
            .field("counter_id", &counter_id)
            .finish_non_exhaustive()
    }
}

impl Sequence {
    pub(crate) fn new(spec: SequenceSpec, executor: Executor) -> Result<Self> {
        let periods = crate::period::Periods::of(&spec)?;
        let clock = periods.as_ref().and_then(|_| crate::clock::coarse_clock());
        let shared = Arc::new(Shared {
            spec,
            executor,
            counters: Counters::default(),
            periods,
            clock,
        });
        let binding = if !shared.spec.scope().is_empty() {
            Binding::Unbound
        } else if shared.periods.is_some() {
            Binding::Series(Arc::new(Series::new(None)))
        } else {
            let counter_id = shared.spec.counter_id(None)?;
            let counter = shared.counters.get(&shared.spec, &counter_id)?;
            Binding::Counter(Bound {
                counter_id,
                scope: None,
                counter,
                period: None,
            })
        };
        Ok(Self { shared, binding })
    }

    /// The sequence's name.
    ///
    /// ```no_run
    /// # fn example(seqs: mongo_seq::Sequences) -> mongo_seq::Result<()> {
    /// assert_eq!(seqs.sequence("orders", None)?.name(), "orders");
    /// # Ok(()) }
    /// ```
    pub fn name(&self) -> &str {
        self.shared.spec.name()
    }

    /// The validated options, defaults filled in (the core's `SequenceSpec`).
    ///
    /// ```no_run
    /// # fn example(seqs: mongo_seq::Sequences) -> mongo_seq::Result<()> {
    /// let orders = seqs.sequence("orders", None)?;
    /// assert_eq!((orders.options().start(), orders.options().block()), (1, 1));
    /// # Ok(()) }
    /// ```
    pub fn options(&self) -> &SequenceSpec {
        &self.shared.spec
    }

    /// The handle of the counter for `scope`, a document holding the values of the sequence's
    /// scope fields (an inserted document will do: other fields are ignored). Refused before
    /// any I/O when a value is missing (`MISSING_SCOPE_FIELD`) or cannot name a counter
    /// (`INVALID_SCOPE_VALUE`: an array, a sub-document, a fraction). For an unscoped sequence,
    /// the sequence itself.
    ///
    /// ```no_run
    /// # async fn example(seqs: mongo_seq::Sequences) -> mongo_seq::Result<()> {
    /// use mongo_seq::SequenceOptions;
    /// use mongodb::bson::doc;
    ///
    /// let tickets = seqs.sequence("tickets", SequenceOptions::new().scope(["project"]))?;
    /// let api = tickets.scoped(&doc! { "project": "api" })?;
    /// let web = tickets.scoped(&doc! { "project": "web" })?;
    /// assert_eq!((api.next().await?, web.next().await?, api.next().await?), (1, 1, 2));
    /// assert_eq!(tickets.next().await.unwrap_err().code(), Some("MISSING_SCOPE_FIELD"));
    /// # Ok(()) }
    /// ```
    pub fn scoped(&self, scope: &Document) -> Result<Self> {
        let shared = &self.shared;
        if shared.spec.scope().is_empty() {
            return Ok(self.clone());
        }
        let values = convert::from_doc(scope.clone());
        let binding = if shared.periods.is_some() {
            // The scope's part of the id, checked now; each period's counter on first use.
            let spec = &shared.spec;
            mongo_seq_core::sequence::scope::counter_id(
                spec.name(),
                spec.scope(),
                Some(&values),
                None,
            )?;
            Binding::Series(Arc::new(Series::new(Some(values))))
        } else {
            let counter_id = shared.spec.counter_id(Some(&values))?;
            let counter = shared.counters.get(&shared.spec, &counter_id)?;
            Binding::Counter(Bound {
                counter_id,
                scope: Some(values),
                counter,
                period: None,
            })
        };
        Ok(Self {
            shared: Arc::clone(shared),
            binding,
        })
    }

    /// The counter this handle numbers from: none for a scoped sequence's own handle (the
    /// core's `MISSING_SCOPE_FIELD`) nor for a series of a sequence that resets (the core's
    /// `INVALID_ARGUMENT` naming `period`: see [`in_period`](Self::in_period)).
    fn bound(&self) -> Result<&Bound> {
        match &self.binding {
            Binding::Counter(bound) => Ok(bound),
            Binding::Unbound => Err(self.no_counter(None)),
            Binding::Series(series) => Err(self.no_counter(Some(series))),
        }
    }

    /// Why this handle has no one counter: a scoped sequence's own handle lacks the scope
    /// values (`MISSING_SCOPE_FIELD`), a series lacks the period (`INVALID_ARGUMENT` `period`).
    fn no_counter(&self, series: Option<&Series>) -> crate::Error {
        let spec = &self.shared.spec;
        let missing = match series {
            None => {
                mongo_seq_core::sequence::scope::counter_id(spec.name(), spec.scope(), None, None)
            }
            Some(series) => spec.counter_id_in(series.scope(), None),
        };
        missing
            .err()
            .unwrap_or_else(|| mongo_seq_core::SeqError::UnexpectedReply {
                reason: "no counter".to_owned(),
            })
            .into()
    }

    /// The counter document's `_id`: the name, `invoices/tenant=acme` for a scoped handle,
    /// `invoices/2026` for a period's ([`in_period`](Self::in_period)). A series of a sequence
    /// that resets has one per period: `INVALID_ARGUMENT` naming `period`.
    ///
    /// ```no_run
    /// # fn example(seqs: mongo_seq::Sequences) -> mongo_seq::Result<()> {
    /// assert_eq!(seqs.sequence("orders", None)?.counter_id()?, "orders");
    /// # Ok(()) }
    /// ```
    pub fn counter_id(&self) -> Result<&str> {
        Ok(&self.bound()?.counter_id)
    }

    /// The formatted id of `value` (`None` when the sequence has no `format`), in this handle's
    /// period for a handle of one ([`in_period`](Self::in_period); see
    /// [`format_in`](Self::format_in) for another).
    ///
    /// ```no_run
    /// # fn example(seqs: mongo_seq::Sequences) -> mongo_seq::Result<()> {
    /// use mongo_seq::SequenceOptions;
    ///
    /// let invoices = seqs.sequence("invoices", SequenceOptions::new().format("INV-{seq:06}"))?;
    /// assert_eq!(invoices.format(42).as_deref(), Some("INV-000042"));
    /// # Ok(()) }
    /// ```
    pub fn format(&self, value: i64) -> Option<String> {
        let period = match &self.binding {
            Binding::Counter(bound) => bound.period,
            _ => None,
        };
        self.shared.spec.format_value(value, period.as_ref())
    }

    /// The next number. From the block in hand: one call into the core, no I/O; otherwise one
    /// round trip per `block` numbers, shared by every task waiting at the moment (with
    /// `block: 1` the callers waiting together share one `$inc` of exactly what they asked for).
    /// Numbers come out in increasing order (decreasing with a negative step), in the order the
    /// calls were made.
    ///
    /// **Cancel safety**: dropping the future before it completes never loses a number another
    /// caller was promised and never leaves a counter half-written. What the dropped call was
    /// given, or the numbers reserved for it, are a gap (never issued again); a reservation it
    /// started still completes and serves the callers behind it.
    ///
    /// ```no_run
    /// # async fn example(seqs: mongo_seq::Sequences) -> mongo_seq::Result<()> {
    /// let user_ids = seqs.sequence("userid", None)?;
    /// assert_eq!(user_ids.next().await?, 1); // the tutorial's counter { _id: "userid", seq: 1 }
    /// # Ok(()) }
    /// ```
    pub async fn next(&self) -> Result<i64> {
        let counter = match &self.binding {
            Binding::Counter(bound) => &bound.counter,
            // A series: the counter of now's period (the warm path compares two integers).
            Binding::Series(series) => {
                // Within the period at hand (by the coarse clock, away from the period's ends):
                // one lock, two integers compared, one call into the core.
                if let Some(number) = series.take_one_now(self.shared.clock) {
                    return Ok(number);
                }
                let (counter, _) = self.series_counter(series, crate::clock::now_ms())?;
                let numbers = counter.take(1, &self.shared.executor).await?;
                let first = numbers.values().next().unwrap_or_default();
                return Ok(first);
            }
            Binding::Unbound => return Err(self.no_counter(None)),
        };
        // The warm path: one call into the core.
        if let Some(number) = counter.take_one() {
            return Ok(number);
        }
        let numbers = counter.take(1, &self.shared.executor).await?;
        let first = numbers.values().next().unwrap_or_default();
        Ok(first)
    }

    /// `count` numbers (0 to 1,000,000) in order: what the block in hand holds, plus at most one
    /// reservation for the rest. All or nothing near a bound: `SEQUENCE_EXHAUSTED`, nothing
    /// reserved, and the numbers in hand stay for the next call; the error reports the `count`
    /// asked for and what is left for it, the numbers in hand included (`requested`,
    /// `available`). A larger count is `INVALID_ARGUMENT` before anything is taken. Cancel
    /// safety as for [`next`](Self::next).
    ///
    /// ```no_run
    /// # async fn example(seqs: mongo_seq::Sequences) -> mongo_seq::Result<()> {
    /// let ids = seqs.sequence("ids", None)?;
    /// assert_eq!(ids.next_many(3).await?, [1, 2, 3]); // one round trip
    /// assert!(ids.next_many(0).await?.is_empty());
    /// # Ok(()) }
    /// ```
    pub async fn next_many(&self, count: u64) -> Result<Vec<i64>> {
        let (counter, _) = self.counter_at(None)?;
        let numbers = counter.take(count, &self.shared.executor).await?;
        Ok(numbers.values().collect())
    }

    /// The last number reserved on the server, by any process (`None`: no counter yet).
    /// Reserves nothing.
    ///
    /// ```no_run
    /// # async fn example(seqs: mongo_seq::Sequences) -> mongo_seq::Result<()> {
    /// let orders = seqs.sequence("orders", None)?;
    /// assert_eq!(orders.current().await?, None);
    /// orders.next().await?;
    /// assert_eq!(orders.current().await?, Some(1));
    /// # Ok(()) }
    /// ```
    pub async fn current(&self) -> Result<Option<i64>> {
        Ok(self.state().await?.last)
    }

    /// The counter's state: `last` reserved and the `next` number a reservation would start
    /// with (`None` when the sequence is exhausted). One read, no write.
    ///
    /// ```no_run
    /// # async fn example(seqs: mongo_seq::Sequences) -> mongo_seq::Result<()> {
    /// let state = seqs.sequence("orders", None)?.state().await?;
    /// assert_eq!((state.last, state.next), (None, Some(1)));
    /// # Ok(()) }
    /// ```
    pub async fn state(&self) -> Result<CounterState> {
        let mut plan = CurrentValue::new(&self.shared.spec, &self.bound()?.counter_id)?;
        self.run(&mut plan).await
    }

    /// Makes `next` the next number issued. Refuses to move the counter backwards
    /// (`BACKWARDS_REFUSED`, nothing written) or to a value off the grid `start + k·step`
    /// (`INVALID_ARGUMENT`): see [`set_next_forced`](Self::set_next_forced). Drops the numbers
    /// this process holds for the counter (a gap). A cancelled call drops them too: whether it
    /// wrote or not, no number reserved before it is handed out after it.
    ///
    /// ```no_run
    /// # async fn example(seqs: mongo_seq::Sequences) -> mongo_seq::Result<()> {
    /// let ids = seqs.sequence("ids", None)?;
    /// let outcome = ids.set_next(5000).await?;
    /// assert_eq!((outcome.previous_last, outcome.created, outcome.next), (None, true, 5000));
    /// assert_eq!(ids.next().await?, 5000);
    /// assert_eq!(ids.set_next(100).await.unwrap_err().code(), Some("BACKWARDS_REFUSED"));
    /// # Ok(()) }
    /// ```
    pub async fn set_next(&self, next: i64) -> Result<SetNextOutcome> {
        self.set_next_with(next, false).await
    }

    /// [`set_next`](Self::set_next) without its checks: moves the counter backwards, off the
    /// grid, or over a malformed counter (a repair). Numbers issued before may be issued again.
    ///
    /// ```no_run
    /// # async fn example(seqs: mongo_seq::Sequences) -> mongo_seq::Result<()> {
    /// let ids = seqs.sequence("ids", None)?;
    /// ids.set_next(5000).await?;
    /// ids.set_next_forced(1).await?; // back to the start
    /// assert_eq!(ids.next().await?, 1);
    /// # Ok(()) }
    /// ```
    pub async fn set_next_forced(&self, next: i64) -> Result<SetNextOutcome> {
        self.set_next_with(next, true).await
    }

    async fn set_next_with(&self, next: i64, force: bool) -> Result<SetNextOutcome> {
        let bound = self.bound()?;
        let mut plan = SetNext::new(&self.shared.spec, &bound.counter_id, next, force)?;
        // Dropped (the call cancelled) or finished: the block goes, unless the core refused.
        let mut discard = Discard(Some(&bound.counter));
        let outcome = self.run(&mut plan).await;
        if outcome.is_err() {
            discard.0 = None;
        }
        outcome
    }

    /// Moves the counter so it never issues `value` or anything before it (`$max`; `$min`
    /// counting down), never backwards: for imports. Returns the counter's state afterwards.
    ///
    /// ```no_run
    /// # async fn example(seqs: mongo_seq::Sequences) -> mongo_seq::Result<()> {
    /// let ids = seqs.sequence("ids", None)?;
    /// assert_eq!(ids.seed_from_max(1000).await?.next, Some(1001));
    /// assert_eq!(ids.seed_from_max(10).await?.next, Some(1001), "never backwards");
    /// # Ok(()) }
    /// ```
    pub async fn seed_from_max(&self, value: i64) -> Result<CounterState> {
        let mut plan = SeedFromMax::new(&self.shared.spec, &self.bound()?.counter_id, value)?;
        self.run(&mut plan).await
    }

    /// Moves the counter past the largest number stored in `field` of `collection` (only
    /// numbers count: strings and ObjectIds are ignored; for a scoped handle, among the
    /// documents with its scope values), never backwards. Returns the counter's state
    /// afterwards.
    ///
    /// ```no_run
    /// # async fn example(seqs: mongo_seq::Sequences, db: mongodb::Database) -> mongo_seq::Result<()> {
    /// use mongodb::bson::{doc, Document};
    ///
    /// let users = db.collection::<Document>("users");
    /// users.insert_many([doc! { "_id": 17 }, doc! { "_id": 41 }]).await?;
    /// let state = seqs.sequence("userid", None)?.seed_from_collection(&users, "_id").await?;
    /// assert_eq!((state.last, state.next), (Some(41), Some(42)));
    /// # Ok(()) }
    /// ```
    pub async fn seed_from_collection<T: Send + Sync>(
        &self,
        collection: &Collection<T>,
        field: &str,
    ) -> Result<CounterState> {
        let bound = self.bound()?;
        let mut plan = SeedFromCollection::new(&self.shared.spec, field, bound.scope.as_ref())?;
        let executor = self
            .shared
            .executor
            .clone()
            .with_documents(collection.clone_with_type());
        run_plan(&mut plan, &mut Target::counters(&executor)).await
    }

    /// `count` numbers of the counter `counter_id` of this sequence (an insert plan's `take`).
    pub(crate) async fn take_from(&self, counter_id: &str, count: u64) -> Result<Numbers> {
        let counter = match &self.binding {
            Binding::Counter(bound) if bound.counter_id == counter_id => Arc::clone(&bound.counter),
            _ => self.shared.counters.get(&self.shared.spec, counter_id)?,
        };
        counter.take(count, &self.shared.executor).await
    }

    /// The executor of this sequence's counters.
    pub(crate) fn executor(&self) -> &Executor {
        &self.shared.executor
    }

    async fn run<P>(&self, plan: &mut P) -> Result<P::Output>
    where
        P: mongo_seq_core::Plan + Send,
    {
        run_plan(plan, &mut Target::counters(&self.shared.executor)).await
    }
}

/// Drops a counter's block when dropped, unless disarmed (see `set_next`).
struct Discard<'a>(Option<&'a Arc<Counter>>);

impl Drop for Discard<'_> {
    fn drop(&mut self) {
        if let Some(counter) = self.0 {
            counter.discard();
        }
    }
}
