//! One trigger's pipeline: change stream → batch → reserve (core plans, one `$inc` per counter)
//! → one `update` command → store the resume token. Plus the backfill of unnumbered documents
//! and the recovery loop (capped exponential backoff, history lost → backfill and go on).

use std::collections::{BTreeMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use futures_util::TryStreamExt;
use mongo_seq_core::{Reservation, ReserveRequest, SeedFromMax};
use mongodb::bson::{doc, Bson, Document};
use mongodb::change_stream::event::{ChangeStreamEvent, ResumeToken};
use mongodb::change_stream::ChangeStream;
use mongodb::options::IndexOptions;
use mongodb::{Collection, Database, IndexModel};
use tokio_util::sync::CancellationToken;
use tracing::{debug, error, info, warn};

use crate::config::{Settings, TriggerSpec};
use crate::ejson;
use crate::error::SidecarError;
use crate::exec::Executor;
use crate::health::{Health, State};
use crate::lease::{Acquired, Fence, LeaseKeeper};
use crate::metrics::Metrics;
use crate::state::StateStore;

/// How often a batch is retried when one of its numbers collides with a document inserted
/// concurrently with that number (the unique index refuses it; the document is renumbered).
const COLLISION_ATTEMPTS: usize = 5;

/// How long a shutdown waits for the batch in flight (then the lease release has
/// [`crate::lease::RELEASE_TIMEOUT`], all within [`crate::server::SHUTDOWN_GRACE`]).
pub const BATCH_GRACE: Duration = Duration::from_secs(8);

/// What numbering one batch did.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Outcome {
    /// Documents that received a number.
    pub numbered: u64,
    /// Documents inserted already carrying a number (left as they are, counter moved past).
    pub prenumbered: u64,
    /// Documents that had a number by the time the batch ran (redelivered events).
    pub already: u64,
    /// Documents that cannot be numbered (missing or unusable scope field).
    pub skipped: u64,
    /// Of those, the ones this process had not met before (counted in the metric).
    pub newly_skipped: u64,
}

/// Documents this process found it cannot number, by `_id`: each is logged and counted once,
/// however often the stream (replays) or a backfill meets it again. Holds only such documents.
#[derive(Clone, Default)]
pub struct Unnumberable(Arc<Mutex<HashSet<String>>>);

impl Unnumberable {
    /// Whether `id` is met for the first time (and remembers it).
    fn first_time(&self, id: &Bson) -> bool {
        self.0
            .lock()
            .map_or(true, |mut seen| seen.insert(id_key(id)))
    }
}

pub struct Trigger {
    pub spec: TriggerSpec,
    pub settings: Settings,
    pub db: Database,
    pub docs: Collection<Document>,
    pub exec: Executor,
    pub state: StateStore,
    pub metrics: Metrics,
    pub health: Health,
    pub lease: LeaseKeeper,
    pub unnumberable: Unnumberable,
}

/// Looks up a dotted path; `None` when absent.
pub(crate) fn lookup<'a>(document: &'a Document, path: &str) -> Option<&'a Bson> {
    let mut current = document;
    let mut parts = path.split('.').peekable();
    while let Some(part) = parts.next() {
        let value = current.get(part)?;
        if parts.peek().is_none() {
            return Some(value);
        }
        current = value.as_document()?;
    }
    None
}

/// Sets a dotted path in a document, creating embedded documents on the way.
fn set_path(document: &mut Document, path: &str, value: Bson) {
    match path.split_once('.') {
        None => {
            document.insert(path, value);
        }
        Some((head, rest)) => {
            if !matches!(document.get(head), Some(Bson::Document(_))) {
                document.insert(head, Document::new());
            }
            if let Some(Bson::Document(inner)) = document.get_mut(head) {
                set_path(inner, rest, value);
            }
        }
    }
}

/// A hashable key for an `_id`.
pub(crate) fn id_key(id: &Bson) -> String {
    id.clone().into_canonical_extjson().to_string()
}

pub(crate) fn as_u64(reply: &Document, key: &str) -> u64 {
    match reply.get(key) {
        Some(Bson::Int32(v)) => u64::try_from(*v).unwrap_or(0),
        Some(Bson::Int64(v)) => u64::try_from(*v).unwrap_or(0),
        Some(Bson::Double(v)) if *v >= 0.0 => *v as u64,
        _ => 0,
    }
}

/// Rewrites a `match` expression on document fields into one on the change event's
/// `fullDocument` (field names are prefixed; `$and`/`$or`/`$nor` are followed).
pub fn prefix_filter(filter: &Document, prefix: &str) -> Document {
    let mut out = Document::new();
    for (key, value) in filter {
        if matches!(key.as_str(), "$and" | "$or" | "$nor") {
            let items = match value {
                Bson::Array(items) => items
                    .iter()
                    .map(|item| match item {
                        Bson::Document(d) => Bson::Document(prefix_filter(d, prefix)),
                        other => other.clone(),
                    })
                    .collect(),
                other => vec![other.clone()],
            };
            out.insert(key.clone(), Bson::Array(items));
        } else if key.starts_with('$') {
            out.insert(key.clone(), value.clone());
        } else {
            out.insert(format!("{prefix}.{key}"), value.clone());
        }
    }
    out
}

impl Trigger {
    fn id(&self) -> &str {
        &self.spec.id
    }

    /// Runs until `shutdown`: stands by until it holds the trigger's lease, then runs sessions
    /// (with backoff between failed ones) until shutdown or until the lease is lost.
    pub async fn run(self, shutdown: CancellationToken, backfill_on_start: bool) {
        let mut force_backfill = backfill_on_start;
        let mut delay = self.settings.backoff_initial;
        self.health.set_state(self.id(), State::Starting);
        let mut standby_logged = false;
        while !shutdown.is_cancelled() {
            // Nothing is held yet: a shutdown stops the attempt at once (without a reachable
            // server it would wait for the driver's server selection, 30 s by default).
            let attempt = tokio::select! {
                attempt = self.lease.acquire() => attempt,
                () = shutdown.cancelled() => break,
            };
            let fence = match attempt {
                Ok(Acquired::Held(fence)) => fence,
                Ok(Acquired::Busy {
                    owner,
                    epoch,
                    expires_at_ms,
                }) => {
                    self.health.set_state(self.id(), State::Standby);
                    self.health
                        .lease(self.id(), false, Some(epoch), Some(&owner));
                    self.metrics
                        .lease_held
                        .with_label_values(&[self.id()])
                        .set(0);
                    self.succeeded();
                    if !standby_logged {
                        info!(
                            trigger = self.id(),
                            holder = owner,
                            epoch,
                            expires_at_ms,
                            "standby: another instance holds the lease"
                        );
                        standby_logged = true;
                    }
                    tokio::select! {
                        _ = tokio::time::sleep(self.settings.lease.renew) => {}
                        _ = shutdown.cancelled() => {}
                    }
                    continue;
                }
                Err(e) => {
                    self.report(&e, delay);
                    tokio::select! {
                        _ = tokio::time::sleep(delay) => {}
                        _ = shutdown.cancelled() => {}
                    }
                    delay = (delay * 2).min(self.settings.backoff_max);
                    continue;
                }
            };
            standby_logged = false;
            self.health
                .lease(self.id(), true, Some(fence.epoch), Some(&fence.owner));
            self.metrics
                .lease_held
                .with_label_values(&[self.id()])
                .set(1);
            let never = CancellationToken::new();
            tokio::select! {
                () = self.active(&shutdown, &fence, &mut force_backfill, &mut delay) => {}
                () = self.lease.keep(&fence, &never) => {}
            }
            self.metrics
                .lease_held
                .with_label_values(&[self.id()])
                .set(0);
            self.health.lease(self.id(), false, None, None);
            if shutdown.is_cancelled() && fence.check().is_ok() {
                self.lease.release(&fence).await;
            } else if fence.check().is_err() {
                self.metrics
                    .lease_lost
                    .with_label_values(&[self.id()])
                    .inc();
                warn!(
                    trigger = self.id(),
                    epoch = fence.epoch,
                    "lease lost: this instance stopped numbering and stands by"
                );
                self.health.set_state(self.id(), State::Standby);
            }
        }
        self.health.set_state(self.id(), State::Stopped);
        info!(trigger = self.id(), "trigger stopped");
    }

    /// Healthy in `/healthz` and in the `mongo_seq_trigger_healthy` gauge alike.
    fn succeeded(&self) {
        self.health.succeeded(self.id());
        self.metrics.healthy.with_label_values(&[self.id()]).set(1);
    }

    /// Unhealthy in `/healthz` and in the gauge alike, until the next success.
    fn failed(&self, e: &SidecarError) {
        self.metrics
            .errors
            .with_label_values(&[self.id(), e.kind()])
            .inc();
        self.metrics.healthy.with_label_values(&[self.id()]).set(0);
        self.health.error(self.id(), &e.code(), &e.to_string());
    }

    fn report(&self, e: &SidecarError, delay: Duration) {
        let code = e.code();
        self.failed(e);
        error!(trigger = self.id(), code, kind = e.kind(), error = %e, retry_in_ms = delay.as_millis() as u64,
            "trigger failed; retrying from the stored resume token");
    }

    /// Holding the lease: sessions with backoff until shutdown or the lease is lost.
    async fn active(
        &self,
        shutdown: &CancellationToken,
        fence: &Fence,
        force_backfill: &mut bool,
        delay: &mut Duration,
    ) {
        while !shutdown.is_cancelled() && fence.check().is_ok() {
            // After a shutdown request the session gets BATCH_GRACE to finish its batch and
            // store the token; past that (e.g. the server is unreachable) it is abandoned, which
            // is safe: assignments are idempotent and the stored token is only ever behind.
            let abandon = async {
                shutdown.cancelled().await;
                tokio::time::sleep(BATCH_GRACE).await;
            };
            let result = tokio::select! {
                result = self.session(shutdown, fence, force_backfill, delay) => result,
                () = abandon => {
                    warn!(trigger = self.id(), grace_secs = BATCH_GRACE.as_secs(), "shutdown: the session did not finish in time; abandoned");
                    Ok(())
                }
            };
            match result {
                Ok(()) => break,
                Err(e) if e.is_lease_loss() => {
                    if let SidecarError::Fenced(_) = e {
                        self.metrics.fenced.with_label_values(&[self.id()]).inc();
                    }
                    warn!(trigger = self.id(), code = e.code(), error = %e, "not the lease holder any more: nothing more is numbered by this instance");
                    fence.lose();
                    break;
                }
                Err(e) => {
                    if let SidecarError::HistoryLost(_) = e {
                        let code = e.code();
                        self.failed(&e);
                        warn!(trigger = self.id(), code, error = %e,
                            "resume point lost: numbering unnumbered documents (backfill) and continuing from now");
                        *force_backfill = true;
                        if let Err(e) = self.state.forget_token(fence).await {
                            warn!(trigger = self.id(), error = %e, "could not clear the stored resume token");
                        }
                    } else {
                        self.report(&e, *delay);
                    }
                    tokio::select! {
                        _ = tokio::time::sleep(*delay) => {}
                        _ = shutdown.cancelled() => break,
                        _ = fence.lost().cancelled() => break,
                    }
                    *delay = (*delay * 2).min(self.settings.backoff_max);
                }
            }
        }
    }

    async fn session(
        &self,
        shutdown: &CancellationToken,
        fence: &Fence,
        force_backfill: &mut bool,
        delay: &mut Duration,
    ) -> Result<(), SidecarError> {
        self.ensure_index().await?;
        // Whoever holds the trigger completes what an interrupted holder left pending first.
        self.complete_pending(fence).await?;
        let stored = self.state.load().await?;
        let backfill = *force_backfill || stored.token.is_none() || !stored.backfill_done;
        // The stream is opened before the backfill scans, so nothing inserted meanwhile is missed.
        let mut stream = self.open(stored.token.clone()).await?;
        let mut stored_token = stored.token.clone();
        if backfill {
            self.health.set_state(self.id(), State::Backfilling);
            if !self.backfill(shutdown, fence).await? {
                return Ok(());
            }
            let token = stream.resume_token();
            self.state.save(token.as_ref(), Some(true), fence).await?;
            if token.is_some() {
                stored_token = token;
            }
            *force_backfill = false;
        }
        self.health.set_state(self.id(), State::Running);
        info!(
            trigger = self.id(),
            resumed = stored.token.is_some(),
            "watching for inserts"
        );

        // Events right after a (re)start may be for documents numbered before the crash or by the
        // backfill: check them against the collection until a batch shows none of those.
        let mut verify = true;
        let mut last_store = Instant::now();
        let mut last_cluster_secs: Option<u32> = None;
        let now_secs = || {
            SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map(|d| d.as_secs_f64())
                .unwrap_or(0.0)
        };
        while !shutdown.is_cancelled() {
            fence.check()?;
            let events = self.collect(&mut stream, shutdown).await?;
            if let Some(secs) = last_cluster_secs {
                // Literally "now minus the cluster time of the last processed event": it grows on
                // a quiet collection.
                self.metrics
                    .lag
                    .with_label_values(&[self.id()])
                    .set((now_secs() - f64::from(secs)).max(0.0));
            }
            if events.is_empty() {
                // Caught up: everything the stream had was numbered (after an error, this is
                // the first sign the trigger works again).
                self.succeeded();
                *delay = self.settings.backoff_initial;
                if last_store.elapsed() >= self.settings.heartbeat {
                    // Quiet stream: store the post-batch resume token when the server gives one.
                    let token = stream.resume_token();
                    if token.is_some() && token != stored_token {
                        self.state.save(token.as_ref(), None, fence).await?;
                        stored_token = token;
                    }
                    last_store = Instant::now();
                }
                continue;
            }
            let count = events.len();
            self.metrics
                .events
                .with_label_values(&[self.id()])
                .inc_by(count as u64);
            let cluster_time = events.iter().rev().find_map(|e| e.cluster_time);
            // The driver drops its cached token after an empty getMore when the server sends no
            // post-batch token, so fall back to the last event's own token.
            let last_event_token = events.last().map(|e| e.id.clone());
            let docs: Vec<Document> = events.into_iter().filter_map(|e| e.full_document).collect();
            let outcome = self.number(docs, verify, fence).await?;
            verify = verify && outcome.already > 0;
            let token = stream.resume_token().or(last_event_token);
            self.state.save(token.as_ref(), None, fence).await?;
            // Counted once the token is stored: a batch replayed after a failure is not
            // counted twice.
            self.metrics
                .prenumbered
                .with_label_values(&[self.id()])
                .inc_by(outcome.prenumbered);
            stored_token = token;
            last_store = Instant::now();
            self.metrics.batches.with_label_values(&[self.id()]).inc();
            if let Some(ts) = cluster_time {
                last_cluster_secs = Some(ts.time);
                self.metrics
                    .lag
                    .with_label_values(&[self.id()])
                    .set((now_secs() - f64::from(ts.time)).max(0.0));
            }
            self.health.batch_applied(self.id(), outcome.numbered);
            self.succeeded();
            debug!(
                trigger = self.id(),
                events = count,
                numbered = outcome.numbered,
                prenumbered = outcome.prenumbered,
                already = outcome.already,
                skipped = outcome.skipped,
                "batch applied"
            );
            *delay = self.settings.backoff_initial;
        }
        // Graceful shutdown: the batch in flight is done; keep the newest token.
        let token = stream.resume_token();
        if token.is_some() && token != stored_token {
            self.state.save(token.as_ref(), None, fence).await?;
        }
        Ok(())
    }

    /// The unique index that makes the database itself refuse duplicate numbers: on the scope
    /// fields and the number, only where the number exists.
    pub async fn ensure_index(&self) -> Result<(), SidecarError> {
        let mut keys = Document::new();
        for field in self.spec.sequence.scope() {
            keys.insert(field.clone(), 1);
        }
        keys.insert(self.spec.field.clone(), 1);
        let index = format!("mongo_seq_{}", self.spec.field);
        let options = IndexOptions::builder()
            .unique(true)
            .name(index.clone())
            .partial_filter_expression(doc! { self.spec.field.clone(): { "$exists": true } })
            .build();
        match self
            .docs
            .create_index(IndexModel::builder().keys(keys).options(options).build())
            .await
        {
            Ok(_) => Ok(()),
            Err(e) if crate::error::server_code(&e) == Some(11000) => {
                Err(self.duplicate_numbers(index).await.unwrap_or(e.into()))
            }
            Err(e) => Err(e.into()),
        }
    }

    /// Why the unique index cannot be built, in the trigger's words: one number held by
    /// several documents (one `aggregate`), instead of the server's message.
    async fn duplicate_numbers(&self, index: String) -> Result<SidecarError, SidecarError> {
        let field = self.spec.field.as_str();
        let mut group = doc! { "n": format!("${field}") };
        for (i, scope) in self.spec.sequence.scope().iter().enumerate() {
            group.insert(format!("s{i}"), format!("${scope}"));
        }
        let pipeline = [
            doc! { "$match": { field: { "$exists": true } } },
            doc! { "$group": { "_id": group, "count": { "$sum": 1 } } },
            doc! { "$match": { "count": { "$gt": 1 } } },
            doc! { "$limit": 1 },
        ];
        let found: Vec<Document> = self.docs.aggregate(pipeline).await?.try_collect().await?;
        let Some(duplicate) = found.first() else {
            return Err(SidecarError::Reply("no duplicate found".to_owned()));
        };
        let key = duplicate.get_document("_id").cloned().unwrap_or_default();
        let value = key.get("n").map_or("null".to_owned(), |v| {
            v.clone().into_relaxed_extjson().to_string()
        });
        let scope: Vec<String> = self
            .spec
            .sequence
            .scope()
            .iter()
            .enumerate()
            .map(|(i, name)| {
                let v = key.get(format!("s{i}")).map_or("null".to_owned(), |v| {
                    v.clone().into_relaxed_extjson().to_string()
                });
                format!("{name}: {v}")
            })
            .collect();
        Ok(SidecarError::DuplicateNumbers(Box::new(
            crate::error::DuplicateNumbers {
                index,
                namespace: self.docs.namespace().to_string(),
                field: field.to_owned(),
                value,
                scope: if scope.is_empty() {
                    String::new()
                } else {
                    format!(" in scope {{{}}}", scope.join(", "))
                },
                count: as_u64(duplicate, "count"),
            },
        )))
    }

    async fn open(
        &self,
        token: Option<ResumeToken>,
    ) -> Result<ChangeStream<ChangeStreamEvent<Document>>, SidecarError> {
        let mut filter = doc! { "operationType": "insert" };
        if let Some(m) = &self.spec.filter {
            filter = doc! { "$and": [filter, prefix_filter(m, "fullDocument")] };
        }
        let batch = u32::try_from(self.settings.batch_size).unwrap_or(u32::MAX);
        let watch = self
            .docs
            .watch()
            .pipeline([doc! { "$match": filter }])
            .batch_size(batch)
            .max_await_time(self.settings.max_await);
        let opened = match token {
            Some(token) => watch.start_after(token).await,
            None => watch.await,
        };
        opened.map_err(SidecarError::from_stream)
    }

    /// The events available now, up to the batch size; empty after a quiet poll interval.
    async fn collect(
        &self,
        stream: &mut ChangeStream<ChangeStreamEvent<Document>>,
        shutdown: &CancellationToken,
    ) -> Result<Vec<ChangeStreamEvent<Document>>, SidecarError> {
        let mut events = Vec::new();
        loop {
            let asked = Instant::now();
            match stream
                .next_if_any()
                .await
                .map_err(SidecarError::from_stream)?
            {
                Some(event) => {
                    events.push(event);
                    if events.len() >= self.settings.batch_size {
                        return Ok(events);
                    }
                }
                None if !events.is_empty() => return Ok(events),
                None => {
                    if !stream.is_alive() {
                        return Err(SidecarError::HistoryLost(
                            "the change stream was invalidated".to_owned(),
                        ));
                    }
                    // A real server waits up to maxAwaitTime in getMore; one that answers at once
                    // is asked at most once per poll interval.
                    let rest = self.settings.poll_interval.saturating_sub(asked.elapsed());
                    tokio::select! {
                        _ = tokio::time::sleep(rest) => {}
                        _ = shutdown.cancelled() => {}
                    }
                    return Ok(events);
                }
            }
        }
    }

    /// Numbers documents that lack a number, in `_id` order, reporting progress. Returns false
    /// when interrupted by shutdown (it resumes on the next start).
    pub async fn backfill(
        &self,
        shutdown: &CancellationToken,
        fence: &Fence,
    ) -> Result<bool, SidecarError> {
        let field = self.spec.field.clone();
        let mut filter = doc! { field.clone(): { "$exists": false } };
        if let Some(m) = &self.spec.filter {
            filter = doc! { "$and": [filter, m.clone()] };
        }
        let mut projection = doc! { "_id": 1, field.clone(): 1 };
        for scope in self.spec.sequence.scope() {
            projection.insert(scope.clone(), 1);
        }
        self.seed_from_existing(fence).await?;
        let total = self.docs.count_documents(filter.clone()).await?;
        info!(
            trigger = self.id(),
            unnumbered = total,
            "backfill: numbering documents without a number, in _id order"
        );
        let started = Instant::now();
        let mut last_report = Instant::now();
        let mut done = 0u64;
        let mut last_id: Option<Bson> = None;
        loop {
            if shutdown.is_cancelled() {
                info!(
                    trigger = self.id(),
                    numbered = done,
                    "backfill interrupted by shutdown; it continues on the next start"
                );
                return Ok(false);
            }
            let page = match &last_id {
                Some(id) => doc! { "$and": [filter.clone(), { "_id": { "$gt": id.clone() } }] },
                None => filter.clone(),
            };
            let docs: Vec<Document> = self
                .docs
                .find(page)
                .sort(doc! { "_id": 1 })
                .limit(i64::try_from(self.settings.batch_size).unwrap_or(i64::MAX))
                .projection(projection.clone())
                .await?
                .try_collect()
                .await?;
            let Some(last) = docs.last().and_then(|d| d.get("_id").cloned()) else {
                break;
            };
            last_id = Some(last);
            let outcome = self.number(docs, false, fence).await?;
            done += outcome.numbered;
            self.metrics.batches.with_label_values(&[self.id()]).inc();
            self.health.batch_applied(self.id(), outcome.numbered);
            self.succeeded();
            let remaining = total.saturating_sub(done);
            self.metrics
                .backfill_remaining
                .with_label_values(&[self.id()])
                .set(i64::try_from(remaining).unwrap_or(i64::MAX));
            if last_report.elapsed() >= self.settings.progress {
                let rate = done as f64 / started.elapsed().as_secs_f64().max(1e-3);
                info!(
                    trigger = self.id(),
                    numbered = done,
                    rate = format!("{rate:.0}/s"),
                    remaining,
                    "backfill progress"
                );
                last_report = Instant::now();
            }
        }
        self.metrics
            .backfill_remaining
            .with_label_values(&[self.id()])
            .set(0);
        let secs = started.elapsed().as_secs_f64();
        self.succeeded();
        info!(
            trigger = self.id(),
            numbered = done,
            seconds = format!("{secs:.1}"),
            rate = format!("{:.0}/s", done as f64 / secs.max(1e-3)),
            "backfill finished"
        );
        Ok(true)
    }

    /// Numbers a batch of inserted documents (in the order given): documents already carrying
    /// a number move their counter past it; the rest get numbers from one reservation per
    /// counter and are written with one `update` command whose statements only apply where
    /// the document still has no number. With `verify`, documents numbered meanwhile are
    /// dropped first (one `find`), so redelivered events waste no numbers.
    pub async fn number(
        &self,
        mut docs: Vec<Document>,
        verify: bool,
        fence: &Fence,
    ) -> Result<Outcome, SidecarError> {
        let mut outcome = Outcome::default();
        let field = self.spec.field.as_str();
        let sequence = &self.spec.sequence;
        fence.check()?;
        // Gapless: always look first, so deleted and already numbered documents take no number
        // (and a redelivered event is not numbered twice).
        let verify = verify || self.spec.gapless;
        if self.spec.gapless {
            let mut seen = HashSet::new();
            docs.retain(|d| d.get("_id").is_some_and(|id| seen.insert(id_key(id))));
        }
        if verify && !docs.is_empty() {
            let ids: Vec<Bson> = docs.iter().filter_map(|d| d.get("_id").cloned()).collect();
            let unnumbered: HashSet<String> = self
                .docs
                .find(doc! { "_id": { "$in": ids }, field: { "$exists": false } })
                .projection(doc! { "_id": 1 })
                .await?
                .try_collect::<Vec<Document>>()
                .await?
                .iter()
                .filter_map(|d| d.get("_id").map(id_key))
                .collect();
            let before = docs.len();
            docs.retain(|d| {
                d.get("_id")
                    .is_some_and(|id| unnumbered.contains(&id_key(id)))
            });
            outcome.already = (before - docs.len()) as u64;
        }

        // Walk the batch in stream order. Unnumbered documents wait in a group per counter
        // (scope); a document that arrives with a number first gets its counter's waiting group
        // numbered, then moves the counter past its number, so every later document's number is
        // higher. Normally that is one reservation per counter and one update for the batch.
        let mut statements = Statements::default();
        let mut waiting: BTreeMap<String, Vec<Bson>> = BTreeMap::new();
        for document in &docs {
            let Some(id) = document.get("_id").cloned() else {
                continue;
            };
            let counter_id = match sequence.counter_id(Some(&ejson::from_doc(document))) {
                Ok(counter_id) => counter_id,
                Err(e) => {
                    outcome.skipped += 1;
                    if self.unnumberable.first_time(&id) {
                        outcome.newly_skipped += 1;
                        warn!(trigger = self.id(), _id = %id, code = e.code(), error = %e, "document cannot be numbered; skipped");
                    }
                    continue;
                }
            };
            let Some(value) = lookup(document, field) else {
                waiting.entry(counter_id).or_default().push(id);
                continue;
            };
            outcome.prenumbered += 1;
            match mongo_seq_core::ejson::read_i64(&value.clone().into_canonical_extjson()) {
                Ok(n) => {
                    if let Some(ids) = waiting.remove(&counter_id) {
                        self.reserve_or_number(
                            &counter_id,
                            ids,
                            &mut statements,
                            &mut outcome,
                            fence,
                        )
                        .await?;
                    }
                    self.seed(&counter_id, n, fence).await?;
                }
                Err(reason) => {
                    warn!(trigger = self.id(), _id = %id, "field `{field}` {reason}; document left as it is")
                }
            }
        }
        for (counter_id, ids) in std::mem::take(&mut waiting) {
            self.reserve_or_number(&counter_id, ids, &mut statements, &mut outcome, fence)
                .await?;
        }

        // A reserved number that a document inserted with that very number already holds is
        // refused by the unique index: that document is renumbered.
        for attempt in 1..=COLLISION_ATTEMPTS {
            if statements.docs.is_empty() {
                break;
            }
            let Statements {
                docs: batch,
                targets,
            } = std::mem::take(&mut statements);
            fence.check()?;
            let reply = self
                .db
                .run_command(
                    doc! { "update": self.docs.name(), "updates": batch, "ordered": false },
                )
                .await?;
            outcome.numbered += as_u64(&reply, "nModified");
            if let Ok(wce) = reply.get_document("writeConcernError") {
                return Err(SidecarError::Reply(format!("write concern error: {wce}")));
            }
            let mut retry: BTreeMap<String, Vec<Bson>> = BTreeMap::new();
            for error in reply
                .get_array("writeErrors")
                .map(|a| a.as_slice())
                .unwrap_or_default()
                .iter()
                .filter_map(Bson::as_document)
            {
                let code = error.get_i32("code").unwrap_or(0);
                let message = error.get_str("errmsg").unwrap_or("");
                match targets.get(as_u64(error, "index") as usize) {
                    Some((counter_id, id)) if code == 11000 => {
                        warn!(trigger = self.id(), _id = %id, attempt, "number already taken by another document; renumbering");
                        retry
                            .entry(counter_id.clone())
                            .or_default()
                            .push(id.clone());
                    }
                    _ => {
                        return Err(SidecarError::Reply(format!(
                            "update of `{}` failed: {message} (code {code})",
                            self.docs.namespace()
                        )))
                    }
                }
            }
            for (counter_id, ids) in retry {
                self.reserve(&counter_id, ids, &mut statements, fence)
                    .await?;
            }
        }
        if !statements.docs.is_empty() {
            return Err(SidecarError::Reply(format!(
                "could not find free numbers after {COLLISION_ATTEMPTS} attempts"
            )));
        }
        self.metrics
            .numbered
            .with_label_values(&[self.id()])
            .inc_by(outcome.numbered);
        self.metrics
            .skipped
            .with_label_values(&[self.id()])
            .inc_by(outcome.newly_skipped);
        Ok(outcome)
    }
}

/// The statements of one `update` command and, per statement, the counter and `_id` it numbers.
#[derive(Default)]
struct Statements {
    docs: Vec<Document>,
    targets: Vec<(String, Bson)>,
}

impl Trigger {
    /// Gapless triggers number the group right away (intent protocol, `gapless.rs`); the others
    /// reserve and add statements to the batch's single `update`.
    async fn reserve_or_number(
        &self,
        counter_id: &str,
        ids: Vec<Bson>,
        out: &mut Statements,
        outcome: &mut Outcome,
        fence: &Fence,
    ) -> Result<(), SidecarError> {
        if self.spec.gapless {
            outcome.numbered += self.number_gapless(counter_id, ids, fence).await?;
            Ok(())
        } else {
            self.reserve(counter_id, ids, out, fence).await
        }
    }

    /// Reserves `ids.len()` numbers of `counter_id` (core `Reservation`: one `$inc`, fenced by
    /// the lease epoch) and adds a statement per document: set the number (and the formatted
    /// id) where there is none.
    async fn reserve(
        &self,
        counter_id: &str,
        ids: Vec<Bson>,
        out: &mut Statements,
        fence: &Fence,
    ) -> Result<(), SidecarError> {
        let sequence = &self.spec.sequence;
        let field = self.spec.field.as_str();
        let mut request = ReserveRequest::new(counter_id, ids.len() as u64);
        request.extra_filter.insert(
            "epoch".to_owned(),
            mongo_seq_core::lease::epoch_condition(fence.epoch),
        );
        request
            .extra_set
            .insert("epoch".to_owned(), mongo_seq_core::ejson::long(fence.epoch));
        let mut plan = Reservation::new(sequence, &request)?;
        fence.check()?;
        let range = match self.exec.drive(&mut plan).await {
            Ok(range) => range,
            // TypeMismatch: `$inc` on a `seq` that is not a number.
            Err(SidecarError::Mongo(source)) if crate::error::server_code(&source) == Some(14) => {
                return Err(SidecarError::MalformedCounter {
                    counter: counter_id.to_owned(),
                    source,
                })
            }
            Err(SidecarError::Core(e)) if e.code() == "CONDITION_NOT_MET" => {
                self.metrics.fenced.with_label_values(&[self.id()]).inc();
                return Err(SidecarError::Fenced(format!(
                    "counter `{counter_id}` carries an epoch above {}: another instance holds the trigger",
                    fence.epoch
                )));
            }
            Err(e) => return Err(e),
        };
        for (index, id) in ids.into_iter().enumerate() {
            let n = range.get(index as u64).ok_or_else(|| {
                SidecarError::Reply(format!(
                    "reserved range {range:?} is shorter than the request"
                ))
            })?;
            let mut set = doc! { field: n };
            if let (Some(format_field), Some(formatted)) =
                (&self.spec.format_field, sequence.format_value(n))
            {
                set.insert(format_field.clone(), formatted);
            }
            out.docs.push(doc! { "q": { "_id": id.clone(), field: { "$exists": false } }, "u": { "$set": set } });
            out.targets.push((counter_id.to_owned(), id));
        }
        Ok(())
    }

    /// Before a backfill: moves every counter past the largest number already in the
    /// collection (one `$group` aggregation, then a seed per counter), so numbers given out
    /// while the sidecar was not watching are never issued again.
    async fn seed_from_existing(&self, fence: &Fence) -> Result<(), SidecarError> {
        let field = self.spec.field.as_str();
        let mut group_id = Document::new();
        for (index, scope) in self.spec.sequence.scope().iter().enumerate() {
            group_id.insert(format!("s{index}"), format!("${scope}"));
        }
        let pick = if self.spec.sequence.step() > 0 {
            "$max"
        } else {
            "$min"
        };
        let pipeline = [
            doc! { "$match": { field: { "$exists": true } } },
            doc! { "$group": { "_id": group_id, "n": { pick: format!("${field}") } } },
        ];
        let groups: Vec<Document> = self.docs.aggregate(pipeline).await?.try_collect().await?;
        for group in groups {
            // Rebuild a document holding the scope values, for the core's counter id.
            let mut scoped = Document::new();
            if let Ok(key) = group.get_document("_id") {
                for (index, scope) in self.spec.sequence.scope().iter().enumerate() {
                    if let Some(value) = key.get(format!("s{index}")) {
                        set_path(&mut scoped, scope, value.clone());
                    }
                }
            }
            let Some(value) = group.get("n") else {
                continue;
            };
            let (Ok(counter_id), Ok(n)) = (
                self.spec
                    .sequence
                    .counter_id(Some(&ejson::from_doc(&scoped))),
                mongo_seq_core::ejson::read_i64(&value.clone().into_canonical_extjson()),
            ) else {
                continue;
            };
            self.seed(&counter_id, n, fence).await?;
        }
        Ok(())
    }

    /// Moves a counter past a pre-set number (core `SeedFromMax`: one `$max` upsert).
    async fn seed(&self, counter_id: &str, value: i64, fence: &Fence) -> Result<(), SidecarError> {
        fence.check()?;
        match SeedFromMax::new(&self.spec.sequence, counter_id, value) {
            Ok(mut plan) => {
                self.exec.drive(&mut plan).await?;
            }
            Err(e) => {
                warn!(trigger = self.id(), counter = counter_id, value, error = %e, "pre-set number not used to move the counter")
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefixes_match_fields() {
        let m = doc! { "type": "invoice", "$or": [{ "a": 1 }, { "b.c": { "$gt": 2 } }] };
        assert_eq!(
            prefix_filter(&m, "fullDocument"),
            doc! { "fullDocument.type": "invoice", "$or": [{ "fullDocument.a": 1 }, { "fullDocument.b.c": { "$gt": 2 } }] }
        );
    }

    #[test]
    fn looks_up_dotted_paths() {
        let d = doc! { "a": { "b": 5 }, "c": Bson::Null };
        assert_eq!(lookup(&d, "a.b"), Some(&Bson::Int32(5)));
        assert_eq!(lookup(&d, "c"), Some(&Bson::Null));
        assert_eq!(lookup(&d, "a.x"), None);
        assert_eq!(lookup(&d, "z"), None);
    }
}
