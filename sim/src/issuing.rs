//! Numbering on issue in the simulated world: two `on = "match"` triggers number the
//! documents matching `{status: "issued"}` in series that reset in `Europe/Paris` — `invoices`
//! (default mode, yearly, placed by the document's `issuedAt`, formatted `INV-{yyyy}-{seq:06}`)
//! and `credits` (gapless, monthly, placed by the event's `wallTime`). The model's wall clock
//! crosses New Year in Paris six seconds into every schedule
//! ([`crate::model::stream::WALL_ORIGIN_MS`]), so sidecars crashing, pausing and catching up
//! number documents of both years. A clerk drafts documents, issues them, takes some back to
//! draft (they stop matching), edits them; change streams bring update events with
//! `updateLookup`'s newer or stale (but never older than the event) documents.
//!
//! Checks at quiescence ([`check`]): every document matching is numbered; a document got its
//! first number only while it matched (the write's condition: mutant
//! `unconditioned-numbering`); once numbered, a document keeps a number (default mode: the same
//! one); each number in its period's series (the right counter, period field and formatted id);
//! no number twice in a series; each counter at or past its series' largest number; gapless
//! series gapless (a missing number was held by a document now gone) and in the order documents
//! came to match.

use std::collections::{BTreeMap, HashMap, HashSet};

use bson::{doc, Bson, Document};

use crate::client::{Client, ClientOptions};
use crate::invariants::{check_unique_numbers, integer};
use crate::model::cluster::Node;
use crate::model::exec::Statement;
use crate::model::state::Entry;
use crate::model::stream::WALL_ORIGIN_MS;
use crate::model::{Op, Operation};
use crate::watched::{Watched, DB, FIELD, WATCHED};
use crate::world::World;

/// 2027-01-01T00:00:00+01:00: the first instant of 2027 in Paris.
const NEW_YEAR_MS: i64 = 1_798_758_000_000;
const PERIOD_FIELD: &str = "seqPeriod";

fn issued(document: &Document) -> bool {
    document.get_str("status") == Ok("issued")
}

fn issue_triggers() -> &'static [Watched] {
    &WATCHED[2..]
}

/// The period text of an instant (ms) for a series that resets `reset` in Paris: the model's
/// instants are within minutes of New Year 2027, so one comparison tells December 2026 from
/// January 2027 (an oracle independent of the product's time-zone code).
fn period_of(reset: &str, ms: i64) -> &'static str {
    match (reset, ms < NEW_YEAR_MS) {
        ("yearly", true) => "2026",
        ("yearly", false) => "2027",
        (_, true) => "2026-12",
        (_, false) => "2027-01",
    }
}

/// A clerk: drafts documents in the issue triggers' collections (a few already issued), issues
/// drafts, takes issued documents back to draft, edits them (update events that change nothing
/// the match reads), until calm.
pub async fn clerk(world: World, name: String) {
    let client = Client::new(&world, &name, ClientOptions::default());
    let steps = world.between(30, 90);
    for _ in 0..steps {
        if world.finished() || world.calm() {
            return;
        }
        let watched = &issue_triggers()[usize::try_from(world.between(0, 1)).unwrap_or(0)];
        let operation = match world.between(0, 9) {
            0..=2 => {
                let count = world.between(1, 3);
                let now = i64::try_from(world.now_ms()).unwrap_or(0);
                let documents = (0..count)
                    .map(|_| {
                        // Dated around the writer's now: some December's, some January's.
                        let at = WALL_ORIGIN_MS
                            + now
                            + i64::try_from(world.between(0, 4000)).unwrap_or(0)
                            - 2000;
                        let status = if world.chance(0.25) {
                            "issued"
                        } else {
                            "draft"
                        };
                        doc! {
                            "_id": object_id(WALL_ORIGIN_MS + now, world.next_id()),
                            "status": status,
                            "issuedAt": bson::DateTime::from_millis(at),
                        }
                    })
                    .collect();
                Operation::Insert {
                    collection: watched.collection.to_owned(),
                    documents,
                    ordered: true,
                }
            }
            step => {
                let (filter, update) = match step {
                    3..=5 => (
                        doc! { "status": "draft" },
                        doc! { "$set": { "status": "issued" } },
                    ),
                    6..=7 => (
                        doc! { "status": "issued" },
                        doc! { "$set": { "status": "draft" } },
                    ),
                    _ => (
                        doc! {},
                        doc! { "$set": { "total": i64::try_from(world.between(1, 999)).unwrap_or(0) } },
                    ),
                };
                let Some(id) = pick(&world, watched, &filter) else {
                    world.pause(5, 100).await;
                    continue;
                };
                let mut filter = filter;
                filter.insert("_id", id);
                Operation::Update {
                    collection: watched.collection.to_owned(),
                    statements: vec![Statement {
                        filter,
                        update,
                        multi: false,
                        upsert: false,
                    }],
                    ordered: true,
                }
            }
        };
        let _ = client.run(DB, operation, None, None).await;
        world.pause(5, 250).await;
    }
}

/// An ObjectId as a driver makes it at `ms` (its first four bytes: the seconds), unique by
/// `n`: a backfill places a document without `date_field` by it.
fn object_id(ms: i64, n: u64) -> bson::oid::ObjectId {
    let secs = u32::try_from(ms / 1000).unwrap_or(u32::MAX);
    let mut bytes = [0u8; 12];
    bytes[..4].copy_from_slice(&secs.to_be_bytes());
    bytes[4..].copy_from_slice(&n.to_be_bytes());
    bson::oid::ObjectId::from_bytes(bytes)
}

/// A random document of `watched` matching `filter`, picked from what the primary has.
fn pick(world: &World, watched: &Watched, filter: &Document) -> Option<Bson> {
    world.with(|w| {
        let primary = w.cluster.primary()?;
        let collection = w.cluster.node(primary).data.collection(&watched.ns())?;
        let ids: Vec<Bson> = collection
            .documents()
            .filter(|d| filter.iter().all(|(k, v)| d.get(k) == Some(v)))
            .filter_map(|d| d.get("_id").cloned())
            .collect();
        w.rng.pick(&ids).cloned()
    })
}

/// Whether every issued document of the issue triggers' collections holds a number (on
/// `node`'s majority-committed data).
pub fn all_numbered(node: &Node) -> bool {
    issue_triggers().iter().all(|watched| {
        node.committed.collection(&watched.ns()).map_or(true, |c| {
            c.documents()
                .filter(|d| issued(d))
                .all(|d| d.get(FIELD).and_then(integer).is_some())
        })
    })
}

/// One document's life in the history: its versions `(ts, wall ms, document)` in order (`None`:
/// deleted, or its collection dropped or renamed away).
type Versions = Vec<(u64, u64, Option<Document>)>;

fn versions<'a>(ns: &str, entries: impl Iterator<Item = &'a Entry>) -> BTreeMap<String, Versions> {
    let mut lives: BTreeMap<String, Versions> = BTreeMap::new();
    let (db, _) = ns.split_once('.').unwrap_or((ns, ""));
    for entry in entries {
        match &entry.op {
            Op::Put {
                ns: target,
                document,
                ..
            } if target == ns => {
                let id = document
                    .get("_id")
                    .map(ToString::to_string)
                    .unwrap_or_default();
                lives.entry(id).or_default().push((
                    entry.ts,
                    entry.wall_ms,
                    Some(document.clone()),
                ));
            }
            Op::Delete { ns: target, id, .. } if target == ns => {
                lives
                    .entry(id.to_string())
                    .or_default()
                    .push((entry.ts, entry.wall_ms, None));
            }
            Op::Drop { ns: target } | Op::Rename { from: target, .. } if target == ns => {
                for life in lives.values_mut() {
                    life.push((entry.ts, entry.wall_ms, None));
                }
            }
            Op::DropDatabase { db: dropped } if dropped == db => {
                for life in lives.values_mut() {
                    life.push((entry.ts, entry.wall_ms, None));
                }
            }
            _ => {}
        }
    }
    lives
}

fn number(document: &Document) -> Option<i64> {
    document.get(FIELD).and_then(integer)
}

/// The checks on the settled replica set (see the module docs). `entries`: the primary's
/// history; `counters`: counter id → `seq`; `backfilled(ns)`: the time of the last backfill scan.
pub fn check(
    node: &Node,
    entries: &[&Entry],
    counters: &HashMap<String, i64>,
    backfilled: impl Fn(&str) -> u64,
) -> Vec<String> {
    let mut violations = Vec::new();
    for watched in issue_triggers() {
        let Some(issue) = &watched.issue else {
            continue;
        };
        let ns = watched.ns();
        let lives = versions(&ns, entries.iter().copied());
        let documents: Vec<Document> = node
            .committed
            .collection(&ns)
            .map(|c| c.documents().cloned().collect())
            .unwrap_or_default();
        let existing: HashSet<String> = documents
            .iter()
            .filter_map(|d| d.get("_id").map(ToString::to_string))
            .collect();
        // Every document matching is numbered, in its period's series.
        let mut numbered: Vec<(String, i64, String)> = Vec::new();
        for d in &documents {
            let id = d.get("_id").map(ToString::to_string).unwrap_or_default();
            let Some(n) = number(d) else {
                if issued(d) {
                    violations.push(format!(
                        "{ns}: issued document {id} has no number after quiescence"
                    ));
                }
                continue;
            };
            let period = d.get_str(PERIOD_FIELD).unwrap_or("").to_owned();
            let life = lives.get(&id).map(Vec::as_slice).unwrap_or_default();
            // Where its first number was written: the version before must have matched.
            let first = life
                .iter()
                .position(|(_, _, v)| v.as_ref().and_then(number).is_some());
            match first {
                Some(at) if at > 0 && life[at - 1].2.as_ref().is_some_and(issued) => {}
                Some(at) => violations.push(format!(
                    "{ns}: document {id} got number {n} at t{} while it did not match {{status: \"issued\"}} (a draft numbered)",
                    life[at].0
                )),
                None => violations.push(format!("{ns}: document {id} holds {n}, never written")),
            }
            // Its period: the issuedAt's, or the time of one of its writes up to the numbering
            // (the event that delivered it, through a lookup newer than that event).
            let expected: Vec<&str> = match issue.date_field {
                Some(field) => d
                    .get_datetime(field)
                    .map(|at| vec![period_of(issue.reset, at.timestamp_millis())])
                    .unwrap_or_default(),
                None => life[..=first.unwrap_or(0).min(life.len().saturating_sub(1))]
                    .iter()
                    .map(|(_, wall, _)| {
                        period_of(
                            issue.reset,
                            WALL_ORIGIN_MS + i64::try_from(*wall).unwrap_or(0),
                        )
                    })
                    // A backfill places it by its ObjectId's time.
                    .chain(
                        d.get_object_id("_id")
                            .ok()
                            .map(|oid| period_of(issue.reset, oid.timestamp().timestamp_millis())),
                    )
                    .collect(),
            };
            if !expected.contains(&period.as_str()) {
                violations.push(format!(
                    "{ns}: document {id} holds {n} of period {period:?}, not of its period ({expected:?})"
                ));
            }
            if let Some((format, field)) = issue.format {
                let want = format
                    .replace("{yyyy}", &period)
                    .replace("{seq:06}", &format!("{n:06}"));
                if d.get_str(field) != Ok(want.as_str()) {
                    violations.push(format!(
                        "{ns}: document {id} holds {n} formatted {:?}, not {want:?}",
                        d.get(field)
                    ));
                }
            }
            // Numbers are kept: once numbered, every later version holds one (default mode: the same).
            if let Some(at) = first {
                let kept = life[at..]
                    .iter()
                    .filter_map(|(_, _, v)| v.as_ref())
                    .all(|v| {
                        number(v).is_some_and(|m| {
                            watched.gapless || Some(m) == life[at].2.as_ref().and_then(number)
                        })
                    });
                if !kept {
                    violations.push(format!(
                        "{ns}: document {id} lost or changed its number {n} after it got it"
                    ));
                }
            }
            numbered.push((period, n, id));
        }
        violations.extend(check_unique_numbers(
            &ns,
            numbered.iter().map(|(period, n, id)| {
                (format!("{}/{period}", watched.collection), *n, id.clone())
            }),
        ));
        let mut largest: BTreeMap<&str, i64> = BTreeMap::new();
        for (period, n, _) in &numbered {
            let entry = largest.entry(period.as_str()).or_insert(*n);
            *entry = (*entry).max(*n);
        }
        for (period, n) in &largest {
            let id = format!("{}/{period}", watched.collection);
            if counters.get(&id).map_or(true, |c| c < n) {
                violations.push(format!(
                    "counter `{id}` holds {:?} but {ns} holds number {n}",
                    counters.get(&id)
                ));
            }
        }
        if watched.gapless {
            violations.extend(check_gapless(
                &ns,
                &numbered,
                &lives,
                &existing,
                backfilled(&ns),
            ));
        }
    }
    violations
}

/// Gapless, per period: the numbers held run `1, 2, …` but for numbers documents now gone held;
/// and a document that came to match before another was inserted holds the smaller number
/// (unless a backfill numbered it, in `_id` order). "Came to match": the write that started the
/// stretch in which it matched until it got its number.
fn check_gapless(
    ns: &str,
    numbered: &[(String, i64, String)],
    lives: &BTreeMap<String, Versions>,
    existing: &HashSet<String>,
    backfilled_until: u64,
) -> Vec<String> {
    let mut violations = Vec::new();
    let mut held_by_gone: HashSet<(String, i64)> = HashSet::new();
    for (id, life) in lives {
        if existing.contains(id) {
            continue;
        }
        for document in life.iter().filter_map(|(_, _, v)| v.as_ref()) {
            if let (Some(n), Ok(period)) = (number(document), document.get_str(PERIOD_FIELD)) {
                held_by_gone.insert((period.to_owned(), n));
            }
        }
    }
    let mut by_period: BTreeMap<&str, Vec<(u64, i64, &str)>> = BTreeMap::new();
    for (period, n, id) in numbered {
        let life = lives.get(id).map(Vec::as_slice).unwrap_or_default();
        let first = life
            .iter()
            .position(|(_, _, v)| v.as_ref().and_then(number).is_some())
            .unwrap_or(0);
        let came = life[..first]
            .iter()
            .rposition(|(_, _, v)| !v.as_ref().is_some_and(issued))
            .map_or(0, |before| before + 1);
        let came_at = life.get(came).map_or(0, |(ts, _, _)| *ts);
        by_period.entry(period).or_default().push((came_at, *n, id));
    }
    for (period, docs) in &by_period {
        let inserted: HashMap<&str, u64> = docs
            .iter()
            .map(|(_, _, id)| {
                (
                    *id,
                    lives
                        .get(*id)
                        .and_then(|l| l.first())
                        .map_or(0, |(ts, _, _)| *ts),
                )
            })
            .collect();
        'pairs: for a in docs.iter().filter(|(came, _, _)| *came > backfilled_until) {
            for b in docs {
                if inserted[b.2] > a.0 && b.1 < a.1 {
                    violations.push(format!(
                        "{ns} (gapless, {period}): {} inserted at t{} after {} came to match at t{} holds {}, less than {}",
                        b.2, inserted[b.2], a.2, a.0, b.1, a.1
                    ));
                    break 'pairs;
                }
            }
        }
        let held: HashSet<i64> = docs.iter().map(|(_, n, _)| *n).collect();
        if let Some(&top) = held.iter().max() {
            if let Some(n) = (1..top)
                .find(|n| !held.contains(n) && !held_by_gone.contains(&((*period).to_owned(), *n)))
            {
                violations.push(format!(
                    "{ns} (gapless, {period}): number {n} is missing, and no document that is gone held it"
                ));
            }
        }
    }
    violations
}
