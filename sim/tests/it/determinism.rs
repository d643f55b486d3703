//! A seed replays exactly: the same schedule, the same trace, the same outcome — also a failing
//! one (a mutant's), whose trace then says what happened.

use mongo_seq_sim::mutants::Mutant;
use mongo_seq_sim::runner::replay;
use mongo_seq_sim::schedule::run;

#[test]
fn a_seed_replays_the_same_schedule() {
    for seed in [3, 20, 41] {
        let first = run(seed, None, false);
        let again = run(seed, None, true);
        assert_eq!(first.fingerprint, again.fingerprint, "seed {seed}");
        assert_eq!(first.violations, again.violations, "seed {seed}");
        assert_eq!(first.faults, again.faults, "seed {seed}");
        assert!(!again.trace.is_empty());
    }
}

#[test]
fn a_failing_seed_replays_with_its_trace_and_the_same_violations() {
    let failing = (1..200)
        .map(|seed| run(seed, Some(Mutant::CounterW1), false))
        .find(|outcome| !outcome.violations.is_empty())
        .expect("the counter-w1 mutant is caught within 200 schedules");
    let replayed = replay(&failing).expect("the replay is the same schedule");
    assert_eq!(replayed.violations, failing.violations);
    assert!(replayed.trace.iter().any(|line| line.contains("VIOLATION")));
    assert!(replayed.trace.iter().any(|line| line.contains("[w:1")));
}
