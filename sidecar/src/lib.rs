//! The `mongo-seq` binary's library: the sidecar (change streams → batches → counters) and its
//! tools (`check`, `counters`, `set-next`, `health`, `import`). Every protocol is the core's
//! (`mongo-seq-core`); this crate runs its commands through one interface to MongoDB
//! ([`mongo::Mongo`], implemented by [`connection::Connection`]), keeps time, and reports. See
//! ARCHITECTURE.md.

pub mod allocator;
pub mod cli;
pub mod config;
pub mod connection;
pub mod error;
pub mod executor;
pub mod fence;
pub mod health;
pub mod http;
pub mod lease_keeper;
pub mod liveness;
pub mod lock;
pub mod metrics;
pub mod mongo;
pub mod probe;
pub mod redact;
pub mod run_plan;
pub mod server;
pub mod state;
pub mod tools;
pub mod trigger;
