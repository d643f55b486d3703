//! # mongo-seq-sim
//!
//! Deterministic simulation of mongo-seq under the faults of a real replica set. See the
//! README's "Simulation" section and `ARCHITECTURE.md`.

pub mod model;
