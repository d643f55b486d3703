//! Runs many schedules (on every core), replays failing seeds with their trace, and hunts
//! mutants.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::focus::Focus;
use crate::mutants::Mutant;
use crate::schedule::{run_focused, Outcome};

/// Totals of a run.
#[derive(Debug, Default, Clone)]
pub struct Totals {
    pub schedules: u64,
    pub faults: u64,
    pub violations: u64,
    pub first: u64,
    pub last: u64,
    pub failing: Vec<u64>,
    pub anchored: crate::world::AnchoredReads,
}

impl Totals {
    /// The one line the run ends with.
    pub fn line(&self) -> String {
        format!(
            "SIM schedules={} faults={} violations={} seed={}..{}",
            self.schedules, self.faults, self.violations, self.first, self.last
        )
    }

    /// What the reads causally after a change event cost.
    pub fn anchored_line(&self) -> String {
        let a = &self.anchored;
        #[allow(clippy::cast_precision_loss)] // counts
        let share = 100.0 * a.waited as f64 / a.reads.max(1) as f64;
        format!(
            "anchored reads={} waited={} ({share:.2}%) wait total={} ms mean={} ms max={} ms; on secondaries {} (waited {}); maxTimeMS expired {}",
            a.reads,
            a.waited,
            a.wait_ms,
            a.wait_ms.checked_div(a.waited).unwrap_or(0),
            a.max_wait_ms,
            a.on_secondary,
            a.waited_on_secondary,
            a.expired
        )
    }
}

/// What [`run_many`] runs: schedules `first, first+1, …` on `jobs` threads until `count` are
/// done or `limit` has passed (or, with `stop_at_first_failure`, one failed), with `mutant`
/// switched on.
#[derive(Debug, Clone, Copy)]
pub struct Runs {
    pub first: u64,
    pub count: u64,
    pub limit: Option<Duration>,
    pub jobs: usize,
    pub mutant: Option<Mutant>,
    /// The interleaving every schedule's rates are drawn toward, if any.
    pub focus: Option<Focus>,
    pub stop_at_first_failure: bool,
}

/// Runs `runs`; `on_fail` gets each failing outcome (in the order found).
pub fn run_many(
    runs: Runs,
    on_fail: &(dyn Fn(&Outcome) + Sync),
    on_progress: &(dyn Fn(&Totals) + Sync),
) -> Totals {
    let Runs {
        first,
        count,
        limit,
        jobs,
        mutant,
        focus,
        stop_at_first_failure,
    } = runs;
    let next = AtomicU64::new(0);
    let stop = std::sync::atomic::AtomicBool::new(false);
    let started = Instant::now();
    let results: Mutex<Vec<(u64, u64, usize)>> = Mutex::new(Vec::new());
    let totals = Mutex::new(Totals {
        first,
        last: first,
        ..Totals::default()
    });
    std::thread::scope(|scope| {
        for _ in 0..jobs.max(1) {
            scope.spawn(|| loop {
                if stop.load(Ordering::Relaxed) || limit.is_some_and(|l| started.elapsed() >= l) {
                    return;
                }
                let index = next.fetch_add(1, Ordering::Relaxed);
                if index >= count {
                    return;
                }
                let seed = first + index;
                let outcome = run_focused(seed, mutant, focus, false);
                if !outcome.violations.is_empty() {
                    on_fail(&outcome);
                    if stop_at_first_failure {
                        stop.store(true, Ordering::Relaxed);
                    }
                }
                results.lock().expect("results").push((
                    seed,
                    outcome.faults,
                    outcome.violations.len(),
                ));
                let mut t = totals.lock().expect("totals");
                t.schedules += 1;
                t.faults += outcome.faults;
                t.violations += outcome.violations.len() as u64;
                t.last = t.last.max(seed);
                t.anchored.add(&outcome.anchored);
                if !outcome.violations.is_empty() {
                    t.failing.push(seed);
                }
                on_progress(&t);
            });
        }
    });
    let mut totals = totals.into_inner().expect("totals");
    totals.failing.sort_unstable();
    totals
}

/// Replays a failing seed with its trace on; `Err` when the replay differs (not deterministic).
pub fn replay(outcome: &Outcome) -> Result<Outcome, String> {
    let again = run_focused(outcome.seed, outcome.mutant, outcome.focus, true);
    if again.fingerprint != outcome.fingerprint {
        return Err(format!(
            "seed {} did not replay the same schedule (fingerprint {:x} then {:x})",
            outcome.seed, outcome.fingerprint, again.fingerprint
        ));
    }
    Ok(again)
}
