//! The one implementation of [`Plan`] every plan of the core is. A plan is a state machine
//! ([`Machine`]: what to do with each reply) inside a [`MachinePlan`], which keeps the pending
//! step so `current_step()` can repeat it, refuses replies once the plan is finished, and
//! remembers the error that ended it. Constructors
//! compute the machine's first step themselves, so no plan exists without one.
//!
//! Composite plans (a batch, a lease acquisition) run other plans as steps of their own with
//! `launch` and `resume`, which park the inner plan while it waits for a reply and collect its
//! notes. The inner plan hands its command over ([`Plan::take_step`]): only the outermost plan
//! keeps a copy, not one per level of nesting (a batch's commands hold a statement per
//! document).

use crate::error::SeqError;
use crate::protocol::command::Command;
use crate::protocol::duplicate_key::{self, Sent};
use crate::protocol::note::Note;
use crate::protocol::plan::{Plan, Step};
use crate::protocol::reply::Reply;

/// The transitions of a plan.
pub trait Machine {
    type Output: Clone;
    /// The next step after `reply`, the answer to the last command.
    fn on_reply(&mut self, reply: Reply) -> Result<Step<Self::Output>, SeqError>;
    /// The notes recorded since the last call (see [`Note`]).
    fn drain_notes(&mut self) -> Vec<Note> {
        Vec::new()
    }
}

/// Where a plan stands: waiting for the reply to a command (kept, or handed over by
/// [`Plan::take_step`] with what reading its reply needs), done, or failed.
#[derive(Debug, Clone)]
enum Pending<T> {
    Waiting(Command),
    Sent(Sent),
    Done(T),
    Failed(SeqError),
}

/// A [`Machine`] driven as a [`Plan`].
#[derive(Debug, Clone)]
pub struct MachinePlan<M: Machine> {
    machine: M,
    pending: Pending<M::Output>,
    /// The newest `operationTime` of this plan's acknowledged writes ([`Plan::latest_write`]).
    latest_write: Option<crate::protocol::concern::ClusterTime>,
}

impl<M: Machine> MachinePlan<M> {
    /// The plan of `machine`, whose first step (or the error that ends it at once) is `first`.
    pub(crate) fn begin(machine: M, first: Result<Step<M::Output>, SeqError>) -> Self {
        let pending = match first {
            Ok(Step::Command(command)) => Pending::Waiting(command),
            Ok(Step::Done(output)) => Pending::Done(output),
            Err(error) => Pending::Failed(error),
        };
        Self {
            machine,
            pending,
            latest_write: None,
        }
    }

    pub(crate) fn machine(&self) -> &M {
        &self.machine
    }

    /// Keeps where the plan stands after `next`: the command itself when `keep`, else only what
    /// reading its reply needs (it is handed over: [`Plan::take_step`]).
    fn settle(
        &mut self,
        next: Result<Step<M::Output>, SeqError>,
        keep: bool,
    ) -> Result<Step<M::Output>, SeqError> {
        self.pending = match &next {
            Ok(Step::Command(command)) if keep => Pending::Waiting(command.clone()),
            Ok(Step::Command(command)) => Pending::Sent(Sent::of(command)),
            Ok(Step::Done(output)) => Pending::Done(output.clone()),
            Err(error) => Pending::Failed(error.clone()),
        };
        next
    }

    fn feed_keeping(&mut self, reply: Reply, keep: bool) -> Result<Step<M::Output>, SeqError> {
        let reply = match &self.pending {
            Pending::Waiting(command) => duplicate_key::for_command(command, reply),
            Pending::Sent(sent) => sent.read(reply),
            Pending::Done(_) | Pending::Failed(_) => {
                return Err(SeqError::unexpected_reply("the plan is already finished"))
            }
        };
        let reply = match reply {
            Ok(reply) => reply,
            Err(error) => return self.settle(Err(error), keep),
        };
        let written = reply.operation_time();
        let next = self.machine.on_reply(reply);
        self.latest_write = self.latest_write.max(written);
        #[cfg(feature = "mutants")]
        crate::protocol::conformance::check_read(self.latest_write, &next);
        self.settle(next, keep)
    }
}

impl<M: Machine> Plan for MachinePlan<M> {
    type Output = M::Output;

    fn current_step(&self) -> Result<Step<M::Output>, SeqError> {
        match &self.pending {
            Pending::Waiting(command) => Ok(Step::Command(command.clone())),
            Pending::Sent(_) => Err(SeqError::unexpected_reply(
                "the plan handed its command over: feed its reply",
            )),
            Pending::Done(output) => Ok(Step::Done(output.clone())),
            Pending::Failed(error) => Err(error.clone()),
        }
    }

    fn feed(&mut self, reply: Reply) -> Result<Step<M::Output>, SeqError> {
        self.feed_keeping(reply, true)
    }

    fn take_step(&mut self) -> Result<Step<M::Output>, SeqError> {
        let Pending::Waiting(command) = &self.pending else {
            return self.current_step();
        };
        let sent = Pending::Sent(Sent::of(command));
        match std::mem::replace(&mut self.pending, sent) {
            Pending::Waiting(command) => Ok(Step::Command(command)),
            _ => self.current_step(),
        }
    }

    fn feed_and_take(&mut self, reply: Reply) -> Result<Step<M::Output>, SeqError> {
        self.feed_keeping(reply, false)
    }

    fn latest_write(&self) -> Option<crate::protocol::concern::ClusterTime> {
        self.latest_write
    }

    fn pending_command(&self) -> Option<&Command> {
        match &self.pending {
            Pending::Waiting(command) => Some(command),
            Pending::Sent(_) | Pending::Done(_) | Pending::Failed(_) => None,
        }
    }

    fn drain_notes(&mut self) -> Vec<Note> {
        self.machine.drain_notes()
    }
}

/// Starts a plan inside another one: its notes go to `notes`; when it asks for a command, it is
/// parked (`park`, e.g. into the outer plan's phase) and the command is the step returned.
pub(crate) fn launch<P: Plan>(
    mut plan: P,
    notes: &mut Vec<Note>,
    park: impl FnOnce(Box<P>),
) -> Result<Step<P::Output>, SeqError> {
    notes.extend(plan.drain_notes());
    let step = plan.take_step()?;
    if matches!(step, Step::Command(_)) {
        park(Box::new(plan));
    }
    Ok(step)
}

/// Feeds a plan parked by [`launch`] (or by an earlier `resume`): like `launch`, it is parked
/// again while it asks for commands.
pub(crate) fn resume<P: Plan>(
    mut plan: Box<P>,
    reply: Reply,
    notes: &mut Vec<Note>,
    park: impl FnOnce(Box<P>),
) -> Result<Step<P::Output>, SeqError> {
    let step = plan.feed_and_take(reply);
    notes.extend(plan.drain_notes());
    let step = step?;
    if matches!(step, Step::Command(_)) {
        park(plan);
    }
    Ok(step)
}
