//! Known protocol mutants, switched on one at a time, to show the simulation catches them. They
//! live in the product's own code, behind the core's `mutants` feature (only this crate enables
//! it; see `crates/mongo-seq-core/src/mutants.rs`).

pub use mongo_seq_core::mutants::{switch, Mutant};

/// Mutants whose interleaving is too rare for a hunt's budget (`make sim-ci` hunts 1,000
/// schedules from seed 1), each with the seed that found the bug it restores: the hunt checks
/// them on that seed alone. None today: `read-before-own-writes` (first seen after about 60,000
/// fresh schedules, on seed 8,234,182) is caught on common schedules since the plans are
/// checked against the rule it breaks as they run (`mongo_seq_core::protocol::conformance`).
pub const FOUND_BY: [(Mutant, u64); 0] = [];

/// The seed a rare mutant is checked on ([`FOUND_BY`]), `None` for a mutant a hunt finds.
pub fn found_by(mutant: Mutant) -> Option<u64> {
    FOUND_BY
        .iter()
        .find(|(m, _)| *m == mutant)
        .map(|(_, seed)| *seed)
}
