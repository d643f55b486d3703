//! Plans: every multi-step operation of the core is a [`Plan`] the caller drives with one loop,
//! identical for every plan:
//!
//! ```text
//! let mut step = plan.current_step()?;
//! while let Step::Command(command) = step {
//!     let reply = execute(command);          // the driver call, see Command's docs
//!     step = plan.feed(reply)?;
//!     report(plan.drain_notes());            // logs and metrics, as they happen
//! }
//! // step is Step::Done(output)
//! ```

use serde::Serialize;

use crate::error::SeqError;
use crate::protocol::command::Command;
use crate::protocol::note::Note;
use crate::protocol::reply::Reply;

/// What a plan wants next: run a command, or it is done. Serialized externally tagged:
/// `{"command": {…}}` or `{"done": …}`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
// A step is handed over once per round trip and not kept (a plan keeps its pending command, not
// the step): boxing the command would cost an allocation per command for nothing.
#[allow(clippy::large_enum_variant)]
pub enum Step<T> {
    Command(Command),
    Done(T),
}

/// A multi-step operation driven by the caller (see the module docs for the loop).
pub trait Plan {
    type Output;
    /// The plan's current step, as often as asked: the command waiting for its reply (the
    /// first one before any reply), the result once done, or the error that ended the plan.
    fn current_step(&self) -> Result<Step<Self::Output>, SeqError>;
    /// Feeds the reply to the last command and returns the next step.
    fn feed(&mut self, reply: Reply) -> Result<Step<Self::Output>, SeqError>;
    /// [`Plan::current_step`] for a caller that runs the command once and feeds its reply: the
    /// command is handed over, and the plan keeps only what reading its reply needs, not a copy
    /// (a batch's commands hold a statement per document). `current_step()` and
    /// `pending_command()` then have no command to give until the next `feed`.
    fn take_step(&mut self) -> Result<Step<Self::Output>, SeqError> {
        self.current_step()
    }
    /// [`Plan::feed`], the next command handed over as [`Plan::take_step`] hands it.
    fn feed_and_take(&mut self, reply: Reply) -> Result<Step<Self::Output>, SeqError> {
        self.feed(reply)
    }
    /// The command waiting for its reply, borrowed (what `current_step()` gives as a copy), for shells
    /// that only serialize it; `None` when done or failed, or when the plan cannot lend it.
    fn pending_command(&self) -> Option<&Command> {
        None
    }
    /// What happened since the last call that the caller may want to log or count (see
    /// [`Note`]); call it after constructing the plan and after every `feed`. Most plans
    /// have none.
    fn drain_notes(&mut self) -> Vec<Note> {
        Vec::new()
    }
    /// The newest cluster time of the writes this plan made that the server acknowledged with
    /// one (`operationTime`; none on a standalone server, or from a plan that does not keep it).
    /// A caller's later plans anchor their reads at or after it ("read your own writes", as a
    /// causally consistent session does): a secondary may otherwise answer from before them.
    fn latest_write(&self) -> Option<crate::protocol::concern::ClusterTime> {
        None
    }
}

impl<T> Step<T> {
    /// The same command, or what `then` makes of the output.
    pub fn and_then<U>(
        self,
        then: impl FnOnce(T) -> Result<Step<U>, SeqError>,
    ) -> Result<Step<U>, SeqError> {
        match self {
            Self::Command(command) => Ok(Step::Command(command)),
            Self::Done(output) => then(output),
        }
    }
}

/// Most restarts (lost races) a plan tolerates before `TOO_MANY_RETRIES`.
pub const MAX_RETRIES: u32 = 10;

/// Counts restarts and fails with `TOO_MANY_RETRIES` past [`MAX_RETRIES`].
#[derive(Debug, Clone, Default)]
pub(crate) struct Retries(u32);

impl Retries {
    pub(crate) fn bump(&mut self, operation: &str, counter_id: &str) -> Result<(), SeqError> {
        self.0 = self.0.saturating_add(1);
        if self.0 > MAX_RETRIES {
            return Err(SeqError::TooManyRetries {
                operation: operation.to_owned(),
                counter_id: counter_id.to_owned(),
                attempts: self.0,
            });
        }
        Ok(())
    }
}
