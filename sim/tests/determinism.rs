//! A seed replays exactly: the same schedule, the same trace, the same outcome.

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
