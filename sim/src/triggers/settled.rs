//! Whether the sidecars have caught up, so that quiescence can end and the checks read the
//! surviving history: every watched document numbered, every deletion read.

use crate::invariants::integer;
use crate::model::Op;
use crate::watched::{FIELD, STATE, WATCHED};
use crate::world::World;

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
