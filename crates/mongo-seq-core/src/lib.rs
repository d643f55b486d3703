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
//! let mut step = plan.start()?;
//! while let Step::Command(command) = step {
//!     // Run `command` with the driver; here: the server's answer to the tutorial upsert.
//!     let _ = command;
//!     let reply = Reply::Document { document: json!({ "_id": "invoices", "seq": 1 }) };
//!     step = plan.feed(reply)?;
//! }
//! let Step::Done(range) = step else { unreachable!() };
//! assert_eq!((range.first, range.last), (1, 1));
//! assert_eq!(spec.format_value(range.first).as_deref(), Some("INV-000001"));
//! # Ok::<(), mongo_seq_core::SeqError>(())
//! ```
//!
//! Modules: [`options`] (raw options → [`SequenceSpec`]), [`name`], [`scope`] (scoped counter
//! ids), [`counter_id`] (reading them back), [`mod@format`] (id templates), [`ejson`] (Extended
//! JSON integers), [`command`] (the command/reply protocol), [`driver`] (the one driver of every
//! plan), [`note`] (what plans report for logs and metrics), [`counter`] (counter documents,
//! `current`), [`reservation`] (`reserve`), [`set_next`], [`seed`] (`seedFromMax`),
//! [`optimistic`] (`insertOptimistic`), [`block`] (hi/lo allocator), [`mod@audit`], [`error`]
//! (codes), [`lease`] (leases and fencing epochs for several sidecars), [`intent`] (crash-safe
//! gapless numbering). The sidecar's protocols: [`numbering`] (a trigger's numbering),
//! [`batch`] (a batch of inserted documents), [`gapless`] (gapless groups, intent completion),
//! [`acquire`] (acquiring and renewing a trigger's lease), [`backfill`] (seeding counters from
//! the collection). Each module's docs hold its protocol diagram; the crate README has the
//! error code table.

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

pub mod acquire;
pub mod audit;
pub mod backfill;
pub mod backoff;
pub mod batch;
pub mod block;
pub mod block_counter;
pub mod checkpoint;
pub mod command;
pub mod concern;
pub mod counter;
pub mod counter_id;
pub mod driver;
pub mod ejson;
pub mod error;
pub mod field;
pub mod format;
pub mod gapless;
pub mod import;
pub mod insert;
pub mod intent;
pub mod largest;
pub mod lease;
pub mod limits;
pub mod mutants;
pub mod name;
pub mod note;
pub mod numbering;
pub mod optimistic;
pub mod options;
pub mod range;
pub mod reservation;
pub mod reset;
pub mod scope;
pub mod seed;
pub mod seed_collection;
pub mod set_next;

pub use acquire::{AcquireLease, Acquisition, RenewLease, Renewal};
pub use audit::{audit, AuditReport, Duplicate, Gap};
pub use backfill::{SeedFromExisting, SeedReport};
pub use backoff::{Backoff, WaitWindow};
pub use batch::{BatchReport, NumberBatch, COLLISION_ATTEMPTS};
pub use block::{BlockAllocator, SharedBlockAllocator};
pub use block_counter::{BlockCounter, Numbers, Refill, Take};
pub use checkpoint::Checkpoint;
pub use command::{
    Collection, Command, FindOptions, Plan, QueryOptions, Reply, ReturnDocument, Step,
    UpdateOptions, UpdateStatement, WriteConcernError, WriteError, WriteResult, DUPLICATE_KEY,
    MAX_RETRIES,
};
pub use concern::{ReadConcern, WriteConcern};
pub use counter::{read_counter, CounterState, CurrentValue};
pub use counter_id::{CounterKey, ScopeValue};
pub use driver::{Driver, Machine};
pub use error::{ErrorInfo, SeqError};
pub use field::{check_document_fields, check_field_path, check_insert_fields, check_number_field};
pub use format::{format_seq, FormatTemplate};
pub use gapless::{
    CompleteIntent, CompletePending, NumberGapless, PendingReport, COMPLETION_ROUNDS,
    PENDING_ROUNDS,
};
pub use import::{
    CounterSource, ImportAction, ImportCounters, ImportReport, ImportRequest, ImportedCounter,
    IndexChange, SkippedCounter,
};
pub use insert::{InsertNumbered, InsertOutcome};
pub use intent::{
    plan_completion, Assignment, Completion, FinishIntent, FinishOutcome, GaplessReservation,
    GaplessReserve, Intent,
};
pub use lease::{Lease, LeaseHolder, LeaseInfo, LeaseOutcome, LeaseRequest};
pub use limits::{check_count, MAX_BLOCK, MAX_COUNT};
pub use note::Note;
pub use numbering::NumberingSpec;
pub use optimistic::{
    OptimisticInsert, OptimisticOutcome, DEFAULT_MAX_ATTEMPTS, MAX_ATTEMPTS_LIMIT,
};
pub use options::SequenceSpec;
pub use range::ReservedRange;
pub use reservation::{Reservation, ReserveRequest};
pub use reset::{ResetOutcome, ResetSequence};
pub use seed::SeedFromMax;
pub use seed_collection::SeedFromCollection;
pub use set_next::{SetNext, SetNextOutcome};
