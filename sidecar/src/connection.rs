//! The binary's [`Mongo`]: the official `mongodb` crate. The only place where a core
//! [`Command`] meets a driver call, and where the driver's errors are classified
//! ([`MongoFailure`], history lost). Commands are counted by the driver's command monitoring
//! (see `metrics`).

use std::collections::VecDeque;
use std::time::{SystemTime, UNIX_EPOCH};

use futures_util::TryStreamExt;
use mongo_seq_core::{Collection as Target, Command, Reply, ReturnDocument, UpdateStatement};
use mongodb::bson::{doc, Bson, Document, RawArrayBuf, RawBsonRef, RawDocumentBuf};
use mongodb::error::{ErrorKind, WriteFailure};
use mongodb::options::{self, IndexOptions};
use mongodb::raw_batch_cursor::RawBatchCursor;
use mongodb::{Client, Collection, Database, IndexModel};
use serde_json::{Map, Value};

use crate::config::Namespace;
use crate::ejson;
use crate::error::{MongoFailure, SidecarError};
use crate::mongo::{EventBatch, EventStream, InsertEvent, Mongo, ResumeToken, Watch};

/// One collection and its database (the `update` command runs on the database).
#[derive(Clone)]
struct Place {
    db: Database,
    collection: Collection<Document>,
}

impl Place {
    fn new(client: &Client, ns: &Namespace) -> Self {
        let db = client.database(&ns.db);
        Self {
            collection: db.collection(&ns.coll),
            db,
        }
    }
}

/// A trigger's collections on one client: `Collection::Documents` is the watched collection,
/// `Counters` the counters, `Leases` the state collection (lease and resume token). The tools
/// have no state collection, and `counters`/`set-next` no documents collection.
#[derive(Clone)]
pub struct Connection {
    documents: Option<Place>,
    counters: Place,
    state: Option<Place>,
}

impl Connection {
    /// A trigger's connection.
    pub fn for_trigger(
        client: &Client,
        documents: &Namespace,
        counters: &Namespace,
        state: &Namespace,
    ) -> Self {
        Self {
            documents: Some(Place::new(client, documents)),
            counters: Place::new(client, counters),
            state: Some(Place::new(client, state)),
        }
    }

    /// The tools' connection: the counters and, for `check`, the numbered collection.
    pub fn for_tool(client: &Client, documents: Option<&Namespace>, counters: &Namespace) -> Self {
        Self {
            documents: documents.map(|ns| Place::new(client, ns)),
            counters: Place::new(client, counters),
            state: None,
        }
    }

    fn place(&self, target: Target) -> Result<&Place, SidecarError> {
        let missing = |what: &str| SidecarError::Reply(format!("no {what} collection here"));
        match target {
            Target::Counters => Ok(&self.counters),
            Target::Documents => self.documents.as_ref().ok_or_else(|| missing("documents")),
            Target::Leases => self.state.as_ref().ok_or_else(|| missing("state")),
        }
    }

    async fn run(&self, command: Command) -> Result<Reply, Failed> {
        let place = |target| self.place(target).map_err(Failed::Invalid);
        // The concerns are the core's choice for the command (majority writes; majority reads of
        // counters and state, local reads of documents): never the client's or the URI's.
        let write = command.write_concern().map(|c| write_concern(&c));
        let read = command
            .read_concern()
            .map(|c| options::ReadConcern::custom(c.level));
        match command {
            Command::FindOneAndUpdate {
                collection,
                filter,
                update,
                options,
            } => {
                let result = place(collection)?
                    .collection
                    .find_one_and_update(doc_of(filter)?, doc_of(update)?)
                    .optional(write, |action, w| action.write_concern(w))
                    .upsert(options.upsert)
                    .return_document(match options.return_document {
                        ReturnDocument::Before => options::ReturnDocument::Before,
                        ReturnDocument::After => options::ReturnDocument::After,
                    })
                    .await;
                match result {
                    Ok(document) => Ok(one(document)),
                    Err(e) if is_duplicate_key(&e) => Ok(duplicate_key_reply(&e)),
                    Err(e) => Err(e.into()),
                }
            }
            Command::FindOne {
                collection,
                filter,
                options,
            } => {
                let mut find = place(collection)?
                    .collection
                    .find_one(doc_of(filter)?)
                    .optional(read, |action, r| action.read_concern(r));
                if let Some(options) = options {
                    find = find
                        .sort(doc_of(options.sort)?)
                        .projection(doc_of(options.projection)?);
                }
                Ok(one(find.await?))
            }
            Command::InsertOne {
                collection,
                document,
            } => match place(collection)?
                .collection
                .insert_one(doc_of(document)?)
                .optional(write, |action, w| action.write_concern(w))
                .await
            {
                Ok(_) => Ok(Reply::Inserted),
                Err(e) if is_duplicate_key(&e) => Ok(duplicate_key_reply(&e)),
                Err(e) => Err(e.into()),
            },
            Command::Find {
                collection,
                filter,
                options,
            } => {
                let mut find = place(collection)?
                    .collection
                    .find(doc_of(filter)?)
                    .optional(read, |action, r| action.read_concern(r));
                if let Some(projection) = options.projection {
                    find = find.projection(doc_of(projection)?);
                }
                if let Some(sort) = options.sort {
                    find = find.sort(doc_of(sort)?);
                }
                if let Some(limit) = options.limit {
                    find = find.limit(i64::try_from(limit).unwrap_or(i64::MAX));
                }
                Ok(many(find.await?.try_collect().await?))
            }
            Command::Aggregate {
                collection,
                pipeline,
            } => {
                let pipeline: Vec<Document> =
                    pipeline.into_iter().map(doc_of).collect::<Result<_, _>>()?;
                let cursor = place(collection)?
                    .collection
                    .aggregate(pipeline)
                    .optional(read, |action, r| action.read_concern(r))
                    .await?;
                Ok(many(cursor.try_collect().await?))
            }
            Command::Update {
                collection,
                updates,
                ordered,
            } => {
                place(collection)?
                    .update(updates, false, ordered, write)
                    .await
            }
            Command::UpdateMany {
                collection,
                filter,
                update,
            } => {
                place(collection)?
                    .update(vec![UpdateStatement { filter, update }], true, true, write)
                    .await
            }
            Command::CreateIndex {
                collection,
                name,
                keys,
                unique,
                partial_filter_expression,
            } => {
                let options = IndexOptions::builder()
                    .name(name)
                    .unique(unique)
                    .partial_filter_expression(partial_filter_expression.map(doc_of).transpose()?)
                    .build();
                let index = IndexModel::builder()
                    .keys(doc_of(keys)?)
                    .options(options)
                    .build();
                match place(collection)?.collection.create_index(index).await {
                    Ok(_) => Ok(Reply::None),
                    // About the index being built, whichever it is.
                    Err(e) if is_duplicate_key(&e) => Ok(Reply::DuplicateKey),
                    Err(e) => Err(e.into()),
                }
            }
            Command::DropIndex { collection, name } => {
                match place(collection)?.collection.drop_index(name).await {
                    Ok(()) => Ok(Reply::None),
                    // Already gone: IndexNotFound, or no collection at all (NamespaceNotFound).
                    Err(e) if matches!(server_code(&e), Some(26 | 27)) => Ok(Reply::None),
                    Err(e) => Err(e.into()),
                }
            }
            other => Err(Failed::Invalid(SidecarError::Reply(format!(
                "the sidecar does not execute {other:?}"
            )))),
        }
    }
}

impl Place {
    /// The server's `update` command, its reply as data (write errors are not raised: the plan
    /// reads them), with the core's write concern. The command is built as raw BSON, statement
    /// by statement: a batch's 1,000 statements as a `Document` tree cost ~10× their bytes.
    async fn update(
        &self,
        statements: Vec<UpdateStatement>,
        multi: bool,
        ordered: bool,
        write: Option<options::WriteConcern>,
    ) -> Result<Reply, Failed> {
        let mut updates = RawArrayBuf::new();
        for statement in statements {
            updates.push(raw(&statement_of(statement, multi)?)?);
        }
        let mut command = RawDocumentBuf::new();
        command.append("update", self.collection.name());
        command.append("updates", updates);
        command.append("ordered", ordered);
        if let Some(concern) = &write {
            match mongodb::bson::to_document(concern) {
                Ok(concern) if !concern.is_empty() => {
                    command.append("writeConcern", raw(&concern)?);
                }
                _ => {}
            }
        }
        let reply = self.db.run_raw_command(command).await?;
        let mut result = Map::new();
        result.insert("kind".to_owned(), Value::String("writeResult".to_owned()));
        for key in ["n", "nModified", "writeErrors", "writeConcernError"] {
            if let Some(value) = reply.get(key) {
                result.insert(key.to_owned(), ejson::from_bson(value));
            }
        }
        Reply::from_json(&Value::Object(result)).map_err(|e| Failed::Invalid(e.into()))
    }
}

/// The driver's write concern for the core's.
fn write_concern(concern: &mongo_seq_core::WriteConcern) -> options::WriteConcern {
    let w = match &concern.w {
        Value::String(tag) if tag == "majority" => options::Acknowledgment::Majority,
        Value::String(tag) => options::Acknowledgment::Custom(tag.clone()),
        other => options::Acknowledgment::Nodes(
            other
                .as_u64()
                .and_then(|n| u32::try_from(n).ok())
                .unwrap_or(1),
        ),
    };
    options::WriteConcern::builder().w(w).build()
}

/// Sets an option on a driver action when there is one.
trait Optional: Sized {
    fn optional<T>(self, value: Option<T>, set: impl FnOnce(Self, T) -> Self) -> Self {
        match value {
            Some(value) => set(self, value),
            None => self,
        }
    }
}

impl<A> Optional for A {}

/// Why a command did not run: the driver failed, or it could not even be sent (a document
/// that is not Extended JSON, a collection this connection does not have).
enum Failed {
    Driver(mongodb::error::Error),
    Invalid(SidecarError),
}

impl From<mongodb::error::Error> for Failed {
    fn from(e: mongodb::error::Error) -> Self {
        Self::Driver(e)
    }
}

fn doc_of(value: Value) -> Result<Document, Failed> {
    ejson::to_doc(value).map_err(|e| Failed::Invalid(SidecarError::Reply(e)))
}

fn raw(document: &Document) -> Result<RawDocumentBuf, Failed> {
    RawDocumentBuf::from_document(document)
        .map_err(|e| Failed::Invalid(SidecarError::Reply(format!("not BSON: {e}"))))
}

fn statement_of(statement: UpdateStatement, multi: bool) -> Result<Document, Failed> {
    let mut out = doc! { "q": doc_of(statement.filter)?, "u": doc_of(statement.update)? };
    if multi {
        out.insert("multi", true);
    }
    Ok(out)
}

fn one(document: Option<Document>) -> Reply {
    match document {
        Some(document) => Reply::Document {
            document: ejson::from_doc(document),
        },
        None => Reply::None,
    }
}

fn many(documents: Vec<Document>) -> Reply {
    Reply::Documents {
        documents: documents.into_iter().map(ejson::from_doc).collect(),
    }
}

fn is_duplicate_key(e: &mongodb::error::Error) -> bool {
    server_code(e) == Some(11000)
}

/// A duplicate-key error as the core reads it: its message names the index (the core tells a
/// clash on `_id` from one on another unique index, which no retry can get past).
fn duplicate_key_reply(e: &mongodb::error::Error) -> Reply {
    let message = match e.kind.as_ref() {
        ErrorKind::Command(c) => Some(c.message.as_str()),
        ErrorKind::Write(WriteFailure::WriteError(w)) => Some(w.message.as_str()),
        _ => None,
    };
    Reply::duplicate_key(message, None)
}

/// The server error code of a driver error, if it carries one.
fn server_code(e: &mongodb::error::Error) -> Option<i32> {
    match e.kind.as_ref() {
        ErrorKind::Command(c) => Some(c.code),
        ErrorKind::Write(WriteFailure::WriteConcernError(w)) => Some(w.code),
        ErrorKind::Write(WriteFailure::WriteError(w)) => Some(w.code),
        _ => None,
    }
}

/// Server error codes of elections, stepdowns and shutdowns: retry, resume from the stored token.
const TRANSIENT_CODES: [i32; 16] = [
    6, 7, 89, 91, 189, 262, 9001, 10107, 11600, 11602, 13435, 13436, 63, 150, 133, 43,
];

/// Server error codes that mean "the resume point is gone" (ChangeStreamHistoryLost,
/// ChangeStreamFatalError).
const HISTORY_LOST_CODES: [i32; 2] = [286, 280];

/// TypeMismatch: `$inc` on a counter whose `seq` is not a number.
const TYPE_MISMATCH: i32 = 14;

fn is_transient(e: &mongodb::error::Error) -> bool {
    matches!(
        e.kind.as_ref(),
        ErrorKind::Io(_)
            | ErrorKind::ConnectionPoolCleared { .. }
            | ErrorKind::ServerSelection { .. }
    ) || e.contains_label("ResumableChangeStreamError")
        || e.contains_label("RetryableWriteError")
        || server_code(e).is_some_and(|c| TRANSIENT_CODES.contains(&c))
}

/// A driver error as the interface reports it.
pub fn failure(e: mongodb::error::Error) -> SidecarError {
    SidecarError::Mongo(MongoFailure {
        code: server_code(&e),
        transient: is_transient(&e),
        message: mongo_message(&e),
    })
}

/// A change stream's error: a lost resume point is [`SidecarError::HistoryLost`].
fn stream_failure(e: mongodb::error::Error) -> SidecarError {
    match server_code(&e) {
        Some(code) if HISTORY_LOST_CODES.contains(&code) => {
            SidecarError::HistoryLost(e.to_string())
        }
        _ => failure(e),
    }
}

impl Mongo for Connection {
    type Stream = DriverStream;

    async fn execute(&self, command: Command) -> Result<Reply, SidecarError> {
        // The counter a TypeMismatch is about: the `_id` of a counter update.
        let counter = match &command {
            Command::FindOneAndUpdate {
                collection: Target::Counters,
                filter,
                ..
            } => filter.get("_id").and_then(Value::as_str).map(str::to_owned),
            _ => None,
        };
        self.run(command)
            .await
            .map_err(|failed| match (failed, counter) {
                (Failed::Invalid(error), _) => error,
                (Failed::Driver(e), Some(counter)) if server_code(&e) == Some(TYPE_MISMATCH) => {
                    SidecarError::MalformedCounter {
                        counter,
                        message: mongo_message(&e),
                    }
                }
                (Failed::Driver(e), _) => failure(e),
            })
    }

    async fn watch(&self, watch: Watch) -> Result<DriverStream, SidecarError> {
        let documents = self.place(Target::Documents)?.collection.clone();
        let filter = ejson::to_doc(watch.filter.clone()).map_err(SidecarError::Reply)?;
        let cursor = open_stream(&documents, &filter, &watch, watch.start_after.clone()).await?;
        let mut stream = DriverStream {
            documents,
            filter,
            handed_out: watch.start_after.clone(),
            watch,
            cursor,
            buffered: VecDeque::new(),
            reply_token: None,
            reopened: false,
        };
        // The aggregate's own reply (in hand: no round trip), for its post-batch token.
        stream.read_reply().await?;
        Ok(stream)
    }

    fn now_ms(&self) -> i64 {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
            .unwrap_or(0)
    }
}

/// A change stream read one server reply at a time: the `$changeStream` aggregate as a raw
/// batch cursor, so every read of the cursor is exactly one round trip (the aggregate's first
/// batch, then one `getMore` each), and what a reply brought beyond `max` waits here for the
/// next batch. (The driver's `ChangeStream` helper reads event by event and sends a `getMore`
/// whenever its buffer runs dry, which cannot be bounded from outside.)
pub struct DriverStream {
    documents: Collection<Document>,
    filter: Document,
    watch: Watch,
    cursor: RawBatchCursor,
    /// Events of the last reply not handed out yet, each with its own resume token.
    buffered: VecDeque<(InsertEvent, ResumeToken)>,
    /// The token after the last reply: its post-batch token, else its last event's.
    reply_token: Option<ResumeToken>,
    /// The token of the last event handed out (at first: where the stream started).
    handed_out: Option<ResumeToken>,
    /// The stream was just reopened after an error: another error is not retried.
    reopened: bool,
}

/// Opens the `$changeStream` aggregate on `documents` after `token` (from now without one).
async fn open_stream(
    documents: &Collection<Document>,
    filter: &Document,
    watch: &Watch,
    token: Option<ResumeToken>,
) -> Result<RawBatchCursor, SidecarError> {
    let mut stage = Document::new();
    if let Some(token) = token {
        stage.insert(
            "startAfter",
            ejson::to_bson(token.0).map_err(SidecarError::Reply)?,
        );
    }
    // Each event brings its resume token, its cluster time (the lag) and only the document's
    // fields the numbering reads.
    let mut project = doc! { "_id": 1, "clusterTime": 1 };
    for field in &watch.fields {
        project.insert(format!("fullDocument.{field}"), 1);
    }
    documents
        .aggregate([
            doc! { "$changeStream": stage },
            doc! { "$match": filter.clone() },
            doc! { "$project": project },
        ])
        .batch_size(watch.batch_size)
        .max_await_time(watch.max_await)
        .batch()
        .await
        .map_err(stream_failure)
}

fn token_of(value: Option<RawBsonRef<'_>>) -> Option<ResumeToken> {
    let bson = Bson::try_from(value?.to_raw_bson()).ok()?;
    Some(ResumeToken(ejson::from_bson(&bson)))
}

impl DriverStream {
    /// One round trip: the next reply's events into `buffered`, its token into `reply_token`.
    /// An error other than a lost resume point (a cut connection, a failover) reopens the
    /// stream once after the last token read, as the driver's change-stream helper resumes.
    async fn read_reply(&mut self) -> Result<(), SidecarError> {
        let reply = loop {
            match self.cursor.try_next().await {
                Ok(Some(reply)) => break reply,
                Ok(None) => {
                    return Err(SidecarError::HistoryLost(
                        "the change stream was invalidated".to_owned(),
                    ))
                }
                Err(e) => {
                    let failure = stream_failure(e);
                    let token = match (&failure, self.reopened, &self.reply_token) {
                        (SidecarError::HistoryLost(_), _, _) | (_, true, _) | (_, _, None) => {
                            return Err(failure)
                        }
                        (_, false, Some(token)) => token.clone(),
                    };
                    self.cursor =
                        open_stream(&self.documents, &self.filter, &self.watch, Some(token))
                            .await?;
                    self.reopened = true;
                }
            }
        };
        self.reopened = false;
        let mut last = None;
        for event in reply.doc_slices().map_err(stream_failure)? {
            let event = event.map_err(|e| SidecarError::Reply(format!("change event: {e}")))?;
            let Some(event) = event.as_document() else {
                continue;
            };
            let Some(token) = token_of(event.get("_id").ok().flatten()) else {
                return Err(SidecarError::Reply(
                    "a change event without its resume token (`_id`)".to_owned(),
                ));
            };
            let document = match event.get_document("fullDocument") {
                Ok(raw) => Some(
                    Document::try_from(raw)
                        .map(ejson::from_doc)
                        .map_err(|e| SidecarError::Reply(format!("fullDocument: {e}")))?,
                ),
                Err(_) => None,
            };
            let cluster_time_secs = event.get_timestamp("clusterTime").ok().map(|t| t.time);
            last = Some(token.clone());
            let event = InsertEvent {
                document,
                cluster_time_secs,
            };
            self.buffered.push_back((event, token));
        }
        let post_batch = reply
            .as_raw_document()
            .get_document("cursor")
            .ok()
            .and_then(|cursor| token_of(cursor.get("postBatchResumeToken").ok().flatten()));
        if let Some(token) = post_batch.or(last) {
            self.reply_token = Some(token);
        }
        Ok(())
    }
}

impl EventStream for DriverStream {
    /// The events left from the last reply, else one round trip's (see [`DriverStream`]).
    async fn next_batch(&mut self, max: usize) -> Result<EventBatch, SidecarError> {
        if self.buffered.is_empty() {
            self.read_reply().await?;
        }
        let take = max.min(self.buffered.len());
        let mut events = Vec::with_capacity(take);
        for (event, token) in self.buffered.drain(..take) {
            events.push(event);
            self.handed_out = Some(token);
        }
        Ok(EventBatch {
            events,
            resume_token: self.resume_token(),
        })
    }

    /// After the last event handed out: the reply's token once its events are all handed
    /// out, else the last one's.
    fn resume_token(&self) -> Option<ResumeToken> {
        match self.buffered.front() {
            None => self.reply_token.clone().or_else(|| self.handed_out.clone()),
            Some(_) => self.handed_out.clone(),
        }
    }
}

/// A driver error for humans: its kind's message, without the driver's debug fields
/// (`labels: {}, source: None, server response: None`).
pub fn mongo_message(e: &mongodb::error::Error) -> String {
    without_driver_fields(&e.kind.to_string())
}

/// Removes the driver's debug fields from a message, also where the driver nests another
/// error's `Display` (server selection quotes each server's error).
fn without_driver_fields(text: &str) -> String {
    let mut out = text.replace("Kind: ", "");
    for field in [", source: None", ", server response: None"] {
        out = out.replace(field, "");
    }
    while let Some(start) = out.find(", labels: {") {
        let end = out[start..]
            .find('}')
            .map_or(out.len(), |close| start + close + 1);
        out.replace_range(start..end, "");
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn driver_fields_are_removed() {
        assert_eq!(
            super::without_driver_fields("Server selection timeout: Topology: { Servers: [ { Error: Kind: I/O error: refused, labels: {\"A\", \"B\"}, source: None, server response: None } ] }"),
            "Server selection timeout: Topology: { Servers: [ { Error: I/O error: refused } ] }"
        );
    }
}
