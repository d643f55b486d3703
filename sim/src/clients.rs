//! Application processes using the JS package, driven from Rust against the model: the same
//! core plans the package runs through Wasm (`js/src/sequence.js`, `js/src/sequences.js`), the
//! same loop (plan → command → reply, [`run_plan`]), the same block bookkeeping (the core's
//! `BlockAllocator`, one refill at a time). Several processes reserve from the same counters
//! concurrently; every number handed to the application goes into the ledger.

use std::collections::HashMap;

use bson::{doc, Bson, Document};
use mongo_seq_core::{
    BlockAllocator, OptimisticInsert, Reservation, SeedFromMax, SequenceSpec, SetNext,
};
use serde_json::{json, Value};

use crate::driver::{Client, ClientOptions, DriverError};
use crate::executor::{run_plan, PlanError, Target};
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
    /// The core's block allocator per counter id, as `Sequence` keeps it.
    allocators: HashMap<String, BlockAllocator>,
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
            allocators: HashMap::new(),
        }
    }

    fn target(&self) -> Target {
        Target {
            counters: COUNTERS.into(),
            ..Target::default()
        }
    }

    fn name(&self) -> String {
        self.client.name.clone()
    }

    /// `nextMany(count)`: from the block, refilled by the core's reservation when dry.
    async fn take(
        &mut self,
        spec: usize,
        counter_id: &str,
        count: u64,
    ) -> Result<Vec<i64>, PlanError> {
        let block = self.specs[spec].block();
        let mut values = Vec::new();
        while (values.len() as u64) < count {
            let allocator = self
                .allocators
                .entry(counter_id.to_owned())
                .or_insert_with(|| BlockAllocator::new(block).expect("block ≥ 1"));
            if let Some(range) = allocator.take(count - values.len() as u64) {
                values.extend(range.iter());
                continue;
            }
            let wanted = count - values.len() as u64;
            let mut request = allocator.refill_request(counter_id, wanted);
            request.min_count = Some(wanted);
            let plan = Reservation::new(&self.specs[spec], &request).map_err(PlanError::Core)?;
            let started = self.client.world.now_ms();
            let range = run_plan(&self.client, plan, &mut self.target()).await?;
            let up = self.specs[spec].step() > 0;
            self.client.world.with(|w| {
                if let Some(v) = w
                    .ledger
                    .check_reservation(counter_id, started, range.first, up)
                {
                    w.note("CHECK", || format!("VIOLATION {v}"));
                    w.violations.push(v);
                }
            });
            if let Some(allocator) = self.allocators.get_mut(counter_id) {
                allocator.refill(range).map_err(PlanError::Core)?;
            }
        }
        Ok(values)
    }

    fn hand_out(&self, counter: &str, numbers: &[i64], up: bool) {
        let who = self.name();
        self.client.world.with(|w| {
            let at = w.now_ms();
            let found = w.ledger.hand_out(counter, numbers, up, &who, at);
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

    /// One operation of the application, chosen by the seed.
    pub async fn operation(&mut self) {
        let world = self.client.world.clone();
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
                let furthest = world.with(|w| {
                    w.ledger
                        .furthest()
                        .into_iter()
                        .find(|(c, _, _)| *c == counter_id)
                        .map(|(_, n, _)| n)
                });
                let base = furthest.unwrap_or(spec.start());
                let next = base.saturating_add(
                    spec.step()
                        .saturating_mul(i64::try_from(world.between(1, 30)).unwrap_or(1)),
                );
                match SetNext::new(&spec, &counter_id, next, false) {
                    Ok(plan) => {
                        let result = run_plan(&self.client, plan, &mut self.target()).await;
                        // The package discards the block after a setNext (a gap, never a repeat).
                        if let Some(allocator) = self.allocators.get_mut(&counter_id) {
                            allocator.discard();
                        }
                        result.map(|o| {
                            let floor = next - spec.step();
                            world.with(|w| {
                                let at = w.now_ms();
                                w.ledger.floor(&counter_id, floor, at);
                            });
                            format!("setNext({next}) → {o:?}")
                        })
                    }
                    Err(e) => Err(PlanError::Core(e)),
                }
            }
            3 => {
                // seedFromMax(value): numbers up to `value` exist elsewhere (an import).
                let furthest = world.with(|w| {
                    w.ledger
                        .furthest()
                        .into_iter()
                        .find(|(c, _, _)| *c == counter_id)
                        .map(|(_, n, _)| n)
                });
                let value = furthest.unwrap_or(spec.start()).saturating_add(
                    spec.step()
                        .saturating_mul(i64::try_from(world.between(0, 20)).unwrap_or(0)),
                );
                match SeedFromMax::new(&spec, &counter_id, value) {
                    Ok(plan) => {
                        run_plan(&self.client, plan, &mut self.target())
                            .await
                            .map(|state| {
                                world.with(|w| {
                                    let at = w.now_ms();
                                    w.ledger.floor(&counter_id, value, at);
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

    /// `seqs.insertOne(collection, doc, {sequence, field: "n"})`: the next number, then the
    /// insert; a duplicate key on the number takes a fresh one (`js/src/sequences.js`).
    async fn insert_numbered(
        &mut self,
        spec: usize,
        counter_id: &str,
        scope: Option<&str>,
    ) -> Result<String, PlanError> {
        let up = self.specs[spec].step() > 0;
        for _ in 0..10 {
            let numbers = self.take(spec, counter_id, 1).await?;
            self.hand_out(counter_id, &numbers, up);
            let n = numbers[0];
            let id = self.client.world.next_id();
            let mut document = doc! { "_id": format!("{}-{id}", self.client.name), "seqName": self.specs[spec].name(), "n": n };
            if let Some(tenant) = scope {
                document.insert("tenant", tenant);
            }
            let insert = Operation::Insert {
                collection: NUMBERED.into(),
                documents: vec![document],
                ordered: true,
            };
            match self.client.run("app", insert, None, None).await {
                Ok(crate::model::Response::Write { write_errors, .. })
                    if write_errors.is_empty() =>
                {
                    return Ok(format!("insertOne numbered {n}"))
                }
                Ok(crate::model::Response::Write { write_errors, .. })
                    if write_errors
                        .iter()
                        .any(|e| e.code == crate::model::error::code::DUPLICATE_KEY) =>
                {
                    continue
                }
                Ok(other) => {
                    return Err(PlanError::Driver(DriverError::Server(
                        crate::model::ServerError {
                            code: 0,
                            name: "Unexpected",
                            message: format!("{other:?}"),
                        },
                    )))
                }
                Err(e) => return Err(PlanError::Driver(e)),
            }
        }
        Ok("insertOne gave up".into())
    }

    /// `seqs.insertOptimistic(collection, doc)`: the core's optimistic loop on `_id`.
    async fn insert_optimistic(&mut self) -> Result<String, PlanError> {
        let spec = SequenceSpec::parse(&json!({"name": OPTIMISTIC})).map_err(PlanError::Core)?;
        let plan = OptimisticInsert::new(&spec, "_id", None, None).map_err(PlanError::Core)?;
        let mut target = Target {
            counters: COUNTERS.into(),
            documents: format!("app.{OPTIMISTIC}"),
            document: Some(doc! { "by": self.client.name.clone() }),
            ..Target::default()
        };
        let outcome = run_plan(&self.client, plan, &mut target).await?;
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
