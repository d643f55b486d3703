//! Application processes using the JS package, driven from Rust against the model: the same
//! core objects and plans the package runs through Wasm (`js/src/sequence.js`,
//! `js/src/sequences.js`): a `BlockCounter` per counter (take → ticket → refill plan →
//! refilled → ready), `InsertNumbered` for numbered inserts (its `take` commands served by the
//! process's own counters), `SetNext`, `SeedFromMax`, `OptimisticInsert`, each run with the same
//! loop (plan → command → reply). Several processes reserve from the same counters
//! concurrently; every number handed to the application goes into the record of numbers issued ([`crate::invariants::Issued`]).

use std::collections::HashMap;

use bson::{doc, Bson, Document};
use mongo_seq_core::error::describe_definition;
use mongo_seq_core::{
    BlockCounter, Command, CounterDefinition, InsertDates, InsertNumbered, OptimisticInsert, Plan,
    Reply, SeedFromMax, SequenceSpec, SetNext, Step, Take,
};
use serde_json::{json, Value};

use crate::client::{Client, ClientOptions};
use crate::executor::{execute, run_plan, to_json, PlanContext, PlanError};
use crate::model::{IndexSpec, Operation};
use crate::world::World;

/// The sequences the processes share: (options, scope values used).
pub fn sequences() -> Vec<(Value, Vec<Option<&'static str>>)> {
    vec![
        (json!({"name": "invoices", "block": 20}), vec![None]),
        (
            json!({"name": "tickets", "start": 1000, "step": -3, "min": -100000}),
            vec![None],
        ),
        (
            json!({"name": "orders", "scope": ["tenant"], "block": 5}),
            vec![Some("acme"), Some("globex")],
        ),
    ]
}

/// The rival's sequence: `invoices` numbered with step 2, another definition than
/// the applications' (step 1). It must be refused wherever they numbered first, and they
/// wherever it did.
pub fn rival_sequence() -> Value {
    json!({"name": "invoices", "block": 20, "step": 2})
}

/// Collections the application writes its numbered documents to, with the unique index the
/// package's README asks for.
pub const NUMBERED: &str = "numbered";
pub const OPTIMISTIC: &str = "optimistic";
/// The package's counters collection (`Sequences(db)` default), in the application's database.
pub const COUNTERS: &str = "app.counters";

/// The unique indexes the application creates before it starts (the user's part).
pub fn setup_indexes() -> Vec<(String, IndexSpec)> {
    vec![(
        NUMBERED.to_owned(),
        IndexSpec {
            name: "n_unique".into(),
            keys: vec![("seqName".into(), 1), ("tenant".into(), 1), ("n".into(), 1)],
            unique: true,
            partial: None,
        },
    )]
}

/// One application process with its `Sequences` object.
pub struct JsProcess {
    pub client: Client,
    specs: Vec<SequenceSpec>,
    scopes: Vec<Vec<Option<&'static str>>>,
    /// The core's counter object per counter id, as `Sequence` keeps them.
    counters: HashMap<String, BlockCounter>,
    /// A rival with other options: it only reserves, and hands its numbers to no one
    /// the checks of [`crate::invariants::Issued`] follow (they are another series' numbers).
    rival: bool,
}

fn scope_document(scope: Option<&str>) -> Option<Value> {
    scope.map(|tenant| json!({ "tenant": tenant }))
}

impl JsProcess {
    pub fn new(world: &World, name: &str, options: ClientOptions) -> Self {
        let (specs, scopes) = sequences()
            .into_iter()
            .map(|(options, scopes)| {
                (
                    SequenceSpec::parse(&options).expect("a valid sequence"),
                    scopes,
                )
            })
            .unzip();
        Self {
            client: Client::new(world, name, options),
            specs,
            scopes,
            counters: HashMap::new(),
            rival: false,
        }
    }

    /// A process numbering `invoices` under another definition ([`rival_sequence`]).
    pub fn rival(world: &World, name: &str, options: ClientOptions) -> Self {
        Self {
            client: Client::new(world, name, options),
            specs: vec![SequenceSpec::parse(&rival_sequence()).expect("a valid sequence")],
            scopes: vec![vec![None]],
            counters: HashMap::new(),
            rival: true,
        }
    }

    fn context(&self) -> PlanContext {
        PlanContext {
            counters: COUNTERS.into(),
            ..PlanContext::default()
        }
    }

    fn name(&self) -> String {
        self.client.name.clone()
    }

    /// `nextMany(count)` of one counter: numbers from the core's `BlockCounter`, which asks for
    /// a refill (a `Reservation` plan) when its block cannot serve them.
    async fn take(
        &mut self,
        spec: usize,
        counter_id: &str,
        count: u64,
    ) -> Result<Vec<i64>, PlanError> {
        let up = self.specs[spec].step() > 0;
        let definition = describe_definition(&CounterDefinition::readable(
            &CounterDefinition::of(&self.specs[spec]).document(),
        ));
        let who = self.name();
        let rival = self.rival;
        if !self.counters.contains_key(counter_id) {
            let counter =
                BlockCounter::new(&self.specs[spec], counter_id).map_err(PlanError::Core)?;
            self.counters.insert(counter_id.to_owned(), counter);
        }
        let mut context = self.context();
        let Self {
            client, counters, ..
        } = self;
        let Some(counter) = counters.get_mut(counter_id) else {
            return Ok(Vec::new());
        };
        let ticket = match counter.take(count).map_err(PlanError::Core)? {
            Take::Numbers(numbers) => return Ok(numbers.values().collect()),
            Take::Ticket(ticket) => ticket,
        };
        loop {
            if let Some(numbers) = counter.ready(ticket) {
                return Ok(numbers.values().collect());
            }
            // No clock: the simulated processes keep their blocks at `block`. Growth under load
            // (`maxBlock`) only changes how many numbers a reservation asks for, which no rule
            // of the server's sees (unit-tested in the core, and through the package and the
            // library); a clock here would move every seed's draws, and with them the seeds
            // that catch the rare mutants (docs/simulation.md).
            let Some(refill) = counter.refill(ticket, None).map_err(PlanError::Core)? else {
                return Err(PlanError::Core(mongo_seq_core::SeqError::UnexpectedReply {
                    reason: "no refill to run and no numbers ready (one caller per process)".into(),
                }));
            };
            let started = client.world.now_ms();
            match run_plan(client, refill.plan, &mut context).await {
                Ok(range) => {
                    client.world.with(|w| {
                        if let Some(v) = w.definitions.reserved(counter_id, &definition, &who) {
                            w.note("CHECK", || format!("VIOLATION {v}"));
                            w.violations.push(v);
                        }
                    });
                    if rival {
                        counter.refilled(refill.id, range);
                        continue;
                    }
                    client.world.with(|w| {
                        if let Some(v) =
                            w.issued
                                .check_reservation(counter_id, started, range.first, up)
                        {
                            w.note("CHECK", || format!("VIOLATION {v}"));
                            w.violations.push(v);
                        }
                    });
                    counter.refilled(refill.id, range);
                }
                Err(error) => {
                    counter.refill_failed(refill.id);
                    return Err(error);
                }
            }
        }
    }

    /// Runs an insert plan: its `take` commands are served by this process's counters (as
    /// `execute.js` serves them from the `Sequence`), every other command by the server.
    async fn run_insert<P: Plan>(
        &mut self,
        spec: usize,
        mut plan: P,
        context: &mut PlanContext,
    ) -> Result<P::Output, PlanError> {
        let up = self.specs[spec].step() > 0;
        let mut step = plan.current_step().map_err(PlanError::Core)?;
        loop {
            let reply = match step {
                Step::Done(output) => return Ok(output),
                Step::Command(Command::Take { counter_id, count }) => {
                    let values = self.take(spec, &counter_id, count).await?;
                    self.hand_out(&counter_id, &values, up);
                    Reply::Numbers { values }
                }
                Step::Command(command) => execute(&self.client, &command, context).await?,
            };
            step = plan.feed(reply).map_err(PlanError::Core)?;
        }
    }

    fn hand_out(&self, counter: &str, numbers: &[i64], up: bool) {
        let who = self.name();
        self.client.world.with(|w| {
            let at = w.now_ms();
            let found = w.issued.hand_out(counter, numbers, up, &who, at);
            let list = numbers
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(",");
            w.note(&who, || format!("handed out {counter}: {list}"));
            for v in found {
                w.note("CHECK", || format!("VIOLATION {v}"));
                w.violations.push(v);
            }
        });
    }

    /// One operation of the application, chosen by the seed; the rival's: `next()` or
    /// `nextMany(n)` of its `invoices`, its numbers handed to no one the checks follow.
    pub async fn operation(&mut self) {
        let world = self.client.world.clone();
        if self.rival {
            let counter_id = self.specs[0].counter_id(None).expect("counter id");
            let count = if world.chance(0.5) {
                1
            } else {
                world.between(2, 30)
            };
            let outcome = self.take(0, &counter_id, count).await;
            let who = self.name();
            match outcome {
                Ok(numbers) => world.note(&who, || format!("done: rival took {numbers:?}")),
                Err(error) => world.note(&who, || format!("failed: {error}")),
            }
            return;
        }
        let spec_index =
            usize::try_from(world.between(0, self.specs.len() as u64 - 1)).unwrap_or(0);
        let scopes = self.scopes[spec_index].clone();
        let scope = scopes[usize::try_from(world.between(0, scopes.len() as u64 - 1)).unwrap_or(0)];
        let spec = self.specs[spec_index].clone();
        let up = spec.step() > 0;
        let counter_id = spec
            .counter_id(scope_document(scope).as_ref())
            .expect("counter id");
        let kind = world.with(|w| w.rng.weighted(&[10, 4, 2, 2, 4, 3]));
        let who = self.name();
        let outcome: Result<String, PlanError> = match kind {
            0 => self.take(spec_index, &counter_id, 1).await.map(|n| {
                self.hand_out(&counter_id, &n, up);
                format!("next() = {n:?}")
            }),
            1 => {
                let count = world.between(2, 40);
                self.take(spec_index, &counter_id, count).await.map(|n| {
                    self.hand_out(&counter_id, &n, up);
                    format!("nextMany({count})")
                })
            }
            2 => {
                // setNext a little past the furthest number handed out (forward only, no force).
                let furthest = world.with(|w| w.issued.furthest_of(&counter_id));
                let base = furthest.unwrap_or(spec.start());
                let next = base.saturating_add(
                    spec.step()
                        .saturating_mul(i64::try_from(world.between(1, 30)).unwrap_or(1)),
                );
                match SetNext::new(&spec, &counter_id, next, false) {
                    Ok(plan) => {
                        let result = run_plan(&self.client, plan, &mut self.context()).await;
                        // The package discards the block after a setNext (a gap, never a repeat).
                        if let Some(counter) = self.counters.get_mut(&counter_id) {
                            counter.discard();
                        }
                        result.map(|o| {
                            let floor = next - spec.step();
                            world.with(|w| {
                                let at = w.now_ms();
                                w.issued.floor(&counter_id, floor, at);
                            });
                            format!("setNext({next}) → {o:?}")
                        })
                    }
                    Err(e) => Err(PlanError::Core(e)),
                }
            }
            3 => {
                // seedFromMax(value): numbers up to `value` exist elsewhere (an import).
                let furthest = world.with(|w| w.issued.furthest_of(&counter_id));
                let value = furthest.unwrap_or(spec.start()).saturating_add(
                    spec.step()
                        .saturating_mul(i64::try_from(world.between(0, 20)).unwrap_or(0)),
                );
                match SeedFromMax::new(&spec, &counter_id, value) {
                    Ok(plan) => {
                        run_plan(&self.client, plan, &mut self.context())
                            .await
                            .map(|state| {
                                world.with(|w| {
                                    let at = w.now_ms();
                                    w.issued.floor(&counter_id, value, at);
                                });
                                format!("seedFromMax({value}) → {state:?}")
                            })
                    }
                    Err(e) => Err(PlanError::Core(e)),
                }
            }
            4 => self.insert_numbered(spec_index, &counter_id, scope).await,
            _ => self.insert_optimistic().await,
        };
        match outcome {
            Ok(what) => world.note(&who, || format!("done: {what}")),
            Err(error) => world.note(&who, || format!("failed: {error}")),
        }
    }

    /// `seqs.insertOne(collection, doc, {sequence, field: "n"})` or `insertMany`: the core's
    /// `InsertNumbered` (numbers from the process's counters, a duplicate key on the number
    /// takes fresh ones).
    async fn insert_numbered(
        &mut self,
        spec: usize,
        _counter_id: &str,
        scope: Option<&str>,
    ) -> Result<String, PlanError> {
        let many = self.client.world.chance(0.3);
        let count = if many {
            self.client.world.between(2, 5)
        } else {
            1
        };
        let documents: Vec<Document> = (0..count)
            .map(|_| {
                let id = self.client.world.next_id();
                let mut document = doc! { "_id": format!("{}-{id}", self.client.name), "seqName": self.specs[spec].name() };
                if let Some(tenant) = scope {
                    document.insert("tenant", tenant);
                }
                document
            })
            .collect();
        let mut context = PlanContext {
            counters: COUNTERS.into(),
            documents: format!("app.{NUMBERED}"),
            document: documents.first().cloned(),
            batch: documents.clone(),
            ..PlanContext::default()
        };
        let json: Vec<Value> = documents.iter().map(to_json).collect();
        let sequence = self.specs[spec].clone();
        let outcome = if many {
            let plan = InsertNumbered::many(
                &sequence,
                "n",
                None,
                count,
                Some(&json),
                &InsertDates::default(),
            )
            .map_err(PlanError::Core)?;
            self.run_insert(spec, plan, &mut context).await?
        } else {
            let plan =
                InsertNumbered::one(&sequence, "n", None, json.first(), &InsertDates::default())
                    .map_err(PlanError::Core)?;
            self.run_insert(spec, plan, &mut context).await?
        };
        Ok(format!("insert numbered {:?}", outcome.values))
    }

    /// `seqs.insertOptimistic(collection, doc)`: the core's optimistic loop on `_id`.
    async fn insert_optimistic(&mut self) -> Result<String, PlanError> {
        let spec = SequenceSpec::parse(&json!({"name": OPTIMISTIC})).map_err(PlanError::Core)?;
        let plan = OptimisticInsert::new(&spec, "_id", None, None).map_err(PlanError::Core)?;
        let mut context = PlanContext {
            counters: COUNTERS.into(),
            documents: format!("app.{OPTIMISTIC}"),
            document: Some(doc! { "by": self.client.name.clone() }),
            ..PlanContext::default()
        };
        let outcome = run_plan(&self.client, plan, &mut context).await?;
        self.hand_out(&format!("{OPTIMISTIC} _id"), &[outcome.value], true);
        Ok(format!("insertOptimistic → {}", outcome.value))
    }
}

/// Creates the application's unique indexes (before anything runs).
pub async fn create_indexes(client: &Client) {
    for (collection, spec) in setup_indexes() {
        let _ = client
            .run(
                "app",
                Operation::CreateIndex { collection, spec },
                None,
                None,
            )
            .await;
    }
}

/// The settled value of every counter, for the final checks.
pub fn counter_values(world: &World) -> HashMap<String, Option<i64>> {
    world.with(|w| {
        let Some(primary) = w.cluster.primary() else {
            return HashMap::new();
        };
        let node = w.cluster.node(primary);
        let mut out = HashMap::new();
        if let Some(counters) = node.committed.collection("app.counters") {
            for document in counters.documents() {
                if let Some(Bson::String(id)) = document.get("_id") {
                    out.insert(
                        id.clone(),
                        document.get("seq").and_then(crate::invariants::integer),
                    );
                }
            }
        }
        // The optimistic collection's "counter" is its largest `_id`.
        if let Some(collection) = node.committed.collection(&format!("app.{OPTIMISTIC}")) {
            let max = collection
                .documents()
                .filter_map(|d| d.get("_id").and_then(crate::invariants::integer))
                .max();
            out.insert(format!("{OPTIMISTIC} _id"), max);
        }
        out
    })
}

/// Documents that must not exist twice with one number (the numbered collection).
pub fn numbered_documents(world: &World) -> Vec<Document> {
    world.with(|w| {
        let primary = w.cluster.primary();
        primary
            .and_then(|p| {
                w.cluster
                    .node(p)
                    .committed
                    .collection(&format!("app.{NUMBERED}"))
                    .map(|c| c.documents().cloned().collect())
            })
            .unwrap_or_default()
    })
}
