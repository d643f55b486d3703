//! One simulated world: the replica set, the seed's random stream, the trace, the record of
//! numbers handed out, and the environment task that replicates and injects the replica set's
//! faults (failovers with rollback, crashes, oplog truncation) at times the seed chooses.
//!
//! Everything runs on one tokio current-thread runtime with the clock paused: time only moves
//! when every task waits, straight to the next timer, so a schedule of minutes runs in
//! milliseconds and the same seed replays the same interleaving.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use tokio::time::Instant;

use crate::invariants::{Definitions, Issued};
use crate::model::Cluster;
use crate::mutants::Mutant;
use crate::rng::SimRng;
use crate::trace::Trace;

/// A write concern as a client sends it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriteConcern {
    W1,
    Majority { wtimeout_ms: Option<u64> },
}

/// Where reads that may leave the primary go (the connection string's `readPreference`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ReadPreference {
    #[default]
    Primary,
    /// A secondary when one is available, else the primary.
    SecondaryPreferred,
}

/// The parameters of one schedule, drawn from its seed.
#[derive(Debug, Clone)]
pub struct Config {
    pub seed: u64,
    pub data_members: usize,
    pub arbiters: usize,
    /// What the deployment applies to writes that name no write concern (MongoDB 5.0+: majority,
    /// except `{w: 1}` with arbiters that leave no data-bearing majority, or when an operator
    /// set it with setDefaultRWConcern; <https://www.mongodb.com/docs/manual/reference/mongodb-defaults/>).
    pub server_default_write: WriteConcern,
    /// Probability that one command attempt meets a wire fault.
    pub wire_fault_rate: f64,
    /// Mean simulated seconds between failovers (0: none).
    pub failover_every_s: f64,
    /// Mean simulated seconds between oplog truncations (0: none).
    pub truncate_every_s: f64,
    /// Mean simulated seconds between secondary crashes (0: none).
    pub crash_every_s: f64,
    /// Sidecar processes (0: none in this schedule).
    pub sidecars: usize,
    /// Mean simulated seconds between crashes of one sidecar process (0: none).
    pub sidecar_crash_every_s: f64,
    /// Mean simulated seconds between a sidecar's pauses past its lease (0: none).
    pub sidecar_pause_every_s: f64,
    /// Mean simulated seconds between drops of a watched collection (0: none).
    pub drop_every_s: f64,
    /// The read preference of the sidecars' connection string.
    pub sidecar_read_preference: ReadPreference,
    /// Documents are drafted and issued, and `on = "match"` triggers number them
    /// (`crate::issuing`).
    pub issuing: bool,
    /// A rival process numbers `invoices` with another step: its reservations and
    /// the others' must never both succeed on one counter (`crate::invariants::Definitions`).
    pub rival: bool,
    /// The ledger: gapless triggers record deleted documents' numbers, a clerk voids
    /// now and then, and the check accounts for every number.
    pub ledger: bool,
    /// The share of sidecar crashes that freeze the process and start a new one with its
    /// instance id beside it (the rest are kills).
    pub replaced_while_frozen: f64,
    /// How long after it wakes a frozen process is killed, drawn in this range (ms).
    pub frozen_killed_after_ms: (u64, u64),
    /// The user's pause between deletions, drawn in this range (ms).
    pub delete_pause_ms: (u64, u64),
    /// The user deletes one of this many newest documents of a collection (`None`: any).
    pub delete_newest: Option<usize>,
    /// The user deletes from the gapless collection only.
    pub delete_gapless_only: bool,
    /// A clerk voids the number of each gapless document the user deletes, at once (before the
    /// trigger records the deletion: the void races the record).
    pub void_after_delete: bool,
    pub mutant: Option<Mutant>,
}

/// What the reads causally after a change event (`afterClusterTime`) cost: how many waited for
/// the member's majority commit point to reach the event, and how long (simulated time).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AnchoredReads {
    pub reads: u64,
    pub waited: u64,
    pub wait_ms: u64,
    pub max_wait_ms: u64,
    /// Of them, served by a secondary (`readPreference=secondaryPreferred`), and waited there.
    pub on_secondary: u64,
    pub waited_on_secondary: u64,
    /// Of the waits, those that ended with MaxTimeMSExpired.
    pub expired: u64,
}

impl AnchoredReads {
    pub fn add(&mut self, other: &AnchoredReads) {
        self.reads += other.reads;
        self.waited += other.waited;
        self.wait_ms += other.wait_ms;
        self.max_wait_ms = self.max_wait_ms.max(other.max_wait_ms);
        self.on_secondary += other.on_secondary;
        self.waited_on_secondary += other.waited_on_secondary;
        self.expired += other.expired;
    }
}

/// A cluster action planned for later (the rest of a failover).
#[derive(Debug, Clone, Copy)]
enum Planned {
    Elect,
    StepDown(usize),
    Heal(usize),
    Restart(usize),
}

/// The shared state of a world.
pub struct Inner {
    pub cluster: Cluster,
    pub rng: SimRng,
    pub trace: Trace,
    pub config: Config,
    pub faults: BTreeMap<&'static str, u64>,
    pub issued: Issued,
    pub definitions: Definitions,
    pub violations: Vec<String>,
    /// Change-stream invalidations the sidecars' streams delivered.
    pub invalidations_seen: u64,
    pub anchored: AnchoredReads,
    /// Per watched namespace, the cluster time of the last backfill page read: documents
    /// inserted until then may have been numbered by a backfill, in `_id` order.
    pub backfill_scans: std::collections::HashMap<String, u64>,
    /// Quiescence: no new faults; everything heals.
    pub calm: bool,
    /// The schedule is over: background tasks stop.
    pub finished: bool,
    planned: Vec<(u64, Planned)>,
    start: Instant,
    next_id: u64,
}

/// A handle on the world (cheap to clone; never held across an `.await`).
#[derive(Clone)]
pub struct World(Arc<Mutex<Inner>>);

impl World {
    pub fn new(config: Config, trace: bool) -> Self {
        let cluster = Cluster::new(config.data_members, config.arbiters);
        let rng = SimRng::new(config.seed);
        Self(Arc::new(Mutex::new(Inner {
            cluster,
            rng,
            trace: Trace::new(trace),
            config,
            faults: BTreeMap::new(),
            issued: Issued::default(),
            definitions: Definitions::default(),
            violations: Vec::new(),
            invalidations_seen: 0,
            anchored: AnchoredReads::default(),
            backfill_scans: std::collections::HashMap::new(),
            calm: false,
            finished: false,
            planned: Vec::new(),
            start: Instant::now(),
            next_id: 0,
        })))
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Runs `f` on the world's state.
    pub fn with<R>(&self, f: impl FnOnce(&mut Inner) -> R) -> R {
        let mut inner = self.lock();
        // What the model writes now, it writes at this wall-clock time.
        inner.cluster.wall_ms = inner.now_ms();
        f(&mut inner)
    }

    pub fn now_ms(&self) -> u64 {
        self.with(|w| w.now_ms())
    }

    /// Notes an event in the trace.
    pub fn note(&self, who: &str, what: impl FnOnce() -> String) {
        self.with(|w| w.note(who, what));
    }

    /// Counts and notes an injected fault.
    pub fn fault(&self, kind: &'static str, who: &str, what: impl FnOnce() -> String) {
        self.with(|w| w.fault(kind, who, what));
    }

    pub fn violation(&self, what: String) {
        self.with(|w| {
            w.note("CHECK", || format!("VIOLATION {what}"));
            w.violations.push(what);
        });
    }

    pub fn mutant(&self) -> Option<Mutant> {
        self.with(|w| w.config.mutant)
    }

    /// A random draw in `low..=high`.
    pub fn between(&self, low: u64, high: u64) -> u64 {
        self.with(|w| w.rng.between(low, high))
    }

    pub fn chance(&self, p: f64) -> bool {
        self.with(|w| w.rng.chance(p))
    }

    /// A fresh number for names and ids.
    pub fn next_id(&self) -> u64 {
        self.with(|w| {
            w.next_id += 1;
            w.next_id
        })
    }

    /// Sleeps a random time in `low..=high` milliseconds of simulated time.
    pub async fn pause(&self, low: u64, high: u64) {
        let ms = self.between(low, high);
        if ms == 0 {
            tokio::task::yield_now().await;
        } else {
            tokio::time::sleep(Duration::from_millis(ms)).await;
        }
    }

    pub fn finished(&self) -> bool {
        self.with(|w| w.finished)
    }

    pub fn calm(&self) -> bool {
        self.with(|w| w.calm)
    }

    /// Stops injecting faults and heals everything (quiescence).
    pub fn calm_down(&self) {
        self.with(|w| {
            w.calm = true;
            w.note("ENV", || {
                "calm: no more faults; every member healed and restarted".into()
            });
            w.settle();
        });
    }

    /// The environment: replication steps and replica-set faults until the schedule ends.
    pub async fn environment(self) {
        loop {
            self.pause(1, 8).await;
            if self.finished() {
                return;
            }
            self.with(Inner::step);
        }
    }
}

impl Inner {
    pub fn now_ms(&self) -> u64 {
        u64::try_from(self.start.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    pub fn note(&mut self, who: &str, what: impl FnOnce() -> String) {
        let ms = self.now_ms();
        self.trace.note(ms, who, what, 1);
    }

    pub fn fault(&mut self, kind: &'static str, who: &str, what: impl FnOnce() -> String) {
        *self.faults.entry(kind).or_default() += 1;
        let ms = self.now_ms();
        self.trace
            .note(ms, who, || format!("FAULT {kind}: {}", what()), 2);
    }

    /// Mean-time-between draws: true with the probability that an event with mean interval
    /// `every_s` happens in `dt_ms`.
    fn due(&mut self, every_s: f64, dt_ms: f64) -> bool {
        every_s > 0.0 && self.rng.chance(dt_ms / (every_s * 1000.0))
    }

    /// One environment step (every few simulated milliseconds).
    fn step(&mut self) {
        let now = self.now_ms();
        // Replication: one secondary copies a few entries.
        let members = self.cluster.nodes.len();
        let member = self.rng.below(members);
        let count = usize::try_from(self.rng.between(1, 6)).unwrap_or(1);
        if let Err(error) = self.cluster.replicate(member, count) {
            self.violations.push(format!("model: {error}"));
        }
        // Planned parts of earlier faults.
        let due: Vec<Planned> = {
            let (due, later): (Vec<_>, Vec<_>) =
                self.planned.drain(..).partition(|(at, _)| *at <= now);
            self.planned = later;
            due.into_iter().map(|(_, p)| p).collect()
        };
        for planned in due {
            self.apply(planned);
        }
        if self.calm {
            return;
        }
        let dt = 4.0;
        let (failover, truncate, crash) = (
            self.config.failover_every_s,
            self.config.truncate_every_s,
            self.config.crash_every_s,
        );
        if self.due(failover, dt) {
            self.failover();
        }
        if self.due(truncate, dt) {
            let member = self.rng.below(members);
            let node = self.cluster.node(member);
            let (commit, through) = (node.commit_ts, node.truncated_through);
            if commit > through {
                self.cluster.truncate_oplog(member, commit);
                self.fault("oplog-truncated", "ENV", || {
                    format!("member {member}'s oplog truncated through t{commit} (was t{through})")
                });
            }
        }
        if self.due(crash, dt) {
            let candidates: Vec<usize> = (0..members)
                .filter(|i| Some(*i) != self.cluster.primary() && self.cluster.node(*i).up)
                .collect();
            if let Some(&member) = self.rng.pick(&candidates) {
                self.cluster.crash(member);
                let back = now + self.rng.between(100, 20_000);
                self.planned.push((back, Planned::Restart(member)));
                self.fault("member-crashed", "ENV", || {
                    format!("member {member} crashed")
                });
            }
        }
    }

    /// The primary fails: crashed, or cut off from the other members (it keeps serving the
    /// clients that reach it until it notices and steps down). The others elect a new primary
    /// after an election timeout; the old one comes back later and rolls back what it alone had.
    fn failover(&mut self) {
        let Some(primary) = self
            .cluster
            .primary()
            .filter(|p| !self.cluster.node(*p).isolated)
        else {
            return;
        };
        let now = self.now_ms();
        let crash = self.rng.chance(0.4);
        if crash {
            self.cluster.crash(primary);
            self.planned.push((
                now + self.rng.between(1_000, 30_000),
                Planned::Restart(primary),
            ));
        } else {
            self.cluster.isolate(primary);
            self.planned.push((
                now + self.rng.between(0, 12_000),
                Planned::StepDown(primary),
            ));
            self.planned.push((
                now + self.rng.between(2_000, 30_000),
                Planned::Heal(primary),
            ));
        }
        self.planned
            .push((now + self.rng.between(200, 12_000), Planned::Elect));
        let unreplicated = {
            let node = self.cluster.node(primary);
            node.oplog.iter().filter(|e| e.ts > node.commit_ts).count()
        };
        self.fault("failover", "ENV", || {
            format!(
                "primary {primary} {} ({unreplicated} entries not majority-committed)",
                if crash {
                    "crashed"
                } else {
                    "cut off from the other members"
                }
            )
        });
    }

    fn apply(&mut self, planned: Planned) {
        match planned {
            Planned::Elect => match self.cluster.primary() {
                Some(p) if !self.cluster.node(p).isolated => {}
                _ => match self.cluster.elect() {
                    Some(winner) => {
                        let term = self.cluster.term;
                        self.note("ENV", || {
                            format!("member {winner} elected primary (term {term})")
                        });
                    }
                    None => {
                        let at = self.now_ms() + 500;
                        self.planned.push((at, Planned::Elect));
                    }
                },
            },
            Planned::StepDown(member) => {
                if self.cluster.node(member).term().is_some() && self.cluster.node(member).isolated
                {
                    self.cluster.step_down(member);
                    self.note("ENV", || {
                        format!("member {member} noticed it lost the majority and stepped down")
                    });
                }
            }
            Planned::Heal(member) => {
                self.cluster.heal(member);
                self.note("ENV", || format!("member {member} reconnected"));
            }
            Planned::Restart(member) => {
                if !self.cluster.node(member).up {
                    self.cluster.restart(member);
                    self.note("ENV", || format!("member {member} restarted"));
                }
            }
        }
    }

    /// Heals and restarts every member, elects a primary if needed, replicates everything.
    pub fn settle(&mut self) {
        for planned in std::mem::take(&mut self.planned) {
            self.apply(planned.1);
        }
        for member in 0..self.cluster.nodes.len() {
            self.cluster.heal(member);
            self.cluster.restart(member);
        }
        if self.cluster.primary().is_none() {
            self.cluster.elect();
        }
        let mut rounds = 0;
        while self.cluster.replicate_all() && rounds < 10 {
            rounds += 1;
        }
        let rolled = self.cluster.rolled_back.len();
        let primary = self.cluster.primary();
        self.note("ENV", || {
            format!("settled: primary {primary:?}, {rolled} entries rolled back in all")
        });
    }
}
