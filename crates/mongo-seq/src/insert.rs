//! Inserting numbered documents: `insert_one` / `insert_many` over a sequence's counters (the
//! core's `InsertNumbered`), and the tutorial's optimistic loop (`OptimisticInsert`).

use std::borrow::Borrow;

use mongo_seq_core::{
    check_document_size, InsertNumbered, OptimisticInsert, SeqError, SequenceSpec, MAX_COUNT,
};
use mongodb::bson::{Bson, Document, RawDocumentBuf};
use mongodb::Collection;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::Result;
use crate::executor::{convert, Documents};
use crate::run::run_plan;
use crate::sequence::Sequence;
use crate::sequences::Sequences;
use crate::target::Target;

/// Which sequence numbers an insert: a name (a sequence defined with
/// [`Sequences::sequence`], or one with the default options), or a [`Sequence`] (whose numbers
/// come from its own counters).
///
/// ```no_run
/// # async fn example(seqs: mongo_seq::Sequences, db: mongodb::Database) -> mongo_seq::Result<()> {
/// use mongo_seq::{InsertOptions, SequenceOptions};
/// use mongodb::bson::{doc, Document};
///
/// let orders = db.collection::<Document>("orders");
/// // By name: the sequence `orders` of these Sequences (the default options unless defined).
/// seqs.insert_one(&orders, doc! { "item": "book" }, "orders").await?;
/// // A Sequence: its own options and counters.
/// let codes = seqs.sequence("codes", SequenceOptions::new().format("ORD-{seq:05}"))?;
/// seqs.insert_one(&orders, doc! { "item": "pen" }, InsertOptions::new(&codes).field("code")).await?;
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub enum SequenceRef {
    /// The sequence of that name.
    Name(String),
    /// That sequence.
    Sequence(Sequence),
}

impl From<&str> for SequenceRef {
    fn from(name: &str) -> Self {
        Self::Name(name.to_owned())
    }
}

impl From<String> for SequenceRef {
    fn from(name: String) -> Self {
        Self::Name(name)
    }
}

impl From<&Sequence> for SequenceRef {
    fn from(sequence: &Sequence) -> Self {
        Self::Sequence(sequence.clone())
    }
}

impl Serialize for SequenceRef {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Name(name) => serializer.serialize_str(name),
            Self::Sequence(sequence) => serializer.serialize_str(sequence.name()),
        }
    }
}

impl<'de> Deserialize<'de> for SequenceRef {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        String::deserialize(deserializer).map(Self::Name)
    }
}

fn default_field() -> String {
    "_id".to_owned()
}

/// The options of [`Sequences::insert_one`] and [`Sequences::insert_many`]: the sequence, the
/// field that receives the number (default `_id`) and the one that receives the formatted id.
/// A `&str` or a `&Sequence` is the options with that sequence and the defaults.
///
/// `field` and `format_field` are top-level field names (not empty, no `.`, not starting with
/// `$`, 1–200 bytes), differ from each other and from the sequence's scope fields (which they
/// would overwrite); `format_field` needs a `format`. Checked before anything is reserved.
///
/// ```
/// use mongo_seq::InsertOptions;
///
/// let options = InsertOptions::new("invoices").field("number").format_field("code");
/// let same: InsertOptions = serde_json::from_value(serde_json::json!({
///     "sequence": "invoices", "field": "number", "format_field": "code"
/// }))?;
/// assert_eq!(serde_json::to_value(&options)?, serde_json::to_value(&same)?);
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InsertOptions {
    sequence: SequenceRef,
    #[serde(default = "default_field")]
    field: String,
    #[serde(
        default,
        alias = "formatField",
        skip_serializing_if = "Option::is_none"
    )]
    format_field: Option<String>,
}

impl InsertOptions {
    /// Numbers from `sequence`, in `_id`.
    ///
    /// ```
    /// use mongo_seq::InsertOptions;
    ///
    /// let options = InsertOptions::new("orders"); // numbers in `_id`
    /// # let _ = options;
    /// ```
    pub fn new(sequence: impl Into<SequenceRef>) -> Self {
        Self {
            sequence: sequence.into(),
            field: default_field(),
            format_field: None,
        }
    }

    /// The field that receives the number (default `_id`).
    ///
    /// ```
    /// # use mongo_seq::InsertOptions;
    /// let options = InsertOptions::new("orders").field("orderNo"); // `_id` stays the driver's
    /// # let _ = options;
    /// ```
    pub fn field(mut self, field: impl Into<String>) -> Self {
        self.field = field.into();
        self
    }

    /// The field that receives the formatted id (the sequence needs a `format`).
    ///
    /// ```
    /// # use mongo_seq::InsertOptions;
    /// // The sequence `invoices` has a `format`: the number in `number`, `INV-000042` in `code`.
    /// let options = InsertOptions::new("invoices").field("number").format_field("code");
    /// # let _ = options;
    /// ```
    pub fn format_field(mut self, field: impl Into<String>) -> Self {
        self.format_field = Some(field.into());
        self
    }
}

impl<T: Into<SequenceRef>> From<T> for InsertOptions {
    fn from(sequence: T) -> Self {
        Self::new(sequence)
    }
}

/// The options of [`Sequences::insert_optimistic`]: the sequence that gives start, step,
/// bounds, scope and format (by default one named after the collection, with the default
/// options), the field (default `_id`; it needs a unique index), the formatted id's field, and
/// the most inserts to try (1–10,000, default 100).
///
/// ```
/// use mongo_seq::OptimisticOptions;
///
/// let options = OptimisticOptions::new().sequence("tickets").field("no").max_attempts(20);
/// # let _ = options;
/// ```
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OptimisticOptions {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    sequence: Option<SequenceRef>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    field: Option<String>,
    #[serde(
        default,
        alias = "formatField",
        skip_serializing_if = "Option::is_none"
    )]
    format_field: Option<String>,
    #[serde(
        default,
        alias = "maxAttempts",
        skip_serializing_if = "Option::is_none"
    )]
    max_attempts: Option<u32>,
}

impl OptimisticOptions {
    /// The defaults: a sequence named after the collection, `_id`, 100 attempts.
    ///
    /// ```
    /// use mongo_seq::OptimisticOptions;
    ///
    /// let options = OptimisticOptions::new(); // a sequence named after the collection, in `_id`
    /// # let _ = options;
    /// ```
    pub fn new() -> Self {
        Self::default()
    }

    /// The sequence whose options number the documents (no counter is used).
    ///
    /// ```
    /// # use mongo_seq::OptimisticOptions;
    /// // Start, step, bounds and format of the sequence `tickets` (defined with `Sequences::sequence`).
    /// let options = OptimisticOptions::new().sequence("tickets");
    /// # let _ = options;
    /// ```
    pub fn sequence(mut self, sequence: impl Into<SequenceRef>) -> Self {
        self.sequence = Some(sequence.into());
        self
    }

    /// The field that receives the number (default `_id`; it needs a unique index).
    ///
    /// ```
    /// # use mongo_seq::OptimisticOptions;
    /// // `ticketNo` needs a unique index: the loop relies on its duplicate keys.
    /// let options = OptimisticOptions::new().field("ticketNo");
    /// # let _ = options;
    /// ```
    pub fn field(mut self, field: impl Into<String>) -> Self {
        self.field = Some(field.into());
        self
    }

    /// The field that receives the formatted id (the sequence needs a `format`).
    ///
    /// ```
    /// # use mongo_seq::OptimisticOptions;
    /// let options = OptimisticOptions::new().sequence("tickets").format_field("code");
    /// # let _ = options;
    /// ```
    pub fn format_field(mut self, field: impl Into<String>) -> Self {
        self.format_field = Some(field.into());
        self
    }

    /// The most inserts to try, 1 to 10,000 (default 100); then `TOO_MANY_RETRIES`.
    ///
    /// ```
    /// # use mongo_seq::OptimisticOptions;
    /// let options = OptimisticOptions::new().max_attempts(20); // then TOO_MANY_RETRIES
    /// let same: OptimisticOptions = serde_json::from_str(r#"{ "maxAttempts": 20 }"#)?;
    /// assert_eq!(serde_json::to_value(options)?, serde_json::to_value(same)?);
    /// # Ok::<(), serde_json::Error>(())
    /// ```
    pub fn max_attempts(mut self, attempts: u32) -> Self {
        self.max_attempts = Some(attempts);
        self
    }
}

/// What [`Sequences::insert_one`] and [`Sequences::insert_optimistic`] inserted.
///
/// ```no_run
/// # async fn example(seqs: mongo_seq::Sequences, db: mongodb::Database) -> mongo_seq::Result<()> {
/// use mongodb::bson::{doc, Bson, Document};
///
/// let users = db.collection::<Document>("users");
/// let sarah = seqs.insert_one(&users, doc! { "name": "Sarah C." }, "userid").await?;
/// assert_eq!(sarah.inserted_id, Bson::Int64(sarah.value), "the number went to `_id`");
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct InsertOneResult {
    /// The inserted document's `_id` (the number, when it went to `_id`).
    pub inserted_id: Bson,
    /// Its number.
    pub value: i64,
    /// Its formatted id, when a format field was given.
    pub formatted: Option<String>,
}

/// What [`Sequences::insert_many`] inserted.
///
/// ```no_run
/// # async fn example(seqs: mongo_seq::Sequences, db: mongodb::Database) -> mongo_seq::Result<()> {
/// use mongodb::bson::{doc, Document};
///
/// let users = db.collection::<Document>("users");
/// let batch = [doc! { "name": "Bob D." }, doc! { "name": "Ann" }];
/// let result = seqs.insert_many(&users, &batch, "userid").await?;
/// for (id, number) in result.inserted_ids.iter().zip(&result.values) {
///     println!("{id}: {number}");
/// }
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct InsertManyResult {
    /// The `_id` of each document, in input order.
    pub inserted_ids: Vec<Bson>,
    /// The number of each document, in input order.
    pub values: Vec<i64>,
    /// The formatted id of each, when a format field was given.
    pub formatted: Option<Vec<String>>,
}

impl Sequences {
    /// Inserts a copy of `document` with the next number in the options' `field` (and the
    /// formatted id in `format_field`). A duplicate key on `field` (a number already taken,
    /// e.g. by an import) takes a fresh number and inserts again (at most 10 times); a duplicate
    /// key on another unique index is returned at once, as the driver raised it
    /// ([`Error::Mongo`](crate::Error::Mongo)). `document` is any `Serialize` type that
    /// serializes to a document (a `bson::Document`, your struct); what cannot be stored (not a
    /// document, over 16 MiB once numbered, a missing scope value) is refused before anything is
    /// reserved.
    ///
    /// A cancelled call may leave its number unused (a gap), or its document inserted.
    ///
    /// ```no_run
    /// # async fn example(seqs: mongo_seq::Sequences, db: mongodb::Database) -> mongo_seq::Result<()> {
    /// use mongodb::bson::{doc, Document};
    ///
    /// let users = db.collection::<Document>("users");
    /// let sarah = seqs.insert_one(&users, doc! { "name": "Sarah C." }, "userid").await?;
    /// assert_eq!((sarah.value, sarah.inserted_id.as_i64()), (1, Some(1)));
    /// # Ok(()) }
    /// ```
    pub async fn insert_one<T>(
        &self,
        collection: &Collection<T>,
        document: impl Borrow<T>,
        options: impl Into<InsertOptions>,
    ) -> Result<InsertOneResult>
    where
        T: Serialize + Send + Sync,
    {
        let document = storable("doc", document.borrow())?;
        let options = options.into();
        let sequence = self.resolve(&options.sequence)?;
        let spec = sequence.options();
        let scope = scope_of(spec, &document);
        let mut plan = InsertNumbered::one(
            spec,
            &options.field,
            options.format_field.as_deref(),
            scope.as_ref(),
        )?;
        let mut documents = Documents::new(vec![document]);
        let outcome = run_insert(&sequence, collection, &mut plan, &mut documents).await?;
        Ok(InsertOneResult {
            inserted_id: documents.inserted_id(0).cloned().unwrap_or(Bson::Null),
            value: outcome.values.first().copied().unwrap_or_default(),
            formatted: outcome.formatted.and_then(|f| f.into_iter().next()),
        })
    }

    /// Inserts copies of `documents` (at most 1,000,000), numbered in input order with **one
    /// reservation per counter** (one round trip for an unscoped sequence), with one ordered
    /// `insertMany`. Documents from a duplicate key on `field` onwards are renumbered and
    /// inserted again; the ones before it are kept. Every document is checked before anything
    /// is reserved (errors name it: `documents[3]`).
    ///
    /// A cancelled call may leave numbers unused (a gap), or some documents inserted.
    ///
    /// ```no_run
    /// # async fn example(seqs: mongo_seq::Sequences, db: mongodb::Database) -> mongo_seq::Result<()> {
    /// use mongo_seq::InsertOptions;
    /// use serde::Serialize;
    ///
    /// #[derive(Serialize)]
    /// struct Order { item: String }
    ///
    /// let orders = db.collection::<Order>("orders");
    /// let batch = [Order { item: "book".into() }, Order { item: "pen".into() }];
    /// let result = seqs.insert_many(&orders, &batch, InsertOptions::new("orders").field("number")).await?;
    /// assert_eq!(result.values, [1, 2]);
    /// # Ok(()) }
    /// ```
    pub async fn insert_many<T>(
        &self,
        collection: &Collection<T>,
        documents: impl IntoIterator<Item = impl Borrow<T>>,
        options: impl Into<InsertOptions>,
    ) -> Result<InsertManyResult>
    where
        T: Serialize + Send + Sync,
    {
        // Every check before anything is reserved or written: the batch's size, each document,
        // the options; the plan checks each document's counter id (a missing scope value).
        let mut batch = Vec::new();
        for (index, document) in documents.into_iter().enumerate() {
            if batch.len() == usize::try_from(MAX_COUNT).unwrap_or(usize::MAX) {
                return Err(too_many());
            }
            batch.push(storable(&format!("documents[{index}]"), document.borrow())?);
        }
        let options = options.into();
        let sequence = self.resolve(&options.sequence)?;
        let spec = sequence.options();
        let scopes: Option<Vec<Value>> = (!spec.scope().is_empty())
            .then(|| batch.iter().map(|d| convert::from_doc(d.clone())).collect());
        let mut plan = InsertNumbered::many(
            spec,
            &options.field,
            options.format_field.as_deref(),
            u64::try_from(batch.len()).unwrap_or(u64::MAX),
            scopes.as_deref(),
        )?;
        let mut documents = Documents::new(batch);
        let outcome = run_insert(&sequence, collection, &mut plan, &mut documents).await?;
        Ok(InsertManyResult {
            inserted_ids: documents
                .into_inserted_ids()
                .into_iter()
                .map(|id| id.unwrap_or(Bson::Null))
                .collect(),
            values: outcome.values,
            formatted: outcome.formatted,
        })
    }

    /// The tutorial's optimistic loop, without a counter: find the largest number in `field`,
    /// insert with the next one; after a duplicate key wait a random 0–2 ms, then 0–4, 0–8, …
    /// up to 0–100 ms (exponential backoff with jitter) and try again, at most `max_attempts`
    /// inserts, then `TOO_MANY_RETRIES`. `field` needs a unique index (`_id` has one). Where
    /// many writers insert into one collection, number with a counter
    /// ([`insert_one`](Self::insert_one)): one round trip whatever the contention.
    ///
    /// ```no_run
    /// # async fn example(seqs: mongo_seq::Sequences, db: mongodb::Database) -> mongo_seq::Result<()> {
    /// use mongo_seq::OptimisticOptions;
    /// use mongodb::bson::{doc, Document};
    ///
    /// let users2 = db.collection::<Document>("users2");
    /// let grace = seqs.insert_optimistic(&users2, doc! { "name": "Grace H." }, None).await?;
    /// assert_eq!(grace.value, 1); // max(_id) + 1: no counter
    /// # Ok(()) }
    /// ```
    pub async fn insert_optimistic<T>(
        &self,
        collection: &Collection<T>,
        document: impl Borrow<T>,
        options: impl Into<Option<OptimisticOptions>>,
    ) -> Result<InsertOneResult>
    where
        T: Serialize + Send + Sync,
    {
        let document = storable("doc", document.borrow())?;
        let options = options.into().unwrap_or_default();
        // Without a sequence: default options, named after the collection (not defined here,
        // so the name stays free for `sequence()`).
        let spec = match &options.sequence {
            Some(sequence) => self.resolve(sequence)?.options().clone(),
            None => SequenceSpec::parse(&serde_json::json!({ "name": collection.name() }))?,
        };
        let field = options.field.as_deref().unwrap_or("_id");
        let max_attempts = options.max_attempts.map_or(Value::Null, Value::from);
        let scope = convert::from_doc(document.clone());
        let mut plan = OptimisticInsert::with_max_attempts(
            &spec,
            field,
            Some(&scope),
            options.format_field.as_deref(),
            &max_attempts,
        )?;
        let executor = self
            .executor()
            .clone()
            .with_documents(collection.clone_with_type());
        let mut documents = Documents::new(vec![document]);
        let outcome = run_plan(
            &mut plan,
            &mut Target::insert(&executor, None, &mut documents),
        )
        .await?;
        Ok(InsertOneResult {
            inserted_id: documents.inserted_id(0).cloned().unwrap_or(Bson::Null),
            value: outcome.value,
            formatted: outcome.formatted,
        })
    }
}

/// Runs an insert plan of `sequence` on `collection`.
async fn run_insert<T, P>(
    sequence: &Sequence,
    collection: &Collection<T>,
    plan: &mut P,
    documents: &mut Documents,
) -> Result<P::Output>
where
    T: Send + Sync,
    P: mongo_seq_core::Plan + Send,
{
    let executor = sequence
        .executor()
        .clone()
        .with_documents(collection.clone_with_type());
    run_plan(
        plan,
        &mut Target::insert(&executor, Some(sequence), documents),
    )
    .await
}

fn too_many() -> crate::Error {
    SeqError::InvalidArgument {
        argument: "documents".to_owned(),
        reason: format!("must be at most {MAX_COUNT} documents (split larger batches), got more"),
    }
    .into()
}

/// A caller's document as BSON, checked to be storable once numbered; `INVALID_ARGUMENT`
/// naming `argument` otherwise.
pub(crate) fn storable<D: Serialize + ?Sized>(argument: &str, document: &D) -> Result<Document> {
    let invalid = |reason: String| SeqError::InvalidArgument {
        argument: argument.to_owned(),
        reason,
    };
    let document = mongodb::bson::to_document(document).map_err(|e| {
        // bson says "Could not be serialized to Document, got Int64 instead" for a value that
        // is not a document; other messages (an unsigned integer out of range, …) as they are.
        let text = e.to_string();
        invalid(match text.split_once("got ") {
            Some((_, got)) => format!(
                "must be a document (a struct, a map or a bson::Document), got {}",
                got.trim_end_matches(" instead")
            ),
            None => format!("cannot be stored as BSON: {text}"),
        })
    })?;
    let bytes = RawDocumentBuf::from_document(&document)
        .map_err(|e| invalid(format!("cannot be stored as BSON: {e}")))?
        .as_bytes()
        .len();
    check_document_size(argument, u64::try_from(bytes).unwrap_or(u64::MAX))?;
    Ok(document)
}

/// The scope values of a document as the core reads them (`None` for an unscoped sequence).
fn scope_of(spec: &SequenceSpec, document: &Document) -> Option<Value> {
    (!spec.scope().is_empty()).then(|| convert::from_doc(document.clone()))
}
