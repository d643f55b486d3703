//! How the sidecar runs a core plan: through the `mongo-seq` library's one loop
//! ([`mongo_seq::run_plan`], also the applications'), over the [`Mongo`] interface, with the
//! lease fence asked before every command that writes and every note handed to the probe as it
//! is recorded (the npm package's loop is `js/src/run-plan.js`).

use mongo_seq::Execute;
use mongo_seq_core::{ClusterTime, Command, Note, Plan, Reply};

use crate::error::SidecarError;
use crate::mongo::Mongo;

/// Runs `plan` to its end. `before_write` is asked before every command that writes (a lease
/// holder's fence: a stale holder sends nothing); every note the plan records goes to `note` as
/// it is recorded, also when the plan then fails. A core error keeps its variant
/// ([`SidecarError`]'s `From`: a later holder's fence is [`SidecarError::Fenced`]).
pub async fn run_plan<M, P>(
    mongo: &M,
    plan: &mut P,
    before_write: impl Fn() -> Result<(), SidecarError> + Send + Sync,
    note: impl Fn(Note) + Send + Sync,
) -> Result<P::Output, SidecarError>
where
    M: Mongo,
    P: Plan + Send,
    P::Output: Send,
{
    let mut held = Held {
        mongo,
        before_write,
        note,
    };
    mongo_seq::run_plan(plan, &mut held).await
}

/// [`run_plan`], and `wrote` hears the plan's newest acknowledged write
/// ([`Plan::latest_write`]) once the plan is left: finished, failed, or dropped half-way with
/// the future running it (a lost lease, a stream error, shutdown), since what it wrote before
/// is written either way: a trigger's later reads are anchored after it.
pub async fn run_writing_plan<M, P>(
    mongo: &M,
    plan: &mut P,
    before_write: impl Fn() -> Result<(), SidecarError> + Send + Sync,
    note: impl Fn(Note) + Send + Sync,
    wrote: impl Fn(Option<ClusterTime>) + Send + Sync,
) -> Result<P::Output, SidecarError>
where
    M: Mongo,
    P: Plan + Send,
    P::Output: Send,
{
    let left = Left { plan, wrote };
    run_plan(mongo, &mut *left.plan, before_write, note).await
}

/// A plan being run, whose newest acknowledged write goes to `wrote` when it is left.
struct Left<'a, P: Plan, W: Fn(Option<ClusterTime>)> {
    plan: &'a mut P,
    wrote: W,
}

impl<P: Plan, W: Fn(Option<ClusterTime>)> Drop for Left<'_, P, W> {
    fn drop(&mut self) {
        (self.wrote)(self.plan.latest_write());
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

/// The sidecar's side of the loop: the fence before writes, the interface, the notes.
struct Held<'a, M, F, N> {
    mongo: &'a M,
    before_write: F,
    note: N,
}

impl<M, F, N> Execute for Held<'_, M, F, N>
where
    M: Mongo,
    F: Fn() -> Result<(), SidecarError> + Send + Sync,
    N: Fn(Note) + Send + Sync,
{
    type Error = SidecarError;

    async fn execute(&mut self, command: Command) -> Result<Reply, SidecarError> {
        if writes(&command) {
            (self.before_write)()?;
        }
        self.mongo.execute(command).await
    }

    fn note(&mut self, note: Note) {
        (self.note)(note);
    }
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
