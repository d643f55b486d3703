//! The sidecar's only way to MongoDB and to the wall clock: the interface a trigger, its lease
//! and the tools run on. The binary implements it with the official `mongodb` crate
//! ([`crate::connection::Connection`]); a simulator implements it with its model of MongoDB
//! and runs the very same trigger code.
//!
//! ```text
//!            Trigger<M: Mongo> (supervisor, session, backfill, batches), LeaseKeeper<M>,
//!            StateStore<M>, check/counters/set-next
//!                 │ execute(Command) → Reply     the core's commands, Extended JSON both ways
//!                 │ watch(Watch) → EventStream   change events of the documents collection
//!                 │   └ next_batch(max) → EventBatch {events, resume_token}
//!                 │ now_ms()                     the wall clock (leases, `updatedAt`, lag)
//!                 │ catalog_entries(&[Collection]) how the counters and state collections are sharded
//!      ┌──────────┴──────────┐
//!  Connection (mongodb crate)   a simulator's model of a replica set
//! ```
//!
//! Everything a trigger does to the database is a core [`Command`]: the numbering plans'
//! commands, the resume token and lease writes (on the state collection, `Collection::Leases`),
//! the backfill pages (`find` with sort and limit), the unique index (`createIndex`). An
//! implementation maps [`Collection`](mongo_seq_core::Collection) to the trigger's namespaces
//! (documents, counters, state), so one value of `M` serves one trigger. Monotonic time (timeouts,
//! the lease's own deadline, backoff) is `tokio::time`, which a paused tokio clock drives; the
//! wall clock is only `now_ms`.
//!
//! **Why a generic parameter, not a trait object:** the methods are `async` (a `dyn` trait would
//! box every future), the implementation is fixed per build (the binary, or the simulator's
//! crate) and never chosen at run time, and the simulator gets its own types back unchanged.

use std::future::Future;
use std::time::Duration;

use mongo_seq_core::{ChangeStream, ClusterTime, Collection, Command, Reply};
use serde_json::Value;

use crate::error::SidecarError;
pub use mongo_seq::executor::CatalogEntry;

/// A change stream's resume token, opaque: the server's token document as canonical Extended
/// JSON (it is stored in the trigger's state document as it is).
#[derive(Debug, Clone, PartialEq)]
pub struct ResumeToken(pub Value);

/// The change stream a trigger reads: the core's [`ChangeStream`] (which events, what each
/// brings), from where, and how it is read.
#[derive(Debug, Clone, PartialEq)]
pub struct Watch {
    pub stream: ChangeStream,
    /// Resume after this token (`startAfter`); from now when `None`.
    pub start_after: Option<ResumeToken>,
    /// The cursor's `batchSize`.
    pub batch_size: u32,
    /// How long the server may wait for events before answering an empty batch
    /// (`maxAwaitTimeMS`).
    pub max_await: Duration,
}

/// One change event: an insert, (`on = "match"`) an update or a replace, or (a gapless
/// trigger's) a delete.
#[derive(Debug, Clone, PartialEq)]
pub struct ChangeEvent {
    /// The document (`fullDocument`, its [`ChangeStream::fields`]), canonical Extended JSON: the
    /// inserted or replacing one, or an update's lookup (which may be newer than the event);
    /// `None` when the server sent none.
    pub document: Option<Value>,
    /// The event's cluster time (its `clusterTime`), when it has one: the reads that decide
    /// its document needs no number are causally after it, and its seconds are the lag metric.
    pub cluster_time: Option<ClusterTime>,
    /// The event's wall-clock commit time in ms since the Unix epoch (`wallTime`, MongoDB 6.0+),
    /// when it has one.
    pub wall_time_ms: Option<i64>,
    /// A `delete` event's document: its `_id` (`documentKey`) and, when the server sent one,
    /// its pre-image (`fullDocumentBeforeChange`). `None` for every other event.
    pub deleted: Option<Deleted>,
}

/// What a `delete` event says about the document it deleted.
#[derive(Debug, Clone, PartialEq)]
pub struct Deleted {
    /// The document's `_id` (Extended JSON).
    pub id: Value,
    /// The document before the deletion (the watched fields), `None` without pre-images.
    pub before: Option<Value>,
}

impl ChangeEvent {
    /// The instant of the event that places its document in a period when the trigger has no
    /// `date_field`: its `wallTime`, else its `clusterTime`'s seconds.
    pub fn time_ms(&self) -> Option<i64> {
        self.wall_time_ms
            .or_else(|| self.cluster_time.map(|time| i64::from(time.t) * 1000))
    }
}

/// The events read at once, and where to resume after them.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct EventBatch {
    pub events: Vec<ChangeEvent>,
    /// The token to resume after these events (the server's post-batch token, else the last
    /// event's), `None` when the server gave none.
    pub resume_token: Option<ResumeToken>,
}

/// MongoDB and the wall clock, as one trigger (or tool) sees them.
pub trait Mongo: Clone + Send + Sync + 'static {
    type Stream: EventStream;

    /// Runs one core command, on the collection its `collection` names for this trigger.
    /// Server errors a plan reads are replies (`duplicateKey`, a write result's `writeErrors`
    /// and `writeConcernError`); any other failure is an error: [`SidecarError::Mongo`], or
    /// [`SidecarError::MalformedCounter`] when the server refused to update a counter's `seq`
    /// (TypeMismatch).
    fn execute(&self, command: Command)
        -> impl Future<Output = Result<Reply, SidecarError>> + Send;

    /// Opens a change stream on the documents collection. A resume point the server no longer
    /// has is [`SidecarError::HistoryLost`].
    fn watch(
        &self,
        watch: Watch,
    ) -> impl Future<Output = Result<Self::Stream, SidecarError>> + Send;

    /// Milliseconds since the Unix epoch, by this process's wall clock.
    fn now_ms(&self) -> i64;

    /// The namespaces of the counters and state collections `collections` names and their
    /// entries in a sharded cluster's catalog (`config.collections`), in that order, read at
    /// once: none for an unsharded collection or a replica set. A user who may not read the
    /// catalog gets the server's Unauthorized (code 13).
    fn catalog_entries(
        &self,
        collections: &[Collection],
    ) -> impl Future<Output = Result<Vec<CatalogEntry>, SidecarError>> + Send;
}

/// An open change stream.
pub trait EventStream: Send {
    /// The events the stream has for us now, at most `max`: those left from its last read, else
    /// (or, when its last read was full, after them) one read's (at most one round trip, a
    /// `getMore`; empty when none came within the watch's `max_await`). The caller bounds its
    /// round trips per batch by its calls. [`SidecarError::HistoryLost`] when the resume point is gone or
    /// the stream was invalidated (the watched collection dropped or renamed).
    fn next_batch(
        &mut self,
        max: usize,
    ) -> impl Future<Output = Result<EventBatch, SidecarError>> + Send;

    /// The token to resume after everything read so far (right after opening: the server's
    /// initial post-batch token, when it sent one).
    fn resume_token(&self) -> Option<ResumeToken>;
}

/// A count the server sent (`n`, `count`): 0 when absent or not a non-negative integer.
pub fn count(value: Option<&Value>) -> u64 {
    value
        .and_then(|n| mongo_seq_core::ejson::read_i64(n).ok())
        .and_then(|n| u64::try_from(n).ok())
        .unwrap_or(0)
}

/// The documents of a `find` or `aggregate` reply (`what` names the command in the error).
pub fn documents(reply: Reply, what: &str) -> Result<Vec<Value>, SidecarError> {
    match reply {
        Reply::Documents { documents } => Ok(documents),
        other => Err(SidecarError::Reply(format!(
            "{what}: expected documents, got {other:?}"
        ))),
    }
}
