//! The one implementation of [`Plan`] every plan of the core is. A plan is a state machine
//! ([`Machine`]: what to do with each reply) inside a [`MachinePlan`], which keeps the pending
//! step so `current_step()` can repeat it, refuses replies once the plan is finished, and
//! remembers the error that ended it. Constructors
//! compute the machine's first step themselves, so no plan exists without one.
//!
//! Composite plans (a batch, a lease acquisition) run other plans as steps of their own with
//! `launch` and `resume`, which park the inner plan while it waits for a reply and collect its
//! notes.

use crate::error::SeqError;
use crate::protocol::command::Command;
use crate::protocol::duplicate_key;
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

/// Where a plan stands: waiting for the reply to a command, done, or failed.
#[derive(Debug, Clone)]
enum Pending<T> {
    Waiting(Command),
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

    fn settle(
        &mut self,
        next: Result<Step<M::Output>, SeqError>,
    ) -> Result<Step<M::Output>, SeqError> {
        self.pending = match &next {
            Ok(Step::Command(command)) => Pending::Waiting(command.clone()),
            Ok(Step::Done(output)) => Pending::Done(output.clone()),
            Err(error) => Pending::Failed(error.clone()),
        };
        next
    }
}

impl<M: Machine> Plan for MachinePlan<M> {
    type Output = M::Output;

    fn current_step(&self) -> Result<Step<M::Output>, SeqError> {
        match &self.pending {
            Pending::Waiting(command) => Ok(Step::Command(command.clone())),
            Pending::Done(output) => Ok(Step::Done(output.clone())),
            Pending::Failed(error) => Err(error.clone()),
        }
    }

    fn feed(&mut self, reply: Reply) -> Result<Step<M::Output>, SeqError> {
        let Pending::Waiting(command) = &self.pending else {
            return Err(SeqError::unexpected_reply("the plan is already finished"));
        };
        let reply = match duplicate_key::for_command(command, reply) {
            Ok(reply) => reply,
            Err(error) => return self.settle(Err(error)),
        };
        let written = reply.operation_time();
        let next = self.machine.on_reply(reply);
        self.latest_write = self.latest_write.max(written);
        #[cfg(feature = "mutants")]
        crate::protocol::conformance::check_read(self.latest_write, &next);
        self.settle(next)
    }

    fn latest_write(&self) -> Option<crate::protocol::concern::ClusterTime> {
        self.latest_write
    }

    fn pending_command(&self) -> Option<&Command> {
        match &self.pending {
            Pending::Waiting(command) => Some(command),
            Pending::Done(_) | Pending::Failed(_) => None,
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
    let step = plan.current_step()?;
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
    let step = plan.feed(reply);
    notes.extend(plan.drain_notes());
    let step = step?;
    if matches!(step, Step::Command(_)) {
        park(plan);
    }
    Ok(step)
}
