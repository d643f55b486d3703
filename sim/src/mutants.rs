//! Known protocol mutants, switched on one at a time, to show the simulation catches them. They
//! live in the product's own code, behind the core's `mutants` feature (only this crate enables
//! it; see `crates/mongo-seq-core/src/mutants.rs`).

pub use mongo_seq_core::mutants::{switch, Mutant};

/// Mutants whose interleaving is too rare for a hunt's budget (`make sim-ci` hunts 1,000
/// schedules from seed 1), each with a seed that catches it: the hunt checks them on that seed
/// alone, and so does `tests/regressions.rs`. A change to the commands the product sends moves
/// such a seed: hunt again (`--mutant <name> --seed 1001 --schedules 20000`) and list the new one.
/// (`read-before-own-writes`, first seen on seed 8,234,182 after about 60,000 fresh schedules, is
/// caught on common schedules since the plans are checked against the rule it breaks as they
/// run: `mongo_seq_core::protocol::conformance`.)
pub const FOUND_BY: [(Mutant, u64); 1] = [
    // A stale incarnation's completion moving numbers of an intent its same-id successor
    // finished: about 1 schedule in 1,000 to 3,000 (922 until the sidecar's read ahead, then
    // 3,342; 58 since a first backfill stores its resume point first, found by a hunt from 1).
    (Mutant::UnfencedCompletion, 58),
];

/// The seed a rare mutant is checked on ([`FOUND_BY`]), `None` for a mutant a hunt finds.
pub fn found_by(mutant: Mutant) -> Option<u64> {
    FOUND_BY
        .iter()
        .find(|(m, _)| *m == mutant)
        .map(|(_, seed)| *seed)
}
