//! The sidecar's integration tests, one test binary (so a change compiles and links them once),
//! against the embedded test server (one per binary, started by the harness; a second one for
//! the 10,000-document backfill) or `MONGODB_URI`, grouped by what they exercise:
//! - `in_process`: the library (triggers, the daemon's `server::run`) in this test process,
//!   with the test's client, so commands can be counted and clocks paused;
//! - `binary`: the built `mongo-seq` run as a process: crashes, signals, restarts, configs;
//! - `tools`: the operators' commands of the binary (`check`, `counters`, `set-next`, `void`,
//!   `retry`, `import`, `rewind`, `adopt`, `health`, …) against a database the test prepared.
//!
//! A group, a file or a test alone: `cargo test -p mongo-seq-sidecar --test it tools::check`.

mod common;

mod binary;
mod in_process;
mod tools;
