//! Writing a sealed series' chain: what a gapless trigger adds to the intent protocol
//! ([`crate::numbering::intent`]) when its sequence has `sealFields` (the chain's encoding and
//! its verification are [`crate::seal`]).
//!
//! ```text
//! counter: { …, seal: { hash: <head: the series' last link>,
//!                       pending: [{id, number, seal: {hash, previous}}] } }
//! FinishIntent (sealed), once the batch's numbers are final:
//!   [the counter's seal unknown]        findOne counter                → its seal
//!   [seal.pending recorded by an earlier epoch]  update those seals first (as below): a
//!                                        deposed holder's finish may have recorded them after
//!                                        the takeover's CompletePending read the counter
//!   [no seal yet, a series that resets] find counters {_id: the series' earlier periods,
//!                                         seal.hash exists} sort _id −1 limit 1
//!                                        → the anchor: the first link names it
//!   seal the issued documents in number order after the head (their values: the change
//!   event's document, or the completion's read)
//!   findOneAndUpdate {_id, intent.first, intent.count, epoch ≤ E, seal.hash: head}
//!     {$set: {seq, epoch: E, seal: {hash: <last>, pending: [the batch's seals],
//!                                    pendingEpoch: E}}, $unset: {intent}}
//!     none → findOne: epoch > E → fenced; intent gone → alreadyFinished (its finisher sealed);
//!            still ours → seal again after the head read, update again
//!   update {ordered: false} per seal: q {_id, field: number, fieldSeal: {$exists: false},
//!           fieldEpoch: ≤ E} u {$set: {fieldSeal: seal}}
//! CompletePending (a new holder): first writes every counter's `seal.pending` (the same
//! update), then completes the intents.
//! ```
//!
//! Why it is fenced and crash-safe: the head moves only in the update that clears the intent
//! (fenced by the epoch and the intent, compare-and-set on the head), so a number is sealed
//! only once it is final, and two batches can never both follow one link. The seals are
//! recorded in that same update, so a crash before they reach the documents leaves them in the
//! counter, where the next holder finds them and writes them exactly as recorded (a document
//! edited in between then fails `FIELD_CHANGED`, as it should). A holder writes a batch's
//! seals before its next batch's finish replaces `pending`; a failure in between ends its
//! session, and the next session starts with [`crate::CompletePending`]. The write applies
//! only where the document has no seal yet and holds that number, so a late or repeated write
//! (a deposed holder waking up) changes nothing.
//!
//! Cost: one more command per batch (the seals' update); the head moves in the update that
//! clears the intent anyway. A series' first batch in a period reads the anchor once.

use serde_json::{json, Map, Value};

use crate::ejson;
use crate::error::SeqError;
use crate::lease::document::epoch_condition;
use crate::numbering::spec::NumberingSpec;
use crate::protocol::command::{
    Collection, Command, QueryOptions, ReturnDocument, UpdateOptions, UpdateStatement,
};
use crate::protocol::reply::Reply;
use crate::seal::link::{Link, Seal};
use crate::sequence::field::stored_value;
use crate::sequence::options::SequenceSpec;

mod write;
pub use write::{WriteSeals, WriteSealsMachine};

/// The counter document's sub-document holding the series' head and pending seals.
pub const FIELD: &str = "seal";

/// A seal recorded in the counter, on its way to its document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PendingSeal {
    pub id: Value,
    pub number: i64,
    pub seal: Seal,
}

impl PendingSeal {
    fn to_document(&self) -> Value {
        json!({ "id": self.id, "number": ejson::long(self.number), "seal": seal_document(&self.seal) })
    }

    fn read(value: &Value) -> Result<Self, String> {
        let id = value.get("id").cloned().ok_or("`id` is missing")?;
        let number = value
            .get("number")
            .ok_or("`number` is missing".to_owned())
            .and_then(|n| ejson::read_i64(n).map_err(|r| format!("`number` {r}")))?;
        let seal = Seal::read(value.get("seal").unwrap_or(&Value::Null))?;
        Ok(Self { id, number, seal })
    }
}

/// A seal as stored: `{hash, previous}`.
pub fn seal_document(seal: &Seal) -> Value {
    json!({ "hash": seal.hash, "previous": seal.previous })
}

/// What a counter document says about its series' chain.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CounterSeal {
    /// Whether the counter has a `seal` sub-document (a counter without one has sealed
    /// nothing: its first link names the anchor).
    pub present: bool,
    /// The hash of the series' last link.
    pub head: Option<String>,
    /// The last batch's seals, recorded when its intent was cleared.
    pub pending: Vec<PendingSeal>,
    /// The lease epoch of the holder that recorded `pending` (`None`: not recorded, as by a
    /// version before it was).
    pub pending_epoch: Option<i64>,
    /// Ledger entries (voids, deletions) whose links moved the head, stored until their
    /// entries are written (an appender that crashed in between leaves them here).
    pub records: Vec<Value>,
    /// Seals whose documents were gone when they were written (deleted after their number was
    /// final, before its seal reached it): kept until their deletions' records take them.
    pub orphans: Vec<PendingSeal>,
}

impl CounterSeal {
    /// Reads `seal` from a counter document; a malformed one is `MALFORMED_COUNTER` (left
    /// untouched: a chain is not repaired by guessing).
    pub fn read(counter: &Value, counter_id: &str) -> Result<Self, SeqError> {
        let bad = |reason: String| {
            SeqError::malformed_counter(
                counter_id,
                format!("malformed `seal` ({reason}); it was left untouched"),
            )
        };
        let seal = match counter.get(FIELD) {
            None => return Ok(Self::default()),
            Some(Value::Object(seal)) => seal,
            Some(other) => {
                return Err(bad(format!(
                    "expected a document, got {}",
                    ejson::describe(other)
                )))
            }
        };
        let head = match seal.get("hash") {
            None | Some(Value::Null) => None,
            Some(Value::String(hash)) => Some(hash.clone()),
            Some(other) => {
                return Err(bad(format!(
                    "`hash` must be a string, got {}",
                    ejson::describe(other)
                )))
            }
        };
        let pending = match seal.get("pending") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(items)) => items
                .iter()
                .map(|item| PendingSeal::read(item).map_err(|r| bad(format!("`pending`: {r}"))))
                .collect::<Result<_, _>>()?,
            Some(other) => {
                return Err(bad(format!(
                    "`pending` must be an array, got {}",
                    ejson::describe(other)
                )))
            }
        };
        let pending_epoch = match seal.get("pendingEpoch") {
            None | Some(Value::Null) => None,
            Some(epoch) => {
                Some(ejson::read_i64(epoch).map_err(|r| bad(format!("`pendingEpoch` {r}")))?)
            }
        };
        let records = match seal.get("records") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(items)) => items.clone(),
            Some(other) => {
                return Err(bad(format!(
                    "`records` must be an array, got {}",
                    ejson::describe(other)
                )))
            }
        };
        let orphans = match seal.get("orphans") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(items)) => items
                .iter()
                .map(|item| PendingSeal::read(item).map_err(|r| bad(format!("`orphans`: {r}"))))
                .collect::<Result<_, _>>()?,
            Some(other) => {
                return Err(bad(format!(
                    "`orphans` must be an array, got {}",
                    ejson::describe(other)
                )))
            }
        };
        Ok(Self {
            present: true,
            head,
            pending,
            pending_epoch,
            records,
            orphans,
        })
    }

    /// The recorded seals a holder of `epoch` must write before its finish replaces them: those
    /// an earlier holder recorded (it may have been deposed before writing them, and the
    /// takeover's [`crate::CompletePending`] may have read the counter before they were
    /// recorded: a deposed holder's finish still matches a counter it created after the
    /// takeover stamped the series). A holder's own are written before its next finish.
    pub fn unwritten(&self, epoch: i64) -> &[PendingSeal] {
        match self.pending_epoch {
            Some(recorded) if recorded >= epoch => &[],
            _ => &self.pending,
        }
    }

    /// The seal recorded for document `id` holding `number`, not on the document (pending, or
    /// an orphan).
    pub fn recorded_seal(&self, id: &Value, number: i64) -> Option<&Seal> {
        self.pending
            .iter()
            .chain(&self.orphans)
            .find(|p| &p.id == id && p.number == number)
            .map(|p| &p.seal)
    }

    /// Whether a record of `key` (a ledger entry's `_id`) moved the head already.
    pub fn has_record(&self, key: &Value) -> bool {
        self.records
            .iter()
            .any(|record| record.get("_id") == Some(key))
    }

    /// The finish's filter condition: the head as read (compare-and-set), or no seal yet.
    pub(crate) fn add_condition(&self, filter: &mut Map<String, Value>) {
        if self.present {
            filter.insert(format!("{FIELD}.hash"), self.head.clone().into());
        } else {
            filter.insert(FIELD.to_owned(), json!({ "$exists": false }));
        }
    }
}

/// A document whose number is final, to seal: its `_id`, number and the values it is sealed
/// with (the document as the change event delivered it, or as a completion read it).
#[derive(Debug, Clone, PartialEq)]
pub struct Issued {
    pub id: Value,
    pub number: i64,
    pub document: Value,
}

/// Seals `issued` (any order) in number order, each after the one before, the first after
/// `head`. A value that cannot be sealed is `INVALID_ARGUMENT` naming its field.
pub fn chain(
    numbering: &NumberingSpec,
    counter_id: &str,
    head: Option<&str>,
    issued: &[Issued],
) -> Result<Vec<PendingSeal>, SeqError> {
    let spec = numbering.sequence();
    let period = spec.period_of_counter_id(counter_id).map(|p| p.text());
    let mut ordered: Vec<&Issued> = issued.iter().collect();
    // The chain follows the series' order: counting down, the larger number first.
    ordered.sort_by_key(|issued| issued.number);
    if spec.step() < 0 {
        ordered.reverse();
    }
    let mut previous = head.map(str::to_owned);
    let mut seals = Vec::with_capacity(ordered.len());
    for issued in ordered {
        let link = Link::issued(
            counter_id,
            issued.number,
            period.as_deref(),
            &issued.document,
            spec.seal_fields(),
        );
        let seal = link.seal(previous.as_deref())?;
        previous = Some(seal.hash.clone());
        seals.push(PendingSeal {
            id: issued.id.clone(),
            number: issued.number,
            seal,
        });
    }
    Ok(seals)
}

/// The `$set` of the update that clears the intent: the new head and the batch's seals, with
/// the epoch of the holder recording them (`seal.records` left as they are: an appender's).
pub(crate) fn finish_set(
    set: &mut Map<String, Value>,
    head: Option<&str>,
    seals: &[PendingSeal],
    epoch: i64,
) {
    let last = seals.last().map(|s| s.seal.hash.as_str()).or(head);
    set.insert(format!("{FIELD}.hash"), last.into());
    set.insert(format!("{FIELD}.pendingEpoch"), ejson::long(epoch));
    set.insert(
        format!("{FIELD}.pending"),
        seals
            .iter()
            .map(PendingSeal::to_document)
            .collect::<Vec<_>>()
            .into(),
    );
}

/// Drops written records (`keys`: their entries' `_id`s) from the counter, and the orphan
/// seals of the documents whose deletions they record (`documents`).
pub fn pull_command(
    spec: &SequenceSpec,
    counter_id: &str,
    keys: Vec<Value>,
    documents: Vec<Value>,
) -> Command {
    let mut pull = Map::new();
    pull.insert(
        format!("{FIELD}.records"),
        json!({ "_id": { "$in": keys } }),
    );
    if !documents.is_empty() {
        pull.insert(
            format!("{FIELD}.orphans"),
            json!({ "id": { "$in": documents } }),
        );
    }
    Command::FindOneAndUpdate {
        collection: Collection::Counters,
        filter: Value::Object(spec.id_filter(counter_id)),
        update: json!({ "$pull": pull }),
        options: UpdateOptions {
            upsert: false,
            return_document: ReturnDocument::After,
        },
    }
}

/// The update writing `seals` on their documents (`None`: nothing to write): each only where
/// the document holds that number, has no seal, and no later holder stamped it.
pub fn write_command(
    numbering: &NumberingSpec,
    seals: &[PendingSeal],
    epoch: i64,
) -> Option<Command> {
    if seals.is_empty() {
        return None;
    }
    let statements = seals
        .iter()
        .map(|pending| {
            let mut filter = Map::new();
            filter.insert("_id".to_owned(), pending.id.clone());
            filter.insert(numbering.field().to_owned(), ejson::long(pending.number));
            filter.insert(numbering.seal_field(), json!({ "$exists": false }));
            filter.insert(numbering.fence_field(), epoch_condition(epoch));
            let mut set = Map::new();
            set.insert(numbering.seal_field(), seal_document(&pending.seal));
            UpdateStatement {
                filter: Value::Object(filter),
                update: json!({ "$set": set }),
            }
        })
        .collect();
    Some(Command::Update {
        collection: Collection::Documents,
        updates: statements,
        ordered: false,
    })
}

/// Checks a write: a write error fails (`WRITE_FAILED`).
pub fn read_written(reply: Reply) -> Result<u64, SeqError> {
    let result = reply.into_write_result("update")?;
    match result.write_errors.into_iter().next() {
        Some(error) => Err(error.into()),
        None => Ok(result.n),
    }
}

/// The read of the anchor of `counter_id`'s first link: the latest earlier period's counter of
/// the same series holding a seal (`None`: a series that never resets has no earlier period).
pub fn anchor_command(spec: &SequenceSpec, counter_id: &str) -> Option<Command> {
    spec.period_of_counter_id(counter_id)?;
    let (series, _) = counter_id.rsplit_once('/')?;
    // Counter ids of one series differ only in their period, which sorts in time order
    // (`2025` < `2026`, `2026-01` < `2026-02`); a longer scope value (`store=70/…`) sorts
    // after `store=7/<period>` since '/' < every character a period or a value starts with.
    Some(Command::Find {
        collection: Collection::Counters,
        filter: json!({
            "_id": { "$gte": format!("{series}/"), "$lt": counter_id },
            "seal.hash": { "$type": "string" },
        }),
        options: QueryOptions {
            projection: Some(json!({ "_id": 1, "seal.hash": 1 })),
            sort: Some(json!({ "_id": -1 })),
            limit: Some(1),
            majority: true,
        },
        after_cluster_time: None,
    })
}

/// The anchor from [`anchor_command`]'s reply (`None`: no earlier sealed period).
pub fn read_anchor(reply: Reply) -> Result<Option<String>, SeqError> {
    let documents = reply.into_documents("find")?;
    Ok(documents
        .first()
        .and_then(|counter| stored_value(counter, "seal.hash"))
        .and_then(Value::as_str)
        .map(str::to_owned))
}
