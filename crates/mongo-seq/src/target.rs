//! Where this crate's plans run: the [`Executor`] (the counters, and the caller's collection and
//! documents for an insert), and the caller's [`Sequence`] for the insert plans' `take`
//! commands, which take their numbers from the sequence's counters in this process (so inserts
//! share the block, and its round trips, with `next()`), as js/src/execute.js does.

use mongo_seq_core::{Command, Reply, SeqError};

use crate::error::Error;
use crate::executor::{Documents, Executor};
use crate::run::Execute;
use crate::sequence::Sequence;

/// See the module docs.
pub(crate) struct Target<'a> {
    executor: &'a Executor,
    sequence: Option<&'a Sequence>,
    documents: Option<&'a mut Documents>,
}

impl<'a> Target<'a> {
    /// Plans on the counters alone.
    pub(crate) fn counters(executor: &'a Executor) -> Self {
        Self {
            executor,
            sequence: None,
            documents: None,
        }
    }

    /// An insert plan: its `take` commands are served by `sequence`, its inserts number
    /// `documents`.
    pub(crate) fn insert(
        executor: &'a Executor,
        sequence: Option<&'a Sequence>,
        documents: &'a mut Documents,
    ) -> Self {
        Self {
            executor,
            sequence,
            documents: Some(documents),
        }
    }
}

impl Execute for Target<'_> {
    type Error = Error;

    async fn execute(&mut self, command: Command) -> Result<Reply, Error> {
        match (command, &mut self.documents) {
            (Command::Take { counter_id, count }, _) => {
                let sequence = self.sequence.ok_or_else(|| SeqError::UnexpectedReply {
                    reason: "a `take` without a sequence".to_owned(),
                })?;
                let numbers = sequence.take_from(&counter_id, count).await?;
                Ok(Reply::Numbers {
                    values: numbers.values().collect(),
                })
            }
            (command, Some(documents)) => {
                Ok(self.executor.execute_with(command, documents).await?)
            }
            (command, None) => Ok(self.executor.execute(command).await?),
        }
    }
}
