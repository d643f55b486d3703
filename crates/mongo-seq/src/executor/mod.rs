//! The command executor: a core [`Command`] → the official `mongodb` crate → a core [`Reply`].
//! The only place where a core command meets a driver call, and where the driver's errors are
//! classified ([`classify`]). **The low-level layer**: [`Sequences`](crate::Sequences) runs the
//! core's plans through it, and so does the `mongo-seq` sidecar binary; an application needs it
//! only to drive a core plan of its own (see [`run_plan`](crate::run_plan)). It knows the core
//! and the driver, nothing of the rest of this crate (the tidy tests check it).
//!
//! The concerns are the command's own (`Command::write_concern`/`read_concern`: majority writes,
//! majority reads of counters and leases, local reads of documents, majority reads causally
//! after a change event), never the client's or the URI's; so is where a read goes: the primary
//! (`Command::primary_only`), except a read causally after an event, which may follow the
//! client's read preference. A duplicate key is the reply `duplicateKey`; an `update`'s write
//! errors are data in its write result (`update.rs`). The inserts that number the caller's documents
//! (`insertDocument`, `insertDocuments`) take those documents ([`Documents`], `insert.rs`); a
//! `wait` and `localDates` are answered here (`host.rs`: a sleep, the compiled-in tz database).
//!
//! ```no_run
//! # async fn example(db: mongodb::Database) -> Result<(), mongo_seq::executor::ExecuteError> {
//! use mongo_seq::executor::Executor;
//! use mongo_seq_core::{CurrentValue, Plan, SequenceSpec, Step};
//!
//! let spec = SequenceSpec::parse(&serde_json::json!({ "name": "orders" }))?;
//! let executor = Executor::new(db.collection("counters"));
//! let mut plan = CurrentValue::new(&spec, "orders")?;
//! let mut step = plan.current_step()?;
//! while let Step::Command(command) = step {
//!     step = plan.feed(executor.execute(command).await?)?;
//! }
//! let Step::Done(state) = step else { unreachable!() };
//! println!("last number issued: {:?}", state.last);
//! # Ok(()) }
//! ```

mod anchored;
pub mod classify;
pub mod convert;
mod host;
mod insert;
mod places;
mod sharding;
mod update;

use futures_util::TryStreamExt;
use mongo_seq_core::{
    Collection as CoreCollection, Command, Reply, ReturnDocument, SeqError, UpdateStatement,
};
use mongodb::bson::Document;
use mongodb::error::Error;
use mongodb::options::{self, IndexOptions};
use mongodb::{Collection, Database, IndexModel};
use serde_json::Value;

pub use classify::{mongo_message, MongoFailure};
pub use host::{check_time_zone, local_dates, local_dates_in, time_zone};
pub use insert::Documents;
pub use sharding::CatalogEntry;

/// Why a command did not run.
///
/// ```no_run
/// # async fn example(executor: mongo_seq::executor::Executor, command: mongo_seq::core::Command) {
/// use mongo_seq::executor::{ExecuteError, MongoFailure};
///
/// match executor.execute(command).await {
///     Ok(reply) => println!("{reply:?}"),
///     Err(ExecuteError::Mongo(error)) => {
///         let failure = MongoFailure::from(error);
///         eprintln!("MongoDB refused (transient: {}): {}", failure.transient, failure.message);
///     }
///     Err(other) => eprintln!("{other}"),
/// }
/// # }
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ExecuteError {
    /// The driver failed or the server refused: the driver's error as it raised it (a network
    /// error, an authorization failure, a duplicate key on the caller's own unique index, …);
    /// [`MongoFailure::from`] classifies it.
    #[error("MongoDB: {}", mongo_message(.0))]
    Mongo(Error),
    /// The server refused to update a counter document (TypeMismatch: `seq` is not a number).
    #[error("counter `{counter}` is malformed: {message}")]
    MalformedCounter {
        /// The counter's `_id`.
        counter: String,
        /// What the server said.
        message: String,
    },
    /// A command this executor cannot send: a document that is not Extended JSON (or BSON), a
    /// collection it was not given, a command it does not run.
    #[error("{0}")]
    Invalid(String),
    /// A reply the core cannot read.
    #[error(transparent)]
    Reply(#[from] SeqError),
}

/// One collection and its database (the `update` command runs on the database).
#[derive(Clone)]
struct Place {
    db: Database,
    collection: Collection<Document>,
}

impl Place {
    fn new(collection: Collection<Document>) -> Self {
        Self {
            db: collection.client().database(&collection.namespace().db),
            collection,
        }
    }
}

/// Runs core commands on the collections a command can name: its counters, and when given, the
/// documents collection and the leases collection (the sidecar's state collection).
///
/// ```no_run
/// # fn example(db: mongodb::Database) {
/// use mongo_seq::executor::Executor;
///
/// // The sidecar's three collections; an application's plans usually need the first two.
/// let executor = Executor::new(db.collection("counters"))
///     .with_documents(db.collection("orders"))
///     .with_leases(db.collection("mongo_seq_state"));
/// # let _ = executor;
/// # }
/// ```
#[derive(Clone)]
pub struct Executor {
    documents: Option<Place>,
    counters: Place,
    leases: Option<Place>,
    ledger: Option<Place>,
}

impl Executor {
    /// An executor of the commands on `counters` (`Collection::Counters`).
    ///
    /// ```no_run
    /// # fn example(db: mongodb::Database) {
    /// let executor = mongo_seq::executor::Executor::new(db.collection("counters"));
    /// assert!(executor.documents().is_none());
    /// # }
    /// ```
    pub fn new(counters: Collection<Document>) -> Self {
        Self {
            documents: None,
            counters: Place::new(counters),
            leases: None,
            ledger: None,
        }
    }

    /// `Collection::Documents` is `documents`.
    ///
    /// ```no_run
    /// # fn example(db: mongodb::Database) {
    /// use mongo_seq::executor::Executor;
    ///
    /// let executor = Executor::new(db.collection("counters")).with_documents(db.collection("orders"));
    /// assert_eq!(executor.documents().map(|c| c.name()), Some("orders"));
    /// # }
    /// ```
    #[must_use]
    pub fn with_documents(mut self, documents: Collection<Document>) -> Self {
        self.documents = Some(Place::new(documents));
        self
    }

    /// The documents collection, when given.
    ///
    /// ```no_run
    /// # fn example(executor: mongo_seq::executor::Executor) {
    /// if let Some(orders) = executor.documents() {
    ///     println!("numbering {}", orders.namespace());
    /// }
    /// # }
    /// ```
    pub fn documents(&self) -> Option<&Collection<Document>> {
        self.documents.as_ref().map(|place| &place.collection)
    }

    /// Runs one command. Server errors a plan reads are replies; every other failure is an
    /// [`ExecuteError`], a TypeMismatch on a counter update [`ExecuteError::MalformedCounter`],
    /// a write on the counters or state collection refused for its shard key the core's
    /// `UNSUPPORTED_SHARD_KEY`.
    ///
    /// ```no_run
    /// # async fn example(executor: mongo_seq::executor::Executor) -> Result<(), Box<dyn std::error::Error>> {
    /// use mongo_seq::core::{CurrentValue, Plan, SequenceSpec, Step};
    ///
    /// let spec = SequenceSpec::parse(&serde_json::json!({ "name": "orders" }))?;
    /// let mut plan = CurrentValue::new(&spec, "orders")?;
    /// let mut step = plan.current_step()?;
    /// while let Step::Command(command) = step {
    ///     step = plan.feed(executor.execute(command).await?)?;
    /// }
    /// # Ok(()) }
    /// ```
    pub async fn execute(&self, command: Command) -> Result<Reply, ExecuteError> {
        let collection = command.collection();
        // The counter a TypeMismatch is about: the `_id` of a counter update.
        let counter = match &command {
            Command::FindOneAndUpdate {
                collection: CoreCollection::Counters,
                filter,
                ..
            } => filter.get("_id").and_then(Value::as_str).map(str::to_owned),
            _ => None,
        };
        self.run(command).await.map_err(|failed| match failed {
            Failed::Other(error) => error,
            Failed::Driver(e) => match (self.shard_key_refusal(collection, &e), counter) {
                (Some(refused), _) => ExecuteError::Reply(refused),
                (None, Some(counter))
                    if classify::server_code(&e) == Some(classify::TYPE_MISMATCH) =>
                {
                    ExecuteError::MalformedCounter {
                        counter,
                        message: mongo_message(&e),
                    }
                }
                (None, _) => ExecuteError::Mongo(e),
            },
        })
    }

    fn place(&self, collection: CoreCollection) -> Result<&Place, Failed> {
        let missing =
            |what: &str| Failed::Other(ExecuteError::Invalid(format!("no {what} collection here")));
        match collection {
            CoreCollection::Counters => Ok(&self.counters),
            CoreCollection::Documents => {
                self.documents.as_ref().ok_or_else(|| missing("documents"))
            }
            CoreCollection::Leases => self.leases.as_ref().ok_or_else(|| missing("state")),
            CoreCollection::Ledger => self.ledger.as_ref().ok_or_else(|| missing("ledger")),
        }
    }

    async fn run(&self, command: Command) -> Result<Reply, Failed> {
        if let Some(answer) = host::answer(&command).await {
            return answer.map_err(Failed::Other);
        }
        let write = command.write_concern().map(|c| write_concern(&c));
        let concern = command.read_concern();
        let max_time = command.max_time_ms();
        let read = concern
            .as_ref()
            .map(|c| options::ReadConcern::custom(c.level.clone()));
        match command {
            Command::FindOneAndUpdate {
                collection,
                filter,
                update,
                options,
            } => {
                let result = self
                    .place(collection)?
                    .collection
                    .find_one_and_update(document(filter)?, document(update)?)
                    .optional(write, |action, w| action.write_concern(w))
                    .upsert(options.upsert)
                    .return_document(match options.return_document {
                        ReturnDocument::Before => options::ReturnDocument::Before,
                        ReturnDocument::After => options::ReturnDocument::After,
                    })
                    .await;
                match result {
                    Ok(found) => Ok(one(found)),
                    Err(e) if classify::is_duplicate_key(&e) => {
                        Ok(classify::duplicate_key_reply(&e))
                    }
                    Err(e) => Err(e.into()),
                }
            }
            Command::FindOne {
                collection,
                filter,
                options,
            } => {
                let mut find = self
                    .place(collection)?
                    .collection
                    .find_one(document(filter)?)
                    .selection_criteria(primary())
                    .optional(read, |action, r| action.read_concern(r));
                if let Some(options) = options {
                    find = find
                        .sort(document(options.sort)?)
                        .projection(document(options.projection)?);
                }
                Ok(one(find.await?))
            }
            Command::InsertOne {
                collection,
                document: inserted,
            } => match self
                .place(collection)?
                .collection
                .insert_one(document(inserted)?)
                .optional(write, |action, w| action.write_concern(w))
                .await
            {
                Ok(_) => Ok(Reply::Inserted),
                Err(e) if classify::is_duplicate_key(&e) => Ok(classify::duplicate_key_reply(&e)),
                Err(e) => Err(e.into()),
            },
            Command::Find {
                collection,
                filter,
                options,
                after_cluster_time: Some(_),
            } => {
                let place = self.place(collection)?;
                anchored::find(place, filter, options, concern, max_time).await
            }
            Command::Find {
                collection,
                filter,
                options,
                after_cluster_time: None,
            } => {
                let mut find = self
                    .place(collection)?
                    .collection
                    .find(document(filter)?)
                    .selection_criteria(primary())
                    .optional(read, |action, r| action.read_concern(r));
                if let Some(projection) = options.projection {
                    find = find.projection(document(projection)?);
                }
                if let Some(sort) = options.sort {
                    find = find.sort(document(sort)?);
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
                let pipeline: Vec<Document> = pipeline
                    .into_iter()
                    .map(document)
                    .collect::<Result<_, _>>()?;
                let cursor = self
                    .place(collection)?
                    .collection
                    .aggregate(pipeline)
                    .selection_criteria(primary())
                    .optional(read, |action, r| action.read_concern(r))
                    .await?;
                Ok(many(cursor.try_collect().await?))
            }
            Command::Update {
                collection,
                updates,
                ordered,
            } => {
                self.place(collection)?
                    .update(updates, false, ordered, write)
                    .await
            }
            Command::UpdateMany {
                collection,
                filter,
                update,
            } => {
                self.place(collection)?
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
                    .partial_filter_expression(partial_filter_expression.map(document).transpose()?)
                    .build();
                let index = IndexModel::builder()
                    .keys(document(keys)?)
                    .options(options)
                    .build();
                match self.place(collection)?.collection.create_index(index).await {
                    Ok(_) => Ok(Reply::None),
                    // About the index being built, whichever it is.
                    Err(e) if classify::is_duplicate_key(&e) => Ok(Reply::DuplicateKey),
                    Err(e) => Err(e.into()),
                }
            }
            Command::DropIndex { collection, name } => {
                match self.place(collection)?.collection.drop_index(name).await {
                    Ok(()) => Ok(Reply::None),
                    // Already gone: IndexNotFound, or no collection at all (NamespaceNotFound).
                    Err(e) if matches!(classify::server_code(&e), Some(26 | 27)) => Ok(Reply::None),
                    Err(e) => Err(e.into()),
                }
            }
            other => Err(Failed::Other(ExecuteError::Invalid(format!(
                "the executor runs {} with the caller's documents (execute_with)",
                other.server_command().unwrap_or("this command")
            )))),
        }
    }
}

/// Why a command did not run: the driver failed (classified by [`Executor::execute`], which
/// knows the command), or it could not even be sent.
enum Failed {
    Driver(Error),
    Other(ExecuteError),
}

impl Failed {
    fn into_error(self) -> ExecuteError {
        match self {
            Self::Driver(e) => ExecuteError::Mongo(e),
            Self::Other(error) => error,
        }
    }
}

impl From<Error> for Failed {
    fn from(e: Error) -> Self {
        Self::Driver(e)
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

/// Read preference `primary`: every read but one causally after a change event (see `run`).
fn primary() -> options::SelectionCriteria {
    options::SelectionCriteria::ReadPreference(options::ReadPreference::Primary)
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

/// A command's Extended JSON document as BSON.
fn document(value: Value) -> Result<Document, Failed> {
    convert::to_doc(value).map_err(|e| Failed::Other(ExecuteError::Invalid(e)))
}

fn one(document: Option<Document>) -> Reply {
    match document {
        Some(document) => Reply::Document {
            document: convert::from_doc(document),
        },
        None => Reply::None,
    }
}

fn many(documents: Vec<Document>) -> Reply {
    Reply::Documents {
        documents: documents.into_iter().map(convert::from_doc).collect(),
    }
}
