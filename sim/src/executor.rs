//! Runs the core's commands against the model — what `js/src/execute.js` does with the Node
//! driver and the sidecar's `executor/` with the Rust driver: map the command to the
//! server's command, send it through the simulated driver, and turn the answer into the reply
//! the plan expects (a duplicate key is a reply unless the core says it is the caller's own; any
//! other error ends the plan). The loop plan → command → reply is [`run_plan`], the same loop as
//! `js/src/run-plan.js`.

use bson::{Bson, Document};
use mongo_seq_core::{
    ClusterTime, Collection, Command, Plan, Reply, SeqError, Step, WriteConcernError, WriteError,
    WriteResult,
};
use serde_json::Value;

use crate::client::{Client, DriverError, ReadOptions};
use crate::invariants::integer;
use crate::model::error::code;
use crate::model::{IndexSpec, Operation, ReadLevel, Response, ServerError, Statement, Ts};
use crate::world::WriteConcern;

/// The namespaces (`db.collection`) a plan's commands name, and the caller's documents of an
/// `insertDocument` / `insertDocuments`.
#[derive(Debug, Clone, Default)]
pub struct PlanContext {
    pub counters: String,
    pub documents: String,
    pub leases: String,
    /// The ledger (voids, deletion records) beside the counters.
    pub ledger: String,
    /// The caller's own document (`insertDocument` sets the core's fields on it); after the
    /// insert it holds the `_id` inserted.
    pub document: Option<Document>,
    /// The caller's documents of an `insertDocuments`.
    pub batch: Vec<Document>,
}

/// Why a plan did not finish.
#[derive(Debug, Clone)]
pub enum PlanError {
    Core(SeqError),
    Driver(DriverError),
}

impl std::fmt::Display for PlanError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Core(e) => write!(f, "{} {e}", e.code()),
            Self::Driver(e) => write!(f, "{e}"),
        }
    }
}

fn unexpected(reason: String) -> SeqError {
    SeqError::UnexpectedReply { reason }
}

/// Extended JSON (as the core writes it) to a BSON document.
pub fn to_document(value: &Value) -> Result<Document, SeqError> {
    match Bson::try_from(value.clone()) {
        Ok(Bson::Document(document)) => Ok(document),
        Ok(other) => Err(unexpected(format!("expected a document, got {other}"))),
        Err(e) => Err(unexpected(format!("not Extended JSON: {e}"))),
    }
}

/// [`to_document`] of a value that may be absent.
fn optional_document(value: Option<&Value>) -> Result<Option<Document>, SeqError> {
    value.map(to_document).transpose()
}

/// A BSON document as canonical Extended JSON (what the core reads).
pub fn to_json(document: &Document) -> Value {
    Bson::Document(document.clone()).into_canonical_extjson()
}

/// The namespace's database and collection.
pub fn split(ns: &str) -> (&str, &str) {
    ns.split_once('.').unwrap_or(("app", ns))
}

fn namespace(context: &PlanContext, collection: Collection) -> &str {
    match collection {
        Collection::Counters => &context.counters,
        Collection::Documents => &context.documents,
        Collection::Leases => &context.leases,
        Collection::Ledger => &context.ledger,
    }
}

fn collection_name(context: &PlanContext, collection: Collection) -> String {
    split(namespace(context, collection)).1.to_owned()
}

/// The read and write concern a command is sent with: the ones the core chose for it (its
/// `readConcern`/`writeConcern` fields, `afterClusterTime` included); the client's defaults
/// only where it chose none.
fn concerns(command: &Command) -> (Option<ReadLevel>, Option<Ts>, Option<WriteConcern>) {
    let concern = command.read_concern();
    let read = concern.as_ref().map(|c| {
        if c.level == "majority" {
            ReadLevel::Majority
        } else {
            ReadLevel::Local
        }
    });
    // The model's cluster time `ts` is the timestamp `(ts / 1000, ts % 1000)` (model/stream.rs).
    let after = concern
        .and_then(|c| c.after_cluster_time)
        .map(|time| u64::from(time.t) * 1000 + u64::from(time.i));
    let write = command.write_concern().map(|c| {
        if c.is_majority() {
            WriteConcern::Majority { wtimeout_ms: None }
        } else {
            WriteConcern::W1
        }
    });
    (read, after, write)
}

/// A model time as the server's timestamp (see [`concerns`]).
fn cluster_time(ts: Ts) -> Option<ClusterTime> {
    ClusterTime::new(
        u32::try_from(ts / 1000).ok()?,
        u32::try_from(ts % 1000).ok()?,
    )
}

/// Sets `fields` on a copy of `document`.
fn with_fields(document: Option<&Document>, fields: &Value) -> Result<Document, SeqError> {
    let mut document = document.cloned().unwrap_or_default();
    for (key, value) in to_document(fields)? {
        document.insert(key, value);
    }
    Ok(document)
}

/// A duplicate-key error's key pattern as the server sends it (`{field: 1, …}`).
fn key_pattern(fields: Option<&Vec<String>>) -> Option<Value> {
    fields.map(|fields| {
        Value::Object(
            fields
                .iter()
                .map(|field| (field.clone(), Value::from(1)))
                .collect(),
        )
    })
}

/// Runs one core command with `client`.
pub async fn execute(
    client: &Client,
    command: &Command,
    context: &mut PlanContext,
) -> Result<Reply, PlanError> {
    let core = PlanError::Core;
    let (read, after, write) = concerns(command);
    let operation = match command {
        Command::FindOneAndUpdate {
            collection,
            filter,
            update,
            options,
        } => Operation::FindAndModify {
            collection: collection_name(context, *collection),
            filter: to_document(filter).map_err(core)?,
            update: to_document(update).map_err(core)?,
            upsert: options.upsert,
            new: options.return_document == mongo_seq_core::ReturnDocument::After,
            sort: None,
        },
        Command::FindOne {
            collection,
            filter,
            options,
        } => Operation::Find {
            collection: collection_name(context, *collection),
            filter: to_document(filter).map_err(core)?,
            projection: optional_document(options.as_ref().map(|o| &o.projection)).map_err(core)?,
            sort: optional_document(options.as_ref().map(|o| &o.sort)).map_err(core)?,
            limit: Some(1),
        },
        Command::InsertOne {
            collection,
            document,
        } => Operation::Insert {
            collection: collection_name(context, *collection),
            documents: vec![to_document(document).map_err(core)?],
            ordered: true,
        },
        Command::InsertDocument {
            collection, fields, ..
        } => Operation::Insert {
            collection: collection_name(context, *collection),
            documents: vec![with_fields(context.document.as_ref(), fields).map_err(core)?],
            ordered: true,
        },
        Command::InsertDocuments {
            collection,
            first,
            fields,
            ..
        } => {
            let first = usize::try_from(*first).unwrap_or(usize::MAX);
            let documents = fields
                .iter()
                .enumerate()
                .map(|(i, f)| with_fields(context.batch.get(first.saturating_add(i)), f))
                .collect::<Result<_, _>>()
                .map_err(core)?;
            Operation::Insert {
                collection: collection_name(context, *collection),
                documents,
                ordered: true,
            }
        }
        Command::Find {
            collection,
            filter,
            options,
            ..
        } => Operation::Find {
            collection: collection_name(context, *collection),
            filter: to_document(filter).map_err(core)?,
            projection: optional_document(options.projection.as_ref()).map_err(core)?,
            sort: optional_document(options.sort.as_ref()).map_err(core)?,
            limit: options.limit,
        },
        Command::Update {
            collection,
            updates,
            ordered,
        } => Operation::Update {
            collection: collection_name(context, *collection),
            statements: updates
                .iter()
                .map(|s| {
                    Ok(Statement {
                        filter: to_document(&s.filter)?,
                        update: to_document(&s.update)?,
                        multi: false,
                        upsert: false,
                    })
                })
                .collect::<Result<_, SeqError>>()
                .map_err(core)?,
            ordered: *ordered,
        },
        Command::UpdateMany {
            collection,
            filter,
            update,
        } => Operation::Update {
            collection: collection_name(context, *collection),
            statements: vec![Statement {
                filter: to_document(filter).map_err(core)?,
                update: to_document(update).map_err(core)?,
                multi: true,
                upsert: false,
            }],
            ordered: true,
        },
        Command::Aggregate {
            collection,
            pipeline,
        } => Operation::Aggregate {
            collection: collection_name(context, *collection),
            pipeline: pipeline
                .iter()
                .map(to_document)
                .collect::<Result<_, _>>()
                .map_err(core)?,
        },
        Command::CreateIndex {
            collection,
            name,
            keys,
            unique,
            partial_filter_expression,
        } => Operation::CreateIndex {
            collection: collection_name(context, *collection),
            spec: IndexSpec {
                name: name.clone(),
                keys: to_document(keys)
                    .map_err(core)?
                    .iter()
                    .map(|(k, v)| {
                        (
                            k.clone(),
                            integer(v).and_then(|v| i32::try_from(v).ok()).unwrap_or(1),
                        )
                    })
                    .collect(),
                unique: *unique,
                partial: optional_document(partial_filter_expression.as_ref()).map_err(core)?,
            },
        },
        Command::Wait { min_ms, max_ms } => {
            client.world.pause(*min_ms, *max_ms).await;
            return Ok(Reply::Waited);
        }
        Command::Take { .. } => {
            return Err(core(unexpected(
                "a `take` runs on the caller's own counter, not on the server".into(),
            )))
        }
        Command::LocalDates {
            time_zone,
            instants,
        } => {
            // The host's answer, the binary's own function (jiff, the tz database compiled in):
            // the core has no time-zone data, and the sidecar converts exactly this way.
            return mongo_seq::executor::local_dates(time_zone, instants).map_err(core);
        }
        Command::DropIndex { .. } => {
            return Err(core(unexpected(
                "`dropIndex` (an import in place) is not modelled: no simulated client imports"
                    .into(),
            )))
        }
    };
    let ns = command
        .collection()
        .map(|c| namespace(context, c).to_owned())
        .unwrap_or_default();
    let db = split(&ns).0.to_owned();
    let documents = match &operation {
        Operation::Insert { documents, .. } => documents.clone(),
        _ => Vec::new(),
    };
    let read = ReadOptions {
        level: read,
        after_cluster_time: after,
        may_leave_primary: !command.primary_only(),
        max_time_ms: command.max_time_ms(),
    };
    let result = client.run_with(&db, operation, read, write).await;
    // A duplicate key is the plan's reply unless the core says it is the caller's own error.
    let duplicate = |code: i32, message: &str, fields: Option<&Vec<String>>| {
        if code != code::DUPLICATE_KEY {
            return None;
        }
        command.duplicate_key_reply(Some(message), key_pattern(fields).as_ref())
    };
    if let Err(DriverError::Server(e)) = &result {
        if let Some(reply) = duplicate(e.code, &e.message, e.key_pattern.as_ref()) {
            return Ok(reply);
        }
    }
    let reply = match (command, result) {
        (
            Command::Update { .. } | Command::UpdateMany { .. },
            Err(DriverError::WriteConcern { error, response }),
        ) => {
            let mut result = write_result(*response);
            result.write_concern_error = Some(WriteConcernError {
                code: i64::from(error.code),
                errmsg: error.message,
            });
            Reply::WriteResult(result)
        }
        (_, Err(error)) => return Err(PlanError::Driver(error)),
        (Command::FindOneAndUpdate { .. }, Ok(Response::Value(value))) => match value {
            Some(document) => Reply::Document {
                document: to_json(&document),
            },
            None => Reply::None,
        },
        (Command::FindOne { .. }, Ok(Response::Documents(found))) => match found.first() {
            Some(document) => Reply::Document {
                document: to_json(document),
            },
            None => Reply::None,
        },
        (Command::Find { .. } | Command::Aggregate { .. }, Ok(Response::Documents(found))) => {
            Reply::Documents {
                documents: found.iter().map(to_json).collect(),
            }
        }
        (
            Command::InsertOne { .. } | Command::InsertDocument { .. },
            Ok(Response::Write { write_errors, .. }),
        ) => match write_errors.first() {
            None => {
                if let (Some(document), Some(id)) = (
                    context.document.as_mut(),
                    documents.first().and_then(|d| d.get("_id")),
                ) {
                    document.insert("_id", id.clone());
                }
                Reply::Inserted
            }
            Some(e) => match duplicate(e.code, &e.message, e.key_pattern.as_ref()) {
                Some(reply) => reply,
                None => return Err(write_error(e)),
            },
        },
        (
            Command::InsertDocuments { first, .. },
            Ok(Response::Write {
                n,
                write_errors,
                operation_time,
                ..
            }),
        ) => {
            let first = usize::try_from(*first).unwrap_or(usize::MAX);
            for (i, document) in documents
                .iter()
                .take(usize::try_from(n).unwrap_or(0))
                .enumerate()
            {
                if let (Some(mine), Some(id)) = (
                    context.batch.get_mut(first.saturating_add(i)),
                    document.get("_id"),
                ) {
                    mine.insert("_id", id.clone());
                }
            }
            match write_errors.first() {
                Some(e) if duplicate(e.code, &e.message, e.key_pattern.as_ref()).is_none() => {
                    return Err(write_error(e))
                }
                _ => Reply::WriteResult(write_result(Response::Write {
                    n,
                    n_modified: 0,
                    write_errors,
                    operation_time,
                })),
            }
        }
        (Command::CreateIndex { .. }, Ok(_)) => Reply::None,
        (Command::Update { .. } | Command::UpdateMany { .. }, Ok(response)) => {
            Reply::WriteResult(write_result(response))
        }
        (_, Ok(other)) => {
            return Err(PlanError::Core(unexpected(format!(
                "the model answered {other:?} to {}",
                command.server_command().unwrap_or("?")
            ))))
        }
    };
    Ok(reply)
}

fn write_error(e: &crate::model::WriteError) -> PlanError {
    PlanError::Driver(DriverError::Server(ServerError {
        code: e.code,
        name: "WriteError",
        message: e.message.clone(),
        key_pattern: e.key_pattern.clone(),
    }))
}

fn write_result(response: Response) -> WriteResult {
    match response {
        Response::Write {
            n,
            n_modified,
            write_errors,
            operation_time,
        } => WriteResult {
            n,
            n_modified,
            write_errors: write_errors
                .into_iter()
                .map(|e| WriteError {
                    index: e.index,
                    code: i64::from(e.code),
                    errmsg: e.message,
                })
                .collect(),
            write_concern_error: None,
            operation_time: operation_time.and_then(cluster_time),
        },
        _ => WriteResult::default(),
    }
}

/// Runs a core plan to its end: plan → command → reply, as `js/src/run-plan.js` does.
pub async fn run_plan<P: Plan>(
    client: &Client,
    mut plan: P,
    context: &mut PlanContext,
) -> Result<P::Output, PlanError> {
    let mut step = plan.current_step().map_err(PlanError::Core)?;
    loop {
        match step {
            Step::Done(output) => return Ok(output),
            Step::Command(command) => {
                let reply = execute(client, &command, context).await?;
                step = plan.feed(reply).map_err(PlanError::Core)?;
            }
        }
    }
}

/// An integer of Extended JSON (a number or `{"$numberLong": …}`/`{"$numberInt": …}`).
pub fn json_integer(value: &Value) -> Option<i64> {
    match Bson::try_from(value.clone()) {
        Ok(bson) => integer(&bson),
        Err(_) => None,
    }
}
