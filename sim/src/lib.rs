//! # mongo-seq-sim
//!
//! Deterministic simulation of mongo-seq under the faults of a real replica set: the core's
//! plans, the JS package's client loop and the sidecar's trigger loop, run against a seeded
//! model of MongoDB ([`model`]). See the README's "Simulation" section and `ARCHITECTURE.md`.

pub mod client;
pub mod clients;
pub mod conformance;
pub mod executor;
pub mod focus;
pub mod invariants;
pub mod issuing;
pub mod model;
pub mod mutants;
pub mod rng;
pub mod runner;
pub mod schedule;
pub mod sealing;
pub mod sidecar;
pub mod trace;
pub mod triggers;
pub mod watched;
pub mod world;
