//! The library's integration tests, one test binary (so a change compiles and links them once),
//! against the embedded test server (one per binary, started by the harness) or `MONGODB_URI`.
//! Each module is a concern; each test has its own database. `../processes.rs` is apart: its
//! `main` is also the worker processes it starts. A module alone: `cargo test -p mongo-seq
//! --test it errors::`.

mod common;

mod assign;
mod batches;
mod blocks_at_max;
mod definitions;
mod errors;
mod insert;
mod local_dates;
mod readme;
mod rust_surface;
mod sequence;
mod series;
mod vectors;
mod void;
