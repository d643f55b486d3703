//! A sealed series' voids: each a link of the chain, appended by moving the head before the
//! entries are written ([`crate::ledger::sealed_records`]).

use serde_json::{Map, Value};

use super::{Phase, VoidMachine, VoidOutcome};
use crate::error::SeqError;
use crate::ledger::entry::LedgerEntry;
use crate::ledger::sealed_records;
use crate::numbering::intent::read_command;
use crate::numbering::sealing::CounterSeal;
use crate::protocol::plan::Step;
use crate::protocol::reply::{unexpected, Reply};

impl VoidMachine {
    /// A sealed series: the voids' links after the head read, or ALREADY_VOIDED when another
    /// void's link for one of the numbers moved the head already (its entry not written yet).
    pub(super) fn read_seal(&mut self, document: &Value) -> Result<(), SeqError> {
        if !self.spec.sealed() {
            return Ok(());
        }
        let counter = CounterSeal::read(document, self.counter_id())?;
        if let Some(entry) = self
            .entries
            .iter()
            .find(|e| counter.has_record(&LedgerEntry::key(&e.counter_id, e.number)))
        {
            return Err(self.already(entry.number, None, &[]));
        }
        self.sealed = Some(counter);
        Ok(())
    }

    /// Seals the voids after the head and moves it over them (a sealed series; the mutant
    /// leaves them out of the chain), else inserts them.
    pub(super) fn append(&mut self) -> Result<Step<VoidOutcome>, SeqError> {
        let outside = crate::mutants::active(crate::mutants::Mutant::VoidOutsideChain);
        let Some(counter) = self.sealed.clone().filter(|_| !outside) else {
            return self.insert(0);
        };
        let counter_id = self.counter_id().to_owned();
        let fields = vec![Map::new(); self.entries.len()];
        sealed_records::seal_entries(
            &self.spec,
            &counter_id,
            counter.head.as_deref(),
            &mut self.entries,
            &fields,
        )?;
        self.phase = Phase::Append;
        Ok(Step::Command(sealed_records::append_command(
            &self.spec,
            &counter_id,
            &counter,
            &self.entries,
        )))
    }

    /// The head moved over the voids: write them. It had moved already, or an intent started:
    /// every check again.
    pub(super) fn on_appended(&mut self, reply: Reply) -> Result<Step<VoidOutcome>, SeqError> {
        match reply {
            Reply::Document { .. } => {
                self.appended = true;
                self.insert(0)
            }
            Reply::None => {
                let counter_id = self.counter_id().to_owned();
                self.retries.bump("void (sealed)", &counter_id)?;
                self.phase = Phase::ReadCounter;
                Ok(Step::Command(read_command(&self.spec, &counter_id)))
            }
            other => Err(unexpected(&other, "findAndModify")),
        }
    }
}
