//! Voiding numbers: [`VoidNumbers`] records numbers of a counter that no document will ever
//! hold (a cancelled invoice's number, numbers a process reserved and lost), with why, when
//! and by whom, in the ledger ([`crate::ledger::entry`]).
//!
//! ```text
//! every number checked first (on the grid from start, within bounds, distinct; reason, by)
//! findOne counters {_id}                                       (majority)
//!  ├─ none ───────────────────► NUMBER_NOT_ISSUED (the counter does not exist)
//!  ├─ intent pending ─────────► INTENT_PENDING
//!  ├─ a number beyond seq ────► NUMBER_NOT_ISSUED
//!  └─ find documents {<scope>, <field>Period, <field>: {$in: numbers}} limit 1 (majority, primary)
//!      ├─ one ────────────────► NUMBER_HELD
//!      └─ find ledger {_id.counter, _id.number: {$in: numbers}} limit 1      (majority)
//!          ├─ one ────────────► ALREADY_VOIDED (its kind: void, or deleted)
//!          └─ insertOne ledger entry, one per number, in order   (w: majority)
//!              ├─ all inserted ► done {counterId, numbers, atMs}
//!              └─ duplicate key ► findOne ledger {_id} ─► ALREADY_VOIDED (+ those written)
//! ```
//!
//! Nothing is written unless every number passes every check. Each number is then voided on its
//! own, in the order given: the ledger's entries are documents, and MongoDB writes several
//! documents atomically only in a transaction (which the protocols never need: see
//! ARCHITECTURE.md). Another call may void one of them between the checks and the writes; this
//! call then stops there with ALREADY_VOIDED, keeping the entries it wrote before (they passed
//! every check: voided, as asked) and listing them in the error (`voided`, in its details and
//! message). Undoing them instead would not make the call all-or-nothing either: a crash
//! between the write and its undo leaves them. A failure of the connection midway leaves the
//! numbers before it voided the same way; call again with the rest. A number of the counter's
//! pending gapless intent is not final: its completion moves numbers DOWN over a deleted
//! document's, so a void there could later be held by a document. Voids wait until no intent
//! is pending (`INTENT_PENDING`, nothing written; a trigger clears its intent within one
//! batch, or its successor completes it on takeover): a counter read with no intent pending has
//! every number up to its `seq` final, and later reservations only take numbers above it.
//!
//! The documents are read `majority` on the primary: a deletion that may still roll back (a
//! `w: 1` delete, then a failover) must not make its number voidable (seed 867 of the
//! simulation: the document came back holding a voided number). What a void cannot see is a
//! number still in a process's hands: a block the package reserved and has not handed out yet, a
//! sidecar batch being written, a numbering write not yet majority-committed. Void a non-gapless
//! series' numbers once the processes that took them are done with them (the gaps `check` lists
//! after they stopped); a gapless series' are safe (INTENT_PENDING while a batch is written).

use serde::Serialize;
use serde_json::Value;

use crate::counter::document::read_spec_counter;
use crate::counter::set_next::check_on_grid;
use crate::ejson;
use crate::error::SeqError;
use crate::ledger::entry::{LedgerEntry, LedgerKind};
use crate::numbering::intent::{read_command, read_counter_extras};
use crate::numbering::sealing::{self, CounterSeal};
use crate::numbering::series::holders;
use crate::protocol::command::{Collection, Command, QueryOptions};
use crate::protocol::machine::{Machine, MachinePlan};
use crate::protocol::plan::Retries;
use crate::protocol::plan::Step;
use crate::protocol::reply::{unexpected, Reply};
use crate::sequence::counter_id::CounterKey;
use crate::sequence::field::check_field_path;
use crate::sequence::field::stored_value;
use crate::sequence::instant::check_instant;
use crate::sequence::options::SequenceSpec;

/// The most numbers one void may name.
pub const MAX_VOIDS: usize = 1_000;

/// What to void: `numbers` of counter `counterId`, which documents hold in `field`; why
/// (`reason`), who (`by`), when (`nowMs`).
#[derive(Debug, Clone, PartialEq)]
pub struct VoidRequest {
    pub counter_id: String,
    pub numbers: Vec<i64>,
    pub field: String,
    pub reason: String,
    pub by: String,
    pub now_ms: i64,
}

impl VoidRequest {
    /// Parses `{counterId, numbers, field, reason, by, nowMs}` (typed errors naming the key).
    pub fn from_json(raw: &Value) -> Result<Self, SeqError> {
        const KEYS: [&str; 6] = ["counterId", "numbers", "field", "reason", "by", "nowMs"];
        let bad = |reason: String| SeqError::invalid_argument("request", reason);
        let Value::Object(map) = raw else {
            return Err(bad(format!(
                "must be an object {{ counterId, numbers, field, reason, by, nowMs }}, got {}",
                ejson::describe(raw)
            )));
        };
        if let Some(key) = map.keys().find(|key| !KEYS.contains(&key.as_str())) {
            return Err(bad(format!(
                "has an unknown key `{}` (known: {})",
                ejson::truncate(key),
                KEYS.join(", ")
            )));
        }
        let text = |key: &str| -> Result<String, SeqError> {
            match map.get(key) {
                Some(Value::String(text)) => Ok(text.clone()),
                other => Err(SeqError::invalid_argument(
                    key,
                    format!(
                        "must be a string, got {}",
                        other.map_or_else(|| "nothing".to_owned(), ejson::describe)
                    ),
                )),
            }
        };
        let numbers = match map.get("numbers") {
            Some(Value::Array(items)) => items
                .iter()
                .map(|item| {
                    ejson::read_i64(item).map_err(|reason| {
                        SeqError::invalid_argument(
                            "numbers",
                            format!("each must be an integer: {reason}"),
                        )
                    })
                })
                .collect::<Result<Vec<i64>, SeqError>>()?,
            other => {
                return Err(SeqError::invalid_argument(
                    "numbers",
                    format!(
                        "must be an array of integers, got {}",
                        other.map_or_else(|| "nothing".to_owned(), ejson::describe)
                    ),
                ))
            }
        };
        let now_ms = match map.get("nowMs") {
            Some(value) => ejson::read_i64(value)
                .map_err(|reason| SeqError::invalid_argument("nowMs", reason))?,
            None => return Err(SeqError::invalid_argument("nowMs", "is missing")),
        };
        Ok(Self {
            counter_id: text("counterId")?,
            numbers,
            field: text("field")?,
            reason: text("reason")?,
            by: text("by")?,
            now_ms,
        })
    }
}

/// What a void wrote: the numbers, in the order given, and when.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct VoidOutcome {
    pub counter_id: String,
    pub numbers: Vec<i64>,
    pub at_ms: i64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    ReadCounter,
    FindHeld,
    FindLedger,
    /// A sealed series: moving the head over the voids' links.
    Append,
    /// Inserting entry `i`.
    Insert(usize),
    /// A sealed series: the voids written, their records dropped from the counter.
    Pull,
    /// Entry `i` was a duplicate key: reading whose it is.
    ReadTaken(usize),
}

// A sealed series' voids: links of the chain.
mod sealed;

/// The void plan; see the module docs.
pub type VoidNumbers = MachinePlan<VoidMachine>;

/// The state of a [`VoidNumbers`].
#[derive(Debug, Clone)]
pub struct VoidMachine {
    spec: SequenceSpec,
    key: CounterKey,
    field: String,
    entries: Vec<LedgerEntry>,
    /// A sealed series' counter seal, as read; `Some` once the voids' links moved the head.
    sealed: Option<CounterSeal>,
    appended: bool,
    retries: Retries,
    phase: Phase,
}

impl VoidNumbers {
    /// Checks every argument (nothing is sent before): the counter id is `spec`'s, each
    /// number within bounds and on the grid from `start`, the numbers distinct, 1 to
    /// [`MAX_VOIDS`] of them; `reason` and `by` non-blank; `field` a field path.
    pub fn new(spec: &SequenceSpec, request: &VoidRequest) -> Result<Self, SeqError> {
        spec.check_counter_id(&request.counter_id)?;
        // The `counterId` option's string is an `_id` of any shape: the key is the sequence's own.
        let own_id = spec.counter_key() == Some(&Value::String(request.counter_id.clone()));
        let key = CounterKey::parse(if own_id {
            spec.name()
        } else {
            &request.counter_id
        })?;
        key.belongs_to(spec)?;
        check_field_path("field", &request.field)?;
        check_instant("nowMs", None, request.now_ms)?;
        if request.numbers.is_empty() || request.numbers.len() > MAX_VOIDS {
            return Err(SeqError::invalid_argument(
                "numbers",
                format!(
                    "must name 1 to {MAX_VOIDS} numbers, got {}",
                    request.numbers.len()
                ),
            ));
        }
        let mut entries: Vec<LedgerEntry> = Vec::with_capacity(request.numbers.len());
        for &number in &request.numbers {
            if !spec.in_bounds(number) {
                return Err(spec.out_of_bounds("number", number));
            }
            check_on_grid(spec, "numbers", number, "")?;
            if entries.iter().any(|entry| entry.number == number) {
                return Err(SeqError::invalid_argument(
                    "numbers",
                    format!("{number} is named twice"),
                ));
            }
            let mut entry = LedgerEntry::void(
                &request.counter_id,
                number,
                &request.reason,
                &request.by,
                request.now_ms,
            )?;
            entry.sequence = spec.name().to_owned();
            entries.push(entry);
        }
        let machine = VoidMachine {
            spec: spec.clone(),
            key,
            field: request.field.clone(),
            entries,
            sealed: None,
            appended: false,
            retries: Retries::default(),
            phase: Phase::ReadCounter,
        };
        let first = read_command(spec, &request.counter_id);
        Ok(MachinePlan::begin(machine, Ok(Step::Command(first))))
    }
}

impl VoidMachine {
    fn counter_id(&self) -> &str {
        self.entries
            .first()
            .map_or("", |entry| entry.counter_id.as_str())
    }

    fn numbers_in(&self) -> Value {
        let numbers: Vec<Value> = self.entries.iter().map(|e| ejson::long(e.number)).collect();
        ejson::object([("$in", Value::Array(numbers))])
    }

    /// The documents of this counter (its scope values, its period) holding one of the numbers.
    fn held_command(&self) -> Command {
        let filter = holders(&self.field, &self.key, self.numbers_in());
        let projection = ejson::object([("_id", 1.into()), (self.field.as_str(), 1.into())]);
        Command::Find {
            collection: Collection::Documents,
            filter,
            options: QueryOptions {
                projection: Some(projection),
                sort: None,
                limit: Some(1),
                majority: true,
            },
            after_cluster_time: None,
        }
    }

    fn ledger_command(&self) -> Command {
        let filter = ejson::object([
            ("_id.counter", Value::String(self.counter_id().to_owned())),
            ("_id.number", self.numbers_in()),
        ]);
        Command::Find {
            collection: Collection::Ledger,
            filter,
            options: QueryOptions {
                projection: None,
                sort: None,
                limit: Some(1),
                majority: false,
            },
            after_cluster_time: None,
        }
    }

    fn insert(&mut self, index: usize) -> Result<Step<VoidOutcome>, SeqError> {
        let Some(entry) = self.entries.get(index) else {
            if self.appended && self.phase != Phase::Pull {
                self.phase = Phase::Pull;
                let keys = self
                    .entries
                    .iter()
                    .map(|e| LedgerEntry::key(&e.counter_id, e.number))
                    .collect();
                return Ok(Step::Command(sealing::pull_command(
                    &self.spec,
                    self.counter_id(),
                    keys,
                    Vec::new(),
                )));
            }
            let first = self.entries.first();
            return Ok(Step::Done(VoidOutcome {
                counter_id: self.counter_id().to_owned(),
                numbers: self.entries.iter().map(|e| e.number).collect(),
                at_ms: first.map_or(0, |e| e.at_ms),
            }));
        };
        self.phase = Phase::Insert(index);
        Ok(Step::Command(Command::InsertOne {
            collection: Collection::Ledger,
            document: entry.to_document(),
        }))
    }

    /// The number a found document or entry is about (the first asked for, if unreadable).
    fn number_of(&self, found: Option<&Value>) -> i64 {
        found
            .and_then(|value| ejson::read_i64(value).ok())
            .or_else(|| self.entries.first().map(|e| e.number))
            .unwrap_or_default()
    }

    /// ALREADY_VOIDED: `number` has the ledger entry `entry` already (and this call wrote
    /// `written` before a concurrent writer took it).
    fn already(&self, number: i64, entry: Option<&Value>, written: &[i64]) -> SeqError {
        let kind = entry
            .and_then(|e| e.get("kind"))
            .and_then(Value::as_str)
            .and_then(LedgerKind::from_name);
        let kind = match kind {
            Some(LedgerKind::Deleted) => "recorded as its document's deletion",
            _ => "voided",
        };
        let after = if written.is_empty() {
            "nothing was written".to_owned()
        } else {
            let list: Vec<String> = written.iter().map(i64::to_string).collect();
            format!(
                "another writer took it meanwhile; this call had voided {} already",
                list.join(", ")
            )
        };
        let mut error = self.refused(
            "ALREADY_VOIDED",
            number,
            format!("is already in the ledger ({kind}): a number is voided once ({after})"),
        );
        if let SeqError::VoidRefused { voided, .. } = &mut error {
            voided.extend_from_slice(written);
        }
        error
    }

    /// A refusal of `number` with nothing written: `message` follows "number N of counter `C` ".
    fn refused(&self, code: &'static str, number: i64, message: String) -> SeqError {
        let counter_id = self.counter_id().to_owned();
        SeqError::VoidRefused {
            code,
            message: format!("number {number} of counter `{counter_id}` {message}"),
            counter_id,
            number,
            voided: Vec::new(),
        }
    }

    /// NUMBER_NOT_ISSUED (`last`: the counter's, `None` when it does not exist).
    fn not_issued(&self, number: i64, last: Option<i64>) -> SeqError {
        let why = last.map_or_else(
            || "the counter does not exist".to_owned(),
            |last| format!("the counter's last is {last}"),
        );
        self.refused(
            "NUMBER_NOT_ISSUED",
            number,
            format!(
                "was never issued ({why}): only issued numbers can be voided (nothing was written)"
            ),
        )
    }

    fn check_counter(&self, document: &Value) -> Result<(), SeqError> {
        let counter_id = self.counter_id();
        let last = read_spec_counter(&self.spec, document, counter_id)?;
        let (_, intent) = read_counter_extras(document, counter_id)?;
        if let Some(intent) = intent {
            let number = self.number_of(None);
            return Err(self.refused(
                "INTENT_PENDING",
                number,
                format!("cannot be voided now: the counter has a pending gapless intent (from {}); a sidecar trigger is writing or completing its numbers: try again when it is done (nothing was written)", intent.first),
            ));
        }
        let beyond = |n: i64| {
            if self.spec.step() > 0 {
                n > last
            } else {
                n < last
            }
        };
        match self.entries.iter().find(|entry| beyond(entry.number)) {
            Some(entry) => Err(self.not_issued(entry.number, Some(last))),
            None => Ok(()),
        }
    }

    fn transition(&mut self, reply: Reply) -> Result<Step<VoidOutcome>, SeqError> {
        match (self.phase, reply) {
            (Phase::ReadCounter, Reply::None) => Err(self.not_issued(self.number_of(None), None)),
            (Phase::ReadCounter, Reply::Document { document }) => {
                self.check_counter(&document)?;
                self.read_seal(&document)?;
                self.phase = Phase::FindHeld;
                Ok(Step::Command(self.held_command()))
            }
            (Phase::ReadCounter, other) => Err(unexpected(&other, "findOne")),
            (Phase::FindHeld, reply) => {
                let documents = reply.into_documents("find")?;
                if let Some(document) = documents.first() {
                    let number = self.number_of(stored_value(document, &self.field));
                    let id = document.get("_id").cloned().unwrap_or(Value::Null);
                    return Err(self.refused(
                        "NUMBER_HELD",
                        number,
                        format!("is held by document {}: only a number no document holds can be voided (nothing was written)", ejson::truncate(&id.to_string())),
                    ));
                }
                self.phase = Phase::FindLedger;
                Ok(Step::Command(self.ledger_command()))
            }
            (Phase::FindLedger, reply) => {
                let entries = reply.into_documents("find")?;
                if let Some(entry) = entries.first() {
                    let number = self.number_of(entry.get("_id").and_then(|id| id.get("number")));
                    return Err(self.already(number, Some(entry), &[]));
                }
                self.append()
            }
            (Phase::Append, reply) => self.on_appended(reply),
            (Phase::Pull, _) => self.insert(self.entries.len()),
            (Phase::Insert(index), Reply::Inserted) => self.insert(index.saturating_add(1)),
            (Phase::Insert(index), Reply::DuplicateKey) => {
                let entry = self.entries.get(index);
                let filter = ejson::object([(
                    "_id",
                    entry.map_or(Value::Null, |e| LedgerEntry::key(&e.counter_id, e.number)),
                )]);
                self.phase = Phase::ReadTaken(index);
                Ok(Step::Command(Command::FindOne {
                    collection: Collection::Ledger,
                    filter,
                    options: None,
                }))
            }
            (Phase::Insert(_), other) => Err(unexpected(&other, "insertOne")),
            (Phase::ReadTaken(index), reply) => {
                let found = match reply {
                    Reply::Document { document } => Some(document),
                    Reply::None => None,
                    other => return Err(unexpected(&other, "findOne")),
                };
                let written: Vec<i64> = self
                    .entries
                    .iter()
                    .take(index)
                    .map(|entry| entry.number)
                    .collect();
                let number = self.entries.get(index).map_or(0, |entry| entry.number);
                Err(self.already(number, found.as_ref(), &written))
            }
        }
    }
}

impl Machine for VoidMachine {
    type Output = VoidOutcome;

    fn on_reply(&mut self, reply: Reply) -> Result<Step<VoidOutcome>, SeqError> {
        self.transition(reply)
    }
}
