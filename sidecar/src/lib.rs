//! The `mongo-seq` binary's library: the sidecar (change streams → batches → counters) and its
//! tools (`check`, `counters`, `set-next`, `health`, `import`). Every protocol is the core's
//! (`mongo-seq-core`); this crate runs its commands through one interface to MongoDB
//! ([`mongo::Mongo`], implemented by [`connection::Connection`] over the `mongo-seq` library's
//! executor, `mongo_seq::executor`, the one applications use), keeps time, and reports. See
//! ARCHITECTURE.md.
//!
//! Modules by layer: a module uses its own layer's and those below (the tidy tests fail on an
//! import circle).

// The binary's edge: flags, subcommands, exit codes (the only `anyhow`); the daemon's wiring.
pub mod cli;
pub mod server;

// One trigger and what it holds: its lease, its state document, its dead letters, what it
// tells the operator.
pub mod dead_letters;
pub mod fence;
pub mod lease_keeper;
pub mod liveness;
pub mod probe;
pub mod state;
pub mod trigger;

// The operator's tools (the command line's, never the daemon's); the HTTP endpoint and what it
// serves.
pub mod health;
pub mod http;
pub mod metrics;
pub mod tools;

// Plans run through the interface to MongoDB; the binary's implementation of it.
pub mod connection;
pub mod error;
pub mod mongo;
pub mod run_plan;

// Configuration: raw (file or flags) → validated.
pub mod config;

// Small shared pieces.
pub mod allocator;
pub mod lock;
pub mod redact;
