//! The checks at quiescence, on the settled replica set and the sidecars' metrics.

use std::collections::{BTreeMap, HashMap, HashSet};

use bson::{Bson, Document};
use mongo_seq_sidecar::trigger::Shared;

use super::processes::Sidecars;
use crate::invariants::{check_unique_numbers, integer};
use crate::model::Op;
use crate::watched::{watched, COUNTERS, FIELD, LEDGER, STATE, WATCHED};
use crate::world::World;

/// The checks on the settled replica set: every matching document numbered; no number twice
/// per counter; gapless: `start, start+step, …` in change-stream order, except numbers held by
/// documents that no longer exist; counters never below the largest number in use; a counter's
/// epoch never moves back (a fenced holder's reservation took effect).
pub fn check(world: &World, sidecars: &Sidecars) -> Vec<String> {
    let mut violations = Vec::new();
    world.with(|w| {
        let Some(primary) = w.cluster.primary() else {
            violations.push("no primary after quiescence".to_owned());
            return;
        };
        let node = w.cluster.node(primary);
        let history: Vec<(u64, Op)> = w
            .cluster
            .history(primary)
            .map(|e| (e.ts, e.op.clone()))
            .collect();
        let counters: HashMap<String, i64> = node
            .committed
            .collection(COUNTERS)
            .map(|c| {
                c.documents()
                    .filter_map(|d| {
                        Some((
                            d.get_str("_id").ok()?.to_owned(),
                            d.get("seq").and_then(integer)?,
                        ))
                    })
                    .collect()
            })
            .unwrap_or_default();
        for watched in &WATCHED[..2] {
            let ns = watched.ns();
            let documents: Vec<Document> = node
                .committed
                .collection(&ns)
                .map(|c| c.documents().cloned().collect())
                .unwrap_or_default();
            let mut numbered = Vec::new();
            for d in &documents {
                let id = d.get("_id").cloned().unwrap_or(Bson::Null);
                match d.get(FIELD).and_then(integer) {
                    Some(n) => numbered.push((id, n)),
                    None => violations.push(format!(
                        "{ns}: document {id} has no number after quiescence"
                    )),
                }
            }
            violations.extend(check_unique_numbers(
                &ns,
                numbered
                    .iter()
                    .map(|(id, n)| (watched.collection.to_owned(), *n, id.to_string())),
            ));
            let largest = numbered.iter().map(|(_, n)| *n).max();
            if let Some(largest) = largest {
                let counter = counters.get(watched.collection).copied();
                if counter.map_or(true, |c| c < largest) {
                    violations.push(format!(
                        "counter `{}` holds {counter:?} but {ns} holds number {largest}",
                        watched.collection
                    ));
                }
            }
            if watched.gapless {
                let backfilled_until = w.backfill_scans.get(&ns).copied().unwrap_or(0);
                violations.extend(check_gapless(&ns, &numbered, &history, backfilled_until));
                let lost = history_lost(sidecars, &watched.spec().id);
                if w.config.ledger && lost == 0 {
                    let counter = counters.get(watched.collection).copied().unwrap_or(0);
                    let exempt = not_recorded_deletions(&history, &ns, &watched.spec().id);
                    violations.extend(check_accounted(
                        node,
                        watched.collection,
                        &numbered,
                        counter,
                        &exempt,
                    ));
                    // Every number that left the series left a record: the chain is whole.
                    if exempt.is_empty() {
                        let entries: Vec<&crate::model::state::Entry> =
                            w.cluster.history(primary).collect();
                        violations.extend(crate::sealing::check(node, &entries, watched));
                    }
                }
            }
        }
        if w.config.issuing {
            let backfilled = |ns: &str| w.backfill_scans.get(ns).copied().unwrap_or(0);
            let entries: Vec<&crate::model::state::Entry> = w.cluster.history(primary).collect();
            violations.extend(crate::issuing::check(node, &entries, &counters, backfilled));
            for watched in &WATCHED[2..] {
                violations.extend(crate::sealing::check(node, &entries, watched));
            }
        }
        violations.extend(check_epochs(&history));
        let _ = &sidecars.shared;
    });
    violations
}

/// Gapless: the existing documents hold `1, 2, …` except numbers that documents now gone
/// held; those numbered from the change stream (inserted after the last backfill scan) in the
/// order of their inserts (a backfill numbers in `_id` order: README, guarantees).
fn check_gapless(
    ns: &str,
    numbered: &[(Bson, i64)],
    history: &[(u64, Op)],
    backfilled_until: u64,
) -> Vec<String> {
    let mut violations = Vec::new();
    let existing: HashSet<String> = numbered.iter().map(|(id, _)| id.to_string()).collect();
    let mut inserted_at: HashMap<String, u64> = HashMap::new();
    let mut held_by_gone: HashSet<i64> = HashSet::new();
    for (ts, op) in history {
        if let Op::Put {
            ns: target,
            document,
            insert,
        } = op
        {
            if target != ns {
                continue;
            }
            let id = document
                .get("_id")
                .map(ToString::to_string)
                .unwrap_or_default();
            if *insert {
                inserted_at.insert(id.clone(), *ts);
            }
            if !existing.contains(&id) {
                if let Some(n) = document.get(FIELD).and_then(integer) {
                    held_by_gone.insert(n);
                }
            }
        }
    }
    let mut in_order: Vec<(u64, i64, String)> = numbered
        .iter()
        .map(|(id, n)| {
            let id = id.to_string();
            (inserted_at.get(&id).copied().unwrap_or(0), *n, id)
        })
        .collect();
    in_order.retain(|(ts, _, _)| *ts > backfilled_until);
    in_order.sort();
    for pair in in_order.windows(2) {
        if pair[1].1 <= pair[0].1 {
            violations.push(format!(
                "{ns} (gapless): {} inserted after {} holds {}, not more than {}",
                pair[1].2, pair[0].2, pair[1].1, pair[0].1
            ));
            break;
        }
    }
    let held: HashSet<i64> = numbered.iter().map(|(_, n)| *n).collect();
    if let Some(&largest) = held.iter().max() {
        for n in 1..largest {
            if !held.contains(&n) && !held_by_gone.contains(&n) {
                violations.push(format!(
                    "{ns} (gapless): number {n} is missing, and no document that is gone held it"
                ));
                break;
            }
        }
    }
    violations
}

/// The `history_lost` errors trigger `id` reported in every incarnation.
fn history_lost(sidecars: &Sidecars, id: &str) -> u64 {
    sidecars
        .shared
        .iter()
        .map(|shared| {
            shared
                .metrics
                .errors
                .with_label_values(&[id, "history_lost"])
                .get()
        })
        .sum()
}

/// The numbers of documents of `ns` deleted before trigger `id` first stored a resume token
/// (it stores the stream's first resume point before its first backfill scans: before that, a
/// session that fails watches from now the next time, so those deletions reach no trigger;
/// CONFIG.md, "Deleted documents"), or
/// removed with their collection (dropped, renamed away: no deletion).
fn not_recorded_deletions(history: &[(u64, Op)], ns: &str, id: &str) -> HashSet<i64> {
    let first_token = history.iter().find_map(|(ts, op)| match op {
        Op::Put {
            ns: target,
            document,
            ..
        } if target == STATE
            && document.get_str("_id") == Ok(id)
            && matches!(document.get("token"), Some(Bson::Document(_))) =>
        {
            Some(*ts)
        }
        _ => None,
    });
    let mut held: HashMap<String, i64> = HashMap::new();
    let mut exempt = HashSet::new();
    for (ts, op) in history {
        match op {
            Op::Put {
                ns: target,
                document,
                ..
            } if target == ns => {
                let key = document
                    .get("_id")
                    .map(ToString::to_string)
                    .unwrap_or_default();
                match document.get(FIELD).and_then(integer) {
                    Some(n) => held.insert(key, n),
                    None => held.remove(&key),
                };
            }
            Op::Delete {
                ns: target,
                id: gone,
                ..
            } if target == ns => {
                if let Some(n) = held.remove(&gone.to_string()) {
                    if first_token.map_or(true, |first| *ts <= first) {
                        exempt.insert(n);
                    }
                }
            }
            // A dropped or renamed collection's documents are not deleted documents.
            Op::Drop { ns: target } | Op::Rename { from: target, .. } if target == ns => {
                exempt.extend(held.drain().map(|(_, n)| n));
            }
            Op::DropDatabase { db } if ns.starts_with(&format!("{db}.")) => {
                exempt.extend(held.drain().map(|(_, n)| n));
            }
            _ => {}
        }
    }
    exempt
}

/// The ledger: every number `1..=counter` of the gapless series `counter_id` is held
/// by a document, voided, or recorded as its document's deletion, exactly one of these. Checked
/// where its trigger never lost its stream's history (an oplog truncated past its resume point,
/// a dropped or renamed collection): deletions in lost history are not seen by anyone; and
/// numbers in `exempt` (deleted before the trigger's first stored token) may be unaccounted.
fn check_accounted(
    node: &crate::model::cluster::Node,
    counter_id: &str,
    numbered: &[(Bson, i64)],
    counter: i64,
    exempt: &HashSet<i64>,
) -> Vec<String> {
    let mut ledger: BTreeMap<i64, String> = BTreeMap::new();
    if let Some(entries) = node.committed.collection(LEDGER) {
        for entry in entries.documents() {
            let Ok(key) = entry.get_document("_id") else {
                continue;
            };
            if key.get_str("counter") != Ok(counter_id) {
                continue;
            }
            if let Some(n) = key.get("number").and_then(integer) {
                ledger.insert(n, entry.get_str("kind").unwrap_or("?").to_owned());
            }
        }
    }
    let held: HashMap<i64, String> = numbered
        .iter()
        .map(|(id, n)| (*n, id.to_string()))
        .collect();
    let mut violations = Vec::new();
    for n in 1..=counter {
        match (held.get(&n), ledger.get(&n)) {
            (Some(_), None) | (None, Some(_)) => {}
            (Some(id), Some(kind)) => violations.push(format!(
                "ledger: number {n} of counter `{counter_id}` is held by document {id} and in the ledger ({kind})"
            )),
            (None, None) if exempt.contains(&n) => {}
            (None, None) => violations.push(format!(
                "ledger: number {n} of counter `{counter_id}` (counter {counter}) is neither held by a document, voided nor recorded as deleted"
            )),
        }
    }
    for (n, kind) in ledger.range(counter.saturating_add(1)..) {
        violations.push(format!(
            "ledger: number {n} of counter `{counter_id}` is in the ledger ({kind}) beyond the counter {counter}"
        ));
    }
    violations.truncate(3);
    violations
}

/// A counter's `epoch` never moves back along the history: a holder's reservation only applies
/// while no later holder has stamped the counter.
fn check_epochs(history: &[(u64, Op)]) -> Vec<String> {
    let mut highest: BTreeMap<String, (i64, u64)> = BTreeMap::new();
    let mut violations = Vec::new();
    for (ts, op) in history {
        let Op::Put { ns, document, .. } = op else {
            continue;
        };
        if ns != COUNTERS {
            continue;
        }
        let id = document
            .get("_id")
            .map(ToString::to_string)
            .unwrap_or_default();
        let epoch = document.get("epoch").and_then(integer).unwrap_or(0);
        match highest.get(&id) {
            Some(&(seen, at)) if epoch < seen => {
                violations.push(format!(
                    "counter {id} went back from epoch {seen} (t{at}) to {epoch} (t{ts}): a fenced holder's write took effect"
                ));
            }
            _ => {
                highest.insert(id, (epoch, *ts));
            }
        }
    }
    violations
}

/// The early warning for lost history is fed: once quiet, every trigger's lease holder exports
/// a resume-token age of a few heartbeats at most (`mongo_seq_resume_token_age_seconds`), once
/// a lease holder has settled.
pub fn check_token_age(world: &World, sidecars: &Sidecars, bound_s: f64) -> Vec<String> {
    let now_ms = 1_700_000_000_000 + i64::try_from(world.now_ms()).unwrap_or(i64::MAX);
    let mut violations = Vec::new();
    for watched in watched(world) {
        let id = watched.spec().id;
        let holders: Vec<&Shared> = sidecars
            .running
            .values()
            .filter(|shared| shared.metrics.lease_held.with_label_values(&[&id]).get() == 1)
            .collect();
        if holders.is_empty() && world.with(|w| w.config.sidecars > 0) {
            violations.push(format!(
                "{id}: no running sidecar holds the lease after quiescence"
            ));
        }
        for shared in holders {
            match shared.metrics.token_age.age_secs(&id, now_ms) {
                // A few heartbeats (2 s) and polls, and a clock skewed by up to 2 s: a stuck
                // trigger's age grows without bound instead. (Quiescence waits for a tighter
                // bound, so a holder that just resumed an old token has stored a new one.)
                Some(age) if age <= bound_s => {}
                age => violations.push(format!(
                    "{id}: the lease holder exports a resume-token age of {age:?} s after quiescence"
                )),
            }
        }
    }
    violations
}

/// Invalidations the streams delivered were reported: every one by a `history_lost` error in
/// the metrics of the instance that read it.
pub fn check_reported(world: &World, sidecars: &Sidecars) -> Vec<String> {
    let seen = world.with(|w| w.invalidations_seen);
    let reported: u64 = sidecars
        .shared
        .iter()
        .map(|shared| {
            watched(world)
                .iter()
                .map(|watched| {
                    shared
                        .metrics
                        .errors
                        .with_label_values(&[&watched.spec().id, "history_lost"])
                        .get()
                })
                .sum::<u64>()
        })
        .sum();
    if reported < seen {
        vec![format!(
            "{seen} change-stream invalidations were read but only {reported} reported (errors_total{{kind=\"history_lost\"}})"
        )]
    } else {
        Vec::new()
    }
}
