//! A change stream read one server reply at a time, through the driver's raw batch cursor.

use std::collections::VecDeque;

use futures_util::TryStreamExt;
use mongo_seq_core::ClusterTime;
use mongodb::bson::{Bson, Document, RawBsonRef};
use mongodb::raw_batch_cursor::RawBatchCursor;
use mongodb::Collection;

use crate::error::SidecarError;
use crate::mongo::{ChangeEvent, Deleted, EventBatch, EventStream, ResumeToken, Watch};
use mongo_seq::executor::{classify, convert};

/// A change stream read one server reply at a time: the `$changeStream` aggregate as a raw
/// batch cursor, so every read of the cursor is exactly one round trip (the aggregate's first
/// batch, then one `getMore` each), and what a reply brought beyond `max` waits here for the
/// next batch. (The driver's `ChangeStream` helper reads event by event and sends a `getMore`
/// whenever its buffer runs dry, which cannot be bounded from outside.)
pub struct DriverStream {
    documents: Collection<Document>,
    watch: Watch,
    cursor: RawBatchCursor,
    /// Events of the last reply not handed out yet, each with its own resume token.
    buffered: VecDeque<(ChangeEvent, ResumeToken)>,
    /// The token after the last reply: its post-batch token, else its last event's.
    reply_token: Option<ResumeToken>,
    /// The token of the last event handed out (at first: where the stream started).
    handed_out: Option<ResumeToken>,
    /// The last reply was full (`batch_size` events): the server likely has more waiting.
    reply_full: bool,
    /// The stream was just reopened after an error: another error is not retried.
    reopened: bool,
}

impl DriverStream {
    /// Opens the stream `watch` asks for on `documents` and reads the aggregate's own reply
    /// (in hand: no round trip), for its post-batch token.
    pub(super) async fn open(
        documents: Collection<Document>,
        watch: Watch,
    ) -> Result<Self, SidecarError> {
        let cursor = open_stream(&documents, &watch, watch.start_after.clone()).await?;
        let mut stream = Self {
            documents,
            handed_out: watch.start_after.clone(),
            watch,
            cursor,
            buffered: VecDeque::new(),
            reply_token: None,
            reply_full: false,
            reopened: false,
        };
        stream.read_reply().await?;
        Ok(stream)
    }
}

/// Opens the `$changeStream` aggregate (the core's pipeline) on `documents` after `token` (from
/// now without one).
async fn open_stream(
    documents: &Collection<Document>,
    watch: &Watch,
    token: Option<ResumeToken>,
) -> Result<RawBatchCursor, SidecarError> {
    let pipeline = watch
        .stream
        .pipeline(token.as_ref().map(|token| &token.0))
        .into_iter()
        .map(convert::to_doc)
        .collect::<Result<Vec<Document>, String>>()
        .map_err(SidecarError::Reply)?;
    documents
        .aggregate(pipeline)
        .batch_size(watch.batch_size)
        .max_await_time(watch.max_await)
        .batch()
        .await
        .map_err(stream_failure)
}

/// A `delete` event's `documentKey._id` and pre-image (when the server sent one).
fn deleted_of(event: &mongodb::bson::RawDocument) -> Result<Deleted, SidecarError> {
    let raw = |key: &str| -> Result<Option<Document>, SidecarError> {
        match event.get_document(key) {
            Ok(raw) => Document::try_from(raw)
                .map(Some)
                .map_err(|e| SidecarError::Reply(format!("{key}: {e}"))),
            Err(_) => Ok(None),
        }
    };
    let id = raw("documentKey")?
        .and_then(|key| key.get("_id").cloned())
        .ok_or_else(|| {
            SidecarError::Reply("a delete event without `documentKey._id`".to_owned())
        })?;
    Ok(Deleted {
        id: convert::from_bson(&id),
        before: raw("fullDocumentBeforeChange")?.map(convert::from_doc),
    })
}

fn token_of(value: Option<RawBsonRef<'_>>) -> Option<ResumeToken> {
    let bson = Bson::try_from(value?.to_raw_bson()).ok()?;
    Some(ResumeToken(convert::from_bson(&bson)))
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
                    self.cursor = open_stream(&self.documents, &self.watch, Some(token)).await?;
                    self.reopened = true;
                }
            }
        };
        self.reopened = false;
        let mut last = None;
        let before = self.buffered.len();
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
                        .map(convert::from_doc)
                        .map_err(|e| SidecarError::Reply(format!("fullDocument: {e}")))?,
                ),
                Err(_) => None,
            };
            let cluster_time = event
                .get_timestamp("clusterTime")
                .ok()
                .and_then(|t| ClusterTime::new(t.time, t.increment));
            let wall_time_ms = event
                .get_datetime("wallTime")
                .ok()
                .map(mongodb::bson::DateTime::timestamp_millis);
            let deleted = match event.get_str("operationType") {
                Ok("delete") => Some(deleted_of(event)?),
                _ => None,
            };
            last = Some(token.clone());
            let event = ChangeEvent {
                document,
                cluster_time,
                wall_time_ms,
                deleted,
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
        let got = self.buffered.len() - before;
        self.reply_full = u32::try_from(got).unwrap_or(u32::MAX) >= self.watch.batch_size;
        Ok(())
    }
}

impl EventStream for DriverStream {
    /// The events left from the last reply, else one round trip's (see [`DriverStream`]); when
    /// fewer than `max` are left of a full reply, one more reply's after them: the server has
    /// more waiting, and a batch short of them would wait for arrivals (batches.rs, `linger`)
    /// while a backlog is there to read.
    async fn next_batch(&mut self, max: usize) -> Result<EventBatch, SidecarError> {
        if self.buffered.is_empty() || (self.buffered.len() < max && self.reply_full) {
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

/// A change stream's error: a lost resume point is [`SidecarError::HistoryLost`], and so is an
/// event whose required post-image is missing (`post_images`: the stream cannot read past it).
fn stream_failure(e: mongodb::error::Error) -> SidecarError {
    if classify::is_history_lost(&e) || classify::is_stream_image_missing(&e) {
        SidecarError::HistoryLost(e.to_string())
    } else {
        SidecarError::Mongo(e.into())
    }
}
