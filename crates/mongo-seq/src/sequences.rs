//! The entry point: sequences over one counters collection of the application's database.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use mongo_seq_core::sequence::name::check_collection_name;
use mongodb::bson::Document;
use mongodb::{Collection, Database};

use crate::error::{Error, Result};
use crate::executor::Executor;
use crate::options::SequenceOptions;
use crate::sequence::Sequence;

/// Sequences over one counters collection (`counters` by default) of a [`Database`]: the
/// object an application keeps (in its state, next to the `Client`) and shares between tasks.
/// Cheap to clone; clones share their sequences, and so the blocks of numbers this process
/// holds. It holds no global state: two `Sequences` on one collection are two processes' worth
/// of blocks (each with its own), never a repeated number.
///
/// ```no_run
/// # async fn example() -> mongo_seq::Result<()> {
/// use mongo_seq::Sequences;
///
/// let client = mongodb::Client::with_uri_str("mongodb://127.0.0.1:27017").await?;
/// let seqs = Sequences::new(&client.database("app"));
/// let user_id = seqs.sequence("userid", None)?.next().await?;
/// # let _ = user_id; Ok(()) }
/// ```
#[derive(Clone)]
pub struct Sequences {
    shared: Arc<Shared>,
}

struct Shared {
    db: Database,
    counters: Collection<Document>,
    executor: Executor,
    sequences: Mutex<HashMap<String, Sequence>>,
}

impl std::fmt::Debug for Sequences {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sequences")
            .field("counters", &self.shared.counters.namespace())
            .finish_non_exhaustive()
    }
}

impl Sequences {
    /// Sequences whose counters are in the collection `counters` of `db` (the tutorial's).
    /// No I/O: the first command is sent by the first operation.
    ///
    /// ```no_run
    /// # fn example(db: mongodb::Database) {
    /// let seqs = mongo_seq::Sequences::new(&db);
    /// assert_eq!(seqs.counters().name(), "counters");
    /// # }
    /// ```
    pub fn new(db: &Database) -> Self {
        Self::with_counters(
            db,
            db.collection(DEFAULT_COLLECTION),
            db.collection(DEFAULT_LEDGER),
        )
    }

    /// Sequences with options: the counters collection.
    ///
    /// ```no_run
    /// # fn example(db: mongodb::Database) -> mongo_seq::Result<()> {
    /// let seqs = mongo_seq::Sequences::builder(&db).collection("mongo_seq_counters").build()?;
    /// assert_eq!(seqs.counters().name(), "mongo_seq_counters");
    /// # Ok(()) }
    /// ```
    pub fn builder(db: &Database) -> SequencesBuilder {
        SequencesBuilder {
            db: db.clone(),
            collection: DEFAULT_COLLECTION.to_owned(),
            ledger: DEFAULT_LEDGER.to_owned(),
        }
    }

    fn with_counters(
        db: &Database,
        counters: Collection<Document>,
        ledger: Collection<Document>,
    ) -> Self {
        Self {
            shared: Arc::new(Shared {
                db: db.clone(),
                executor: Executor::new(counters.clone()).with_ledger(ledger),
                counters,
                sequences: Mutex::new(HashMap::new()),
            }),
        }
    }

    /// The counters collection.
    ///
    /// ```no_run
    /// # fn example(seqs: mongo_seq::Sequences) {
    /// println!("counters live in {}", seqs.counters().namespace());
    /// # }
    /// ```
    pub fn counters(&self) -> &Collection<Document> {
        &self.shared.counters
    }

    /// The database.
    pub(crate) fn database(&self) -> &Database {
        &self.shared.db
    }

    /// The executor of the counters collection.
    pub(crate) fn executor(&self) -> &Executor {
        &self.shared.executor
    }

    /// The sequence `name` (1–200 bytes, no `/`, no control characters, no surrounding
    /// spaces). With options, they are checked now, before any I/O (errors name the option);
    /// the same name with other options is `SEQUENCE_CONFLICT`. With `None`, the sequence
    /// already defined under that name, or one with the default options. The same name gives
    /// handles of the same sequence, sharing its block.
    ///
    /// ```no_run
    /// # fn example(seqs: mongo_seq::Sequences) -> mongo_seq::Result<()> {
    /// use mongo_seq::SequenceOptions;
    ///
    /// let orders = seqs.sequence("orders", SequenceOptions::new().block(100))?;
    /// let same = seqs.sequence("orders", None)?; // the same sequence, the same block
    /// let other = seqs.sequence("orders", SequenceOptions::new().block(10));
    /// assert_eq!(other.unwrap_err().code(), Some("SEQUENCE_CONFLICT"));
    /// # let _ = (orders, same); Ok(()) }
    /// ```
    pub fn sequence(
        &self,
        name: &str,
        options: impl Into<Option<SequenceOptions>>,
    ) -> Result<Sequence> {
        let options = options.into();
        let spec = options.clone().unwrap_or_default().spec(name)?;
        let mut sequences = self
            .shared
            .sequences
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(existing) = sequences.get(name) {
            if options.is_some() && *existing.options() != spec {
                return Err(Error::SequenceConflict {
                    name: name.to_owned(),
                });
            }
            return Ok(existing.clone());
        }
        let sequence = Sequence::new(spec, self.shared.executor.clone())?;
        sequences.insert(name.to_owned(), sequence.clone());
        Ok(sequence)
    }

    /// The sequence an insert names: by name among these, or the one given (whose numbers come
    /// from its own counters, wherever they are).
    pub(crate) fn resolve(
        &self,
        sequence: &crate::insert_options::SequenceRef,
    ) -> Result<Sequence> {
        match sequence {
            crate::insert_options::SequenceRef::Name(name) => self.sequence(name, None),
            crate::insert_options::SequenceRef::Sequence(sequence) => Ok(sequence.clone()),
        }
    }
}

const DEFAULT_COLLECTION: &str = "counters";
/// The ledger's (voided numbers, deleted documents' numbers), beside the counters.
const DEFAULT_LEDGER: &str = "mongo_seq_ledger";

/// Builds [`Sequences`] with options; see [`Sequences::builder`].
///
/// ```no_run
/// # fn example(db: mongodb::Database) -> mongo_seq::Result<()> {
/// let seqs = mongo_seq::Sequences::builder(&db).collection("mongo_seq_counters").build()?;
/// # let _ = seqs; Ok(()) }
/// ```
#[derive(Debug, Clone)]
#[must_use]
pub struct SequencesBuilder {
    db: Database,
    collection: String,
    ledger: String,
}

impl SequencesBuilder {
    /// The counters collection's name in the database (default `counters`). Give mongo-seq a
    /// collection of its own when another tool keeps other documents (and unique indexes) in
    /// `counters`.
    ///
    /// ```no_run
    /// # fn example(db: mongodb::Database) -> mongo_seq::Result<()> {
    /// let seqs = mongo_seq::Sequences::builder(&db).collection("mongo_seq_counters").build()?;
    /// assert_eq!(seqs.counters().name(), "mongo_seq_counters");
    /// # Ok(()) }
    /// ```
    pub fn collection(mut self, name: impl Into<String>) -> Self {
        self.collection = name.into();
        self
    }

    /// The `Sequences`, or `INVALID_OPTION` (`collection`) for a name MongoDB refuses (empty,
    /// `$`, NUL or another control character, `system.*`, a namespace over 255 bytes).
    ///
    /// ```no_run
    /// # fn example(db: mongodb::Database) {
    /// let refused = mongo_seq::Sequences::builder(&db).collection("").build();
    /// assert_eq!(refused.unwrap_err().code(), Some("INVALID_OPTION"));
    /// # }
    /// ```
    pub fn build(self) -> Result<Sequences> {
        check_collection_name("collection", &self.collection, Some(self.db.name()))?;
        check_collection_name("ledger", &self.ledger, Some(self.db.name()))?;
        let counters = self.db.collection(&self.collection);
        let ledger = self.db.collection(&self.ledger);
        Ok(Sequences::with_counters(&self.db, counters, ledger))
    }

    /// The ledger collection's name in the database (default `mongo_seq_ledger`): where
    /// [`Sequence::void`](crate::Sequence::void) records voided numbers.
    ///
    /// ```no_run
    /// # fn example(db: mongodb::Database) -> mongo_seq::Result<()> {
    /// let seqs = mongo_seq::Sequences::builder(&db).ledger("voids").build()?;
    /// # let _ = seqs; Ok(()) }
    /// ```
    pub fn ledger(mut self, name: impl Into<String>) -> Self {
        self.ledger = name.into();
        self
    }
}
