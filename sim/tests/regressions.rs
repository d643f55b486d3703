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

/// The driver went back to the deposed primary of term 1 after the primary of term 2 crashed,
/// and the sidecar's check of an event's document there did not find it: `writer0-191` was
/// left unnumbered (issue 25). Fixed in the model's driver (SDAM's stale-primary rule) and in
/// the product (the check reads causally after the event).
const DEPOSED_PRIMARY_READ: u64 = 3_013_611;

#[test]
fn the_seed_that_read_an_event_s_document_on_a_deposed_primary_runs_clean() {
    let outcome = run(DEPOSED_PRIMARY_READ, None, false);
    assert!(
        outcome.violations.is_empty(),
        "seed {DEPOSED_PRIMARY_READ}: {:?} (replay: mongo-seq-sim --seed {DEPOSED_PRIMARY_READ} --schedules 1 --trace)",
        outcome.violations
    );
}

/// Numbering on issue (issue 19): a first number written without the trigger's condition (a
/// draft seen through a stale `updateLookup` gets a number) is caught by the first seed.
#[test]
fn the_first_seed_catches_a_draft_numbered_through_a_stale_lookup() {
    let outcome = run(1, Some(Mutant::UnconditionedNumbering), false);
    assert!(
        outcome
            .violations
            .iter()
            .any(|v| v.contains("a draft numbered")),
        "{:?}",
        outcome.violations
    );
}
