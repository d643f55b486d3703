//! [`FinishIntent`]: clears an intent and sets the counter to the intent's last number, in one
//! update (the diagram is in the parent module's docs); for a sealed series it also moves the
//! series' head and records the batch's seals, then writes them ([`crate::numbering::sealing`]).

use super::*;
use crate::numbering::sealing::{self, CounterSeal, Issued, PendingSeal, WriteSeals};
use crate::numbering::spec::NumberingSpec;
use crate::protocol::machine::{launch, resume};

/// Outcome of [`FinishIntent`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(tag = "status", rename_all = "camelCase")]
pub enum FinishOutcome {
    Finished,
    /// The intent was no longer there (another holder completed it).
    AlreadyFinished,
    #[serde(rename_all = "camelCase")]
    Fenced {
        counter_epoch: i64,
    },
}

#[derive(Debug, Clone)]
enum FinishPhase {
    /// A sealed finish reading the counter's seal (not known from an earlier reply).
    ReadCounter,
    /// A sealed finish writing the seals an earlier holder recorded (before replacing them).
    WriteUnwritten(Box<WriteSeals>, CounterSeal),
    /// A sealed finish reading the anchor (the counter has sealed nothing yet).
    Anchor(CounterSeal),
    Update,
    Check,
    /// Writing the seals the update recorded.
    WriteSeals(Box<WriteSeals>),
}

/// What a sealed finish seals: the issued documents, and the chain's state once known.
#[derive(Debug, Clone)]
struct Sealing {
    numbering: NumberingSpec,
    issued: Vec<Issued>,
    /// The counter's seal as read (the update's compare-and-set is on its head).
    counter: CounterSeal,
    /// The link the batch's first seal follows (the head, or the anchor).
    head: Option<String>,
    seals: Vec<PendingSeal>,
}

/// Clears an intent and sets the counter to `seq`, in one update; see the module docs.
pub type FinishIntent = MachinePlan<FinishIntentMachine>;

/// The state of a [`FinishIntent`].
#[derive(Debug, Clone)]
pub struct FinishIntentMachine {
    spec: SequenceSpec,
    counter_id: String,
    intent: Intent,
    seq: i64,
    epoch: i64,
    sealing: Option<Sealing>,
    phase: FinishPhase,
    retries: Retries,
}

impl FinishIntent {
    pub fn new(
        spec: &SequenceSpec,
        counter_id: &str,
        intent: &Intent,
        seq: i64,
        epoch: i64,
    ) -> Result<Self, SeqError> {
        spec.check_counter_id(counter_id)?;
        let machine = FinishIntentMachine {
            spec: spec.clone(),
            counter_id: counter_id.to_owned(),
            intent: intent.clone(),
            seq,
            epoch,
            sealing: None,
            phase: FinishPhase::Update,
            retries: Retries::default(),
        };
        let first = Ok(Step::Command(machine.update()));
        Ok(MachinePlan::begin(machine, first))
    }

    /// [`FinishIntent::new`] for a batch of `numbering`; when its series is sealed, it seals
    /// `issued` (the documents now holding the intent's final numbers) after the series' head.
    /// `counter`: the counter's seal as a reply of the intent's own protocol returned it
    /// (`None`: read it first).
    pub fn sealing(
        numbering: &NumberingSpec,
        counter_id: &str,
        intent: &Intent,
        seq: i64,
        epoch: i64,
        counter: Option<CounterSeal>,
        issued: Vec<Issued>,
    ) -> Result<Self, SeqError> {
        if !numbering.sequence().sealed() {
            return Self::new(numbering.sequence(), counter_id, intent, seq, epoch);
        }
        numbering.sequence().check_counter_id(counter_id)?;
        let mut machine = FinishIntentMachine {
            spec: numbering.sequence().clone(),
            counter_id: counter_id.to_owned(),
            intent: intent.clone(),
            seq,
            epoch,
            sealing: Some(Sealing {
                numbering: numbering.clone(),
                issued,
                counter: CounterSeal::default(),
                head: None,
                seals: Vec::new(),
            }),
            phase: FinishPhase::ReadCounter,
            retries: Retries::default(),
        };
        let first = match counter {
            Some(counter) => machine.seal_after(counter),
            None => Ok(Step::Command(read_command(&machine.spec, counter_id))),
        };
        Ok(MachinePlan::begin(machine, first))
    }
}

impl FinishIntentMachine {
    /// The update that clears the intent (and, sealed, moves the head: compare-and-set).
    fn update(&self) -> Command {
        let mut filter = self.spec.id_filter(&self.counter_id);
        filter.insert("intent.first".to_owned(), ejson::long(self.intent.first));
        filter.insert(
            "intent.count".to_owned(),
            ejson::long(i64::try_from(self.intent.count).unwrap_or(i64::MAX)),
        );
        filter.insert("epoch".to_owned(), epoch_condition(self.epoch));
        let mut set = Map::new();
        set.insert(self.spec.counter_field().to_owned(), ejson::long(self.seq));
        set.insert("epoch".to_owned(), ejson::long(self.epoch));
        if let Some(sealing) = &self.sealing {
            sealing.counter.add_condition(&mut filter);
            // Nothing sealed (every document of the intent gone): the head stays, and a
            // counter that sealed nothing yet keeps reading its anchor.
            if !sealing.seals.is_empty() || sealing.counter.present {
                sealing::finish_set(
                    &mut set,
                    sealing.head.as_deref(),
                    &sealing.seals,
                    self.epoch,
                );
            }
        }
        Command::FindOneAndUpdate {
            collection: Collection::Counters,
            filter: Value::Object(filter),
            update: json!({ "$set": set, "$unset": { "intent": "" } }),
            options: UpdateOptions {
                upsert: false,
                return_document: ReturnDocument::After,
            },
        }
    }

    /// Seals after the counter's head (or, when it has sealed nothing, the anchor: read first),
    /// once the seals an earlier holder recorded are on their documents (the update replaces
    /// them).
    fn seal_after(&mut self, counter: CounterSeal) -> Result<Step<FinishOutcome>, SeqError> {
        let write = self.sealing.as_ref().and_then(|sealing| {
            WriteSeals::new(
                &sealing.numbering,
                &self.counter_id,
                counter.unwritten(self.epoch).to_vec(),
                self.epoch,
            )
        });
        match write {
            Some(plan) => launch(plan, &mut Vec::new(), |plan| {
                self.phase = FinishPhase::WriteUnwritten(plan, counter.clone());
            })?
            .and_then(|()| self.seal_chain(counter)),
            None => self.seal_chain(counter),
        }
    }

    fn seal_chain(&mut self, counter: CounterSeal) -> Result<Step<FinishOutcome>, SeqError> {
        if !counter.present {
            if let Some(read) = sealing::anchor_command(&self.spec, &self.counter_id) {
                self.phase = FinishPhase::Anchor(counter);
                return Ok(Step::Command(read));
            }
        }
        let head = counter.head.clone();
        self.seal_from(counter, head)
    }

    fn seal_from(
        &mut self,
        counter: CounterSeal,
        head: Option<String>,
    ) -> Result<Step<FinishOutcome>, SeqError> {
        if let Some(sealing) = &mut self.sealing {
            sealing.seals = sealing::chain(
                &sealing.numbering,
                &self.counter_id,
                head.as_deref(),
                &sealing.issued,
            )?;
            sealing.counter = counter;
            sealing.head = head;
        }
        self.phase = FinishPhase::Update;
        Ok(Step::Command(self.update()))
    }

    fn on_updated(&mut self) -> Result<Step<FinishOutcome>, SeqError> {
        let write = self.sealing.as_ref().and_then(|sealing| {
            WriteSeals::new(
                &sealing.numbering,
                &self.counter_id,
                sealing.seals.clone(),
                self.epoch,
            )
        });
        match write {
            Some(plan) => launch(plan, &mut Vec::new(), |plan| {
                self.phase = FinishPhase::WriteSeals(plan);
            })?
            .and_then(|()| Ok(Step::Done(FinishOutcome::Finished))),
            None => Ok(Step::Done(FinishOutcome::Finished)),
        }
    }

    fn on_check(&mut self, document: &Value) -> Result<Step<FinishOutcome>, SeqError> {
        let (counter_epoch, pending) = read_counter_extras(document, &self.counter_id)?;
        if counter_epoch > self.epoch {
            return Ok(Step::Done(FinishOutcome::Fenced { counter_epoch }));
        }
        match pending {
            Some(intent)
                if intent.first == self.intent.first && intent.count == self.intent.count =>
            {
                self.retries.bump("finish intent", &self.counter_id)?;
                if self.sealing.is_some() {
                    // The head may have moved: seal again after the one read.
                    let counter = CounterSeal::read(document, &self.counter_id)?;
                    return self.seal_after(counter);
                }
                self.phase = FinishPhase::Update;
                Ok(Step::Command(self.update()))
            }
            _ => Ok(Step::Done(FinishOutcome::AlreadyFinished)),
        }
    }
}

impl Machine for FinishIntentMachine {
    type Output = FinishOutcome;

    fn on_reply(&mut self, reply: Reply) -> Result<Step<FinishOutcome>, SeqError> {
        let deleted = || {
            SeqError::malformed_counter(
                &self.counter_id,
                "the counter was deleted while an intent was pending",
            )
        };
        match (
            std::mem::replace(&mut self.phase, FinishPhase::Check),
            reply,
        ) {
            (FinishPhase::ReadCounter, Reply::Document { document }) => {
                let counter = CounterSeal::read(&document, &self.counter_id)?;
                self.seal_after(counter)
            }
            (FinishPhase::ReadCounter, Reply::None) => Err(deleted()),
            (FinishPhase::WriteUnwritten(plan, counter), reply) => {
                let phase = |plan| FinishPhase::WriteUnwritten(plan, counter.clone());
                let step = resume(plan, reply, &mut Vec::new(), |plan| {
                    self.phase = phase(plan);
                })?;
                step.and_then(|()| self.seal_chain(counter))
            }
            (FinishPhase::Anchor(counter), reply) => {
                let anchor = sealing::read_anchor(reply)?;
                self.seal_from(counter, anchor)
            }
            (FinishPhase::Update, Reply::Document { .. }) => self.on_updated(),
            (FinishPhase::Update, Reply::None) => {
                self.phase = FinishPhase::Check;
                Ok(Step::Command(read_command(&self.spec, &self.counter_id)))
            }
            (FinishPhase::Check, Reply::Document { document }) => self.on_check(&document),
            (FinishPhase::Check, Reply::None) => Err(deleted()),
            (FinishPhase::WriteSeals(plan), reply) => {
                resume(plan, reply, &mut Vec::new(), |plan| {
                    self.phase = FinishPhase::WriteSeals(plan);
                })?
                .and_then(|()| Ok(Step::Done(FinishOutcome::Finished)))
            }
            (_, other) => Err(unexpected(&other, "a finish-intent command")),
        }
    }
}

#[cfg(test)]
mod tests;
