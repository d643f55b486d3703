//! A cluster time: the position of a write in a replica set's history, as change events and
//! replies give it. Its own file because both commands (a read's `afterClusterTime`) and concerns
//! name it.

use serde::{Deserialize, Serialize};

/// A cluster time: a BSON timestamp, as a change event's `clusterTime` gives it (`t` seconds,
/// `i` the ordinal within the second); Extended JSON `{"$timestamp": {"t": …, "i": …}}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(from = "TimestampJson", into = "TimestampJson")]
pub struct ClusterTime {
    pub t: u32,
    pub i: u32,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct TimestampJson {
    #[serde(rename = "$timestamp")]
    timestamp: TimestampFields,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct TimestampFields {
    t: u32,
    i: u32,
}

impl From<TimestampJson> for ClusterTime {
    fn from(json: TimestampJson) -> Self {
        Self {
            t: json.timestamp.t,
            i: json.timestamp.i,
        }
    }
}

impl From<ClusterTime> for TimestampJson {
    fn from(time: ClusterTime) -> Self {
        Self {
            timestamp: TimestampFields {
                t: time.t,
                i: time.i,
            },
        }
    }
}

impl ClusterTime {
    /// `None` for `Timestamp(0, 0)`, which no server issues (and which a server refuses as an
    /// `afterClusterTime`).
    pub fn new(t: u32, i: u32) -> Option<Self> {
        (t != 0 || i != 0).then_some(Self { t, i })
    }

    /// Canonical Extended JSON.
    pub fn to_json(self) -> serde_json::Value {
        crate::ejson::object([(
            "$timestamp",
            crate::ejson::object([
                ("t", serde_json::Value::from(self.t)),
                ("i", serde_json::Value::from(self.i)),
            ]),
        )])
    }
}
