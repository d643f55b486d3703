//! Sidecars numbering inserted documents in the simulated world, with what a deployment does to
//! them: applications insert, users delete at any moment, the watched collection is dropped
//! (and recreated by the next insert), sidecars crash at any await point and restart (a new
//! incarnation with the same instance id, as a restarted pod), pause past their lease, run with
//! skewed clocks. Two triggers: `orders` (default mode) and `ledger` (gapless).
//!
//! After quiescence the checks read the surviving history ([`check`]).

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use bson::{doc, Bson, Document};
use mongo_seq_core::{VoidNumbers, VoidRequest};
use mongo_seq_sidecar::config::{LeaseSettings, Settings};
use mongo_seq_sidecar::trigger::{Shared, Trigger};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::client::{Client, ClientOptions};
use crate::invariants::{check_unique_numbers, integer};
use crate::model::{Op, Operation};
use crate::sidecar::{Freeze, SimMongo};
use crate::watched::{watched, COUNTERS, DB, FIELD, LEDGER, STATE, WATCHED};
use crate::world::World;

/// The sidecars' settings in the simulation: the product's defaults with a shorter lease (more
/// takeovers per simulated minute) and backoff (quiescence comes sooner).
fn settings(instance_id: &str, batch_size: usize) -> Settings {
    let defaults = Settings::default();
    Settings {
        batch_size,
        heartbeat: Duration::from_secs(2),
        backoff_max: Duration::from_secs(2),
        lease: LeaseSettings {
            instance_id: instance_id.to_owned(),
            ttl: Duration::from_secs(3),
            renew: Duration::from_millis(1000),
            margin: Duration::from_millis(600),
        },
        ..defaults
    }
}

/// The share of sidecar instances whose processes draw an incarnation (twins detected, one
/// stops). 0 for now: with 30% (docs/simulation.md, seeds 9,023,001..) the overlapping holders
/// the lease mutants need became so rare that `unfenced-completion` was not caught in 2,000
/// seeds; at 0 no draw is made and every seed runs as before incarnations.
const INCARNATION_SHARE: f64 = 0.0;

/// One process incarnation of a sidecar: its triggers' tasks.
struct Incarnation {
    shutdown: CancellationToken,
    tasks: Vec<JoinHandle<()>>,
    freeze: Arc<Freeze>,
    /// Cancelled when a trigger stopped the process (`DuplicateInstance`: exit 4).
    exited: CancellationToken,
}

/// The sidecar processes of a schedule: every incarnation's metrics, kept for the checks, and
/// each instance's running incarnation.
#[derive(Default)]
pub struct Sidecars {
    pub shared: Vec<Shared>,
    pub running: BTreeMap<usize, Shared>,
}

/// Starts one incarnation of sidecar `instance` (all triggers) with the process nonce `nonce`
/// (`None`: a version without incarnations, whose restarts reclaim the lease at once).
fn start(
    world: &World,
    instance: usize,
    (incarnation, nonce): (u64, Option<String>),
    batch_size: usize,
) -> (Incarnation, Shared) {
    let id = format!("sidecar{instance}");
    let name = format!("{id}#{incarnation}");
    let (skew, pause_every_s, read_preference) = world.with(|w| {
        let skew = if w.rng.chance(0.5) {
            0
        } else {
            i64::try_from(w.rng.between(0, 4000)).unwrap_or(0) - 2000
        };
        (
            skew,
            w.config.sidecar_pause_every_s,
            w.config.sidecar_read_preference,
        )
    });
    world.note(&name, || {
        format!("started (instance id {id}, clock {skew:+} ms, batch {batch_size}, readPreference {read_preference:?})")
    });
    world.note(&name, || format!("incarnation {nonce:?}"));
    let shared = Shared {
        incarnation: nonce,
        ..Shared::default()
    };
    let (shutdown, exited) = (CancellationToken::new(), CancellationToken::new());
    let freeze = Arc::new(Freeze::default());
    let settings = settings(&id, batch_size);
    let tasks = watched(world)
        .iter()
        .map(|watched| {
            let mongo = SimMongo::new(
                SimMongo::client(world, &name, read_preference),
                watched.target(),
                skew,
                pause_every_s,
                settings.lease.ttl,
                freeze.clone(),
            );
            let mut spec = watched.spec();
            spec.record_deletions &= world.with(|w| w.config.ledger);
            let trigger = Trigger::new(spec, settings.clone(), mongo, &shared);
            let (world, name) = (world.clone(), name.clone());
            let (shutdown, exited) = (shutdown.clone(), exited.clone());
            tokio::spawn(async move {
                // As the binary's server: the process stops (its other triggers gracefully).
                if let Err(e) = trigger.run(shutdown.clone(), false).await {
                    world.note(&name, || format!("exits: {e} ({})", e.code()));
                    exited.cancel();
                    shutdown.cancel();
                }
            })
        })
        .collect();
    (
        Incarnation {
            shutdown,
            tasks,
            freeze,
            exited,
        },
        shared,
    )
}

/// Runs sidecar `instance` until `stop`: crashes and restarts it as the seed says.
pub async fn supervise(
    world: World,
    instance: usize,
    stop: CancellationToken,
    sidecars: std::sync::Arc<std::sync::Mutex<Sidecars>>,
) {
    let batch_size = [1, 3, 20, 1000][usize::try_from(world.between(0, 3)).unwrap_or(0)];
    let mut incarnation_no = 0;
    // Instances without incarnations (a version before them): their replaced-while-frozen
    // incarnations hold leases side by side (fenced), which the twins' rule now prevents.
    let legacy = !world.chance(INCARNATION_SHARE);
    // A random nonce (so either of two twins may be the greater). A restart after a crash
    // keeps it: that is what the product's liveness proof (a restart on the same host or pod
    // finds its predecessor gone, `holderGone`) achieves, which the simulator does not model.
    let draw = |world: &World| {
        (!legacy).then(|| {
            format!(
                "{:08x}.sidecar{instance}",
                world.between(0, u64::from(u32::MAX))
            )
        })
    };
    let mut nonce = draw(&world);
    // Until when (ms) an older incarnation of this instance id ran beside the current one
    // (`u64::MAX`: still runs; 0: never): only then may an incarnation stop as a twin.
    let twin_until = Arc::new(std::sync::atomic::AtomicU64::new(0));
    loop {
        incarnation_no += 1;
        let (incarnation, shared) = start(
            &world,
            instance,
            (incarnation_no, nonce.clone()),
            batch_size,
        );
        {
            let mut sidecars = sidecars.lock().expect("sidecars");
            sidecars.shared.push(shared.clone());
            sidecars.running.insert(instance, shared);
        }
        let crash_every = world.with(|w| w.config.sidecar_crash_every_s);
        let lifetime = if crash_every > 0.0 {
            world.between(200, (crash_every * 2000.0) as u64)
        } else {
            u64::MAX / 4
        };
        let (crashed, exited) = tokio::select! {
            biased;
            () = stop.cancelled() => (false, false),
            () = incarnation.exited.cancelled() => (false, true),
            () = tokio::time::sleep(Duration::from_millis(lifetime)) => (!world.calm(), false),
        };
        let exited = exited
            || (!crashed
                && tokio::select! {
                    biased;
                    () = stop.cancelled() => false,
                    () = incarnation.exited.cancelled() => true,
                });
        let who = format!("sidecar{instance}#{incarnation_no}");
        if exited {
            // Stopped as the twin of an older incarnation still running (exit 4); its
            // orchestrator restarts it.
            let twin_ran_until = twin_until.load(std::sync::atomic::Ordering::SeqCst);
            if twin_ran_until.saturating_add(6_000) < world.now_ms() {
                world.violation(format!(
                    "{who} stopped as a duplicate instance, but no other incarnation of its instance id ran"
                ));
            }
            world.fault("sidecar-exited-as-twin", &who, || {
                "stopped: another process with its instance id holds a lease (DUPLICATE_INSTANCE); restarted".to_owned()
            });
            for task in incarnation.tasks {
                let _ = tokio::time::timeout(Duration::from_secs(15), task).await;
            }
            sidecars.lock().expect("sidecars").running.remove(&instance);
            world.pause(50, 3000).await;
            nonce = draw(&world);
            continue;
        }
        if !crashed {
            // Quiescence: this incarnation runs until the end, then shuts down gracefully (the
            // batch in flight, then the lease released).
            incarnation.shutdown.cancel();
            for task in incarnation.tasks {
                let _ = tokio::time::timeout(Duration::from_secs(15), task).await;
            }
            return;
        }
        if world.chance(0.3) {
            // Frozen (SIGSTOP, a node that stopped responding) and replaced by its orchestrator
            // with a new incarnation of the same instance id: a twin, which finds the lease
            // busy (its holder wakes up before its own deadline) and one of the two stops
            // (DUPLICATE_INSTANCE); a legacy one takes the lease over at once. The old one is
            // killed later.
            let frozen_ms = world.between(50, 1500);
            let until = world.now_ms() + frozen_ms;
            incarnation.freeze.until(until);
            world.fault("sidecar-replaced-while-frozen", &who, || {
                format!("frozen {frozen_ms} ms; a new incarnation with its instance id starts")
            });
            let (killer_world, tasks) = (world.clone(), incarnation.tasks);
            let twin_until = twin_until.clone();
            twin_until.store(u64::MAX, std::sync::atomic::Ordering::SeqCst);
            drop(tokio::spawn(async move {
                // Killed a few seconds after it wakes up, or at quiescence.
                let kill_at =
                    killer_world.now_ms() + killer_world.between(frozen_ms + 500, frozen_ms + 4000);
                while killer_world.now_ms() < kill_at && !killer_world.calm() {
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
                for task in &tasks {
                    task.abort();
                }
                twin_until.store(killer_world.now_ms(), std::sync::atomic::Ordering::SeqCst);
            }));
            nonce = draw(&world);
            continue;
        }
        world.fault("sidecar-crashed", &who, || {
            "killed (SIGKILL): its tasks stop at whatever await point they are".to_owned()
        });
        for task in &incarnation.tasks {
            task.abort();
        }
        sidecars.lock().expect("sidecars").running.remove(&instance);
        world.pause(50, 3000).await;
    }
}

/// An application inserting documents into the watched collections (its own client options).
pub async fn writer(world: World, name: String, options: ClientOptions) {
    let client = Client::new(&world, &name, options);
    let inserts = world.between(20, 80);
    for _ in 0..inserts {
        if world.finished() || world.calm() {
            return;
        }
        let watched = &WATCHED[usize::try_from(world.between(0, 1)).unwrap_or(0)];
        let count = world.between(1, 4);
        let documents: Vec<Document> = (0..count)
            .map(|_| doc! { "_id": format!("{name}-{}", world.next_id()), "by": name.clone() })
            .collect();
        let _ = client
            .run(
                DB,
                Operation::Insert {
                    collection: watched.collection.to_owned(),
                    documents,
                    ordered: true,
                },
                None,
                None,
            )
            .await;
        world.pause(5, 300).await;
    }
}

/// A user deleting documents at any moment; now and then an operator drops a watched
/// collection or renames it away (the next insert recreates it).
pub async fn deleter(world: World) {
    let client = Client::new(&world, "user", ClientOptions::default());
    loop {
        world.pause(100, 1500).await;
        if world.finished() || world.calm() {
            return;
        }
        let watched = &WATCHED[usize::try_from(world.between(0, 1)).unwrap_or(0)];
        let drop_every = world.with(|w| w.config.drop_every_s);
        if drop_every > 0.0 && world.chance(0.8 / drop_every) {
            // Dropped, or renamed away (its documents leave the watched namespace, like a
            // drop, but stay in the database); either way the stream is invalidated.
            let operation = if world.chance(0.5) {
                world.fault("collection-dropped", "user", || {
                    format!("drop {}", watched.ns())
                });
                Operation::Drop {
                    collection: watched.collection.to_owned(),
                }
            } else {
                let to = format!("{}_renamed_{}", watched.collection, world.now_ms());
                world.fault("collection-renamed", "user", || {
                    format!("rename {} → {DB}.{to}", watched.ns())
                });
                Operation::Rename {
                    from: watched.collection.to_owned(),
                    to,
                }
            };
            let _ = client.run(DB, operation, None, None).await;
            continue;
        }
        // Now and then a clerk voids a number of the gapless series: most are
        // refused (held, not issued, recorded as deleted already, an intent pending).
        if world.with(|w| w.config.ledger) && world.chance(0.15) {
            void_one(&world, &client).await;
            continue;
        }
        // Delete one existing document (numbered or not), picked from what the primary has.
        let victim = world.with(|w| {
            let primary = w.cluster.primary()?;
            let collection = w.cluster.node(primary).data.collection(&watched.ns())?;
            let ids: Vec<Bson> = collection
                .documents()
                .filter_map(|d| d.get("_id").cloned())
                .collect();
            w.rng.pick(&ids).cloned()
        });
        if let Some(id) = victim {
            world.fault("document-deleted", "user", || {
                format!("delete {} {{_id: {id}}}", watched.ns())
            });
            let _ = client
                .run(
                    DB,
                    Operation::Delete {
                        collection: watched.collection.to_owned(),
                        filter: doc! { "_id": id },
                        multi: false,
                    },
                    None,
                    None,
                )
                .await;
        }
    }
}

/// The clerk's void of a number `1..=counter` of the gapless `ledger` series (the core's
/// `VoidNumbers`, as the CLI and the package run it).
async fn void_one(world: &World, client: &Client) {
    let gapless = &WATCHED[1];
    let last = world.with(|w| {
        let primary = w.cluster.primary()?;
        let counters = w.cluster.node(primary).data.collection(COUNTERS)?;
        counters
            .documents()
            .find(|d| d.get_str("_id") == Ok(gapless.collection))
            .and_then(|d| d.get("seq").and_then(integer))
    });
    let Some(last) = last.filter(|last| *last >= 1) else {
        return;
    };
    let number = i64::try_from(world.between(1, u64::try_from(last).unwrap_or(1))).unwrap_or(1);
    let request = VoidRequest {
        counter_id: gapless.collection.to_owned(),
        numbers: vec![number],
        field: FIELD.to_owned(),
        reason: "cancelled".to_owned(),
        by: "clerk".to_owned(),
        now_ms: 1_700_000_000_000 + i64::try_from(world.now_ms()).unwrap_or(0),
    };
    let spec = gapless.spec();
    let Ok(plan) = VoidNumbers::new(spec.numbering.sequence(), &request) else {
        return;
    };
    let outcome = crate::executor::run_plan(client, plan, &mut gapless.target()).await;
    world.note("user", || match &outcome {
        Ok(_) => format!("void {}/{number}: voided", gapless.collection),
        Err(e) => format!("void {}/{number}: {e:?}", gapless.collection),
    });
}

/// With the ledger: whether the gapless trigger's stored resume token is past the last deletion
/// of its collection (it read, and so recorded, every deletion; quiescence waits for it).
pub fn deletions_read(world: &World) -> bool {
    world.with(|w| {
        if !w.config.ledger {
            return true;
        }
        let Some(primary) = w.cluster.primary() else {
            return false;
        };
        let gapless = &WATCHED[1];
        let ns = gapless.ns();
        let last = w
            .cluster
            .history(primary)
            .filter(|e| matches!(&e.op, Op::Delete { ns: target, .. } if *target == ns))
            .map(|e| e.ts)
            .max();
        let Some(last) = last else {
            return true;
        };
        let id = gapless.spec().id;
        w.cluster
            .node(primary)
            .committed
            .collection(STATE)
            .and_then(|c| {
                c.documents()
                    .find(|d| d.get_str("_id") == Ok(id.as_str()))
                    .cloned()
            })
            .and_then(|d| d.get_document("token").ok().cloned())
            .and_then(|token| crate::model::stream::Position::from_token(&token).ok())
            .is_some_and(|position| position.ts >= last)
    })
}

/// Whether every document of every watched collection holds a number (on the primary's
/// majority-committed data).
pub fn all_numbered(world: &World) -> bool {
    world.with(|w| {
        let Some(primary) = w.cluster.primary() else {
            return false;
        };
        let node = w.cluster.node(primary);
        WATCHED[..2].iter().all(|watched| {
            node.committed.collection(&watched.ns()).map_or(true, |c| {
                c.documents()
                    .all(|d| d.get(FIELD).and_then(integer).is_some())
            })
        }) && (!w.config.issuing || crate::issuing::all_numbered(node))
    })
}

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
                }
            }
        }
        if w.config.issuing {
            let backfilled = |ns: &str| w.backfill_scans.get(ns).copied().unwrap_or(0);
            let entries: Vec<&crate::model::state::Entry> = w.cluster.history(primary).collect();
            violations.extend(crate::issuing::check(node, &entries, &counters, backfilled));
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
