//! `mongo-seq check`: audits a collection's numbers with the core's `audit` (per counter: per
//! scope when scoped, per period when the sequence resets — each number's period is the one
//! written beside it, `<field>Period`) and compares them with the counters. The documents looked
//! at are the series' (the core's `numbering::series`): every one holding a number, whether or
//! not it matches the trigger's `match` now, and the unnumbered ones that match. A summary is
//! clean when every one of them holds its own integer on the sequence's grid and every counter
//! has passed the numbers under it (and, for gapless sequences, nothing is missing).
//!
//! Beside the audit, the account of every number (the core's `account`): the ledger's entries
//! of the sequence and the trigger's dead letters waiting are read here, the human report's
//! lines are [`report`]'s.

pub mod report;
pub mod seal;

use std::collections::BTreeMap;

use mongo_seq_core::ledger::entry::{entries_of, filed_under};
use mongo_seq_core::numbering::series::{holding, read_members, Holding};
use mongo_seq_core::{
    account, audit, chronology, document_date, issue_date, issue_days, unnumbered, Account,
    ChronologyReport, Collection, Command, CurrentValue, IssueDays, QueryOptions,
};
use mongodb::Client;
use serde::Serialize;
use serde_json::{json, Value};

use crate::config::{Namespace, TriggerSpec};
use crate::dead_letters;
use crate::error::SidecarError;
use crate::mongo::{documents, Mongo};
use crate::run_plan::run_tool_plan;

/// What `check` looks at: what a trigger numbers (its collection, field, sequence, `match`),
/// and its counters.
#[derive(Debug, Clone)]
pub struct CheckTarget {
    /// A config's trigger, or the one a tool's flags describe.
    pub trigger: TriggerSpec,
    pub counters: Namespace,
    /// The ledger of voided and deleted numbers (read, never written).
    pub ledger: Namespace,
    /// The state collection, where the trigger's dead letters are.
    pub state: Namespace,
    /// The trigger is a config's: its reports name it.
    pub named: bool,
}

impl CheckTarget {
    /// The numbered field.
    pub fn field(&self) -> &str {
        self.trigger.numbering.field()
    }

    /// Gaps make the summary unclean.
    pub fn gapless(&self) -> bool {
        self.trigger.numbering.gapless()
    }

    /// The field holding each document's issue date (the trigger's `date_field`).
    pub fn date_field(&self) -> Option<&str> {
        self.trigger.numbering.date_field()
    }
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct CheckSummary {
    /// Documents of the series looked at: those holding a number, and the unnumbered ones
    /// matching the trigger's `match`.
    pub documents: u64,
    /// Documents whose field holds an integer.
    pub numbered: u64,
    /// Documents without the field.
    pub unnumbered: u64,
    /// Documents whose field holds something else than an integer (`"abc"`, 2.5, null).
    pub invalid: u64,
    /// Numbered documents of a sequence that resets without a period of its kind beside the
    /// number (`<field>Period` missing, or not `YYYY`/`YYYY-MM`/`YYYY-MM-DD` as it resets): in
    /// no period's series.
    pub without_period: u64,
    /// Distinct numbers found more than once (per counter).
    pub duplicates: u64,
    /// Numbers of the series (start to the counter) neither held nor in the ledger: the
    /// unexplained gaps (per counter).
    pub gaps: u64,
    /// Numbers voided (the ledger's `void` entries, per counter).
    pub voided: u64,
    /// Numbers whose document was deleted (the ledger's `deleted` entries).
    pub deleted: u64,
    /// Documents without a usable number that wait as dead letters (a record says why).
    pub dead_letters: u64,
    /// Documents without a usable number and no dead letter: left unnumbered silently.
    pub unexplained_unnumbered: u64,
    /// The trigger's dead letters waiting (at most 100), as stored: `_id.document`, `code`,
    /// `reason`, `since`, `attempts`.
    pub dead_letter_list: Vec<Value>,
    /// Integers off the grid `start + k·step` (counted per occurrence).
    pub off_grid: u64,
    /// Numbers whose date is earlier than the number's before them in their series (with the
    /// date order checked).
    pub earlier_dated: u64,
    /// The date order of each series (the core's `chronology`: dated, undated, earlier, the
    /// first examples), by counter id; empty when the date order is not checked.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub chronology: BTreeMap<String, Value>,
    /// As a JSON number, or a decimal string beyond 2^53 − 1 (like the counters).
    #[serde(serialize_with = "exact_option")]
    pub largest: Option<i64>,
    /// Counter values by counter id (JSON numbers, or strings beyond 2^53 − 1).
    #[serde(serialize_with = "exact_map")]
    pub counters: BTreeMap<String, Option<i64>>,
    /// Every counter has issued the largest number found under it.
    pub counters_ok: bool,
    /// Full core reports by counter id (examples of duplicates and gaps), their integers
    /// beyond 2^53 − 1 as decimal strings too.
    pub reports: BTreeMap<String, Value>,
    /// Where every number of each counter went (the core's `account`: held, voided with
    /// reasons, deleted, unexplained gaps and duplicates as ranges), by counter id; integers
    /// beyond 2^53 − 1 as decimal strings.
    pub accounts: BTreeMap<String, Value>,
    /// Why the summary is not clean (the core's verdicts; empty when clean).
    #[serde(skip)]
    pub problems: Vec<String>,
    /// The verdicts on documents without a usable number (in `problems` too; in no series).
    #[serde(skip)]
    pub document_problems: Vec<String>,
    /// Each series' facts as the core computed them, by counter id (what `report` shows).
    #[serde(skip)]
    pub series: BTreeMap<String, SeriesFacts>,
}

/// One series (counter) as the audit found it: the core's account and date order, when its
/// numbers were issued, and its own verdicts (`problems`, without the counter id).
#[derive(Debug, Clone)]
pub struct SeriesFacts {
    pub counter: Option<i64>,
    pub account: Account,
    /// With the date order checked.
    pub chronology: Option<ChronologyReport>,
    pub issued: IssueDays,
    pub problems: Vec<String>,
}

fn exact_option<S: serde::Serializer>(n: &Option<i64>, out: S) -> Result<S::Ok, S::Error> {
    n.map(super::counters::exact_json).serialize(out)
}

fn exact_map<S: serde::Serializer>(
    map: &BTreeMap<String, Option<i64>>,
    out: S,
) -> Result<S::Ok, S::Error> {
    map.iter()
        .map(|(id, n)| (id, n.map(super::counters::exact_json)))
        .collect::<BTreeMap<_, _>>()
        .serialize(out)
}

/// Why `check` looked somewhere that is not there.
#[derive(Debug, thiserror::Error)]
pub enum Missing {
    #[error("database `{0}` has no collections (does it exist?)")]
    Database(String),
    #[error("collection `{db}.{collection}` does not exist (collections in `{db}`: {existing})")]
    Collection {
        db: String,
        collection: String,
        existing: String,
    },
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
        let mut odd = String::new();
        if self.invalid > 0 {
            odd.push_str(&format!(", {} not integers", self.invalid));
        }
        if self.off_grid > 0 {
            odd.push_str(&format!(", {} off the step grid", self.off_grid));
        }
        if self.without_period > 0 {
            odd.push_str(&format!(", {} without a period", self.without_period));
        }
        if self.earlier_dated > 0 {
            odd.push_str(&format!(
                ", {} dated before the number before them",
                self.earlier_dated
            ));
        }
        let mut accounted = String::new();
        for (n, what) in [
            (self.voided, "voided"),
            (self.deleted, "deleted"),
            (self.dead_letters, "dead letters waiting"),
        ] {
            if n > 0 {
                accounted.push_str(&format!(", {n} {what}"));
            }
        }
        format!(
            "{} field {}: {} documents, {} numbered, {} unnumbered{odd}, {} duplicates, {} gaps{accounted}, largest {}, {counters}{}",
            target.trigger.ns,
            target.field(),
            self.documents,
            self.numbered,
            self.unnumbered,
            self.duplicates,
            self.gaps,
            self.largest.map_or("none".to_owned(), |v| v.to_string()),
            if self.counters_ok { "" } else { " (BEHIND the largest number: the next numbers would collide)" },
        )
    }

    /// What makes this summary unclean (empty when clean): the core's verdicts per counter
    /// and on unnumbered documents, gathered by [`audit_collection`] (`gapless`: unexplained
    /// gaps too), and the numbered documents in no period's series.
    pub fn problems(&self) -> Vec<String> {
        let mut problems = self.problems.clone();
        if self.without_period > 0 {
            problems.push(format!(
                "{} numbered documents without a period (the period field beside the number)",
                self.without_period
            ));
        }
        problems
    }
}

/// Refuses a database or collection that does not exist (one `listCollections`).
pub async fn ensure_exists(client: &Client, target: &CheckTarget) -> Result<(), CheckError> {
    let ns = &target.trigger.ns;
    let mut names = client.database(&ns.db).list_collection_names().await?;
    if names.iter().any(|n| n == &ns.coll) {
        return Ok(());
    }
    if names.is_empty() {
        return Err(Missing::Database(ns.db.clone()).into());
    }
    names.sort();
    let shown = names.iter().take(20).map(|n| format!("`{n}`"));
    let mut existing = shown.collect::<Vec<_>>().join(", ");
    if names.len() > 20 {
        existing.push_str(", …");
    }
    Err(Missing::Collection {
        db: ns.db.clone(),
        collection: ns.coll.clone(),
        existing,
    }
    .into())
}

/// A failed check run: the place is missing (a usage error), or the audit failed.
#[derive(Debug, thiserror::Error)]
pub enum CheckError {
    #[error(transparent)]
    Missing(#[from] Missing),
    #[error(transparent)]
    Failed(#[from] SidecarError),
}

impl From<mongodb::error::Error> for CheckError {
    fn from(e: mongodb::error::Error) -> Self {
        Self::Failed(SidecarError::Mongo(e.into()))
    }
}

/// Audits `target` through `mongo` (its documents collection is the target's collection, its
/// state collection the trigger's) and `ledger` (whose documents collection is the ledger).
/// `gapless`: unexplained gaps are problems (a gapless trigger, or `--gapless`). `date_order`:
/// the field of each document's issue date, whose order along the numbers is checked too.
pub async fn audit_collection<M: Mongo>(
    mongo: &M,
    ledger: &M,
    target: &CheckTarget,
    gapless: bool,
    date_order: Option<&str>,
) -> Result<CheckSummary, SidecarError> {
    let spec = target.trigger.numbering.sequence();
    let field = target.field();
    // The series' documents (the core's rule): every one holding a number, whether or not it
    // matches `match` now (a cancelled invoice keeps its number), and the unnumbered ones that
    // match.
    let matching = target.trigger.filter.clone().map(Value::Object);
    // The date field is read whenever the trigger has one: the issue dates (`report`) use it.
    let find = read_members(
        spec,
        field,
        matching.as_ref(),
        date_order.or(target.date_field()),
    );
    let mut summary = CheckSummary {
        counters_ok: true,
        ..CheckSummary::default()
    };
    let mut groups: BTreeMap<String, Vec<Value>> = BTreeMap::new();
    let mut dated: BTreeMap<String, Vec<(i64, Option<i64>)>> = BTreeMap::new();
    // Each number's issue date (the date field, else the ObjectId's time), by counter.
    let mut issued: BTreeMap<String, Vec<(i64, Option<i64>)>> = BTreeMap::new();
    // The `_id`s of documents without a number, and of those whose number is not an integer.
    let (mut missing, mut invalid) = (Vec::new(), Vec::new());
    for document in documents(mongo.execute(find).await?, "find")? {
        summary.documents += 1;
        let id = document.get("_id").cloned().unwrap_or(Value::Null);
        match holding(spec, field, &document) {
            Holding::Number {
                number,
                value,
                counter,
            } => {
                summary.numbered += 1;
                let counter_id = counter.unwrap_or_else(|e| format!("(unscoped: {})", e.code()));
                issued
                    .entry(counter_id.clone())
                    .or_default()
                    .push((number, issue_date(&document, target.date_field())));
                if let Some(date_field) = date_order {
                    let date = document_date(&document, date_field);
                    dated
                        .entry(counter_id.clone())
                        .or_default()
                        .push((number, date));
                }
                groups.entry(counter_id).or_default().push(value.clone());
            }
            Holding::WithoutPeriod => {
                summary.numbered += 1;
                summary.without_period += 1;
            }
            Holding::NotANumber(_) => {
                summary.invalid += 1;
                invalid.push(id);
            }
            Holding::Nothing => {
                summary.unnumbered += 1;
                missing.push(id);
            }
        }
    }
    // The ledger's entries of this sequence, by counter: a counter whose numbers were all
    // voided or deleted has a series too.
    let mut entries: BTreeMap<String, Vec<Value>> = BTreeMap::new();
    for entry in ledger_entries(ledger, spec.name()).await? {
        let counter_id = entry_counter(&entry);
        entries.entry(counter_id).or_default().push(entry);
    }
    for counter_id in entries.keys() {
        groups.entry(counter_id.clone()).or_default();
    }
    if groups.is_empty() && spec.scope().is_empty() && !spec.reset().is_periodic() {
        groups.insert(spec.name().to_owned(), Vec::new());
    }
    for (counter_id, numbers) in groups {
        let counter = match CurrentValue::new(spec, &counter_id) {
            Ok(mut plan) => run_tool_plan(mongo, &mut plan).await?.last,
            Err(_) => None,
        };
        let report = audit(&numbers, spec.start(), spec.step(), counter)?;
        let recorded = entries.remove(&counter_id).unwrap_or_default();
        let account = account(spec.start(), spec.step(), counter, &numbers, &recorded)?;
        summary.duplicates += account.duplicates;
        summary.gaps += account.gaps;
        summary.voided += account.voided;
        summary.deleted += account.deleted;
        summary.off_grid += report.off_grid;
        summary.largest = spec.further(summary.largest, report.largest);
        summary.counters_ok &= report.counter_ok;
        let mut problems = account.problems(gapless);
        let mut order = None;
        if let Some(date_field) = date_order {
            let found = chronology(&dated.remove(&counter_id).unwrap_or_default(), spec.step());
            summary.earlier_dated += found.earlier;
            if let Some(first) = found.examples.first() {
                problems.push(format!(
                    "{} numbers dated before the number before them in `{date_field}` (first: {} after {})",
                    found.earlier, first.number, first.previous
                ));
            }
            summary.chronology.insert(counter_id.clone(), exact(&found));
            order = Some(found);
        }
        summary
            .problems
            .extend(problems.iter().map(|p| format!("{counter_id}: {p}")));
        summary.counters.insert(counter_id.clone(), counter);
        summary.reports.insert(counter_id.clone(), exact(&report));
        summary.accounts.insert(counter_id.clone(), exact(&account));
        let issued = issue_days(&issued.remove(&counter_id).unwrap_or_default(), spec.step());
        summary.series.insert(
            counter_id,
            SeriesFacts {
                counter,
                account,
                chronology: order,
                issued,
                problems,
            },
        );
    }
    // Unnumbered documents: each one waits as a dead letter, or is left silently.
    let waiting = dead_letters::waiting(mongo, &target.trigger.id).await?;
    let ids: Vec<Value> = waiting
        .iter()
        .filter_map(|d| mongo_seq_core::dead_letter_document(d).cloned())
        .collect();
    for (documents, what) in [
        (&missing, "unnumbered documents"),
        (
            &invalid,
            "documents whose number is not an integer (values not integers)",
        ),
    ] {
        let verdict = unnumbered(documents, &ids);
        summary.dead_letters += verdict.dead_letters;
        summary.unexplained_unnumbered += verdict.unexplained;
        summary.document_problems.extend(verdict.problems(what));
    }
    summary
        .problems
        .extend(summary.document_problems.iter().cloned());
    summary.dead_letter_list = waiting
        .into_iter()
        .take(LISTED)
        .map(super::counters::exact_numbers)
        .collect();
    Ok(summary)
}

/// A core report as JSON, integers beyond 2^53 − 1 as decimal strings.
fn exact<T: Serialize>(report: &T) -> Value {
    super::counters::exact_numbers(
        serde_json::to_value(report).unwrap_or_else(|e| json!(e.to_string())),
    )
}

/// Most dead letters a report lists (the counts are complete).
const LISTED: usize = 100;

/// The ledger's entries of `sequence`, as stored (`ledger`'s documents collection is the ledger).
async fn ledger_entries<M: Mongo>(ledger: &M, sequence: &str) -> Result<Vec<Value>, SidecarError> {
    let find = Command::Find {
        collection: Collection::Documents,
        filter: entries_of(sequence),
        options: QueryOptions::default(),
        after_cluster_time: None,
    };
    documents(ledger.execute(find).await?, "ledger")
}

/// The counter id an entry is filed under (`_id.counter`; an unreadable entry under a name of
/// its own, where it explains nothing).
fn entry_counter(entry: &Value) -> String {
    filed_under(entry).map_or_else(|| "(unreadable ledger entries)".to_owned(), str::to_owned)
}
