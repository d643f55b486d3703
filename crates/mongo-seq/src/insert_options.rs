//! The options of the inserts (which sequence, which fields) and what they return.

use mongodb::bson::Bson;
use serde::{Deserialize, Serialize};

use crate::error::Result;
use crate::sequence::Sequence;

/// Which sequence numbers an insert: a name (a sequence defined with
/// [`Sequences::sequence`](crate::Sequences::sequence), or one with the default options), or a
/// [`Sequence`] (whose numbers come from its own counters).
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

/// The options of [`Sequences::insert_one`](crate::Sequences::insert_one) and
/// [`Sequences::insert_many`](crate::Sequences::insert_many): the sequence, the field that
/// receives the number (default `_id`) and the one that receives the formatted id.
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
    pub(crate) sequence: SequenceRef,
    #[serde(default = "default_field")]
    pub(crate) field: String,
    #[serde(
        default,
        alias = "formatField",
        skip_serializing_if = "Option::is_none"
    )]
    pub(crate) format_field: Option<String>,
    #[serde(default, alias = "dateField", skip_serializing_if = "Option::is_none")]
    pub(crate) date_field: Option<String>,
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
            date_field: None,
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

    /// For a sequence that resets: the documents' field whose date (a BSON date) places each
    /// number in its period (default: now, for the whole call). A document issued on
    /// 31 December and inserted on 2 January is numbered in December's series. Missing, null,
    /// not a date, in an array or out of range is `INVALID_DATE` naming `dateField` and the
    /// document's index, nothing reserved; `INVALID_ARGUMENT` for a sequence that never resets.
    ///
    /// ```
    /// # use mongo_seq::InsertOptions;
    /// // `issuedAt` decides the year of the number in `number` (its period in `numberPeriod`).
    /// let options = InsertOptions::new("invoices").field("number").date_field("issuedAt");
    /// # let _ = options;
    /// ```
    pub fn date_field(mut self, field: impl Into<String>) -> Self {
        self.date_field = Some(field.into());
        self
    }
}

impl<T: Into<SequenceRef>> From<T> for InsertOptions {
    fn from(sequence: T) -> Self {
        Self::new(sequence)
    }
}

/// The options of [`Sequences::insert_optimistic`](crate::Sequences::insert_optimistic): the
/// sequence that gives start, step, bounds, scope and format (by default one named after the
/// collection, with the default options), the field (default `_id`; it needs a unique index),
/// the formatted id's field, and the most inserts to try (1–10,000, default 100).
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
    pub(crate) sequence: Option<SequenceRef>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) field: Option<String>,
    #[serde(
        default,
        alias = "formatField",
        skip_serializing_if = "Option::is_none"
    )]
    pub(crate) format_field: Option<String>,
    #[serde(
        default,
        alias = "maxAttempts",
        skip_serializing_if = "Option::is_none"
    )]
    pub(crate) max_attempts: Option<u32>,
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

/// What [`Sequences::insert_one`](crate::Sequences::insert_one) and
/// [`Sequences::insert_optimistic`](crate::Sequences::insert_optimistic) inserted.
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
pub struct InsertedOne {
    /// The inserted document's `_id` (the number, when it went to `_id`).
    pub inserted_id: Bson,
    /// Its number.
    pub value: i64,
    /// Its formatted id, when a format field was given.
    pub formatted: Option<String>,
    /// Its period (`"2026"`), when the sequence resets.
    pub period: Option<String>,
}

/// What [`Sequences::insert_many`](crate::Sequences::insert_many) inserted.
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
pub struct InsertedMany {
    /// The `_id` of each document, in input order.
    pub inserted_ids: Vec<Bson>,
    /// The number of each document, in input order.
    pub values: Vec<i64>,
    /// The formatted id of each, when a format field was given.
    pub formatted: Option<Vec<String>>,
    /// The period of each (`"2026"`), when the sequence resets.
    pub periods: Option<Vec<String>>,
}

/// The former name of [`InsertedOne`], which shared the driver's `InsertOneResult`'s.
#[deprecated(note = "renamed `InsertedOne` (the driver has an `InsertOneResult`)")]
pub type InsertOneResult = InsertedOne;

/// The former name of [`InsertedMany`], which shared the driver's `InsertManyResult`'s.
#[deprecated(note = "renamed `InsertedMany` (the driver has an `InsertManyResult`)")]
pub type InsertManyResult = InsertedMany;
