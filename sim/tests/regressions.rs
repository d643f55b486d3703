//! Seeds that once found a product bug run clean: each is replayed with the current code.

use mongo_seq_sim::mutants::Mutant;
use mongo_seq_sim::schedule::run;

/// A stale incarnation moved numbers of a gapless intent its same-id successor had finished
/// (a number held by no document): 922 from the CI range, the others from the first long run.
/// Fixed by claiming the intent on the counter and fencing the moves per document.
const STALE_COMPLETION: [u64; 3] = [922, 2_005_235, 2_013_261];

#[test]
fn seeds_that_found_the_stale_completion_bug_run_clean() {
    for seed in STALE_COMPLETION {
        let outcome = run(seed, None, false);
        assert!(
            outcome.violations.is_empty(),
            "seed {seed}: {:?} (replay: mongo-seq-sim --seed {seed} --schedules 1 --trace)",
            outcome.violations
        );
    }
}

#[test]
fn the_first_of_them_still_catches_the_unfenced_completion() {
    let outcome = run(STALE_COMPLETION[0], Some(Mutant::UnfencedCompletion), false);
    assert!(
        outcome
            .violations
            .iter()
            .any(|v| v.contains("no document that is gone held it")),
        "{:?}",
        outcome.violations
    );
}
