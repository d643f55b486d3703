//! `mongo-seq counters`, `mongo-seq set-next` and `mongo-seq adopt`: operations on the counters
//! collection, as core commands and plans through the [`Mongo`] interface.

use mongo_seq_core::counter::definition::FIELD as DEFINITION_FIELD;
use mongo_seq_core::counter::document::list_counters;
use mongo_seq_core::sequence::counter_field::DEFAULT_COUNTER_FIELD;
use mongo_seq_core::{
    AdoptDefinition, AdoptOutcome, CounterDefinition, CounterKey, SequenceSpec, SetNext,
    SetNextOutcome,
};
use serde_json::{json, Value};

use crate::error::SidecarError;
use crate::mongo::{documents, Mongo};
use crate::run_plan::run_tool_plan;
use mongo_seq::executor::convert;

/// A counter document as listed: its id, its number read as an integer (or why not), and the
/// sequence it belongs to when one of those given says so.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CounterRow {
    pub id: String,
    /// The integer, or what is stored instead (relaxed Extended JSON, or `missing`).
    pub seq: Result<i64, String>,
    /// The name of the sequence (of those given) the counter belongs to.
    pub sequence: Option<String>,
    /// The period of a counter of a sequence that resets, read from its id by the core
    /// (`invoices/tenantId=acme/2026` → `2026`), with its series: the id without the period
    /// (`invoices/tenantId=acme`), the same for every period of one scope.
    pub period: Option<(String, String)>,
    /// The definition the counter records, its integers as numbers; `None` when it
    /// has none (made by the tutorial, another recipe or an older version: its next reservation
    /// records one).
    pub definition: Option<Value>,
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

/// `value` with every integer beyond ±(2^53 − 1), however deep, as [`exact_json`] makes it: a
/// decimal string. The one rule of the tools' JSON output (`check --json`, `counters --json`).
pub fn exact_numbers(value: Value) -> Value {
    match value {
        Value::Number(n) => match n.as_i64() {
            Some(i) => exact_json(i),
            // Beyond i64 (a u64) is beyond 2^53 too; a double stays what it is.
            None if n.is_u64() => Value::String(n.to_string()),
            None => Value::Number(n),
        },
        Value::Array(items) => Value::Array(items.into_iter().map(exact_numbers).collect()),
        Value::Object(map) => Value::Object(
            map.into_iter()
                .map(|(key, value)| (key, exact_numbers(value)))
                .collect(),
        ),
        other => other,
    }
}

impl CounterRow {
    /// JSON for `counters --json`: `seq` as [`exact_json`], `null` with `invalid` when it is not
    /// an integer.
    /// A counter of a period has `series` and `period` too; every counter its `definition`
    /// (`null`: none recorded).
    pub fn to_json(&self) -> serde_json::Value {
        let mut row = match &self.seq {
            Ok(n) => json!({ "id": self.id, "seq": exact_json(*n) }),
            Err(raw) => json!({ "id": self.id, "seq": null, "invalid": raw }),
        };
        if let Some(object) = row.as_object_mut() {
            if let Some((series, period)) = &self.period {
                object.insert("series".to_owned(), json!(series));
                object.insert("period".to_owned(), json!(period));
            }
            object.insert(
                "definition".to_owned(),
                exact_numbers(self.definition.clone().unwrap_or(Value::Null)),
            );
        }
        row
    }
}

/// The counter documents (the core's `list_counters`): every one, or with `only` those of that
/// sequence. A counter of a sequence of `sequences` (or `only`) is read with that sequence's
/// counter field and id, any other with the default `seq`.
pub async fn list<M: Mongo>(
    mongo: &M,
    sequences: &[&SequenceSpec],
    only: Option<&SequenceSpec>,
) -> Result<Vec<CounterRow>, SidecarError> {
    let find = list_counters(only);
    let sequences: Vec<&SequenceSpec> = only.map_or_else(|| sequences.to_vec(), |spec| vec![spec]);
    Ok(documents(mongo.execute(find).await?, "find")?
        .iter()
        .map(|d| {
            let found = sequences.iter().find_map(|spec| {
                let counter_id = spec.counter_id_of(d.get("_id"))?;
                sequence_of(&counter_id, [*spec]).map(|_| (*spec, counter_id))
            });
            let (spec, counter_id) = found.unzip();
            let id = match (counter_id, d.get("_id")) {
                (Some(counter_id), _) => counter_id,
                (None, Some(Value::String(id))) => id.clone(),
                (None, Some(other)) => convert::relaxed(other),
                (None, None) => String::new(),
            };
            let field = spec.map_or(DEFAULT_COUNTER_FIELD, |spec| spec.counter_field());
            let seq = match d.get(field) {
                None => Err("missing".to_owned()),
                Some(v) => mongo_seq_core::ejson::read_i64(v).map_err(|_| convert::relaxed(v)),
            };
            CounterRow {
                period: period_of(&id),
                id,
                seq,
                sequence: spec.map(|spec| spec.name().to_owned()),
                definition: d.get(DEFINITION_FIELD).map(CounterDefinition::readable),
            }
        })
        .collect())
}

/// The series and the period of a counter id that ends with a period (the core's parser).
fn period_of(counter_id: &str) -> Option<(String, String)> {
    let mut key = CounterKey::parse(counter_id).ok()?;
    let period = key.period.take()?;
    Some((key.id().ok()?, period.text()))
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

/// Rewrites the definition `counter_id` records to `spec`'s on purpose (`mongo-seq adopt`):
/// the number is left as it is; refused (`INVALID_ARGUMENT`) for a counter that does not exist.
pub async fn adopt<M: Mongo>(
    mongo: &M,
    spec: &SequenceSpec,
    counter_id: &str,
) -> Result<AdoptOutcome, SidecarError> {
    let mut plan = AdoptDefinition::new(spec, counter_id)?;
    run_tool_plan(mongo, &mut plan).await
}
