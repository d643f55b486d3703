//! The `mongo-seq` binary's library: the sidecar (change streams → batches → counters) and its
//! tools (`check`, `counters`, `set-next`, `health`, `import`). Sequence logic comes from `mongo-seq-core`; this
//! crate does the I/O around it. See ARCHITECTURE.md ("Sidecar pipeline").

pub mod admin;
pub mod check;
pub mod cli;
pub mod config;
pub mod ejson;
pub mod error;
pub mod exec;
pub mod gapless;
pub mod health;
pub mod http;
pub mod import;
pub mod lease;
pub mod liveness;
pub mod metrics;
pub mod probe;
pub mod redact;
pub mod server;
pub mod state;
pub mod trigger;
