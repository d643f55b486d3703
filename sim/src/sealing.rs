//! Sealed series in the simulated world: `ledger` (gapless, on insert, with deletions recorded
//! and a clerk's voids) seals each number with its writer (`by`), `credits` (gapless, monthly,
//! numbered on issue) with its `issuedAt`. Checks at quiescence ([`check`]): every numbered document
//! holds a seal; each period's chain verifies in number order (the core's `verify_series`, fed
//! from the documents as stored) and ends at its counter's head; a period's first link names
//! a link of the period before (its head when that link was sealed); once a document holds a seal, neither its number nor its seal ever changes (mutant
//! `seal-before-final`: a seal written before its number is final stays on a number that moves).

use std::collections::{BTreeMap, HashMap};

use bson::{Bson, Document};
use mongo_seq_core::seal::link::{Link, LinkKind, Seal};
use mongo_seq_core::seal::verify::{verify_series, StoredLink};

use crate::invariants::integer;
use crate::model::cluster::Node;
use crate::model::state::Entry;
use crate::model::Op;
use crate::watched::{Watched, COUNTERS, FIELD};

const PERIOD_FIELD: &str = "seqPeriod";
const SEAL_FIELD: &str = "seqSeal";

fn json(document: &Document) -> serde_json::Value {
    Bson::Document(document.clone()).into_canonical_extjson()
}

/// The checks of `watched`'s sealed series on `node`'s majority-committed data and `entries`
/// (the primary's history). Run where every number that left the series left a record (no
/// history lost, no collection dropped: the gapless checks' conditions).
pub fn check(node: &Node, entries: &[&Entry], watched: &Watched) -> Vec<String> {
    let mut violations = Vec::new();
    // A dropped or renamed collection's links are gone without records: nothing to check.
    let ns = watched.ns();
    let dropped = entries.iter().any(|e| match &e.op {
        Op::Drop { ns: target } | Op::Rename { from: target, .. } => *target == ns,
        Op::DropDatabase { db } => ns.starts_with(&format!("{db}.")),
        _ => false,
    });
    if watched.seal_fields.is_empty() || dropped {
        return violations;
    }
    let heads: BTreeMap<String, Option<String>> = node
        .committed
        .collection(COUNTERS)
        .map(|c| {
            c.documents()
                .filter_map(|d| {
                    let id = d.get_str("_id").ok()?.to_owned();
                    let head = d
                        .get_document("seal")
                        .ok()
                        .and_then(|s| s.get_str("hash").ok())
                        .map(str::to_owned);
                    Some((id, head))
                })
                .collect()
        })
        .unwrap_or_default();
    {
        let ns = watched.ns();
        let fields: Vec<String> = watched
            .seal_fields
            .iter()
            .map(|f| (*f).to_owned())
            .collect();
        let mut series: BTreeMap<String, Vec<StoredLink>> = BTreeMap::new();
        let documents: Vec<Document> = node
            .committed
            .collection(&ns)
            .map(|c| c.documents().cloned().collect())
            .unwrap_or_default();
        for d in &documents {
            let Some(number) = d.get(FIELD).and_then(integer) else {
                continue;
            };
            let id = d.get("_id").map(ToString::to_string).unwrap_or_default();
            let period = d.get_str(PERIOD_FIELD).ok();
            let counter_id = match period {
                Some(period) => format!("{}/{period}", watched.collection),
                None => watched.collection.to_owned(),
            };
            let value = json(d);
            let seal = match value.get(SEAL_FIELD).map(Seal::read) {
                Some(Ok(seal)) => Some(seal),
                Some(Err(reason)) => {
                    violations.push(format!("{ns}: document {id}'s seal is malformed: {reason}"));
                    None
                }
                None => {
                    violations.push(format!(
                        "{ns}: document {id} holds number {number} of {counter_id} but no seal after quiescence"
                    ));
                    None
                }
            };
            series
                .entry(counter_id.clone())
                .or_default()
                .push(StoredLink {
                    link: Link::issued(&counter_id, number, period, &value, &fields),
                    seal,
                });
        }
        let records = counter_records(node, watched.collection);
        for (counter_id, links) in ledger_links(node, watched.collection, &records) {
            series.entry(counter_id).or_default().extend(links);
        }
        // The series' counters in period order. A period's first link names the period
        // before's head as it was then (none when it had none): a late document of the earlier
        // period (dated in it, issued after the next began) extends the earlier chain after.
        let prefix = format!("{}/", watched.collection);
        let mut before: Vec<String> = Vec::new();
        let own = |id: &String| id == watched.collection || id.starts_with(&prefix);
        for (counter_id, head) in heads.iter().filter(|(id, _)| own(id)) {
            let links = series.remove(counter_id).unwrap_or_default();
            // The chain's root: the link whose previous is none of this series' links.
            let hashes: Vec<&str> = links
                .iter()
                .filter_map(|l| l.seal.as_ref().map(|s| s.hash.as_str()))
                .collect();
            let first = links
                .iter()
                .filter_map(|l| l.seal.as_ref())
                .filter_map(|s| s.previous.clone())
                .find(|previous| !hashes.contains(&previous.as_str()));
            let anchor = match first {
                Some(previous) if !before.contains(&previous) => {
                    violations.push(format!(
                        "{counter_id} (sealed): its first link names {previous}, no link of the period before"
                    ));
                    continue;
                }
                anchor => anchor,
            };
            let report = verify_series(counter_id, &links, anchor.as_deref(), head.as_deref());
            if let Some(failure) = report.failures.first() {
                violations.push(format!(
                    "{counter_id} (sealed): number {} ({:?}) does not verify: {:?}, {} ({} failures)",
                    failure.number,
                    failure.kind,
                    failure.reason,
                    failure.detail,
                    report.failures.len()
                ));
            }
            before = links
                .iter()
                .filter_map(|l| l.seal.as_ref().map(|s| s.hash.clone()))
                .collect();
        }
        for (counter_id, links) in series {
            violations.push(format!(
                "{counter_id} (sealed): {} documents hold its numbers but it has no counter",
                links.len()
            ));
        }
        violations.extend(check_seals_stay(&ns, entries));
    }
    violations.truncate(5);
    violations
}

/// Once a document holds a seal, its number and its seal never change (a seal is written
/// only on a final number, once).
fn check_seals_stay(ns: &str, entries: &[&Entry]) -> Vec<String> {
    let mut sealed: HashMap<String, (Option<i64>, Bson, u64)> = HashMap::new();
    let mut violations = Vec::new();
    for entry in entries {
        let Op::Put {
            ns: target,
            document,
            ..
        } = &entry.op
        else {
            continue;
        };
        if target != ns {
            continue;
        }
        let id = document
            .get("_id")
            .map(ToString::to_string)
            .unwrap_or_default();
        let now = (
            document.get(FIELD).and_then(integer),
            document.get(SEAL_FIELD).cloned(),
        );
        match (sealed.get(&id), now) {
            (Some((number, seal, at)), (now_number, now_seal))
                if now_number != *number || now_seal.as_ref() != Some(seal) =>
            {
                violations.push(format!(
                    "{ns}: document {id} sealed at t{at} holding {number:?} now holds {now_number:?} with seal {now_seal:?} (t{})",
                    entry.ts
                ));
                sealed.remove(&id);
            }
            (None, (number, Some(seal))) => {
                sealed.insert(id, (number, seal, entry.ts));
            }
            _ => {}
        }
    }
    violations
}

/// The ledger entries (and records a void or deletion left in its counter before writing
/// its entry) of `collection`'s counters, as links by counter id: a void's, a deletion's and
/// the issue link the deletion removed.
fn ledger_links(
    node: &Node,
    collection: &str,
    records: &[Document],
) -> BTreeMap<String, Vec<StoredLink>> {
    let mut entries: Vec<Document> = node
        .committed
        .collection(crate::watched::LEDGER)
        .map(|c| c.documents().cloned().collect())
        .unwrap_or_default();
    let written: Vec<Bson> = entries
        .iter()
        .filter_map(|e| e.get("_id").cloned())
        .collect();
    entries.extend(
        records
            .iter()
            .filter(|r| r.get("_id").is_some_and(|id| !written.contains(id)))
            .cloned(),
    );
    let mut links: BTreeMap<String, Vec<StoredLink>> = BTreeMap::new();
    for entry in &entries {
        let Ok(key) = entry.get_document("_id") else {
            continue;
        };
        let (Ok(counter_id), Some(number)) =
            (key.get_str("counter"), key.get("number").and_then(integer))
        else {
            continue;
        };
        if counter_id != collection && !counter_id.starts_with(&format!("{collection}/")) {
            continue;
        }
        let value = json(entry);
        let period = counter_id.split_once('/').map(|(_, p)| p.to_owned());
        let removed = value.get("removed");
        let fields = removed
            .and_then(|r| r.get("fields"))
            .and_then(serde_json::Value::as_object)
            .cloned()
            .unwrap_or_default();
        let kind = if entry.get_str("kind") == Ok("void") {
            LinkKind::Void
        } else {
            LinkKind::Deletion
        };
        let series = links.entry(counter_id.to_owned()).or_default();
        series.push(StoredLink {
            link: Link {
                series: counter_id.to_owned(),
                kind,
                number,
                period: period.clone(),
                fields: fields.clone(),
            },
            seal: value.get("seal").and_then(|s| Seal::read(s).ok()),
        });
        if let Some(removed) = removed {
            series.push(StoredLink {
                link: Link {
                    series: counter_id.to_owned(),
                    kind: LinkKind::Issue,
                    number,
                    period,
                    fields,
                },
                seal: removed.get("seal").and_then(|s| Seal::read(s).ok()),
            });
        }
    }
    links
}

/// The records left in `collection`'s counters (`seal.records`).
fn counter_records(node: &Node, collection: &str) -> Vec<Document> {
    node.committed
        .collection(COUNTERS)
        .map(|c| {
            c.documents()
                .filter(|d| {
                    d.get_str("_id").is_ok_and(|id| {
                        id == collection || id.starts_with(&format!("{collection}/"))
                    })
                })
                .filter_map(|d| {
                    d.get_document("seal")
                        .ok()?
                        .get_array("records")
                        .ok()
                        .cloned()
                })
                .flatten()
                .filter_map(|r| r.as_document().cloned())
                .collect()
        })
        .unwrap_or_default()
}
