//! [`WriteSeals`]: recorded seals written on their documents (the diagram is in the parent
//! module's docs).

use serde_json::{json, Map, Value};

use super::{read_written, write_command, PendingSeal, FIELD};
use crate::error::SeqError;
use crate::lease::document::epoch_condition;
use crate::numbering::spec::{id_key, id_keys, NumberingSpec};
use crate::protocol::command::{Collection, Command, QueryOptions, ReturnDocument, UpdateOptions};
use crate::protocol::machine::{Machine, MachinePlan};
use crate::protocol::plan::Step;
use crate::protocol::reply::Reply;

#[derive(Debug, Clone)]
enum WritePhase {
    Update,
    /// Some statements matched nothing: which documents hold their seal.
    FindSealed,
    Orphans,
}

/// Writes recorded seals on their documents ([`write_command`]); a document that matched
/// nothing and holds no seal was deleted after its number was final: its seal is kept in the
/// counter's `seal.orphans` for its deletion's record (the next finish replaces `pending`).
pub type WriteSeals = MachinePlan<WriteSealsMachine>;

/// The state of a [`WriteSeals`].
#[derive(Debug, Clone)]
pub struct WriteSealsMachine {
    numbering: NumberingSpec,
    counter_id: String,
    seals: Vec<PendingSeal>,
    epoch: i64,
    phase: WritePhase,
}

impl WriteSeals {
    /// `None`: nothing to write.
    pub fn new(
        numbering: &NumberingSpec,
        counter_id: &str,
        seals: Vec<PendingSeal>,
        epoch: i64,
    ) -> Option<Self> {
        let command = write_command(numbering, &seals, epoch)?;
        let machine = WriteSealsMachine {
            numbering: numbering.clone(),
            counter_id: counter_id.to_owned(),
            seals,
            epoch,
            phase: WritePhase::Update,
        };
        Some(MachinePlan::begin(machine, Ok(Step::Command(command))))
    }
}

impl Machine for WriteSealsMachine {
    type Output = ();

    fn on_reply(&mut self, reply: Reply) -> Result<Step<()>, SeqError> {
        match self.phase {
            WritePhase::Update => {
                let matched = read_written(reply)?;
                if matched >= self.seals.len() as u64 {
                    return Ok(Step::Done(()));
                }
                self.phase = WritePhase::FindSealed;
                let ids: Vec<Value> = self.seals.iter().map(|p| p.id.clone()).collect();
                let mut filter = Map::new();
                filter.insert("_id".to_owned(), json!({ "$in": ids }));
                filter.insert(self.numbering.seal_field(), json!({ "$exists": true }));
                Ok(Step::Command(Command::Find {
                    collection: Collection::Documents,
                    filter: Value::Object(filter),
                    options: QueryOptions {
                        projection: Some(json!({ "_id": 1 })),
                        majority: true,
                        ..QueryOptions::default()
                    },
                    after_cluster_time: None,
                }))
            }
            WritePhase::FindSealed => {
                let sealed = id_keys(&reply.into_documents("find")?);
                let orphans: Vec<Value> = self
                    .seals
                    .iter()
                    .filter(|p| !sealed.contains(&id_key(&p.id)))
                    .map(PendingSeal::to_document)
                    .collect();
                if orphans.is_empty() {
                    return Ok(Step::Done(()));
                }
                self.phase = WritePhase::Orphans;
                let mut filter = self.numbering.sequence().id_filter(&self.counter_id);
                filter.insert("epoch".to_owned(), epoch_condition(self.epoch));
                Ok(Step::Command(Command::FindOneAndUpdate {
                    collection: Collection::Counters,
                    filter: Value::Object(filter),
                    update: json!({
                        "$push": { format!("{FIELD}.orphans"): { "$each": orphans } },
                    }),
                    options: UpdateOptions {
                        upsert: false,
                        return_document: ReturnDocument::After,
                    },
                }))
            }
            // Fenced (a later holder): it wrote the same seals, and keeps its own orphans.
            WritePhase::Orphans => Ok(Step::Done(())),
        }
    }
}
