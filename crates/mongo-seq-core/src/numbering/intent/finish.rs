//! [`FinishIntent`]: clears an intent and sets the counter to the intent's last number, in one
//! update (the diagram is in the parent module's docs).

use super::*;

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
    Update,
    Check,
}

/// Clears an intent and sets the counter to `seq`, in one update; see the module docs.
pub type FinishIntent = MachinePlan<FinishIntentMachine>;

/// The state of a [`FinishIntent`].
#[derive(Debug, Clone)]
pub struct FinishIntentMachine {
    spec: SequenceSpec,
    counter_id: String,
    intent: Intent,
    epoch: i64,
    command: Command,
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
        let mut filter = spec.id_filter(counter_id);
        filter.insert("intent.first".to_owned(), ejson::long(intent.first));
        filter.insert(
            "intent.count".to_owned(),
            ejson::long(i64::try_from(intent.count).unwrap_or(i64::MAX)),
        );
        filter.insert("epoch".to_owned(), epoch_condition(epoch));
        let command = Command::FindOneAndUpdate {
            collection: Collection::Counters,
            filter: Value::Object(filter),
            update: json!({
                "$set": { spec.counter_field(): ejson::long(seq), "epoch": ejson::long(epoch) },
                "$unset": { "intent": "" },
            }),
            options: UpdateOptions {
                upsert: false,
                return_document: ReturnDocument::After,
            },
        };
        let machine = FinishIntentMachine {
            spec: spec.clone(),
            counter_id: counter_id.to_owned(),
            intent: intent.clone(),
            epoch,
            command: command.clone(),
            phase: FinishPhase::Update,
            retries: Retries::default(),
        };
        Ok(MachinePlan::begin(machine, Ok(Step::Command(command))))
    }
}

impl Machine for FinishIntentMachine {
    type Output = FinishOutcome;

    fn on_reply(&mut self, reply: Reply) -> Result<Step<FinishOutcome>, SeqError> {
        match (&self.phase, reply) {
            (FinishPhase::Update, Reply::Document { .. }) => {
                Ok(Step::Done(FinishOutcome::Finished))
            }
            (FinishPhase::Update, Reply::None) => {
                self.phase = FinishPhase::Check;
                Ok(Step::Command(read_command(&self.spec, &self.counter_id)))
            }
            (FinishPhase::Check, Reply::Document { document }) => {
                match read_counter_extras(&document, &self.counter_id) {
                    Err(e) => Err(e),
                    Ok((counter_epoch, _)) if counter_epoch > self.epoch => {
                        Ok(Step::Done(FinishOutcome::Fenced { counter_epoch }))
                    }
                    Ok((_, Some(intent)))
                        if intent.first == self.intent.first
                            && intent.count == self.intent.count =>
                    {
                        match self.retries.bump("finish intent", &self.counter_id) {
                            Ok(()) => {
                                self.phase = FinishPhase::Update;
                                Ok(Step::Command(self.command.clone()))
                            }
                            Err(e) => Err(e),
                        }
                    }
                    Ok(_) => Ok(Step::Done(FinishOutcome::AlreadyFinished)),
                }
            }
            (FinishPhase::Check, Reply::None) => Err(SeqError::malformed_counter(
                &self.counter_id,
                "the counter was deleted while an intent was pending",
            )),
            (_, other) => Err(unexpected(&other, "a finish-intent command")),
        }
    }
}
