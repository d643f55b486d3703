//! Change streams on one collection, read from a member's oplog.
//!
//! From the manual (<https://www.mongodb.com/docs/manual/changestreams/>) and the change
//! streams specification (<https://github.com/mongodb/specifications/blob/master/source/change-streams/change-streams.md>):
//! * a stream delivers only **majority-committed** changes, in cluster-time (oplog) order, so
//!   nothing it delivers is ever rolled back;
//! * every event carries a resume token (`_id`); a stream opened after a token delivers the
//!   events after it; a stream opened without one starts at the member's newest time; each
//!   batch carries a post-batch resume token (the latest point scanned) even when empty;
//! * resuming after a token the oplog no longer covers fails with ChangeStreamHistoryLost (286)
//!   (<https://www.mongodb.com/docs/manual/reference/error-codes/>);
//! * a `drop`, `rename` or `dropDatabase` of the watched collection emits its event, then an
//!   `invalidate` event, which closes the stream; a stream can start after an invalidate token
//!   (`startAfter`), <https://www.mongodb.com/docs/manual/reference/change-events/invalidate/>.
//!
//! * `fullDocument: "updateLookup"`: an update event brings the document as a majority read
//!   finds it when the event is read, which "may differ from the changes described in the
//!   update" (<https://www.mongodb.com/docs/manual/changestreams/#lookup-full-document-for-update-operations>):
//!   a later version, or `null` once the document is gone. The model picks any committed
//!   version from the event's own to the newest (the newest half the time): a lookup is never
//!   older than its event, and may be far newer;
//! * events carry `wallTime` (6.0+), the primary's wall clock at the write.
//!
//! The user pipeline may hold `$match` stages only (the sidecar's); the `invalidate` event is
//! delivered whatever they say.

use bson::{Bson, Document, Timestamp};

use super::cluster::Node;
use super::error::{code, ModelError};
use super::query::matches;
use super::state::{Entry, Op, Ts};
use crate::rng::SimRng;

/// The wall clock (ms since the Unix epoch) at simulated time 0 of a change event's `wallTime`:
/// six seconds before New Year 2027 in Paris (2027-01-01T00:00+01:00), so schedules write on
/// both sides of a period's end.
pub const WALL_ORIGIN_MS: i64 = 1_798_758_000_000 - 6_000;

/// A position in the stream: an entry's time and, for the same entry, 0 for its event and 1
/// for the `invalidate` that follows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Position {
    pub ts: Ts,
    pub sub: u8,
}

impl Position {
    pub fn token(self) -> Document {
        bson::doc! { "_data": format!("{:016x}{:02x}", self.ts, self.sub) }
    }

    pub fn from_token(token: &Document) -> Result<Self, ModelError> {
        let bad = || ModelError::server(260, "InvalidResumeToken", "malformed resume token");
        let data = token.get_str("_data").map_err(|_| bad())?;
        if data.len() != 18 {
            return Err(bad());
        }
        let ts = u64::from_str_radix(&data[..16], 16).map_err(|_| bad())?;
        let sub = u8::from_str_radix(&data[16..], 16).map_err(|_| bad())?;
        Ok(Self { ts, sub })
    }
}

/// One getMore's worth of a stream.
#[derive(Debug, Clone)]
pub struct Batch {
    pub events: Vec<Document>,
    pub post_batch_token: Document,
    /// The stream was invalidated (its cursor is closed).
    pub invalidated: bool,
}

fn timestamp(ts: Ts) -> Bson {
    Bson::Timestamp(Timestamp {
        time: u32::try_from(ts / 1000).unwrap_or(u32::MAX),
        increment: u32::try_from(ts % 1000).unwrap_or(0),
    })
}

fn namespace(ns: &str) -> Document {
    let (db, coll) = ns.split_once('.').unwrap_or((ns, ""));
    bson::doc! { "db": db, "coll": coll }
}

/// Reads the events of collection `ns` after `after` from `node`, up to `max`.
pub fn read(
    node: &Node,
    ns: &str,
    pipeline: &[Document],
    after: Position,
    max: usize,
    mut lookup: Option<&mut SimRng>,
) -> Result<Batch, ModelError> {
    if after.ts < node.truncated_through {
        return Err(ModelError::server(
            code::CHANGE_STREAM_HISTORY_LOST,
            "ChangeStreamHistoryLost",
            "Resume of change stream was not possible, as the resume point may no longer be in the oplog.",
        ));
    }
    let mut filters = Vec::new();
    for stage in pipeline {
        match stage.get("$match") {
            Some(Bson::Document(filter)) if stage.len() == 1 => filters.push(filter),
            _ => {
                return Err(ModelError::unsupported(format!(
                    "change stream stage {stage}"
                )))
            }
        }
    }
    let passes = |event: &Document| -> Result<bool, ModelError> {
        for filter in &filters {
            if !matches(event, filter)? {
                return Ok(false);
            }
        }
        Ok(true)
    };
    let (db, _) = ns.split_once('.').unwrap_or((ns, ""));
    let mut events = Vec::new();
    let mut scanned = after;
    for entry in node
        .oplog
        .iter()
        .filter(|e| e.ts > after.ts || (e.ts == after.ts && after.sub == 0))
    {
        if entry.ts > node.commit_ts {
            break;
        }
        if events.len() >= max {
            break;
        }
        let here = Position {
            ts: entry.ts,
            sub: 0,
        };
        let mut event = bson::doc! { "_id": here.token() };
        let invalidating = match &entry.op {
            Op::Put {
                ns: target,
                document,
                insert,
            } if target == ns => {
                let kind = if *insert { "insert" } else { "update" };
                event.insert("operationType", kind);
                event.insert("clusterTime", timestamp(entry.ts));
                event.insert("wallTime", wall_time(entry));
                event.insert("ns", namespace(ns));
                event.insert(
                    "documentKey",
                    bson::doc! { "_id": document.get("_id").cloned().unwrap_or(Bson::Null) },
                );
                if *insert {
                    event.insert("fullDocument", document.clone());
                } else if let Some(rng) = lookup.as_deref_mut() {
                    event.insert("fullDocument", look_up(node, ns, entry, document, rng));
                }
                false
            }
            Op::Delete {
                ns: target,
                id,
                before,
            } if target == ns => {
                event.insert("operationType", "delete");
                event.insert("clusterTime", timestamp(entry.ts));
                event.insert("wallTime", wall_time(entry));
                event.insert("ns", namespace(ns));
                event.insert("documentKey", bson::doc! { "_id": id.clone() });
                // The collection has pre-images (`changeStreamPreAndPostImages`), kept as long
                // as the deletion's oplog entry.
                if let Some(before) = before {
                    event.insert("fullDocumentBeforeChange", before.clone());
                }
                false
            }
            Op::Drop { ns: target } if target == ns => {
                event.insert("operationType", "drop");
                event.insert("clusterTime", timestamp(entry.ts));
                event.insert("ns", namespace(ns));
                true
            }
            Op::Rename { from, to } if from == ns => {
                event.insert("operationType", "rename");
                event.insert("clusterTime", timestamp(entry.ts));
                event.insert("ns", namespace(ns));
                event.insert("to", namespace(to));
                true
            }
            Op::DropDatabase { db: dropped } if dropped == db => {
                event.insert("operationType", "drop");
                event.insert("clusterTime", timestamp(entry.ts));
                event.insert("ns", namespace(ns));
                true
            }
            _ => {
                scanned = here;
                continue;
            }
        };
        let replay_of_position = entry.ts == after.ts;
        if !replay_of_position && passes(&event)? {
            events.push(event);
        }
        scanned = here;
        if invalidating {
            let end = Position {
                ts: entry.ts,
                sub: 1,
            };
            events.push(bson::doc! {
                "_id": end.token(),
                "operationType": "invalidate",
                "clusterTime": timestamp(entry.ts),
            });
            return Ok(Batch {
                events,
                post_batch_token: end.token(),
                invalidated: true,
            });
        }
    }
    // Nothing left before the commit point: the post-batch token moves up to it.
    if events.len() < max && node.commit_ts > scanned.ts {
        scanned = Position {
            ts: node.commit_ts,
            sub: 0,
        };
    }
    let post_batch_token = match events.last() {
        Some(last) if events.len() >= max => last
            .get_document("_id")
            .cloned()
            .unwrap_or_else(|_| scanned.token()),
        _ => scanned.token(),
    };
    Ok(Batch {
        events,
        post_batch_token,
        invalidated: false,
    })
}

fn wall_time(entry: &Entry) -> Bson {
    let ms = WALL_ORIGIN_MS.saturating_add(i64::try_from(entry.wall_ms).unwrap_or(i64::MAX));
    Bson::DateTime(bson::DateTime::from_millis(ms))
}

/// An update event's `updateLookup`: a committed version of its document from the event's own
/// (`document`, at `event`) to the newest, `null` where the document is gone.
fn look_up(node: &Node, ns: &str, event: &Entry, document: &Document, rng: &mut SimRng) -> Bson {
    let id = document.get("_id");
    let (db, _) = ns.split_once('.').unwrap_or((ns, ""));
    let mut versions = vec![Bson::Document(document.clone())];
    for entry in node
        .oplog
        .iter()
        .filter(|e| e.ts > event.ts && e.ts <= node.commit_ts)
    {
        match &entry.op {
            Op::Put {
                ns: target,
                document: later,
                ..
            } if target == ns && later.get("_id") == id => {
                versions.push(Bson::Document(later.clone()));
            }
            Op::Delete {
                ns: target,
                id: gone,
                ..
            } if target == ns && Some(gone) == id => {
                versions.push(Bson::Null);
            }
            Op::Drop { ns: target } if target == ns => versions.push(Bson::Null),
            Op::Rename { from, .. } if from == ns => versions.push(Bson::Null),
            Op::DropDatabase { db: dropped } if dropped == db => versions.push(Bson::Null),
            _ => {}
        }
    }
    let newest = versions.len() - 1;
    let pick = if rng.chance(0.5) {
        newest
    } else {
        rng.below(versions.len())
    };
    versions.swap_remove(pick.min(newest))
}

/// Where a stream opened now without a token starts: the member's newest entry.
pub fn start_now(node: &Node) -> Position {
    Position {
        ts: node.last_ts(),
        sub: 0,
    }
}
