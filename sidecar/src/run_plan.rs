//! The one loop that runs a core plan through the [`Mongo`] interface: command → reply → next
//! command, until the plan is done. Every plan of the sidecar and of its tools runs here (the
//! npm package's loop is `js/src/run-plan.js`, the simulator's `sim/src/executor.rs`'s).

use mongo_seq_core::{Command, Note, Plan, Step};

use crate::error::SidecarError;
use crate::mongo::Mongo;

/// Runs `plan` to its end. `before_write` is asked before every command that writes (a lease
/// holder's fence: a stale holder sends nothing); every note the plan records goes to `note` as
/// it is recorded, also when the plan then fails. A core error keeps its variant
/// ([`SidecarError`]'s `From`: a later holder's fence is [`SidecarError::Fenced`]).
pub async fn run_plan<M, P>(
    mongo: &M,
    plan: &mut P,
    before_write: impl Fn() -> Result<(), SidecarError> + Sync,
    note: impl Fn(Note) + Sync,
) -> Result<P::Output, SidecarError>
where
    M: Mongo,
    P: Plan + Send,
    P::Output: Send,
{
    plan.drain_notes().into_iter().for_each(&note);
    let mut step = plan.current_step();
    loop {
        match step? {
            Step::Done(output) => return Ok(output),
            Step::Command(command) => {
                if writes(&command) {
                    before_write()?;
                }
                let reply = mongo.execute(command).await?;
                step = plan.feed(reply);
                plan.drain_notes().into_iter().for_each(&note);
            }
        }
    }
}

/// Runs a plan of a tool: no lease, and its notes are not reported (`current`, `setNext` and
/// the audit's reads record none).
pub async fn run_tool_plan<M, P>(mongo: &M, plan: &mut P) -> Result<P::Output, SidecarError>
where
    M: Mongo,
    P: Plan + Send,
    P::Output: Send,
{
    run_plan(mongo, plan, || Ok(()), |_| {}).await
}

/// Whether `command` may change something (every command but the reads, the wait and the
/// host's `localDates`).
fn writes(command: &Command) -> bool {
    !matches!(
        command,
        Command::FindOne { .. }
            | Command::Find { .. }
            | Command::Aggregate { .. }
            | Command::Wait { .. }
            | Command::LocalDates { .. }
    )
}
