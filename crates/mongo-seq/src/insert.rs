//! Inserting numbered documents: `insert_one` / `insert_many` over a sequence's counters (the
//! core's `InsertNumbered`), and the tutorial's optimistic loop (`OptimisticInsert`).

use std::borrow::Borrow;

use mongo_seq_core::{
    check_document_size, Command, InsertDates, InsertNumbered, OptimisticInsert, Reply, SeqError,
    SequenceSpec, MAX_COUNT,
};
use mongodb::bson::{Bson, Document, RawDocumentBuf};
use mongodb::Collection;
use serde::Serialize;
use serde_json::Value;

use crate::error::Result;
use crate::executor::{convert, Documents};
use crate::insert_options::{InsertOptions, InsertedMany, InsertedOne, OptimisticOptions};
use crate::plan_runner::PlanRunner;
use crate::run::{run_plan, Execute};
use crate::sequence::Sequence;
use crate::sequences::Sequences;

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
    /// For a sequence that resets, the number is of the period of the document's
    /// [`date_field`](InsertOptions::date_field) (a BSON date; missing, null or not a date is
    /// `INVALID_DATE`, nothing reserved), else of now; its period is written beside it, in
    /// `<field>Period` (`"2026"`). Each period numbers from `start`: a unique index on `field`
    /// alone would collide across periods — index `{ <scope…>, <field>Period, <field> }`.
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
    ) -> Result<InsertedOne>
    where
        T: Serialize + Send + Sync,
    {
        let document = storable("doc", document.borrow())?;
        let options = options.into();
        let sequence = self.resolve(&options.sequence)?;
        let spec = sequence.options();
        let read = reads_documents(spec, &options);
        let values = read.then(|| convert::from_doc(document.clone()));
        let mut plan = InsertNumbered::one(
            spec,
            &options.field,
            options.format_field.as_deref(),
            values.as_ref(),
            &dates(&options),
        )?;
        let mut documents = Documents::new(vec![document]);
        let outcome = run_insert(&sequence, collection, &mut plan, &mut documents).await?;
        Ok(InsertedOne {
            inserted_id: documents.inserted_id(0).cloned().unwrap_or(Bson::Null),
            value: outcome.values.first().copied().unwrap_or_default(),
            formatted: outcome.formatted.and_then(|f| f.into_iter().next()),
            period: outcome.periods.and_then(|p| p.into_iter().next()),
        })
    }

    /// Inserts copies of `documents` (at most 1,000,000), numbered in input order with **one
    /// reservation per counter** (one round trip for an unscoped sequence), with one ordered
    /// `insertMany`. Documents from a duplicate key on `field` onwards are renumbered and
    /// inserted again; the ones before it are kept. Every document is checked before anything
    /// is reserved (errors name it: `documents[3]`; a missing or unusable scope value,
    /// `MISSING_SCOPE_FIELD` / `INVALID_SCOPE_VALUE`, says "document 3 of the batch" and holds
    /// its `index`).
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
    ) -> Result<InsertedMany>
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
        let values: Option<Vec<Value>> = reads_documents(spec, &options)
            .then(|| batch.iter().map(|d| convert::from_doc(d.clone())).collect());
        let mut plan = InsertNumbered::many(
            spec,
            &options.field,
            options.format_field.as_deref(),
            u64::try_from(batch.len()).unwrap_or(u64::MAX),
            values.as_deref(),
            &dates(&options),
        )?;
        let mut documents = Documents::new(batch);
        let outcome = run_insert(&sequence, collection, &mut plan, &mut documents).await?;
        Ok(InsertedMany {
            inserted_ids: documents
                .into_inserted_ids()
                .into_iter()
                .map(|id| id.unwrap_or(Bson::Null))
                .collect(),
            values: outcome.values,
            formatted: outcome.formatted,
            periods: outcome.periods,
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
    ) -> Result<InsertedOne>
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
            &mut PlanRunner::insert(&executor, &mut documents),
        )
        .await?;
        Ok(InsertedOne {
            inserted_id: documents.inserted_id(0).cloned().unwrap_or(Bson::Null),
            value: outcome.value,
            formatted: outcome.formatted,
            period: None,
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
    let mut runner = InsertRunner {
        runner: PlanRunner::insert(&executor, documents),
        sequence,
    };
    run_plan(plan, &mut runner).await
}

/// Where an insert plan's commands run: a [`PlanRunner`], and `sequence` for its `take` commands, from its counters in
/// this process: inserts share the block, and its round trips, with `next()` (as
/// js/src/execute.js does).
struct InsertRunner<'a> {
    runner: PlanRunner<'a>,
    sequence: &'a Sequence,
}

impl Execute for InsertRunner<'_> {
    type Error = crate::Error;

    async fn execute(&mut self, command: Command) -> Result<Reply> {
        match command {
            Command::Take { counter_id, count } => {
                let numbers = self.sequence.take_from(&counter_id, count).await?;
                Ok(Reply::Numbers {
                    values: numbers.values().collect(),
                })
            }
            command => self.runner.execute(command).await,
        }
    }
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

/// Whether the insert plan reads the documents: their scope values, or their `date_field`.
fn reads_documents(spec: &SequenceSpec, options: &InsertOptions) -> bool {
    !spec.scope().is_empty() || options.date_field.is_some()
}

/// Where the numbers' periods come from: the documents' `date_field`, else this process's clock
/// for the whole call (a sequence that never resets ignores it; one that does refuses a
/// `date_field` for one that never does).
fn dates(options: &InsertOptions) -> InsertDates {
    InsertDates {
        date_field: options.date_field.clone(),
        now_ms: Some(crate::clock::now_ms()),
    }
}
