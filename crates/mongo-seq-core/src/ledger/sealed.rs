//! Verifying a sealed sequence as stored ([`VerifySeal`]: `mongo-seq check --seal`, the
//! package's `verifySeal`, `mongo-seq report`): every counter of the sequence, each series'
//! links read back from where the writer keeps them (`docs/sealed-series.md`), each chain
//! verified by [`verify_series`], one report per counter.
//!
//! - An issued number's link: its document's number, period and sealed values, and its seal
//!   `<field>Seal`; a seal the counter records as pending (`seal.pending: [{id, number, seal}]`,
//!   the last batch's, possibly not on the documents yet) stands for a document's that has none.
//! - A void or a recorded deletion: its ledger entry's `seal` (kind `void`, no fields; kind
//!   `deletion`, the deleted document's sealed values), and the entries the counter records as
//!   not written yet (`seal.records`); a deletion's `removed` is the issue link the document
//!   held (`{fields, seal}`), so the chain is walked through it.
//! - The head: the counter's `seal.hash`. The anchor: a link of the latest earlier sealed
//!   period of the same scope (counter ids of one scope sort together, by period): the one the
//!   period's first link names. The writer anchors a period on the earlier period's head as it
//!   was then, and a late document of the earlier period may extend that chain afterwards, so
//!   the anchor is not always the earlier counter's head now ([`anchor`]).
//!
//! ```text
//! find counters {$or: counters_of(name)[, _id > last]} sort _id, COUNTER_PAGE ─▶ per counter:
//!   find documents {scope values, <field>Period, <field> ≥ last[, _id ∉ read at last]}
//!        sort <field>, DOCUMENT_PAGE, again until a page is short
//!   find ledger {_id: {counter, MIN}..{counter, MAX}} ─▶ verify_series(links, anchor, head) ─▶ its report
//! next counter; a full page of counters ─▶ the next page; else done: the reports by counter id
//! ```
//!
//! Memory: one series' links at a time (each its number, two hashes and the sealed values:
//! about 300 bytes plus those values, some 300 MB for a million-link series of small values),
//! one reply (at most a page of documents, or one counter's ledger entries, which are sparse),
//! and the hashes of the latest sealed series read (the next period's anchor is one of them).
//! Reads are `majority`: a verdict never rests on a write that may
//! roll back.

use std::collections::BinaryHeap;

use serde_json::{json, Map, Value};

use crate::ejson;
use crate::error::SeqError;
use crate::ledger::entry::{entries_filed_under, LedgerKind, RecordedEntry};
use crate::numbering::sealing::{CounterSeal, PendingSeal};
use crate::numbering::series::holders;
use crate::protocol::command::{Collection, Command, QueryOptions};
use crate::protocol::machine::{Machine, MachinePlan};
use crate::protocol::plan::Step;
use crate::protocol::reply::Reply;
use crate::seal::link::{Link, LinkKind, Seal};
use crate::seal::verify::{verify_series, SeriesSealReport, StoredLink};
use crate::sequence::counter_id::CounterKey;
use crate::sequence::field::{outermost_paths, stored_value};
use crate::sequence::options::{seal_field, SequenceSpec};
use crate::sequence::period::period_field;

/// Counters read per page.
pub const COUNTER_PAGE: u64 = 100;
/// Documents read per page (one series').
pub const DOCUMENT_PAGE: u64 = 1_000;
/// The plan verifying every series of a sealed sequence; see the module docs.
pub type VerifySeal = MachinePlan<VerifySealMachine>;

/// The state of a [`VerifySeal`].
#[derive(Debug, Clone)]
pub struct VerifySealMachine {
    spec: SequenceSpec,
    field: String,
    projection: Value,
    phase: Phase,
    /// The counters of the page read, not verified yet, last first.
    counters: Vec<Value>,
    /// The `_id` of the last counter read, when its page was full (more may follow).
    more_after: Option<Value>,
    /// The series being read.
    series: Option<SeriesRead>,
    /// The latest sealed series read: the anchor of its scope's next period is one of its links.
    /// A scope's counters are read one after the other (the ids of one scope share their text
    /// up to the period, so they sort together, periods in order).
    earlier: Option<Earlier>,
    reports: Vec<SeriesSealReport>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Counters,
    Documents,
    Ledger,
}

/// One series' links, as read so far.
#[derive(Debug, Clone)]
struct SeriesRead {
    counter_id: String,
    key: CounterKey,
    head: Option<String>,
    /// The seals the counter records as pending (the last batch's).
    pending: Vec<PendingSeal>,
    /// Ledger entries the counter records as not written yet.
    records: Vec<Value>,
    links: Vec<StoredLink>,
    /// The number field's value of the last document read, and the `_id`s read with it: the
    /// next page starts there, without them.
    last: Option<(Value, Vec<Value>)>,
}

impl VerifySeal {
    /// The verification of the sealed sequence `spec` (its `sealFields`) numbered in `field`;
    /// `INVALID_ARGUMENT` naming `field` when it is not a field path, or `sealFields` when the
    /// sequence seals nothing.
    pub fn new(spec: &SequenceSpec, field: &str) -> Result<Self, SeqError> {
        crate::sequence::field::check_field_path("field", field)?;
        if !spec.sealed() {
            return Err(SeqError::invalid_argument(
                "sealFields",
                format!(
                    "sequence `{}` seals no field: nothing to verify (a sealed series lists its `sealFields`)",
                    spec.name()
                ),
            ));
        }
        let seal_fields = spec.seal_fields();
        let seal = seal_field(field);
        let period = period_field(field);
        let mut paths: Vec<&str> = vec!["_id", field, &seal];
        if spec.reset().is_periodic() {
            paths.push(&period);
        }
        paths.extend(spec.scope().iter().map(String::as_str));
        paths.extend(seal_fields.iter().map(String::as_str));
        let projection: Map<String, Value> = outermost_paths(paths)
            .into_iter()
            .map(|path| (path, json!(1)))
            .collect();
        let machine = VerifySealMachine {
            spec: spec.clone(),
            field: field.to_owned(),
            projection: Value::Object(projection),
            phase: Phase::Counters,
            counters: Vec::new(),
            more_after: None,
            series: None,
            earlier: None,
            reports: Vec::new(),
        };
        let first = machine.counters_page(None);
        Ok(MachinePlan::begin(machine, Ok(Step::Command(first))))
    }
}

/// A `find` read `majority`.
fn find(collection: Collection, filter: Value, sort: Option<Value>, limit: Option<u64>) -> Command {
    Command::Find {
        collection,
        filter,
        options: QueryOptions {
            projection: None,
            sort,
            limit,
            majority: true,
        },
        after_cluster_time: None,
    }
}

impl VerifySealMachine {
    /// The next page of the sequence's counters, after the counter `after`.
    fn counters_page(&self, after: Option<&Value>) -> Command {
        let mut filter = Map::new();
        filter.insert("$or".to_owned(), self.spec.counters_of());
        if let Some(after) = after {
            filter.insert("_id".to_owned(), json!({ "$gt": after }));
        }
        let mut command = find(
            Collection::Counters,
            Value::Object(filter),
            Some(json!({"_id": 1})),
            Some(COUNTER_PAGE),
        );
        if let Command::Find { options, .. } = &mut command {
            options.projection = Some(json!({"_id": 1, "seal": 1}));
        }
        command
    }

    /// The next page of the series' documents: numbers from the last one read, less the
    /// documents read with it (a number held twice is read once per document).
    fn documents_page(&self, series: &SeriesRead) -> Command {
        let (from, read) = match &series.last {
            Some((last, ids)) => (last.clone(), ids.as_slice()),
            // Every number (a value that is not one is not a link).
            None => (json!({"$numberDouble": "-Infinity"}), [].as_slice()),
        };
        let mut filter = holders(&self.field, &series.key, json!({ "$gte": from }));
        if let (false, Value::Object(map)) = (read.is_empty(), &mut filter) {
            map.insert("_id".to_owned(), json!({ "$nin": read }));
        }
        let mut sort = Map::new();
        sort.insert(self.field.clone(), json!(1));
        let mut command = find(
            Collection::Documents,
            filter,
            Some(Value::Object(sort)),
            Some(DOCUMENT_PAGE),
        );
        if let Command::Find { options, .. } = &mut command {
            options.projection = Some(self.projection.clone());
        }
        command
    }

    /// The next counter's first read, the next page of counters, or the reports.
    fn next_counter(&mut self) -> Result<Step<Vec<SeriesSealReport>>, SeqError> {
        while let Some(counter) = self.counters.pop() {
            if let Some(series) = self.series_of(&counter)? {
                let command = self.documents_page(&series);
                self.series = Some(series);
                self.phase = Phase::Documents;
                return Ok(Step::Command(command));
            }
        }
        Ok(match self.more_after.take() {
            Some(after) => {
                self.phase = Phase::Counters;
                Step::Command(self.counters_page(Some(&after)))
            }
            None => Step::Done(std::mem::take(&mut self.reports)),
        })
    }

    /// The series of a counter document, `None` for one that is not a counter of the sequence.
    fn series_of(&self, counter: &Value) -> Result<Option<SeriesRead>, SeqError> {
        let Some(counter_id) = self.spec.counter_id_of(counter.get("_id")) else {
            return Ok(None);
        };
        if self.spec.check_counter_id(&counter_id).is_err() {
            return Ok(None);
        }
        let key = match CounterKey::parse(&counter_id) {
            Ok(key) => key,
            // The `counterId` option's id of an unscoped sequence that never resets: its
            // documents are every one holding a number.
            Err(_) if self.spec.scope().is_empty() && !self.spec.reset().is_periodic() => {
                CounterKey {
                    name: self.spec.name().to_owned(),
                    scope: Vec::new(),
                    period: None,
                }
            }
            Err(_) => return Ok(None),
        };
        // The writer's reading of the counter (a malformed `seal` fails the verification,
        // MALFORMED_COUNTER naming the counter: a chain is not repaired by guessing).
        let sealed = CounterSeal::read(counter, &counter_id)?;
        let (head, pending, records) = (sealed.head, sealed.pending, sealed.records);
        Ok(Some(SeriesRead {
            counter_id,
            key,
            head,
            pending,
            records,
            links: Vec::new(),
            last: None,
        }))
    }

    fn on_counters(
        &mut self,
        counters: Vec<Value>,
    ) -> Result<Step<Vec<SeriesSealReport>>, SeqError> {
        let full = u64::try_from(counters.len()).unwrap_or(u64::MAX) >= COUNTER_PAGE;
        self.more_after = counters
            .last()
            .filter(|_| full)
            .and_then(|last| last.get("_id").cloned());
        self.counters.extend(counters.into_iter().rev());
        self.next_counter()
    }

    fn on_documents(
        &mut self,
        mut series: SeriesRead,
        documents: Vec<Value>,
    ) -> Step<Vec<SeriesSealReport>> {
        let full = u64::try_from(documents.len()).unwrap_or(u64::MAX) >= DOCUMENT_PAGE;
        let period = series.key.period.map(|period| period.text());
        let seal_field = seal_field(&self.field);
        for document in &documents {
            let Some(value) = stored_value(document, &self.field) else {
                continue;
            };
            let id = document.get("_id").cloned().unwrap_or(Value::Null);
            match &mut series.last {
                Some((last, ids)) if same_number(last, value) => ids.push(id.clone()),
                last => *last = Some((value.clone(), vec![id.clone()])),
            }
            let Ok(number) = ejson::read_i64(value) else {
                continue; // not an integer: no link (the audit reports it)
            };
            // A seal that is not one ({hash, previous}) was edited: read as none.
            let seal = stored_value(document, &seal_field)
                .and_then(|seal| Seal::read(seal).ok())
                .or_else(|| {
                    let pending = series.pending.iter();
                    let mut mine = pending.filter(|p| p.number == number && p.id == id);
                    mine.next().map(|p| p.seal.clone())
                });
            let link = Link::issued(
                &series.counter_id,
                number,
                period.as_deref(),
                document,
                self.spec.seal_fields(),
            );
            series.links.push(StoredLink { link, seal });
        }
        let command = if full {
            self.documents_page(&series)
        } else {
            self.phase = Phase::Ledger;
            find(
                Collection::Ledger,
                entries_filed_under(&series.counter_id),
                None,
                None,
            )
        };
        self.series = Some(series);
        Step::Command(command)
    }

    fn on_ledger(
        &mut self,
        mut series: SeriesRead,
        entries: Vec<Value>,
    ) -> Result<Step<Vec<SeriesSealReport>>, SeqError> {
        let period = series.key.period.map(|period| period.text());
        let mut recorded: Vec<(LedgerKind, i64)> = Vec::new();
        let records = std::mem::take(&mut series.records);
        for entry in entries.iter().chain(&records) {
            let Ok(read) = RecordedEntry::read(entry) else {
                continue; // explains nothing (the audit reports it)
            };
            if read.counter_id != series.counter_id || recorded.contains(&(read.kind, read.number))
            {
                continue; // a record whose entry is written since: one link
            }
            recorded.push((read.kind, read.number));
            recorded_links(
                &series.counter_id,
                period.as_deref(),
                &read,
                entry,
                &mut series.links,
            );
        }
        let scope = CounterKey {
            period: None,
            ..series.key.clone()
        }
        .id()
        .unwrap_or_else(|_| series.counter_id.clone());
        let earlier = self
            .earlier
            .as_ref()
            .filter(|earlier| earlier.scope == scope);
        let report = verify_series(
            &series.counter_id,
            &series.links,
            anchor(&series.links, earlier),
            series.head.as_deref(),
        );
        self.reports.push(report);
        if let Some(head) = series.head {
            // Sorted as a binary heap, like the accounts' lists (one sort in the Wasm module).
            let hashes = series.links.iter().filter_map(|s| s.seal.as_ref());
            let hashes = hashes
                .map(|seal| seal.hash.clone())
                .collect::<BinaryHeap<_>>();
            self.earlier = Some(Earlier {
                scope,
                head,
                hashes: hashes.into_sorted_vec(),
            });
        }
        self.next_counter()
    }
}

/// A sealed series read: its scope, its head and its links' hashes (sorted).
#[derive(Debug, Clone)]
struct Earlier {
    scope: String,
    head: String,
    hashes: Vec<String>,
}

/// The anchor of a period's chain: the link of the earlier period (`earlier`, none when the
/// scope has no earlier sealed period) that the period's lowest link naming one of them names
/// — the earlier head as it was when the period began —, else the earlier head (the period's
/// first link then misses it: `LINK_MISSING`).
fn anchor<'a>(links: &'a [StoredLink], earlier: Option<&'a Earlier>) -> Option<&'a str> {
    let earlier = earlier?;
    let named = links
        .iter()
        .filter_map(|stored| Some((stored, stored.seal.as_ref()?.previous.as_deref()?)))
        .filter(|(_, previous)| {
            earlier
                .hashes
                .binary_search_by(|h| h.as_str().cmp(previous))
                .is_ok()
        })
        .min_by_key(|(stored, _)| (stored.link.number, stored.link.kind as u8));
    Some(named.map_or(earlier.head.as_str(), |(_, previous)| previous))
}

/// The links a ledger entry (or a record of one) holds: its own, a void or a deletion, and a
/// deletion's `removed` issue link.
fn recorded_links(
    series: &str,
    period: Option<&str>,
    read: &RecordedEntry,
    entry: &Value,
    links: &mut Vec<StoredLink>,
) {
    let seal = |value: Option<&Value>| value.and_then(|seal| Seal::read(seal).ok());
    // A deletion's link seals the values the document held, as its removed link does; a void's
    // seals none.
    let removed = entry
        .get("removed")
        .filter(|_| read.kind == LedgerKind::Deleted);
    let fields = match removed.and_then(|removed| removed.get("fields")) {
        Some(Value::Object(fields)) => fields.clone(),
        _ => Map::new(),
    };
    let link = |kind: LinkKind| Link {
        series: series.to_owned(),
        kind,
        number: read.number,
        period: period.map(str::to_owned),
        fields: fields.clone(),
    };
    if let Some(seal) = seal(entry.get("seal")) {
        links.push(StoredLink {
            link: link(read.kind.link_kind()),
            seal: Some(seal),
        });
    }
    if let Some(seal) = seal(removed.and_then(|removed| removed.get("seal"))) {
        links.push(StoredLink {
            link: link(LinkKind::Issue),
            seal: Some(seal),
        });
    }
}

/// Two numbers as read are the same (an int32 and an int64 of one value are).
fn same_number(a: &Value, b: &Value) -> bool {
    a == b || matches!((ejson::read_i64(a), ejson::read_i64(b)), (Ok(a), Ok(b)) if a == b)
}

impl Machine for VerifySealMachine {
    type Output = Vec<SeriesSealReport>;

    fn on_reply(&mut self, reply: Reply) -> Result<Step<Self::Output>, SeqError> {
        let documents = reply.into_documents("find")?;
        match (self.phase, self.series.take()) {
            (Phase::Counters, _) => self.on_counters(documents),
            (Phase::Documents, Some(series)) => Ok(self.on_documents(series, documents)),
            (Phase::Ledger, Some(series)) => self.on_ledger(series, documents),
            (_, None) => Err(SeqError::unexpected_reply(
                "a series' read without a series (a bug)",
            )),
        }
    }
}

#[cfg(test)]
mod tests;
