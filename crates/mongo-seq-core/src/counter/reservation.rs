//! `reserve(n)`: atomically take the next `n` numbers of a counter.
//!
//! Every reservation's filter admits only a counter that is well formed and has room, so the
//! server itself refuses the rest, whatever the server: `seq` stored as an integer and not an
//! array (`$type` matches an array holding an integer, so `$not: {$type: "array"}` too), at
//! least the value before the first number the bounds allow (`min - step` counting up), and at
//! most `bound - n·step` (`bound` is `max`, or `i64::MAX` without one: the top of the int64
//! range is a bound like any other, so a counter never wraps). Counting down mirrors it.
//!
//! Two protocols, chosen from the options (diagram below):
//!
//! * **Upsert** (the tutorial's, used when `start == step`, no bound in the counting direction
//!   and no extra filter): `findOneAndUpdate({_id, seq: {…}}, {$inc: {seq: n·step}}, upsert,
//!   after)`. A missing counter is created holding `n·step`, which is right exactly when
//!   `start == step`. A duplicate-key error means the counter exists but did not match: two
//!   upserts raced, the counter is malformed, or it has no room left. A `findOne` tells which
//!   (see below).
//! * **Guarded** (everything else): no upsert. A null reply triggers a `findOne({_id})`:
//!   missing → `insertOne({_id, seq: start - step + n·step})` (duplicate key → retry the
//!   update); present with room → lost a race, retry; present without room →
//!   `SEQUENCE_EXHAUSTED` (`OVERFLOW` without a bound), or, with `minCount < count`, retry with
//!   what is left.
//!
//! A counter the filter refused is read by the `findOne`; one that is not an integer, or lies
//! outside the range a counter of the sequence can hold, fails with `MALFORMED_COUNTER`, and
//! nothing was written. A counter stored as an integral double (the legacy shell writes
//! `seq: 0` as `0.0`) does not match the integer filter either: the plan checks its room from
//! the `findOne` and sets it to the new value as an int64 only if it still holds exactly the
//! value read (`findOneAndUpdate({_id, seq: {$eq: <that double>}}, {$set: {seq: <long>}})`).
//! That first reservation costs three commands; from then on the counter is an int64 and every
//! reservation one command, so many processes on a tutorial counter do not keep losing the
//! compare-and-set to each other.
//!
//! Restarts are capped by [`MAX_RETRIES`](crate::protocol::plan::MAX_RETRIES); counts by
//! [`MAX_COUNT`].
//!
//! Every write also checks the sequence's [definition](crate::counter::definition) (unless
//! the request says `checkDefinition: false`), at no extra command in the common case: the
//! update's filter admits only a counter that records our definition's digest
//! (`definitionDigest: H`), and an upsert's `$setOnInsert` gives a new counter the definition and
//! its digest. A counter the digest does not admit fails the filter like a counter without room
//! (the upsert's insert hits its `_id`: a duplicate key), and the `findOne` that follows (on the
//! conflict path only) reads it: another definition fails with `SEQUENCE_CONFLICT` naming the
//! option that differs, nothing reserved; a counter without a definition (the tutorial's, an
//! import's) or with ours but no digest (written before digests existed) is **recorded**: the
//! update is sent again with the filter `$or: [{definition: {$exists: false}}, {definition: D}]`
//! and `$set: {definition: D, definitionDigest: H}` (as is the legacy double's
//! compare-and-set), so that counter's first reservation costs three commands and every later one
//! one. The document a reservation returns is checked against our definition too: one whose
//! digest matched but whose definition is another (rewritten by a release before digests) fails
//! with `SEQUENCE_CONFLICT`, its numbers lost (a gap, never a repeat).
//!
//! `extraFilter`/`extraSet` let later callers (fencing) add conditions and fields to the same
//! atomic update; the inserted counter also receives the `extraSet` fields.
//!
//! ```text
//! reserve(n), inc = n·step:
//!
//! ok = {$type: ["int", "long"], $not: {$type: "array"},   never $inc a string, a fraction, NaN or an array
//!       $lte: bound-inc,                                   room for n (bound = max, else the i64 limit)
//!       $gte: min-step}                                    not behind the sequence's range (when min is set)
//!
//! def = {definitionDigest: H}; once the counter must be recorded, {$or: [{definition: {$exists: false}}, {definition: D}]}
//!       and $set: {definition: D, definitionDigest: H}
//!
//! start == step, no bound, no extraFilter  (the tutorial's upsert)
//!   findOneAndUpdate {_id, seq:ok, …def} {$inc:{seq:inc}, $setOnInsert:{definition: D, definitionDigest: H}} upsert:true after
//!      ├─ document ─────────────────────────────► done: [seq-inc+step … seq]
//!      └─ duplicateKey (racing upserts, no room, or a malformed counter) ─► findOne {_id} (as below)
//!
//! otherwise (guarded)
//!   findOneAndUpdate {_id, seq:ok, …extraFilter, …def} {$inc, $set: extraSet} upsert:false after
//!      ├─ document ──────────────────────────────► done
//!      └─ none ─► findOne {_id}
//!                  ├─ none ─► insertOne {_id, seq: start-step+inc, …extraSet}
//!                  │           ├─ inserted ─────► done: [start … start+(n-1)·step]
//!                  │           └─ duplicateKey ─► retry update
//!                  └─ document ─┬─ another definition: SEQUENCE_CONFLICT (nothing was written)
//!                               ├─ seq not an integer, or outside the sequence's range: MALFORMED_COUNTER (nothing was written)
//!                               ├─ seq an integral double (legacy shell's 0.0), room for n:
//!                               │    findOneAndUpdate {_id, seq: {$eq: <that double>}} {$set: {seq: <long: seq+inc>}}
//!                               │      ─► done (an int64 from now on) / none: findOne again
//!                               ├─ room for n, not recorded (no definition, or no digest): retry update, recording
//!                               ├─ room for n: retry update (raced) / CONDITION_NOT_MET (extraFilter)
//!                               ├─ room for k ≥ minCount: retry update with n = k
//!                               └─ otherwise: SEQUENCE_EXHAUSTED (OVERFLOW without a bound)
//! ```
//! (Mirrored when counting down: `$gte: bound-inc`, `$lte: max-step`.)
//!
//! **A block refill's refusal** speaks of its caller, not of the block: a refill asks for a
//! whole block (perhaps grown) but needs only what its callers wait for (its `minCount`), and
//! the caller it fails may hold numbers of the block already. Its `SEQUENCE_EXHAUSTED` reports
//! what the caller asked for (`requested`) and what is left for it (`available`): the counter's
//! room less what the callers before it wait for, plus the numbers its block holds for it (see
//! `RefillCaller`; the [`BlockCounter`](crate::BlockCounter) keeps those numbers).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::counter::definition::{self, CounterDefinition};
use crate::counter::document::read_spec_counter;
use crate::counter::range::ReservedRange;
use crate::ejson;
use crate::error::SeqError;
use crate::protocol::command::{operator, Collection, Command, ReturnDocument, UpdateOptions};
use crate::protocol::machine::{Machine, MachinePlan};
use crate::protocol::plan::{Retries, Step};
use crate::protocol::reply::{unexpected, Reply};
use crate::sequence::limits::MAX_COUNT;
use crate::sequence::options::SequenceSpec;

mod check;
mod request;
pub use request::ReserveRequest;

/// `seq` stored as an integer, not in an array: never `$inc` a string, a fraction, NaN, or an
/// array (which `$type` alone would match when it holds an integer).
pub(crate) fn integer_type_condition() -> Map<String, Value> {
    let mut condition = Map::new();
    condition.insert(
        "$type".to_owned(),
        Value::Array(vec!["int".into(), "long".into()]),
    );
    condition.insert("$not".to_owned(), not_an_array());
    condition
}

/// `{$type: "array"}`, to be negated with `$not`.
pub(crate) fn not_an_array() -> Value {
    ejson::object([("$type", "array".into())])
}

fn is_counter_field(key: &str, counter_field: &str) -> bool {
    ["_id", counter_field].iter().any(|f| {
        key == *f
            || key
                .strip_prefix(f)
                .is_some_and(|rest| rest.starts_with('.'))
    })
}

/// The caller a block refill runs for, as its refusal reports it (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct RefillCaller {
    /// The numbers the caller asked for (the refill may ask for more: a block).
    pub(crate) requested: u64,
    /// The numbers of the block it holds already (kept for it when the refill fails).
    pub(crate) held: u64,
    /// The numbers the callers before it still wait for (served first from the refill).
    pub(crate) before: u64,
}

#[derive(Debug, Clone)]
enum Phase {
    Update,
    Check,
    CompareAndIncrement,
    Insert(ReservedRange),
}

/// The reservation plan; see the module docs for the protocol.
pub type Reservation = MachinePlan<ReservationMachine>;

/// The state of a [`Reservation`].
#[derive(Debug, Clone)]
pub struct ReservationMachine {
    spec: SequenceSpec,
    request: ReserveRequest,
    count: u64,
    min_count: u64,
    upsert: bool,
    definition: Option<CounterDefinition>,
    /// The counter is being recorded: the filter admits no definition or exactly ours and the
    /// update sets it with its digest (module docs); otherwise the digest alone is the check.
    recording: bool,
    /// A block refill's caller, for its refusal (`None`: the request's own count).
    caller: Option<RefillCaller>,
    phase: Phase,
    retries: Retries,
}

impl Reservation {
    pub fn new(spec: &SequenceSpec, request: &ReserveRequest) -> Result<Self, SeqError> {
        Self::with_caller(spec, request, None, None)
    }

    /// [`Reservation::new`] with `spec`'s definition built already (a block counter's, which
    /// builds it once: its digest is a SHA-256).
    pub(crate) fn with_definition(
        spec: &SequenceSpec,
        request: &ReserveRequest,
        definition: &CounterDefinition,
    ) -> Result<Self, SeqError> {
        Self::with_caller(spec, request, None, Some(definition))
    }

    /// A block refill for `caller`: refused, it reports the caller's request and what is
    /// left for it (see the module docs). `definition`: `spec`'s, built already.
    pub(crate) fn for_caller(
        spec: &SequenceSpec,
        request: &ReserveRequest,
        caller: RefillCaller,
        definition: &CounterDefinition,
    ) -> Result<Self, SeqError> {
        Self::with_caller(spec, request, Some(caller), Some(definition))
    }

    fn with_caller(
        spec: &SequenceSpec,
        request: &ReserveRequest,
        caller: Option<RefillCaller>,
        built: Option<&CounterDefinition>,
    ) -> Result<Self, SeqError> {
        spec.check_counter_id(&request.counter_id)?;
        spec.refuse_sealed(
            "a reservation of numbers (next(), a block, a trigger that is not gapless)",
        )?;
        let min_count = request.validate(spec.counter_field())?;
        let (_, bounded) = spec.limit();
        let upsert = spec.start() == spec.step() && !bounded && request.extra_filter.is_empty();
        let mut machine = ReservationMachine {
            spec: spec.clone(),
            request: request.clone(),
            count: request.count,
            min_count,
            upsert,
            definition: request.check_definition.then(|| {
                built
                    .cloned()
                    .unwrap_or_else(|| CounterDefinition::of(spec))
            }),
            recording: false,
            caller,
            phase: Phase::Update,
            retries: Retries::default(),
        };
        let first = machine.begin_update()?;
        Ok(MachinePlan::begin(machine, Ok(Step::Command(first))))
    }
}

impl ReservationMachine {
    fn counter_id(&self) -> &str {
        &self.request.counter_id
    }

    fn increment(&self) -> Result<i64, SeqError> {
        i64::try_from(self.count)
            .ok()
            .and_then(|count| count.checked_mul(self.spec.step()))
            .ok_or_else(|| {
                SeqError::overflow(format!("count {} × step {}", self.count, self.spec.step()))
            })
    }

    /// The atomic `$inc`, or a `findOne` when not even an empty counter could fit `count`.
    fn begin_update(&mut self) -> Result<Command, SeqError> {
        let increment = self.increment()?;
        let mut filter = self.spec.id_filter(self.counter_id());
        let mut seq_condition = integer_type_condition();
        // Room for the increment before the bound (the int64 limit when none is set).
        let (bound, _) = self.spec.limit();
        let Some(threshold) = bound.checked_sub(increment) else {
            self.phase = Phase::Check;
            return Ok(self.check_command());
        };
        // And not behind the start of the range a counter can hold (min - step counting up).
        let (low, high) = self.spec.counter_range();
        let (room_op, behind_op, behind, unlimited) = if self.spec.step() > 0 {
            ("$lte", "$gte", low, i64::MIN)
        } else {
            ("$gte", "$lte", high, i64::MAX)
        };
        seq_condition.insert(room_op.to_owned(), ejson::long(threshold));
        if behind != unlimited {
            seq_condition.insert(behind_op.to_owned(), ejson::long(behind));
        }
        filter.insert(
            self.spec.counter_field().to_owned(),
            Value::Object(seq_condition),
        );
        filter.extend(self.request.extra_filter.clone());
        self.add_definition_condition(&mut filter);
        let mut update = Map::new();
        update.insert(
            "$inc".to_owned(),
            operator(self.spec.counter_field(), ejson::long(increment)),
        );
        let set = self.set_fields(self.recording);
        if !set.is_empty() {
            update.insert("$set".to_owned(), Value::Object(set));
        }
        if let Some(definition) = self
            .definition
            .as_ref()
            .filter(|_| self.upsert && !self.recording)
        {
            let mut on_insert = Map::new();
            definition.add_to(&mut on_insert);
            update.insert("$setOnInsert".to_owned(), Value::Object(on_insert));
        }
        self.phase = Phase::Update;
        Ok(Command::FindOneAndUpdate {
            collection: Collection::Counters,
            filter: Value::Object(filter),
            update: Value::Object(update),
            options: UpdateOptions {
                upsert: self.upsert,
                return_document: ReturnDocument::After,
            },
        })
    }

    /// `extraSet` and, when checked and `recording`, the definition and its digest: the fields
    /// a write of the plan sets (an insert or a recording write records them).
    fn set_fields(&self, recording: bool) -> Map<String, Value> {
        let mut set = self.request.extra_set.clone();
        if let Some(definition) = self.definition.as_ref().filter(|_| recording) {
            definition.add_to(&mut set);
        }
        set
    }

    /// The definition, unless the simulator's mutant ignores it.
    fn checked_definition(&self) -> Option<&CounterDefinition> {
        // Mutant (simulator only): reserve whatever definition the counter records.
        if crate::mutants::active(crate::mutants::Mutant::IgnoreDefinition) {
            return None;
        }
        self.definition.as_ref()
    }

    fn add_definition_condition(&self, filter: &mut Map<String, Value>) {
        match self.checked_definition() {
            Some(definition) if self.recording => definition.add_condition(filter),
            Some(definition) => definition.add_digest_condition(filter),
            None => {}
        }
    }

    /// The counter a write returned, checked against our definition (module docs), then read.
    fn reserved(&self, document: &Value) -> Result<Step<ReservedRange>, SeqError> {
        if let Some(definition) = self.checked_definition() {
            definition.check(self.counter_id(), document)?;
        }
        let last = read_spec_counter(&self.spec, document, self.counter_id())?;
        self.finish(last)
    }

    /// `SEQUENCE_EXHAUSTED` (`OVERFLOW` without a bound) with the counter at `last` (`None`:
    /// no counter yet): what the request asked for, or what its caller did.
    fn refused(&self, last: Option<i64>) -> SeqError {
        let Some(caller) = self.caller else {
            return self
                .spec
                .exhausted(self.counter_id(), last, self.request.count);
        };
        let room = self
            .spec
            .available_after(last.unwrap_or_else(|| self.spec.initial_counter()));
        let left = room
            .saturating_sub(caller.before)
            .saturating_add(caller.held);
        self.spec
            .exhausted_with(self.counter_id(), last, caller.requested, left)
    }

    fn check_command(&self) -> Command {
        Command::FindOne {
            collection: Collection::Counters,
            filter: Value::Object(self.spec.id_filter(self.counter_id())),
            options: None,
        }
    }

    fn restart(&mut self) -> Result<Step<ReservedRange>, SeqError> {
        self.retries.bump("reserve", &self.request.counter_id)?;
        self.begin_update().map(Step::Command)
    }

    /// Range from the post-update counter value, checked against the bounds.
    fn finish(&self, last: i64) -> Result<Step<ReservedRange>, SeqError> {
        let range = ReservedRange::ending_at(last, self.spec.step(), self.count)?;
        if !self.spec.in_bounds(range.first) || !self.spec.in_bounds(range.last) {
            return Err(SeqError::malformed_counter(
                self.counter_id(),
                format!(
                    "counter now at {last} issued {}..{} outside the sequence bounds (repair with setNext force)",
                    range.first, range.last
                ),
            ));
        }
        Ok(Step::Done(range))
    }

    fn on_update(&mut self, reply: Reply) -> Result<Step<ReservedRange>, SeqError> {
        match reply {
            Reply::Document { document } => self.reserved(&document),
            Reply::None if self.upsert => Err(SeqError::unexpected_reply(
                "findOneAndUpdate with upsert and returnDocument after returned no document",
            )),
            Reply::None => {
                self.phase = Phase::Check;
                Ok(Step::Command(self.check_command()))
            }
            // The counter exists but did not match: a racing upsert, or a non-integer `seq`.
            Reply::DuplicateKey if self.upsert => {
                self.phase = Phase::Check;
                Ok(Step::Command(self.check_command()))
            }
            other => Err(unexpected(&other, "findOneAndUpdate")),
        }
    }
}

impl Machine for ReservationMachine {
    type Output = ReservedRange;

    fn on_reply(&mut self, reply: Reply) -> Result<Step<ReservedRange>, SeqError> {
        match self.phase.clone() {
            Phase::Update => self.on_update(reply),
            Phase::Check => self.on_check(reply),
            Phase::CompareAndIncrement => self.on_compare_and_increment(reply),
            Phase::Insert(range) => self.on_insert(range, reply),
        }
    }
}
