//! The read and write concern of every command, chosen here and sent as the command's
//! `readConcern` / `writeConcern` fields, so no shell inherits them from whatever its caller's
//! `Db` or client was configured with.
//!
//! * **Writes** (`findAndModify`, `insert`, `update`) carry `{w: "majority"}`: an acknowledged
//!   write is then on a majority of the replica set and survives any failover. With `w: 1` a
//!   primary that fails before replicating a counter's `$inc` rolls it back, and the same numbers
//!   are handed out again by the next primary
//!   (<https://www.mongodb.com/docs/manual/core/replica-set-rollbacks/>). A write whose majority
//!   cannot be reached (arbiters with a data member down, a lost majority) is not acknowledged:
//!   the caller stops numbering rather than risk a duplicate.
//! * **Reads** (`find`, `aggregate`) of the protocol's own state, the counters and the leases
//!   (the sidecar's state documents), carry `{level: "majority"}`: a decision (a counter's value
//!   before `setNext` or a gapless reservation, the highest epoch, a lease, the pending intents,
//!   the stored resume token) is only taken on data that cannot be rolled back
//!   (<https://www.mongodb.com/docs/manual/reference/read-concern-majority/>).
//! * A read of the **documents** on which a decision about a change event's document rests
//!   (the document is numbered already, or gone: skip it) carries `{level: "majority",
//!   afterClusterTime: <the event's clusterTime>}` (`anchored_find`): the server answers from
//!   a majority-committed snapshot at or after the event, waiting until it has one
//!   (<https://www.mongodb.com/docs/manual/reference/read-concern/>, `afterClusterTime`). The
//!   event is majority-committed (a change stream returns nothing else) and committed history
//!   is one line, so that snapshot holds the document unless a committed write numbered or
//!   deleted it after: whichever member answers, under whatever topology view. A deposed
//!   primary of an older term never reaches a commit point after the event, so it cannot
//!   answer; a `local` read there, or a `majority` read of a new primary whose commit point
//!   still lags, would miss the document (seed 3,013,611). Causal consistency with
//!   data durability needs exactly this pair, `majority` reads and `majority` writes
//!   (<https://www.mongodb.com/docs/manual/core/causal-consistency-read-write-concerns/>).
//!   MongoDB sets `afterClusterTime` itself for the operations of a causally consistent
//!   session; the time here is of another client's write, known from its change event, so
//!   the command carries it (the same `readConcern` a session advanced to it with
//!   `advanceOperationTime` would send), and the product needs no sessions. A plan that reads
//!   the documents again after writing them (a gapless completion, its recheck) moves the
//!   anchor to its own latest write's `operationTime` ([`advance_after_write`]), as a causally
//!   consistent session would: a secondary's commit point can lag the primary's, so a
//!   `majority` read there at the event's time alone may not show the plan's own
//!   majority-acknowledged writes (seed 8,234,182).
//! * Other reads of the **documents** carry `{level: "local"}`, explicitly: which documents exist,
//!   which are unnumbered, the largest number in use. A change stream opened without a resume
//!   point starts at the primary's newest entry, majority-committed or not, so a `majority`
//!   backfill would miss a document inserted just before and not yet replicated, and nothing
//!   would ever number it (the simulator found this); and `seedFromMax` must see a number the
//!   application was just told about. Reading what may still roll back is safe here: every
//!   write to a document is conditional and `w: "majority"`, so a number written to a document
//!   that then disappears is at most a gap.
//!
//! A `take`, a `wait` and an index build send nothing of their own that needs one.
//!
//! **Where a read is served** ([`Command::primary_only`]): every read goes to the primary,
//! whatever read preference the caller's client or connection string names, except the
//! anchored reads above: a `local` read on a secondary is as stale as its replication, and a
//! `majority` read there as its commit point, while a read causally after the event waits on
//! whichever member serves it until that member has the event (the manual's own use of causal
//! consistency: reading one's writes from a secondary). So an anchored read follows the
//! client's read preference; the executors send every other read with `primary`.

use serde::{Deserialize, Serialize};

// Concerns are where most plans meet a cluster time, so it is also named from here.
pub use crate::protocol::cluster_time::ClusterTime;
use crate::protocol::command::{Command, QueryOptions};

/// A write concern as the server reads it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WriteConcern {
    /// `"majority"`, or a number of members.
    pub w: serde_json::Value,
}

impl WriteConcern {
    /// `{w: "majority"}`.
    pub fn majority() -> Self {
        Self {
            w: serde_json::Value::from("majority"),
        }
    }

    /// `{w: 1}` (only the simulator's `counter-w1` mutant sends it).
    pub fn one() -> Self {
        Self {
            w: serde_json::Value::from(1),
        }
    }

    /// Whether it waits for a majority.
    pub fn is_majority(&self) -> bool {
        self.w == "majority"
    }
}

/// How long a read causally after an event may wait for the member serving it to reach the
/// event (its `maxTimeMS`): a primary waits at most until it commits an entry of its term, a
/// secondary its replication lag; a member cut off from the primary would wait until the
/// partition heals. Past it the server answers MaxTimeMSExpired (50), a transient failure the
/// sidecar retries (the next try may be served by another member).
pub const ANCHORED_READ_MAX_TIME_MS: u64 = 5_000;

/// A read concern as the server reads it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReadConcern {
    /// `"majority"` (or `"local"`).
    pub level: String,
    /// Answer from data at or after this cluster time (waiting for it): `majority` only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after_cluster_time: Option<ClusterTime>,
}

impl ReadConcern {
    /// `{level: "majority"}`.
    pub fn majority() -> Self {
        Self {
            level: "majority".to_owned(),
            after_cluster_time: None,
        }
    }

    /// `{level: "local"}`: what the primary has, majority-committed or not.
    pub fn local() -> Self {
        Self {
            level: "local".to_owned(),
            after_cluster_time: None,
        }
    }

    /// `{level: "majority", afterClusterTime: time}`: causally after the write at `time`.
    pub fn majority_after(time: ClusterTime) -> Self {
        Self {
            level: "majority".to_owned(),
            after_cluster_time: Some(time),
        }
    }

    /// The concern as the command's `readConcern` field.
    pub fn to_json(&self) -> serde_json::Value {
        let mut fields = serde_json::Map::new();
        fields.insert("level".to_owned(), self.level.clone().into());
        if let Some(time) = self.after_cluster_time {
            fields.insert("afterClusterTime".to_owned(), time.to_json());
        }
        serde_json::Value::Object(fields)
    }
}

/// Moves a plan's read anchor `after` past one of its own writes, whose reply said it happened
/// at `operation_time`: the plan's next anchored read then also sees what the plan itself wrote
/// ("read your own writes"; the drivers' causal consistency specification passes a write's
/// `operationTime` as the next read's `afterClusterTime` for exactly this). A `majority` read
/// at the events' time alone may be answered by a secondary whose commit point has not yet
/// reached the plan's own majority-acknowledged writes: a gapless completion read its own
/// moves half undone there and left a gap (seed 8,234,182). Nothing to do for a plan without
/// an anchor (its reads are `local`, on the primary) or a reply without a time (a standalone
/// server, where every read sees every write before it).
pub(crate) fn advance_after_write(
    after: &mut Option<ClusterTime>,
    operation_time: Option<ClusterTime>,
) {
    // Mutant (simulator only): the reads stay anchored at the events only.
    if crate::mutants::active(crate::mutants::Mutant::ReadBeforeOwnWrites) {
        return;
    }
    if let (Some(anchor), Some(time)) = (after.as_mut(), operation_time) {
        *anchor = (*anchor).max(time);
    }
}

/// A `find` of the documents whose answer decides that documents a change stream delivered
/// need no number (numbered already, or gone): anchored after the newest event's cluster time
/// `after` when there is one (see the module docs), else a `local` read (a backfill page's
/// documents, read `local` themselves).
pub(crate) fn anchored_find(
    filter: serde_json::Value,
    options: crate::protocol::command::QueryOptions,
    after: Option<ClusterTime>,
) -> Command {
    Command::Find {
        collection: crate::protocol::command::Collection::Documents,
        filter,
        options,
        after_cluster_time: after,
    }
}

impl Command {
    /// The write concern the command is sent with (`None`: it writes nothing).
    pub fn write_concern(&self) -> Option<WriteConcern> {
        match self.server_command()? {
            "findAndModify" | "insert" | "update" => {
                if crate::mutants::active(crate::mutants::Mutant::CounterW1)
                    && self.collection() == Some(crate::protocol::command::Collection::Counters)
                {
                    return Some(WriteConcern::one());
                }
                Some(WriteConcern::majority())
            }
            _ => None,
        }
    }

    /// The command's `maxTimeMS` (`None`: the server's default, no limit): only a read causally
    /// after an event, which may wait ([`ANCHORED_READ_MAX_TIME_MS`]).
    pub fn max_time_ms(&self) -> Option<u64> {
        (!self.primary_only()).then_some(ANCHORED_READ_MAX_TIME_MS)
    }

    /// Whether the command must be served by the primary, whatever the client's read
    /// preference: everything but a read causally after a change event (see the module docs).
    pub fn primary_only(&self) -> bool {
        !matches!(
            self,
            Self::Find {
                after_cluster_time: Some(_),
                ..
            }
        )
    }

    /// The read concern the command is sent with (`None`: it reads nothing a decision depends
    /// on, or is a write).
    pub fn read_concern(&self) -> Option<ReadConcern> {
        if let Self::Find {
            after_cluster_time: Some(time),
            ..
        } = self
        {
            // Mutant (simulator only): a majority read, but not causally after the event.
            if crate::mutants::active(crate::mutants::Mutant::UnanchoredSkipRead) {
                return Some(ReadConcern::majority());
            }
            return Some(ReadConcern::majority_after(*time));
        }
        if let Self::Find {
            options: QueryOptions { majority: true, .. },
            ..
        } = self
        {
            return Some(ReadConcern::majority());
        }
        match self.server_command()? {
            "find" | "aggregate" => Some(match self.collection()? {
                crate::protocol::command::Collection::Documents => ReadConcern::local(),
                crate::protocol::command::Collection::Counters
                | crate::protocol::command::Collection::Leases
                | crate::protocol::command::Collection::Ledger => ReadConcern::majority(),
            }),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::protocol::command::{Collection, Command, UpdateOptions};

    #[test]
    fn writes_carry_majority_reads_majority_and_reading_back_ignores_them() {
        let write = Command::FindOneAndUpdate {
            collection: Collection::Counters,
            filter: json!({"_id": "a"}),
            update: json!({"$inc": {"seq": 1}}),
            options: UpdateOptions {
                upsert: true,
                return_document: crate::protocol::command::ReturnDocument::After,
            },
        };
        let text = serde_json::to_value(&write).unwrap();
        assert_eq!(text["writeConcern"], json!({"w": "majority"}));
        assert!(text.get("readConcern").is_none());
        let read = Command::FindOne {
            collection: Collection::Leases,
            filter: json!({"_id": "a"}),
            options: None,
        };
        let text = serde_json::to_value(&read).unwrap();
        assert_eq!(text["readConcern"], json!({"level": "majority"}));
        assert!(text.get("writeConcern").is_none());
        let mut claimed = serde_json::to_value(&write).unwrap();
        claimed["writeConcern"] = json!({"w": 0});
        let back: Command = serde_json::from_value(claimed).unwrap();
        assert_eq!(back, write);
        let wait = serde_json::to_value(Command::Wait {
            min_ms: 1,
            max_ms: 2,
        })
        .unwrap();
        assert!(wait.get("writeConcern").is_none() && wait.get("readConcern").is_none());
    }

    #[test]
    fn an_anchored_find_reads_majority_after_the_event_and_reads_back_with_its_time() {
        use super::{anchored_find, ClusterTime};
        use crate::protocol::command::QueryOptions;

        let time = ClusterTime::new(1_700_000_000, 7).unwrap();
        let find = anchored_find(json!({"_id": 1}), QueryOptions::default(), Some(time));
        let text = serde_json::to_value(&find).unwrap();
        assert_eq!(
            text["readConcern"],
            json!({"level": "majority", "afterClusterTime": {"$timestamp": {"t": 1_700_000_000u32, "i": 7}}})
        );
        assert!(text.get("afterClusterTime").is_none());
        assert_eq!(text["maxTimeMS"], json!(super::ANCHORED_READ_MAX_TIME_MS));
        let back: Command = serde_json::from_value(text).unwrap();
        assert_eq!(back, find);
        // Without an event (a backfill page's documents): `local`, as before.
        let plain = anchored_find(json!({"_id": 1}), QueryOptions::default(), None);
        assert_eq!(
            serde_json::to_value(&plain).unwrap()["readConcern"],
            json!({"level": "local"})
        );
        // Timestamp(0, 0) is no cluster time (a server refuses it as `afterClusterTime`).
        assert_eq!(ClusterTime::new(0, 0), None);
        assert!(ClusterTime::new(1, 0) > ClusterTime::new(0, 9));
    }

    #[test]
    fn a_majority_find_of_the_documents_reads_majority_on_the_primary_and_reads_back() {
        use crate::protocol::command::QueryOptions;

        let find = Command::Find {
            collection: Collection::Documents,
            filter: json!({"n": 5}),
            options: QueryOptions {
                majority: true,
                ..QueryOptions::default()
            },
            after_cluster_time: None,
        };
        let text = serde_json::to_value(&find).unwrap();
        assert_eq!(text["readConcern"], json!({"level": "majority"}));
        assert!(text.get("options").is_none() && find.primary_only());
        let back: Command = serde_json::from_value(text).unwrap();
        assert_eq!(back, find);
    }

    #[test]
    fn an_anchor_moves_forward_to_a_write_s_operation_time_and_never_back() {
        use super::{advance_after_write, ClusterTime};

        let at = |t, i| ClusterTime::new(t, i);
        let mut after = at(10, 5);
        advance_after_write(&mut after, at(10, 9));
        assert_eq!(after, at(10, 9), "a later write");
        advance_after_write(&mut after, at(11, 0));
        assert_eq!(after, at(11, 0), "seconds first, then the ordinal");
        advance_after_write(&mut after, at(10, 99));
        assert_eq!(after, at(11, 0), "an older time moves nothing");
        advance_after_write(&mut after, None);
        assert_eq!(
            after,
            at(11, 0),
            "a reply without a time (a standalone) moves nothing"
        );
        // No anchor (reads `local` on the primary) stays so.
        let mut none = None;
        advance_after_write(&mut none, at(12, 0));
        assert_eq!(none, None);
    }
}
