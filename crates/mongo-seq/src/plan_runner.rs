//! Where this crate's plans run their commands: the [`Executor`], on the counters, and for an
//! insert on the caller's collection and documents. An insert plan's `take` commands are not the
//! executor's: the insert's own runner serves them from its sequence's counters in this process
//! (`crate::insert`'s `InsertRunner`).

use mongo_seq_core::{Command, Reply, SeqError};

use crate::error::Error;
use crate::executor::{Documents, Executor};
use crate::run::Execute;

/// See the module docs.
pub(crate) struct PlanRunner<'a> {
    executor: &'a Executor,
    documents: Option<&'a mut Documents>,
}

impl<'a> PlanRunner<'a> {
    /// Plans on the counters alone.
    pub(crate) fn counters(executor: &'a Executor) -> Self {
        Self {
            executor,
            documents: None,
        }
    }

    /// An insert plan: its inserts number `documents`.
    pub(crate) fn insert(executor: &'a Executor, documents: &'a mut Documents) -> Self {
        Self {
            executor,
            documents: Some(documents),
        }
    }
}

impl Execute for PlanRunner<'_> {
    type Error = Error;

    async fn execute(&mut self, command: Command) -> Result<Reply, Error> {
        match (command, &mut self.documents) {
            (Command::Take { .. }, _) => Err(SeqError::UnexpectedReply {
                reason: "a `take` without a sequence".to_owned(),
            }
            .into()),
            (command, Some(documents)) => {
                Ok(self.executor.execute_with(command, documents).await?)
            }
            (command, None) => Ok(self.executor.execute(command).await?),
        }
    }
}
