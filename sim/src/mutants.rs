//! Known protocol mutants, switched on one at a time, to show the simulation catches them. They
//! live in the product's own code, behind the core's `mutants` feature (only this crate enables
//! it; see `crates/mongo-seq-core/src/mutants.rs`).

pub use mongo_seq_core::mutants::{switch, Mutant};

use crate::focus::Focus;

/// Mutants whose interleaving common schedules meet too rarely for a hunt's budget (`make
/// sim-ci` hunts 1,000 schedules from seed 1), each with the focus its hunt runs on: the same
/// seeds and product code, the rates drawn toward that interleaving (`crate::focus`). A listed
/// seed would not do: any change to the commands the product sends moves it.
/// (`read-before-own-writes`, first seen on seed 8,234,182 after about 60,000 fresh schedules, is
/// caught on common schedules since the plans are checked against the rule it breaks as they
/// run: `mongo_seq_core::protocol::conformance`.)
pub const FOCUSED: [(Mutant, Focus); 3] = [
    // A stale incarnation's completion moving numbers of an intent its same-id successor
    // finished: about 1 common schedule in 1,000 to 3,000 before the block counter's give-back,
    // none in 15,000 after it.
    (Mutant::UnfencedCompletion, Focus::StaleIncarnations),
    // A seal on a number a completion then moves: a gapless batch's document deleted between
    // its event and its number's write (the later numbers move down).
    (Mutant::SealBeforeFinal, Focus::SealedDeletions),
    // A void that succeeds: a sealed number whose document was deleted, voided before the
    // trigger records the deletion.
    (Mutant::VoidOutsideChain, Focus::SealedDeletions),
];

/// The focus a rare mutant is hunted on ([`FOCUSED`]), `None` for a mutant common schedules
/// catch.
pub fn focus_of(mutant: Mutant) -> Option<Focus> {
    FOCUSED
        .iter()
        .find(|(m, _)| *m == mutant)
        .map(|(_, focus)| *focus)
}
