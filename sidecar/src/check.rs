//! `mongo-seq check`: audits a collection's numbers with the core's `audit` (per counter when
//! scoped) and compares them with the counters.

use std::collections::BTreeMap;

use futures_util::TryStreamExt;
use mongo_seq_core::{audit, CurrentValue, SequenceSpec};
use mongodb::bson::{doc, Document};
use mongodb::Client;
use serde::Serialize;
use serde_json::{json, Value};

use crate::ejson;
use crate::error::SidecarError;
use crate::exec::Executor;
use crate::metrics::Metrics;

/// What `check` looks at.
#[derive(Debug, Clone)]
pub struct CheckTarget {
    pub db: String,
    pub collection: String,
    pub field: String,
    /// Counters collection (in `db` unless qualified `db.coll`).
    pub counters: String,
    pub spec: SequenceSpec,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct CheckSummary {
    pub documents: u64,
    pub numbered: u64,
    pub unnumbered: u64,
    /// Distinct numbers found more than once (per counter).
    pub duplicates: u64,
    /// Numbers missing between start and the largest (per counter).
    pub gaps: u64,
    pub invalid: u64,
    pub off_grid: u64,
    pub largest: Option<i64>,
    /// Counter values by counter id.
    pub counters: BTreeMap<String, Option<i64>>,
    /// Every counter has issued the largest number found under it.
    pub counters_ok: bool,
    /// Full core reports by counter id (examples of duplicates and gaps).
    pub reports: BTreeMap<String, Value>,
}

impl CheckSummary {
    pub fn line(&self, target: &CheckTarget) -> String {
        let counters = match self.counters.len() {
            0 => "no counter".to_owned(),
            1 => {
                let (id, value) = self.counters.iter().next().expect("one counter");
                format!(
                    "counter {id} = {}",
                    value.map_or("missing".to_owned(), |v| v.to_string())
                )
            }
            n => format!("{n} counters"),
        };
        format!(
            "{}.{} field {}: {} documents, {} numbered, {} unnumbered, {} duplicates, {} gaps, largest {}, {counters}{}",
            target.db,
            target.collection,
            target.field,
            self.documents,
            self.numbered,
            self.unnumbered,
            self.duplicates,
            self.gaps,
            self.largest.map_or("none".to_owned(), |v| v.to_string()),
            if self.counters_ok { "" } else { " (BEHIND the largest number: the next numbers would collide)" },
        )
    }
}

pub async fn run(client: &Client, target: &CheckTarget) -> Result<CheckSummary, SidecarError> {
    let db = client.database(&target.db);
    let docs = db.collection::<Document>(&target.collection);
    let (counters_db, counters_coll) = match target.counters.split_once('.') {
        Some((d, c)) => (d.to_owned(), c.to_owned()),
        None => (target.db.clone(), target.counters.clone()),
    };
    let exec = Executor {
        counters: client.database(&counters_db).collection(&counters_coll),
        leases: None,
        metrics: Metrics::new(),
        label: "check".to_owned(),
    };
    let mut projection = doc! { "_id": 0, target.field.clone(): 1 };
    for scope in target.spec.scope() {
        projection.insert(scope.clone(), 1);
    }
    let mut cursor = docs
        .find(doc! {})
        .projection(projection)
        .batch_size(10_000)
        .await?;
    let mut summary = CheckSummary {
        counters_ok: true,
        ..CheckSummary::default()
    };
    let mut groups: BTreeMap<String, Vec<Value>> = BTreeMap::new();
    while let Some(document) = cursor.try_next().await? {
        summary.documents += 1;
        let json = ejson::from_doc(&document);
        let value = target
            .field
            .split('.')
            .try_fold(&json, |v, part| v.get(part));
        match value {
            Some(value) => {
                summary.numbered += 1;
                let counter_id = target
                    .spec
                    .counter_id(Some(&json))
                    .unwrap_or_else(|e| format!("(unscoped: {})", e.code()));
                groups.entry(counter_id).or_default().push(value.clone());
            }
            None => summary.unnumbered += 1,
        }
    }
    if groups.is_empty() && target.spec.scope().is_empty() {
        groups.insert(target.spec.name().to_owned(), Vec::new());
    }
    for (counter_id, numbers) in groups {
        let counter = match CurrentValue::new(&target.spec, &counter_id) {
            Ok(mut plan) => exec.drive(&mut plan).await?.last,
            Err(_) => None,
        };
        let report = audit(&numbers, target.spec.start(), target.spec.step(), counter)?;
        summary.duplicates += report.duplicate_values;
        summary.gaps += report.gap_count;
        summary.invalid += report.invalid;
        summary.off_grid += report.off_grid;
        summary.largest = match (summary.largest, report.largest) {
            (Some(a), Some(b)) => Some(if target.spec.step() > 0 {
                a.max(b)
            } else {
                a.min(b)
            }),
            (a, b) => a.or(b),
        };
        summary.counters_ok &= report.counter_ok;
        summary.counters.insert(counter_id.clone(), counter);
        summary.reports.insert(
            counter_id,
            serde_json::to_value(&report).unwrap_or_else(|e| json!(e.to_string())),
        );
    }
    Ok(summary)
}
