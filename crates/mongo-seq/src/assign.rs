//! Numbering on issue: `assign` numbers the documents that match a filter and have no number
//! yet (the core's `Assign` plan: pages in the caller's order, one reservation per counter and
//! page, writes conditioned on the document still matching and still unnumbered), and the
//! unique index it relies on.

use mongo_seq_core::{assign_matching, NumberingSpec, Period};
use mongodb::bson::{Bson, Document};
use mongodb::Collection;
use serde::{Deserialize, Serialize};

use crate::error::Result;
use crate::executor::convert;
use crate::insert_options::SequenceRef;
use crate::plan_runner::PlanRunner;
use crate::run::run_plan;
use crate::sequences::Sequences;

/// The options of [`Sequences::assign`]: the sequence, the field that receives the number (not
/// `_id`, which cannot change), the one that receives the formatted id, the order in which
/// documents are numbered (`sort`, then `_id`; default `_id`), and for a sequence that resets
/// the documents' date field (default: now, for the whole call).
///
/// ```
/// use mongo_seq::AssignOptions;
/// use mongodb::bson::doc;
///
/// let options = AssignOptions::new("invoices", "number")
///     .format_field("code")
///     .sort(doc! { "issuedAt": 1 })
///     .date_field("issuedAt");
/// let same: AssignOptions = serde_json::from_value(serde_json::json!({
///     "sequence": "invoices", "field": "number", "formatField": "code",
///     "sort": { "issuedAt": 1 }, "dateField": "issuedAt"
/// }))?;
/// assert_eq!(serde_json::to_value(&options)?, serde_json::to_value(&same)?);
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AssignOptions {
    sequence: SequenceRef,
    field: String,
    #[serde(
        default,
        alias = "formatField",
        skip_serializing_if = "Option::is_none"
    )]
    format_field: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    sort: Option<Document>,
    #[serde(default, alias = "dateField", skip_serializing_if = "Option::is_none")]
    date_field: Option<String>,
}

impl AssignOptions {
    /// Numbers of `sequence` into `field`.
    ///
    /// ```
    /// let options = mongo_seq::AssignOptions::new("invoices", "number");
    /// # let _ = options;
    /// ```
    pub fn new(sequence: impl Into<SequenceRef>, field: impl Into<String>) -> Self {
        Self {
            sequence: sequence.into(),
            field: field.into(),
            format_field: None,
            sort: None,
            date_field: None,
        }
    }

    /// The field that receives the formatted id (the sequence needs a `format`).
    ///
    /// ```
    /// let options = mongo_seq::AssignOptions::new("invoices", "number").format_field("code");
    /// # let _ = options;
    /// ```
    pub fn format_field(mut self, field: impl Into<String>) -> Self {
        self.format_field = Some(field.into());
        self
    }

    /// The order documents are numbered in: field paths, 1 or -1 (then `_id`).
    ///
    /// ```
    /// use mongodb::bson::doc;
    /// let options = mongo_seq::AssignOptions::new("invoices", "number").sort(doc! { "issuedAt": 1 });
    /// # let _ = options;
    /// ```
    pub fn sort(mut self, sort: Document) -> Self {
        self.sort = Some(sort);
        self
    }

    /// For a sequence that resets: the documents' date field placing each number in its period
    /// (default: now). A document whose field is missing or not a date is skipped (reported
    /// in [`AssignResult::skipped`]).
    ///
    /// ```
    /// let options = mongo_seq::AssignOptions::new("invoices", "number").date_field("issuedAt");
    /// # let _ = options;
    /// ```
    pub fn date_field(mut self, field: impl Into<String>) -> Self {
        self.date_field = Some(field.into());
        self
    }
}

/// What [`Sequences::assign`] did: the numbers it gave, in the order of the sort, and the
/// documents it passed over.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct AssignResult {
    /// The documents this call numbered.
    pub assigned: Vec<Assigned>,
    /// The documents it could not number (a missing scope value, a bad date), with why.
    pub skipped: Vec<Skipped>,
}

/// A document [`Sequences::assign`] numbered.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Assigned {
    /// Its `_id`.
    pub id: Bson,
    /// Its number.
    pub value: i64,
    /// Its formatted id, when the sequence has a `format`.
    pub formatted: Option<String>,
    /// The number's period, when the sequence resets.
    pub period: Option<Period>,
}

/// A document [`Sequences::assign`] could not number, left as it was.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Skipped {
    /// Its `_id`.
    pub id: Bson,
    /// The error code (`MISSING_SCOPE_FIELD`, `INVALID_DATE`, …).
    pub code: &'static str,
    /// Why.
    pub message: String,
}

impl Sequences {
    /// Numbers every document of `collection` that matches `filter` and has no number in the
    /// options' field: in the order of `sort` (then `_id`), pages of 1000 documents, one
    /// reservation per counter (scope, period) and page. Every write is conditioned on the
    /// document still matching `filter` and still unnumbered, so a document is never numbered
    /// twice, even by several processes assigning at once; a number a process reserved for a
    /// document another numbered first is a **gap**, as with blocks. Returns what this call
    /// numbered. Run [`create_numbering_index`](Self::create_numbering_index) once first: the
    /// unique index is what detects a number already held.
    ///
    /// Bad input is refused before anything is read or written: `filter` (`INVALID_ARGUMENT`),
    /// `sort` (a direction other than 1/-1), the fields, a `date_field` of a sequence that never
    /// resets.
    ///
    /// ```no_run
    /// # async fn example(seqs: mongo_seq::Sequences, db: mongodb::Database) -> mongo_seq::Result<()> {
    /// use mongo_seq::{AssignOptions, Reset, SequenceOptions};
    /// use mongodb::bson::{doc, Document};
    ///
    /// let invoices = db.collection::<Document>("invoices");
    /// seqs.sequence("invoices", SequenceOptions::new().reset(Reset::Yearly).format("INV-{yyyy}-{seq:06}"))?;
    /// let options = AssignOptions::new("invoices", "number").format_field("code").date_field("issuedAt");
    /// seqs.create_numbering_index(&invoices, options.clone()).await?;
    /// // Drafts stay unnumbered; issued invoices get INV-2026-000001, … in their year's series.
    /// let result = seqs.assign(&invoices, doc! { "status": "issued" }, options).await?;
    /// for number in &result.assigned {
    ///     println!("{}: {}", number.id, number.formatted.as_deref().unwrap_or_default());
    /// }
    /// # Ok(()) }
    /// ```
    pub async fn assign<T: Send + Sync>(
        &self,
        collection: &Collection<T>,
        filter: Document,
        options: impl Into<AssignOptions>,
    ) -> Result<AssignResult> {
        let options = options.into();
        let sequence = self.resolve(&options.sequence)?;
        let sort = options.sort.map(convert::from_doc);
        let mut plan = assign_matching(
            sequence.options(),
            &options.field,
            options.format_field.as_deref(),
            convert::from_doc(filter),
            sort.as_ref(),
            options.date_field.as_deref(),
            Some(crate::clock::now_ms()),
        )?;
        let executor = sequence
            .executor()
            .clone()
            .with_documents(collection.clone_with_type());
        let outcome = run_plan(&mut plan, &mut PlanRunner::counters(&executor)).await?;
        let id = |value: &serde_json::Value| convert::to_bson(value.clone()).unwrap_or(Bson::Null);
        Ok(AssignResult {
            assigned: outcome
                .assigned
                .iter()
                .map(|a| Assigned {
                    id: id(&a.id),
                    value: a.value,
                    formatted: a.formatted.clone(),
                    period: a.period,
                })
                .collect(),
            skipped: outcome
                .skipped
                .iter()
                .map(|s| Skipped {
                    id: id(&s.id),
                    code: s.code,
                    message: s.message.clone(),
                })
                .collect(),
        })
    }

    /// Creates the unique index numbering into the options' field relies on (once; again is
    /// harmless): `{ <scope…>, <field>Period (a sequence that resets), <field> }`, partial to
    /// the documents that have the field, named `mongo_seq_<field>`. Without it a number held
    /// twice is not detected.
    ///
    /// ```no_run
    /// # async fn example(seqs: mongo_seq::Sequences, db: mongodb::Database) -> mongo_seq::Result<()> {
    /// use mongo_seq::AssignOptions;
    /// use mongodb::bson::Document;
    ///
    /// let invoices = db.collection::<Document>("invoices");
    /// seqs.create_numbering_index(&invoices, AssignOptions::new("invoices", "number")).await?;
    /// # Ok(()) }
    /// ```
    pub async fn create_numbering_index<T: Send + Sync>(
        &self,
        collection: &Collection<T>,
        options: impl Into<AssignOptions>,
    ) -> Result<()> {
        let options = options.into();
        let sequence = self.resolve(&options.sequence)?;
        let numbering = NumberingSpec::for_call(
            sequence.options().clone(),
            &options.field,
            options.format_field.as_deref(),
        )?;
        let executor = sequence
            .executor()
            .clone()
            .with_documents(collection.clone_with_type());
        match executor.execute(numbering.unique_index()).await? {
            mongo_seq_core::Reply::DuplicateKey => Err(mongo_seq_core::SeqError::InvalidArgument {
                argument: "field".to_owned(),
                reason: format!(
                    "documents of `{}` hold a number twice: the unique index `{}` cannot be built",
                    collection.name(),
                    numbering.index_name()
                ),
            }
            .into()),
            _ => Ok(()),
        }
    }
}
