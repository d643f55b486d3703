//! The sidecar processes of a schedule: each instance runs its triggers (one per watched
//! collection) in an incarnation, crashes at any await point and restarts (a new incarnation
//! with the same instance id, as a restarted pod), pauses past its lease, is frozen and replaced
//! by a twin, and runs with a skewed clock.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use mongo_seq_sidecar::config::{LeaseSettings, Settings};
use mongo_seq_sidecar::trigger::{Shared, Trigger};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::sidecar::{Freeze, SimMongo};
use crate::watched::watched;
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
                watched.context(),
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
        if world.chance(world.with(|w| w.config.replaced_while_frozen)) {
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
                let (after_min, after_max) = killer_world.with(|w| w.config.frozen_killed_after_ms);
                let kill_at = killer_world.now_ms()
                    + killer_world.between(frozen_ms + after_min, frozen_ms + after_max);
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
