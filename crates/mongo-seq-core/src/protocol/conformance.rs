//! Protocol rules the simulator checks on every plan as it runs (compiled with the `mutants`
//! feature only, which only the simulator enables): a finding is a violation of the schedule,
//! whatever the outcome. The rules are checked apart from the code that keeps them, so a
//! mutant of that code (`crate::mutants`) is caught on any schedule that exercises the rule, not
//! only on the rare interleaving where breaking it shows in the data.

use crate::protocol::cluster_time::ClusterTime;
use crate::protocol::command::Command;
use crate::protocol::plan::Step;

thread_local! {
    static FINDINGS: std::cell::RefCell<Vec<String>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// "Read your own writes": a plan's read anchored at a cluster time is anchored at or after
/// the newest of its own acknowledged writes (`latest_write`), else a secondary may answer
/// from before them.
pub(crate) fn check_read<T>(
    latest_write: Option<ClusterTime>,
    next: &Result<Step<T>, crate::error::SeqError>,
) {
    if let (
        Some(written),
        Ok(Step::Command(Command::Find {
            after_cluster_time: Some(after),
            ..
        })),
    ) = (latest_write, next)
    {
        if *after < written {
            FINDINGS.with(|f| {
                f.borrow_mut().push(format!(
                    "a plan read anchored at {after:?}, before its own write acknowledged at {written:?}"
                ));
            });
        }
    }
}

/// The findings of this thread since the last call.
pub fn drain() -> Vec<String> {
    FINDINGS.with(|f| std::mem::take(&mut *f.borrow_mut()))
}
