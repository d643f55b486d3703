//! Executes the commands the core's plans emit, with the driver, and feeds the replies back.
//! This is the only place where a core `Command` meets MongoDB. (Commands are counted by the
//! driver's command monitoring, see `metrics`.)

use mongo_seq_core::{Collection as Target, Command, Plan, Reply, ReturnDocument, Step};
use mongodb::bson::Document;
use mongodb::error::{ErrorKind, WriteFailure};
use mongodb::options;
use mongodb::Collection;

use crate::ejson;
use crate::error::SidecarError;

/// What plans run against: the counters collection and the leases (state) collection.
#[derive(Clone)]
pub struct Executor {
    pub counters: Collection<Document>,
    /// Where lease documents live (the state collection); `None` for the tools.
    pub leases: Option<Collection<Document>>,
    /// Log and metric label (the trigger id, or the subcommand).
    pub label: String,
}

fn is_duplicate_key(e: &mongodb::error::Error) -> bool {
    match e.kind.as_ref() {
        ErrorKind::Write(WriteFailure::WriteError(w)) => w.code == 11000,
        ErrorKind::Command(c) => c.code == 11000,
        _ => false,
    }
}

impl Executor {
    /// Runs `plan` to completion.
    pub async fn drive<P: Plan>(&self, plan: &mut P) -> Result<P::Output, SidecarError> {
        let mut step = plan.start()?;
        loop {
            match step {
                Step::Done(output) => return Ok(output),
                Step::Command(command) => {
                    let reply = self.execute(command).await?;
                    step = plan.feed(reply)?;
                }
            }
        }
    }

    fn target(&self, target: Target) -> Result<&Collection<Document>, SidecarError> {
        match target {
            Target::Counters => Ok(&self.counters),
            Target::Leases => self
                .leases
                .as_ref()
                .ok_or_else(|| SidecarError::Reply("no leases collection here".to_owned())),
            Target::Documents => Err(SidecarError::Reply(
                "the sidecar does not run commands on the document collection through plans"
                    .to_owned(),
            )),
        }
    }

    pub(crate) async fn execute(&self, command: Command) -> Result<Reply, SidecarError> {
        let bad = |e: String| SidecarError::Reply(e);
        match command {
            Command::FindOneAndUpdate {
                collection,
                filter,
                update,
                options,
            } => {
                let target = self.target(collection)?;
                let filter = ejson::to_doc(filter).map_err(bad)?;
                let update = ejson::to_doc(update).map_err(bad)?;
                let result = target
                    .find_one_and_update(filter, update)
                    .upsert(options.upsert)
                    .return_document(match options.return_document {
                        ReturnDocument::Before => options::ReturnDocument::Before,
                        ReturnDocument::After => options::ReturnDocument::After,
                    })
                    .await;
                match result {
                    Ok(Some(document)) => Ok(Reply::Document {
                        document: ejson::from_doc(&document),
                    }),
                    Ok(None) => Ok(Reply::None),
                    Err(e) if is_duplicate_key(&e) => Ok(Reply::DuplicateKey),
                    Err(e) => Err(e.into()),
                }
            }
            Command::FindOne {
                collection,
                filter,
                options,
            } => {
                let target = self.target(collection)?;
                let filter = ejson::to_doc(filter).map_err(bad)?;
                let mut find = target.find_one(filter);
                if let Some(options) = options {
                    find = find
                        .sort(ejson::to_doc(options.sort).map_err(bad)?)
                        .projection(ejson::to_doc(options.projection).map_err(bad)?);
                }
                Ok(match find.await? {
                    Some(document) => Reply::Document {
                        document: ejson::from_doc(&document),
                    },
                    None => Reply::None,
                })
            }
            Command::InsertOne {
                collection,
                document,
            } => {
                let target = self.target(collection)?;
                match target
                    .insert_one(ejson::to_doc(document).map_err(bad)?)
                    .await
                {
                    Ok(_) => Ok(Reply::Inserted),
                    Err(e) if is_duplicate_key(&e) => Ok(Reply::DuplicateKey),
                    Err(e) => Err(e.into()),
                }
            }
            other => Err(SidecarError::Reply(format!(
                "the sidecar does not execute {other:?}"
            ))),
        }
    }
}
