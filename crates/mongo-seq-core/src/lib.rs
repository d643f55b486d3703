//! # mongo-seq-core
//!
//! Sequence logic for mongo-seq: sequential numbers for MongoDB documents, kept in a
//! counters collection compatible with MongoDB's auto-increment tutorial
//! (`{ _id: <sequence name>, seq: <last value issued> }`).
//!
//! **This crate does no I/O.** It validates options, builds the exact MongoDB commands
//! (filters, updates, options as Extended JSON v2), interprets the replies the caller feeds
//! back, and holds the pure parts (block allocation, scoped counter ids, formatted ids,
//! audits). The JS package (through a Wasm shim) and the Rust sidecar run the commands with
//! their drivers; they never need sequence logic of their own. It spawns no threads, reads
//! no clock, uses no randomness, and never panics on any input.
//!
//! ```
//! use mongo_seq_core::{Plan, Reply, ReserveRequest, Reservation, SequenceSpec, Step};
//! use serde_json::json;
//!
//! let spec = SequenceSpec::parse(&json!({ "name": "invoices", "format": "INV-{seq:06}" }))?;
//! let counter_id = spec.counter_id(None)?;
//! let mut plan = Reservation::new(&spec, &ReserveRequest::new(&counter_id, 1))?;
//!
//! let mut step = plan.current_step()?;
//! while let Step::Command(command) = step {
//!     // Run `command` with the driver; here: the server's answer to the tutorial upsert.
//!     let _ = command;
//!     let reply = Reply::Document { document: json!({ "_id": "invoices", "seq": 1 }) };
//!     step = plan.feed(reply)?;
//! }
//! let Step::Done(range) = step else { unreachable!() };
//! assert_eq!((range.first, range.last), (1, 1));
//! assert_eq!(spec.format_value(range.first, None).as_deref(), Some("INV-000001"));
//! # Ok::<(), mongo_seq_core::SeqError>(())
//! ```
//!
//! The code map is the folder tree, lower layers first (a module uses only those before it:
//! ARCHITECTURE.md, checked by `tests/tidy`):
//!
//! * [`mutants`] (the simulator's protocol mutants), [`ejson`] (Extended JSON values: integers
//!   in every form, values described in messages), [`error`] (the one error type, stable codes);
//! * [`sequence`]: options → [`SequenceSpec`], names, scoped counter ids and reading them back,
//!   formats, field paths, limits;
//! * [`protocol`]: commands, replies (a duplicate key's meaning among them), the [`Plan`] trait
//!   and the [`MachinePlan`] every plan is, read and write concerns, notes;
//! * [`counter`]: one counter document and its plans: `current`, `reserve`, `setNext`,
//!   `seedFromMax`, `seedFromCollection`;
//! * [`block`]: blocks in a client process (the hi/lo allocator, the package's
//!   [`BlockCounter`]);
//! * [`router`]: the period of an instant and the windows of instants sharing it
//!   ([`PeriodWindows`]: the host answers local dates), and a sequence's counters in a process
//!   ([`SeriesCounters`]: which one a call takes from, by scope and instant);
//! * [`insert`]: the package's numbered inserts and the optimistic insert loop;
//! * [`lease`]: a trigger's lease and its fencing epoch;
//! * [`numbering`]: numbering documents after they are written (the sidecar's triggers):
//!   batches, gapless groups and intents, seeding before a backfill, checkpoints;
//! * [`import`]: adopting other plugins' counters;
//! * [`ledger`]: accounting for a series' numbers (the audit, the account, dead letters; the
//!   ledger of voided numbers and deleted documents' numbers).
//!
//! Each module's docs hold its protocol diagram; the crate README has the error code table.

#![forbid(unsafe_code)]
#![deny(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects,
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss,
    clippy::cast_possible_wrap,
    clippy::unreachable,
    clippy::todo,
    clippy::unimplemented
)]
#![cfg_attr(
    test,
    allow(
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::indexing_slicing,
        clippy::panic
    )
)]

pub mod block;
pub mod counter;
pub mod ejson;
pub mod error;
pub mod import;
pub mod insert;
pub mod lease;
pub mod ledger;
pub mod mutants;
pub mod numbering;
pub mod protocol;
pub mod router;
pub mod seal;
pub mod sequence;

pub use block::allocator::{BlockAllocator, SharedBlockAllocator};
pub use block::block_counter::{BlockCounter, Numbers, Refill, Take};
pub use counter::adopt::{AdoptDefinition, AdoptOutcome};
pub use counter::current::{CounterState, CurrentValue};
pub use counter::definition::CounterDefinition;
pub use counter::document::read_counter;
pub use counter::kept::{CheckNotKept, KeptCheck};
pub use counter::range::ReservedRange;
pub use counter::reservation::{Reservation, ReserveRequest};
pub use counter::rewind::{RewindOutcome, RewindSequence};
pub use counter::seed::SeedFromMax;
pub use counter::seed_collection::SeedFromCollection;
pub use counter::set_next::{SetNext, SetNextOutcome};
pub use counter::shard_key::{check_shard_key, shard_key_refusal, SHARD_KEY_REFUSALS};
pub use error::{ErrorCode, ErrorInfo, SeqError};
pub use import::counters::{
    ImportAction, ImportCounters, ImportReport, ImportedCounter, IndexChange, SkippedCounter,
};
pub use import::request::{CounterSource, ImportRequest};
pub use insert::backoff::{Backoff, WaitWindow};
pub use insert::fields::{
    check_document_fields, check_document_size, check_insert_fields, MAX_DOCUMENT_BYTES,
};
pub use insert::numbered::{InsertDates, InsertNumbered, InsertOutcome};
pub use insert::optimistic::{
    OptimisticInsert, OptimisticOutcome, DEFAULT_MAX_ATTEMPTS, MAX_ATTEMPTS_LIMIT,
};
pub use lease::acquire::{AcquireLease, Acquisition, RenewLease, Renewal};
pub use lease::document::{Lease, LeaseHolder, LeaseInfo, LeaseOutcome, LeaseRequest};
pub use lease::twin::{Twin, TwinWatch, TWIN_RENEWALS};
pub use ledger::account::{
    account, unnumbered, Account, Class, DuplicateNumber, Reason, Run, Unnumbered, MAX_RUNS,
};
pub use ledger::audit::{audit, AuditReport, Duplicate, Gap};
pub use ledger::chronology::{chronology, document_date, ChronologyReport, EarlierDate};
pub use ledger::dead_letter::{
    dead_letter_document, record_dead_letter, resolve_dead_letters, state_and_waiting_dead_letters,
    waiting_dead_letters, DeadLetter, Resolution, RetryBatch, DEAD_LETTER_KIND,
};
pub use ledger::deletions::{Deletion, DeletionReport, RecordDeletions};
pub use ledger::entry::{LedgerEntry, LedgerKind, RecordedEntry, DELETED_REASON};
pub use ledger::issue_days::{issue_date, issue_days, DatedNumber, DayCount, IssueDays};
pub use ledger::retry_round::{RetryRound, Settled};
pub use ledger::sealed::VerifySeal;
pub use ledger::void::{VoidNumbers, VoidOutcome, VoidRequest, MAX_VOIDS};
pub use numbering::assign::{
    assign_matching, Assign, AssignOutcome, Assigned, Skipped, ASSIGN_PAGE,
};
pub use numbering::batch::{BatchReport, NumberBatch, COLLISION_ATTEMPTS};
pub use numbering::change_stream::ChangeStream;
pub use numbering::checkpoint::Checkpoint;
pub use numbering::complete::{CompleteIntent, COMPLETION_ROUNDS};
pub use numbering::gapless::{NumberGapless, PENDING_ROUNDS};
pub use numbering::intent::{
    plan_completion, Assignment, Completion, FinishIntent, FinishOutcome, GaplessReservation,
    GaplessReserve, Holds, Intent,
};
pub use numbering::pending::{CompletePending, PendingReport};
pub use numbering::seed_from_existing::{SeedFromExisting, SeedReport};
pub use numbering::spec::NumberingSpec;
pub use protocol::cluster_time::ClusterTime;
pub use protocol::command::{
    Collection, Command, FindOptions, QueryOptions, ReturnDocument, UpdateOptions, UpdateStatement,
};
pub use protocol::concern::{ReadConcern, WriteConcern, ANCHORED_READ_MAX_TIME_MS};
pub use protocol::machine::{Machine, MachinePlan};
pub use protocol::note::Note;
pub use protocol::plan::{Plan, Step, MAX_RETRIES};
pub use protocol::reply::{Reply, WriteConcernError, WriteError, WriteResult, DUPLICATE_KEY};
pub use router::period_windows::{PeriodWindow, PeriodWindows, WindowStep};
pub use router::series_counters::{CounterHandle, RouteStep, SeriesCounters, SeriesId};
pub use sequence::calendar::LocalDate;
pub use sequence::counter_id::{CounterKey, ScopeValue};
pub use sequence::field::{check_field_path, check_number_field};
pub use sequence::format::{format_seq, FormatTemplate};
pub use sequence::instant::{check_instant, read_date, MAX_INSTANT_MS, MIN_INSTANT_MS};
pub use sequence::limits::{check_count, MAX_BLOCK, MAX_COUNT};
pub use sequence::options::{OptionValue, SequenceOption, SequenceSpec};
pub use sequence::period::{Period, Reset};
pub use sequence::spelling::{spell, Spelling};
