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
//! * Reads of the **documents** carry `{level: "local"}`, explicitly: which documents exist,
//!   which are unnumbered, the largest number in use. A change stream opened without a resume
//!   point starts at the primary's newest entry, majority-committed or not, so a `majority`
//!   backfill would miss a document inserted just before and not yet replicated, and nothing
//!   would ever number it (the simulator found this); and `seedFromMax` must see a number the
//!   application was just told about. Reading what may still roll back is safe here: every
//!   write to a document is conditional and `w: "majority"`, so a number written to a document
//!   that then disappears is at most a gap.
//!
//! A `take`, a `wait` and an index build send nothing of their own that needs one.

use serde::{Deserialize, Serialize};

use crate::protocol::command::Command;

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

/// A read concern as the server reads it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReadConcern {
    /// `"majority"` (or `"local"`).
    pub level: String,
}

impl ReadConcern {
    /// `{level: "majority"}`.
    pub fn majority() -> Self {
        Self {
            level: "majority".to_owned(),
        }
    }

    /// `{level: "local"}`: what the primary has, majority-committed or not.
    pub fn local() -> Self {
        Self {
            level: "local".to_owned(),
        }
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

    /// The read concern the command is sent with (`None`: it reads nothing a decision depends
    /// on, or is a write).
    pub fn read_concern(&self) -> Option<ReadConcern> {
        match self.server_command()? {
            "find" | "aggregate" => Some(match self.collection()? {
                crate::protocol::command::Collection::Documents => ReadConcern::local(),
                crate::protocol::command::Collection::Counters
                | crate::protocol::command::Collection::Leases => ReadConcern::majority(),
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
}
