//! The inserts that number the caller's own documents (`insertDocument`, `insertDocuments`, of
//! the core's insert plans): each document is inserted as a copy with the fields the core sets
//! (its number, its formatted id), and its `_id` is recorded. A duplicate key goes to the core
//! (`Command::duplicate_key_reply`): on the numbered field it is a reply (the plan renumbers),
//! on another unique index (the application's own, on `email` say) it is the caller's error,
//! returned as the driver raised it.

use mongo_seq_core::{Command, Reply, WriteError, WriteResult, DUPLICATE_KEY};
use mongodb::bson::{oid::ObjectId, Bson, Document};
use mongodb::error::{Error, ErrorKind};
use serde_json::Value;

use super::{classify, convert, write_concern, ExecuteError, Executor, Optional};

/// The caller's documents an insert plan numbers, in the order the plan counts them. The
/// executor inserts copies (these stay as given) and records the `_id` of each one inserted; a
/// document without one gets an `ObjectId` first, as the driver would give it.
///
/// ```
/// use mongo_seq::executor::Documents;
/// use mongodb::bson::doc;
///
/// let documents = Documents::new(vec![doc! { "item": "book" }, doc! { "item": "pen" }]);
/// assert_eq!(documents.len(), 2);
/// assert_eq!(documents.inserted_id(0), None, "nothing inserted yet");
/// ```
#[derive(Debug, Clone, Default)]
pub struct Documents {
    documents: Vec<Document>,
    ids: Vec<Option<Bson>>,
}

impl Documents {
    /// The documents of one insert plan (one for `insertDocument`).
    ///
    /// ```
    /// use mongo_seq::executor::Documents;
    /// use mongodb::bson::doc;
    ///
    /// let one = Documents::new(vec![doc! { "item": "book" }]);
    /// assert_eq!(one.len(), 1);
    /// ```
    pub fn new(documents: Vec<Document>) -> Self {
        let ids = vec![None; documents.len()];
        Self { documents, ids }
    }

    /// How many documents.
    ///
    /// ```
    /// # use mongo_seq::executor::Documents;
    /// assert_eq!(Documents::new(vec![Default::default(); 3]).len(), 3);
    /// ```
    pub fn len(&self) -> usize {
        self.documents.len()
    }

    /// Whether there are none.
    ///
    /// ```
    /// # use mongo_seq::executor::Documents;
    /// assert!(Documents::new(Vec::new()).is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.documents.is_empty()
    }

    /// The `_id` of document `index`, once it is inserted.
    ///
    /// ```
    /// # use mongo_seq::executor::Documents;
    /// # use mongodb::bson::doc;
    /// let documents = Documents::new(vec![doc! { "item": "book" }]);
    /// assert_eq!(documents.inserted_id(0), None, "not inserted (yet)");
    /// assert_eq!(documents.inserted_id(5), None, "no such document");
    /// ```
    pub fn inserted_id(&self, index: usize) -> Option<&Bson> {
        self.ids.get(index).and_then(Option::as_ref)
    }

    /// The `_id` of every document, in order (`None`: not inserted).
    ///
    /// ```
    /// # use mongo_seq::executor::Documents;
    /// # use mongodb::bson::doc;
    /// let documents = Documents::new(vec![doc! {}, doc! {}]);
    /// assert_eq!(documents.into_inserted_ids(), [None, None], "none inserted");
    /// ```
    pub fn into_inserted_ids(self) -> Vec<Option<Bson>> {
        self.ids
    }

    /// A copy of document `index` with `fields` set (top-level keys, in place when the document
    /// has them) and an `_id`.
    fn numbered(&self, index: usize, fields: &Value) -> Result<Document, ExecuteError> {
        let mut copy = self.documents.get(index).cloned().ok_or_else(|| {
            ExecuteError::Invalid(format!(
                "the plan numbers document {index} of {}",
                self.documents.len()
            ))
        })?;
        for (key, value) in convert::to_doc(fields.clone()).map_err(ExecuteError::Invalid)? {
            copy.insert(key, value);
        }
        if !copy.contains_key("_id") {
            let mut with_id = Document::new();
            with_id.insert("_id", ObjectId::new());
            with_id.extend(copy);
            copy = with_id;
        }
        Ok(copy)
    }

    fn record(&mut self, first: usize, ids: Vec<Option<Bson>>) {
        for (offset, id) in ids.into_iter().enumerate() {
            if let Some(slot) = first.checked_add(offset).and_then(|i| self.ids.get_mut(i)) {
                *slot = id;
            }
        }
    }
}

impl Executor {
    /// Runs one command of an insert plan: `insertDocument` and `insertDocuments` insert copies
    /// of `documents` (see [`Documents`]); every other command runs as with
    /// [`Executor::execute`].
    ///
    /// ```no_run
    /// # async fn example(db: mongodb::Database) -> Result<(), Box<dyn std::error::Error>> {
    /// use mongo_seq::core::{OptimisticInsert, Plan, SequenceSpec, Step};
    /// use mongo_seq::executor::{convert, Documents, Executor};
    /// use mongodb::bson::doc;
    ///
    /// // The tutorial's optimistic loop, driven by hand (`Sequences::insert_optimistic` does this).
    /// let spec = SequenceSpec::parse(&serde_json::json!({ "name": "users" }))?;
    /// let grace = doc! { "name": "Grace H." };
    /// let mut plan = OptimisticInsert::new(&spec, "_id", Some(&convert::from_doc(grace.clone())), None)?;
    /// let executor = Executor::new(db.collection("counters")).with_documents(db.collection("users"));
    /// let mut documents = Documents::new(vec![grace]);
    /// let mut step = plan.current_step()?;
    /// while let Step::Command(command) = step {
    ///     step = plan.feed(executor.execute_with(command, &mut documents).await?)?;
    /// }
    /// println!("inserted as {:?}", documents.inserted_id(0));
    /// # Ok(()) }
    /// ```
    pub async fn execute_with(
        &self,
        command: Command,
        documents: &mut Documents,
    ) -> Result<Reply, ExecuteError> {
        let write = command.write_concern().map(|c| write_concern(&c));
        match &command {
            Command::InsertDocument {
                collection, fields, ..
            } => {
                let copy = documents.numbered(0, fields)?;
                let id = copy.get("_id").cloned();
                let result = self
                    .place(*collection)
                    .map_err(super::Failed::into_error)?
                    .collection
                    .insert_one(copy)
                    .optional(write, |action, w| action.write_concern(w))
                    .await;
                match result {
                    Ok(_) => {
                        documents.record(0, vec![id]);
                        Ok(Reply::Inserted)
                    }
                    Err(e) => {
                        let (_, message) = duplicate_key(&command, e)?;
                        command
                            .duplicate_key_reply(Some(&message), None)
                            .ok_or_else(|| ExecuteError::Invalid("a duplicate key".to_owned()))
                    }
                }
            }
            Command::InsertDocuments {
                collection,
                first,
                fields,
                ..
            } => {
                let first = usize::try_from(*first).unwrap_or(usize::MAX);
                let copies = fields
                    .iter()
                    .enumerate()
                    .map(|(i, fields)| documents.numbered(first.saturating_add(i), fields))
                    .collect::<Result<Vec<_>, _>>()?;
                let ids: Vec<Option<Bson>> = copies.iter().map(|d| d.get("_id").cloned()).collect();
                let count = u64::try_from(copies.len()).unwrap_or(u64::MAX);
                let result = self
                    .place(*collection)
                    .map_err(super::Failed::into_error)?
                    .collection
                    .insert_many(copies)
                    .ordered(true)
                    .optional(write, |action, w| action.write_concern(w))
                    .await;
                match result {
                    Ok(_) => {
                        documents.record(first, ids);
                        Ok(Reply::WriteResult(WriteResult {
                            n: count,
                            ..WriteResult::default()
                        }))
                    }
                    Err(e) => {
                        let (at, errmsg) = duplicate_key(&command, e)?;
                        // Ordered: the documents before the refused one are in.
                        documents.record(first, ids.into_iter().take(at).collect());
                        let index = u64::try_from(at).unwrap_or(u64::MAX);
                        Ok(Reply::WriteResult(WriteResult {
                            n: index,
                            n_modified: 0,
                            write_errors: vec![WriteError {
                                index,
                                code: DUPLICATE_KEY,
                                errmsg,
                            }],
                            ..WriteResult::default()
                        }))
                    }
                }
            }
            _ => self.execute(command).await,
        }
    }
}

/// A duplicate key the plan handles: the index of the refused document (0 for a single insert)
/// and what the server said. Any other error, a duplicate key on another unique index among
/// them, is the caller's: returned as the driver raised it.
fn duplicate_key(command: &Command, e: Error) -> Result<(usize, String), ExecuteError> {
    let refused = match e.kind.as_ref() {
        ErrorKind::InsertMany(many) if many.write_concern_error.is_none() => many
            .write_errors
            .as_ref()
            .and_then(|errors| errors.first())
            .filter(|first| i64::from(first.code) == DUPLICATE_KEY)
            .map(|first| (first.index, first.message.clone())),
        _ if classify::is_duplicate_key(&e) => {
            Some((0, classify::duplicate_key_message(&e).unwrap_or_default()))
        }
        _ => None,
    };
    let Some((index, message)) = refused else {
        return Err(ExecuteError::Mongo(e));
    };
    if command.plan_handles_duplicate_key(Some(&message), None) {
        Ok((index, message))
    } else {
        Err(ExecuteError::Mongo(e))
    }
}
