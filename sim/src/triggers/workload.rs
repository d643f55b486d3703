//! What the sidecars' watched collections go through: applications insert, users delete at any
//! moment, an operator drops a watched collection or renames it away (the next insert recreates
//! it), a clerk voids numbers of the gapless series.

use bson::{doc, Bson, Document};
use mongo_seq_core::{VoidNumbers, VoidRequest};

use crate::client::{Client, ClientOptions};
use crate::invariants::integer;
use crate::model::Operation;
use crate::watched::{COUNTERS, DB, FIELD, WATCHED};
use crate::world::World;

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
    let (pause_ms, newest, gapless_only, void_after_delete) = world.with(|w| {
        let c = &w.config;
        (
            c.delete_pause_ms,
            c.delete_newest,
            c.delete_gapless_only,
            c.void_after_delete,
        )
    });
    loop {
        world.pause(pause_ms.0, pause_ms.1).await;
        if world.finished() || world.calm() {
            return;
        }
        let drawn = usize::try_from(world.between(0, 1)).unwrap_or(0);
        let watched = if gapless_only {
            WATCHED
                .iter()
                .find(|w| w.gapless)
                .unwrap_or(&WATCHED[drawn])
        } else {
            &WATCHED[drawn]
        };
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
            let mut ids: Vec<Bson> = collection
                .documents()
                .filter_map(|d| d.get("_id").cloned())
                .collect();
            if let Some(newest) = newest {
                ids.drain(..ids.len().saturating_sub(newest));
            }
            w.rng.pick(&ids).cloned()
        });
        if let Some(id) = victim {
            world.fault("document-deleted", "user", || {
                format!("delete {} {{_id: {id}}}", watched.ns())
            });
            let held = world.with(|w| {
                let primary = w.cluster.primary()?;
                let collection = w.cluster.node(primary).data.collection(&watched.ns())?;
                let document = collection.documents().find(|d| d.get("_id") == Some(&id))?;
                document.get(FIELD).and_then(integer)
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
            if let Some(number) = held.filter(|_| watched.gapless && void_after_delete) {
                void_number(&world, &client, number).await;
            }
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
    void_number(world, client, number).await;
}

/// The clerk's void of `number` of the gapless `ledger` series.
async fn void_number(world: &World, client: &Client, number: i64) {
    let gapless = &WATCHED[1];
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
    let outcome = crate::executor::run_plan(client, plan, &mut gapless.context()).await;
    world.note("user", || match &outcome {
        Ok(_) => format!("void {}/{number}: voided", gapless.collection),
        Err(e) => format!("void {}/{number}: {e:?}", gapless.collection),
    });
}
