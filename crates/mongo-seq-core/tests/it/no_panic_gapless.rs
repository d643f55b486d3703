//! Property tests for the lease and intent plans: arbitrary inputs and replies never panic, and
//! a completion never assigns a number twice or outside the bounds.

use std::collections::BTreeSet;

use mongo_seq_core::Intent;
use mongo_seq_core::{
    plan_completion, FinishIntent, GaplessReserve, Holds, Lease, LeaseHolder, LeaseRequest, Plan,
    Reply, SequenceSpec, Step,
};
use proptest::prelude::*;
use serde_json::{json, Value};

use crate::common;
use common::edge_int;

fn scalar() -> BoxedStrategy<Value> {
    prop_oneof![
        edge_int().prop_map(Value::from),
        edge_int().prop_map(|i| json!({"$numberLong": i.to_string()})),
        Just(json!(1.5)),
        Just(Value::Null),
        "[a-z]{0,3}".prop_map(Value::from),
    ]
    .boxed()
}

fn document() -> BoxedStrategy<Value> {
    (
        prop::option::of(prop_oneof![Just(json!("c")), scalar()]),
        prop::option::of(scalar()),
        prop::option::of(scalar()),
        prop::option::of(
            prop_oneof![
                scalar(),
                (
                    scalar(),
                    scalar(),
                    prop::collection::vec(scalar(), 0..4),
                    scalar()
                )
                    .prop_map(
                        |(f, c, ids, e)| json!({"first": f, "count": c, "ids": ids, "epoch": e})
                    ),
            ]
            .boxed(),
        ),
        prop::option::of(
            prop_oneof![
                scalar(),
                (
                    prop_oneof![Just(json!("me")), Just(json!("x")), scalar()],
                    scalar(),
                    scalar(),
                    prop::option::of(prop_oneof![Just(json!("p1")), Just(json!("")), scalar()]),
                )
                    .prop_map(|(o, e, x, i)| json!({"owner": o, "epoch": e, "expiresAt": x, "incarnation": i})),
            ]
            .boxed(),
        ),
    )
        .prop_map(|(id, seq, epoch, intent, lease)| {
            let mut map = serde_json::Map::new();
            for (k, v) in [
                ("_id", id),
                ("seq", seq),
                ("epoch", epoch),
                ("intent", intent),
                ("lease", lease),
            ] {
                if let Some(v) = v {
                    map.insert(k.to_owned(), v);
                }
            }
            Value::Object(map)
        })
        .boxed()
}

fn reply() -> BoxedStrategy<Reply> {
    prop_oneof![
        document().prop_map(|document| Reply::Document { document }),
        Just(Reply::None),
        Just(Reply::Inserted),
        Just(Reply::DuplicateKey),
    ]
    .boxed()
}

fn spec() -> impl Strategy<Value = SequenceSpec> {
    (prop_oneof![Just(1i64), Just(-1), Just(3), edge_int()], edge_int(), prop::option::of(edge_int()))
        .prop_filter_map("valid options", |(step, start, max)| {
            let mut options = json!({"name": "c", "step": {"$numberLong": step.to_string()}, "start": {"$numberLong": start.to_string()}});
            if let Some(max) = max {
                options["max"] = json!({"$numberLong": max.to_string()});
            }
            SequenceSpec::parse(&options).ok()
        })
}

fn drive<P: Plan>(mut plan: P, replies: Vec<Reply>) {
    let mut step = plan.current_step();
    for reply in replies {
        match step {
            Ok(Step::Command(_)) => step = plan.feed(reply),
            _ => return,
        }
    }
}

proptest! {
    #[test]
    fn lease_plans_never_panic(now in edge_int(), ttl in edge_int(), held in prop::option::of(edge_int()),
                               min in edge_int(), release in any::<bool>(), gone in prop::option::of(edge_int()),
                               replies in prop::collection::vec(reply(), 0..6)) {
        let holder_gone = gone.map(|epoch| LeaseHolder { owner: "x".into(), epoch });
        let process = gone.map(|pid| json!({ "pid": pid }));
        let incarnation = held.map(|epoch| format!("p{}", epoch % 3));
        let request = LeaseRequest { lease_id: "t".into(), owner: "me".into(), now_ms: now, ttl_ms: ttl, held, min_epoch: min, release, process, holder_gone, incarnation };
        if let Ok(plan) = Lease::new(&request) {
            drive(plan, replies);
        }
    }

    #[test]
    fn gapless_plans_never_panic(spec in spec(), n in 0usize..5, epoch in edge_int(), seq in edge_int(),
                                 replies in prop::collection::vec(reply(), 0..6)) {
        let ids: Vec<Value> = (0..n).map(|i| json!(i)).collect();
        if let Ok(plan) = GaplessReserve::new(&spec, "c", ids.clone(), epoch) {
            drive(plan, replies.clone());
        }
        let intent = Intent { first: seq, count: n as u64, ids, epoch };
        if let Ok(plan) = FinishIntent::new(&spec, "c", &intent, seq, epoch) {
            drive(plan, replies);
        }
    }

    #[test]
    fn completions_assign_each_number_once_within_bounds(spec in spec(), first in edge_int(), n in 1usize..8,
            found in prop::collection::vec((0usize..8, prop::option::of(prop_oneof![edge_int(), -3i64..12])), 0..8),
            taken in prop::collection::vec(-3i64..12, 0..3)) {
        let ids: Vec<Value> = (0..n).map(|i| json!(i)).collect();
        let intent = Intent { first, count: n as u64, ids, epoch: 1 };
        let mut seen = BTreeSet::new();
        // Nothing, a number, or (for -3) a number of another series.
        let found: Vec<(Value, Holds)> = found.into_iter().filter(|(i, _)| seen.insert(*i))
            .map(|(i, v)| (json!(i), match v {
                None => Holds::Nothing,
                Some(-3) => Holds::Elsewhere,
                Some(v) => Holds::Number(v),
            })).collect();
        if let Ok(completion) = plan_completion(&spec, None, &intent, &found, &taken) {
            let numbers: BTreeSet<i64> = completion.assignments.iter().map(|a| a.number).collect();
            prop_assert_eq!(numbers.len(), completion.assignments.len());
            for a in &completion.assignments {
                prop_assert!(!taken.contains(&a.number));
                prop_assert!(spec.min().map_or(true, |m| a.number >= m) && spec.max().map_or(true, |m| a.number <= m));
            }
        }
    }
}
