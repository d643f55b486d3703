//! `mongo-seq counters` and `mongo-seq set-next`: operations on the counters collection, as
//! core commands and plans through the [`Mongo`] interface.

use mongo_seq_core::{
    Collection, Command, CounterKey, QueryOptions, SequenceSpec, SetNext, SetNextOutcome,
};
use serde_json::{json, Value};

use crate::error::SidecarError;
use crate::mongo::{documents, Mongo};
use crate::run_plan::run_tool_plan;
use mongo_seq::executor::convert;

/// A counter document as listed: its id and `seq` read as an integer, or why not.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CounterRow {
    pub id: String,
    /// The integer, or what is stored instead (relaxed Extended JSON, or `missing`).
    pub seq: Result<i64, String>,
}

/// An integer for the tools' JSON: a number when every JSON parser reads it exactly
/// (|n| ≤ 2^53 − 1; JavaScript's `JSON.parse` rounds beyond), else a decimal string.
pub fn exact_json(n: i64) -> serde_json::Value {
    const EXACT: i64 = (1 << 53) - 1;
    if (-EXACT..=EXACT).contains(&n) {
        json!(n)
    } else {
        json!(n.to_string())
    }
}

impl CounterRow {
    /// JSON for `counters --json`: `seq` as [`exact_json`], `null` with `invalid` when it is not
    /// an integer.
    pub fn to_json(&self) -> serde_json::Value {
        match &self.seq {
            Ok(n) => json!({ "id": self.id, "seq": exact_json(*n) }),
            Err(raw) => json!({ "id": self.id, "seq": null, "invalid": raw }),
        }
    }
}

/// Every counter document, sorted by id.
pub async fn list<M: Mongo>(mongo: &M) -> Result<Vec<CounterRow>, SidecarError> {
    let find = Command::Find {
        collection: Collection::Counters,
        filter: json!({}),
        options: QueryOptions {
            sort: Some(json!({ "_id": 1 })),
            ..QueryOptions::default()
        },
        after_cluster_time: None,
    };
    Ok(documents(mongo.execute(find).await?, "find")?
        .iter()
        .map(|d| {
            let id = match d.get("_id") {
                Some(Value::String(id)) => id.clone(),
                Some(other) => convert::relaxed(other),
                None => String::new(),
            };
            let seq = match d.get("seq") {
                None => Err("missing".to_owned()),
                Some(v) => mongo_seq_core::ejson::read_i64(v).map_err(|_| convert::relaxed(v)),
            };
            CounterRow { id, seq }
        })
        .collect())
}

/// The sequence (of `sequences`) whose counter `counter_id` is, if any: the id is parsed by
/// the core and checked against that sequence's scope fields.
pub fn sequence_of<'a>(
    counter_id: &str,
    sequences: impl IntoIterator<Item = &'a SequenceSpec>,
) -> Option<&'a SequenceSpec> {
    let key = CounterKey::parse(counter_id).ok()?;
    sequences
        .into_iter()
        .find(|spec| key.belongs_to(spec).is_ok())
}

/// Makes `next` the next number of `counter_id` (never backwards without `force`).
pub async fn set_next<M: Mongo>(
    mongo: &M,
    spec: &SequenceSpec,
    counter_id: &str,
    next: i64,
    force: bool,
) -> Result<SetNextOutcome, SidecarError> {
    let mut plan = SetNext::new(spec, counter_id, next, force)?;
    run_tool_plan(mongo, &mut plan).await
}
