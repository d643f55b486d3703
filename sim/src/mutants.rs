//! Known protocol mutants, switched on one at a time, to show the simulation catches them. They
//! live in the product's own code, behind the core's `mutants` feature (only this crate enables
//! it; see `crates/mongo-seq-core/src/mutants.rs`).

pub use mongo_seq_core::mutants::{switch, Mutant};
