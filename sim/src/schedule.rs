//! One schedule: a world built from a seed, its actors run to the end under faults, then
//! quiescence (every member healed, no new faults), then the invariants.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::client::{Client, ClientOptions};
use crate::clients::{self, JsProcess};
use crate::focus::Focus;
use crate::invariants::{check_counters, check_unique_numbers, integer};
use crate::model::ReadLevel;
use crate::mutants::Mutant;
use crate::rng::SimRng;
use crate::triggers::{self, Sidecars};
use crate::world::{AnchoredReads, Config, World, WriteConcern};

/// How long (simulated) the sidecars get after quiescence to number every document.
const QUIESCENCE_MS: u64 = 120_000;

/// What one schedule did.
#[derive(Debug, Clone)]
pub struct Outcome {
    pub seed: u64,
    pub mutant: Option<Mutant>,
    pub focus: Option<Focus>,
    pub faults: u64,
    pub violations: Vec<String>,
    /// A hash of every traced event: a replay of the seed must give the same.
    pub fingerprint: u64,
    pub trace: Vec<String>,
    pub summary: String,
    /// The reads causally after a change event, and their waits.
    pub anchored: AnchoredReads,
}

/// Draws the schedule's deployment, fault rates and client options from its seed (`focus`
/// then overrides some rates; every draw stays the seed's).
fn draw_config(
    seed: u64,
    mutant: Option<Mutant>,
    focus: Option<Focus>,
) -> (Config, Vec<ClientOptions>) {
    let mut rng = SimRng::new(seed ^ 0x5eed_c0f1_6000_0000);
    let (data_members, arbiters) = match rng.weighted(&[6, 2, 2]) {
        0 => (3, 0),
        1 => (5, 0),
        _ => (2, 1),
    };
    // MongoDB 5.0+: majority, unless arbiters leave no data-bearing majority (then w:1); an
    // operator may also have set w:1 as the cluster-wide default.
    let server_default_write = if arbiters > 0 || rng.chance(0.3) {
        WriteConcern::W1
    } else {
        WriteConcern::Majority { wtimeout_ms: None }
    };
    let config = Config {
        seed,
        data_members,
        arbiters,
        server_default_write,
        wire_fault_rate: [0.0, 0.01, 0.03, 0.08][rng.below(4)],
        failover_every_s: [0.0, 20.0, 8.0, 3.0][rng.below(4)],
        truncate_every_s: [0.0, 0.0, 30.0, 5.0][rng.below(4)],
        crash_every_s: [0.0, 15.0][rng.below(2)],
        sidecars: [0, 1, 2, 3][rng.weighted(&[1, 2, 4, 3])],
        sidecar_crash_every_s: [0.0, 20.0, 6.0][rng.below(3)],
        sidecar_pause_every_s: [0.0, 30.0, 8.0][rng.below(3)],
        drop_every_s: [0.0, 0.0, 40.0][rng.below(3)],
        sidecar_read_preference: crate::world::ReadPreference::Primary,
        issuing: false,
        rival: false,
        ledger: false,
        replaced_while_frozen: 0.3,
        frozen_killed_after_ms: (500, 4000),
        delete_pause_ms: (100, 1500),
        delete_newest: None,
        delete_gapless_only: false,
        void_after_delete: false,
        mutant,
    };
    let processes = rng.between(2, 4);
    let clients = (0..processes)
        .map(|_| ClientOptions {
            write_concern: match rng.weighted(&[6, 2, 2]) {
                0 => None,
                1 => Some(WriteConcern::W1),
                _ => Some(WriteConcern::Majority { wtimeout_ms: None }),
            },
            read_concern: match rng.weighted(&[6, 2, 2]) {
                0 => None,
                1 => Some(ReadLevel::Local),
                _ => Some(ReadLevel::Majority),
            },
            retry_writes: rng.chance(0.85),
            retry_reads: true,
            // The package sends every read with `primary` (none is causally anchored).
            read_preference: crate::world::ReadPreference::Primary,
        })
        .collect();
    // Drawn last, so a schedule's other draws stay what they were before it existed. Some
    // operators' connection strings say `readPreference=secondaryPreferred`.
    let mut config = config;
    if rng.chance(0.25) {
        config.sidecar_read_preference = crate::world::ReadPreference::SecondaryPreferred;
    }
    // Drawn after it, for the same reason (numbering on issue). The mutants known
    // before are hunted on the workload that caught them (their seeds stay theirs: the issue
    // triggers' reads and writes would reshuffle every later draw of a schedule), numbering on
    // issue's own mutant on schedules that issue.
    let earlier_mutant = mutant.is_some_and(|m| m != Mutant::UnconditionedNumbering);
    config.issuing = !earlier_mutant && rng.chance(0.6);
    // Drawn after it, for the same reason: a rival process with other options,
    // on schedules of no earlier mutant (theirs stay as they were) and of its own.
    let earlier = mutant.is_some_and(|m| m != Mutant::IgnoreDefinition);
    config.rival = !earlier && rng.chance(0.4);
    // Drawn after it (the ledger), for the same reason: the mutants known before keep
    // their seeds on the workload that caught them (recording deletions sends commands that
    // reshuffle a schedule's later draws), the ledger's own mutant runs where it is on.
    let before_ledger = mutant.is_some_and(|m| m != Mutant::SkipDeletionRecord);
    config.ledger = !before_ledger && rng.chance(0.6);
    if let Some(focus) = focus {
        focus.apply(&mut config);
    }
    (config, clients)
}

/// Runs the schedule of `seed`.
pub fn run(seed: u64, mutant: Option<Mutant>, trace: bool) -> Outcome {
    run_focused(seed, mutant, None, trace)
}

/// Runs the schedule of `seed` with its rates drawn toward `focus`.
pub fn run_focused(
    seed: u64,
    mutant: Option<Mutant>,
    focus: Option<Focus>,
    trace: bool,
) -> Outcome {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .expect("a current-thread runtime");
    // The mutant is switched on for this thread only (one schedule at a time per thread).
    crate::mutants::switch(mutant);
    drop(mongo_seq_core::protocol::conformance::drain());
    let outcome = runtime.block_on(run_world(seed, mutant, focus, trace));
    crate::mutants::switch(None);
    outcome
}

async fn run_world(
    seed: u64,
    mutant: Option<Mutant>,
    focus: Option<Focus>,
    trace: bool,
) -> Outcome {
    let (config, client_options) = draw_config(seed, mutant, focus);
    let summary = format!(
        "{}+{} members, default {:?}, wire faults {}, failover every {}s, truncation every {}s, clients {}, sidecars {} (crash every {}s, pause every {}s, {:?}), drop every {}s, issuing {}, rival {}, ledger {}",
        config.data_members,
        config.arbiters,
        config.server_default_write,
        config.wire_fault_rate,
        config.failover_every_s,
        config.truncate_every_s,
        client_options.len(),
        config.sidecars,
        config.sidecar_crash_every_s,
        config.sidecar_pause_every_s,
        config.sidecar_read_preference,
        config.drop_every_s,
        config.issuing,
        config.rival,
        config.ledger,
    );
    let summary = match focus {
        Some(focus) => format!("{summary}, focus {focus}"),
        None => summary,
    };
    let sidecar_count = config.sidecars;
    let world = World::new(config, trace);
    world.note("SIM", || format!("seed {seed}: {summary}"));
    let environment = tokio::spawn(world.clone().environment());

    let setup = Client::new(&world, "setup", ClientOptions::default());
    clients::create_indexes(&setup).await;

    // The sidecars, the applications inserting what they number, a user deleting.
    let sidecars = Arc::new(Mutex::new(Sidecars::default()));
    let stop_sidecars = CancellationToken::new();
    let supervisors: Vec<_> = (0..sidecar_count)
        .map(|i| {
            tokio::spawn(triggers::supervise(
                world.clone(),
                i,
                stop_sidecars.clone(),
                sidecars.clone(),
            ))
        })
        .collect();
    let mut tasks = Vec::new();
    if sidecar_count > 0 {
        for (index, options) in client_options.iter().enumerate() {
            tasks.push(tokio::spawn(triggers::writer(
                world.clone(),
                format!("writer{index}"),
                *options,
            )));
        }
        if world.with(|w| w.config.issuing) {
            tasks.push(tokio::spawn(crate::issuing::clerk(
                world.clone(),
                "clerk".to_owned(),
            )));
        }
        // It stops at quiescence, not awaited.
        drop(tokio::spawn(triggers::deleter(world.clone())));
    }
    for (index, options) in client_options.into_iter().enumerate() {
        let world = world.clone();
        tasks.push(tokio::spawn(async move {
            let name = format!("app{index}");
            world.note(&name, || format!("client options {options:?}"));
            let mut process = JsProcess::new(&world, &name, options);
            let operations = world.between(10, 40);
            for _ in 0..operations {
                if world.finished() {
                    break;
                }
                process.operation().await;
                world.pause(0, 400).await;
            }
        }));
    }
    if world.with(|w| w.config.rival) {
        let world = world.clone();
        tasks.push(tokio::spawn(async move {
            let mut rival = JsProcess::rival(&world, "rival", ClientOptions::default());
            for _ in 0..world.between(5, 20) {
                if world.finished() {
                    break;
                }
                rival.operation().await;
                world.pause(0, 600).await;
            }
        }));
    }
    for task in tasks {
        let _ = task.await;
    }
    world.calm_down();
    tokio::time::sleep(Duration::from_millis(100)).await;
    world.with(|w| w.settle());
    if sidecar_count > 0 {
        // Quiescence for the sidecars: they run until every document is numbered (bounded).
        let deadline = world.now_ms() + QUIESCENCE_MS;
        let settled = |world: &World| {
            triggers::all_numbered(world)
                && triggers::deletions_read(world)
                && triggers::check_token_age(world, &sidecars.lock().expect("sidecars"), 6.0)
                    .is_empty()
        };
        // Settled must still hold a moment later (the batch in flight finished): a holder whose
        // lease was just taken by a sidecar that then crashed, or that paused past its lease
        // right before calm, shows settled once and then no holder until a lease expires and
        // someone takes it over. Only what still holds at the bound is a violation.
        let ages = loop {
            while !settled(&world) && world.now_ms() < deadline {
                tokio::time::sleep(Duration::from_millis(500)).await;
            }
            tokio::time::sleep(Duration::from_secs(1)).await;
            let ages = triggers::check_token_age(&world, &sidecars.lock().expect("sidecars"), 20.0);
            if ages.is_empty() || world.now_ms() >= deadline {
                break ages;
            }
        };
        for v in ages {
            world.violation(v);
        }
        stop_sidecars.cancel();
        for supervisor in supervisors {
            let _ = supervisor.await;
        }
        world.with(|w| w.settle());
    }

    let counters = clients::counter_values(&world);
    let mut violations = world.with(|w| check_counters(&w.issued, &counters));
    violations.extend(check_unique_numbers(
        clients::NUMBERED,
        clients::numbered_documents(&world).iter().filter_map(|d| {
            let counter = match d.get_str("tenant") {
                Ok(tenant) => format!("{}/tenant={tenant}", d.get_str("seqName").ok()?),
                Err(_) => d.get_str("seqName").ok()?.to_owned(),
            };
            let n = d.get("n").and_then(integer)?;
            Some((
                counter,
                n,
                d.get("_id").map(ToString::to_string).unwrap_or_default(),
            ))
        }),
    ));
    if sidecar_count > 0 {
        let sidecars = sidecars.lock().expect("sidecars");
        violations.extend(triggers::check(&world, &sidecars));
        violations.extend(triggers::check_reported(&world, &sidecars));
    }
    // The rules the core's plans were checked against as they ran (every plan of the schedule).
    let findings = mongo_seq_core::protocol::conformance::drain();
    if let Some(first) = findings.first() {
        violations.push(format!(
            "protocol rule broken {} times, first: {first}",
            findings.len()
        ));
    }
    for v in violations {
        world.violation(v);
    }
    world.with(|w| w.finished = true);
    let _ = environment.await;
    world.with(|w| Outcome {
        seed,
        mutant,
        focus,
        faults: w.faults.values().sum(),
        violations: w.violations.clone(),
        fingerprint: w.trace.fingerprint,
        trace: w.trace.lines().to_vec(),
        summary: format!("{summary}; {} numbers handed out", w.issued.count()),
        anchored: w.anchored,
    })
}
