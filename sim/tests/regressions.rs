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

/// A gapless completion read its documents on secondaries with `afterClusterTime` at the events
/// only: a secondary whose commit point had not reached the completion's own moves answered
/// with them half applied, the completion took a number one of its own documents held for a
/// number held by another document, and 71 stayed unused under a counter at 76. Fixed in the
/// product: a plan's reads are also causally after its own latest write (its `operationTime`).
const READ_BEFORE_OWN_WRITES: u64 = 8_234_182;

#[test]
fn the_seed_whose_completion_read_from_before_its_own_moves_runs_clean() {
    let outcome = run(READ_BEFORE_OWN_WRITES, None, false);
    assert!(
        outcome.violations.is_empty(),
        "seed {READ_BEFORE_OWN_WRITES}: {:?} (replay: mongo-seq-sim --seed {READ_BEFORE_OWN_WRITES} --schedules 1 --trace)",
        outcome.violations
    );
}

#[test]
fn it_still_catches_reads_anchored_at_the_events_only() {
    let outcome = run(
        READ_BEFORE_OWN_WRITES,
        Some(Mutant::ReadBeforeOwnWrites),
        false,
    );
    assert!(
        outcome
            .violations
            .iter()
            .any(|v| v.contains("number 71 is missing, and no document that is gone held it")),
        "{:?}",
        outcome.violations
    );
}
