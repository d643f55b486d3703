//! Property tests: arbitrary options, documents, replies and arguments never panic, and a
//! few invariants hold (options round-trip, scoped ids are injective, ranges stay in bounds).

use mongo_seq_core::{
    audit, format_seq, BlockAllocator, CurrentValue, OptimisticInsert, Plan, Reply, Reservation,
    ReserveRequest, ReservedRange, SeedFromMax, SequenceSpec, SetNext, Step,
};
use proptest::prelude::*;
use serde_json::{json, Map, Value};

mod common;
use common::{edge_int, json_value, key, number, text};

/// Options that are usually valid, with random values in every slot.
fn options() -> impl Strategy<Value = Value> {
    (
        prop_oneof![Just(json!("orders")), json_value()],
        prop::option::of(prop_oneof![edge_int().prop_map(Value::from), json_value()]),
        prop::option::of(prop_oneof![edge_int().prop_map(Value::from), json_value()]),
        prop::option::of(edge_int()),
        prop::option::of(edge_int()),
        prop::option::of(prop_oneof![(1u64..100).prop_map(Value::from), json_value()]),
        prop::option::of(prop_oneof![Just(json!(["tenantId"])), json_value()]),
        prop::option::of(prop_oneof![text().prop_map(Value::String), json_value()]),
    )
        .prop_map(|(name, start, step, min, max, block, scope, format)| {
            let mut map = Map::new();
            map.insert("name".into(), name);
            let mut put = |k: &str, v: Option<Value>| {
                if let Some(v) = v {
                    map.insert(k.into(), v);
                }
            };
            put("start", start);
            put("step", step);
            put("min", min.map(Value::from));
            put("max", max.map(Value::from));
            put("block", block);
            put("scope", scope);
            put("format", format);
            Value::Object(map)
        })
}

fn reply(counter_id: &'static str) -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(json!({"kind": "none"})),
        Just(json!({"kind": "inserted"})),
        Just(json!({"kind": "duplicateKey"})),
        number().prop_map(
            move |seq| json!({"kind": "document", "document": {"_id": counter_id, "seq": seq}})
        ),
        json_value().prop_map(|document| json!({"kind": "document", "document": document})),
        json_value(),
    ]
}

/// Feeds replies until the plan finishes; checks outputs with `check`.
fn drive<P: Plan>(mut plan: P, replies: &[Value], mut check: impl FnMut(&P::Output)) {
    let mut step = plan.start();
    for raw in replies {
        match step {
            Ok(Step::Command(_)) => {}
            Ok(Step::Done(ref output)) => {
                check(output);
                return;
            }
            Err(_) => return,
        }
        step = match Reply::from_json(raw) {
            Ok(reply) => plan.feed(reply),
            Err(_) => continue,
        };
    }
}

fn fixed_specs() -> Vec<SequenceSpec> {
    [
        json!({"name": "orders"}),
        json!({"name": "orders", "start": 1000, "max": 1100, "block": 7}),
        json!({"name": "orders", "start": 10, "step": -3, "min": -10}),
        json!({"name": "orders", "start": {"$numberLong": "9223372036854775800"}, "step": 2}),
        json!({"name": "orders", "format": "N{seq:03}"}),
    ]
    .iter()
    .map(|raw| SequenceSpec::parse(raw).expect("fixed spec"))
    .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn options_never_panic_and_round_trip(raw in prop_oneof![options(), json_value()]) {
        if let Ok(spec) = SequenceSpec::parse(&raw) {
            let normalized = serde_json::to_value(&spec).expect("serializable");
            prop_assert_eq!(SequenceSpec::parse(&normalized), Ok(spec));
        }
    }

    #[test]
    fn plans_never_panic(
        spec_index in 0usize..5,
        count in prop_oneof![1u64..20, any::<u64>()],
        min_count in prop::option::of(0u64..20),
        value in edge_int(),
        force in any::<bool>(),
        replies in prop::collection::vec(reply("orders"), 0..14),
        document in prop::option::of(json_value()),
    ) {
        let spec = fixed_specs().swap_remove(spec_index);
        let mut request = ReserveRequest::new("orders", count);
        request.min_count = min_count;
        if let Ok(plan) = Reservation::new(&spec, &request) {
            drive(plan, &replies, |range: &ReservedRange| {
                assert!(range.validate().is_ok());
                assert!(spec.min().map_or(true, |min| range.first.min(range.last) >= min));
                assert!(spec.max().map_or(true, |max| range.first.max(range.last) <= max));
                assert!(range.count <= count && range.count >= min_count.unwrap_or(count).max(1));
            });
        }
        if let Ok(plan) = CurrentValue::new(&spec, "orders") { drive(plan, &replies, |_| {}); }
        if let Ok(plan) = SetNext::new(&spec, "orders", value, force) { drive(plan, &replies, |_| {}); }
        if let Ok(plan) = SeedFromMax::new(&spec, "orders", value) { drive(plan, &replies, |_| {}); }
        if let Ok(plan) = OptimisticInsert::new(&spec, "_id", document.as_ref(), Some("code")) { drive(plan, &replies, |_| {}); }
    }

    #[test]
    fn any_request_json_is_handled(raw in json_value()) {
        let _ = ReserveRequest::from_json(&raw);
        let _ = Reply::from_json(&raw);
    }

    #[test]
    fn counter_ids_never_panic(document in json_value(), scope in prop::collection::vec(key(), 0..3)) {
        let raw = json!({"name": "orders", "scope": scope});
        if let Ok(spec) = SequenceSpec::parse(&raw) {
            let _ = spec.counter_id(Some(&document));
        }
    }

    #[test]
    fn scoped_ids_are_injective(
        a in prop_oneof![text().prop_map(Value::String), edge_int().prop_map(Value::from)],
        b in prop_oneof![text().prop_map(Value::String), edge_int().prop_map(Value::from)],
        c in text(),
    ) {
        let spec = SequenceSpec::parse(&json!({"name": "o", "scope": ["x", "y"]})).expect("spec");
        let id1 = spec.counter_id(Some(&json!({"x": a, "y": c})));
        let id2 = spec.counter_id(Some(&json!({"x": b, "y": c})));
        if let (Ok(id1), Ok(id2)) = (id1, id2) {
            prop_assert_eq!(id1 == id2, a == b);
        }
    }

    #[test]
    fn formats_never_panic(template in text(), value in edge_int()) {
        let _ = format_seq(&template, value);
    }

    #[test]
    fn audits_never_panic(
        numbers in prop::collection::vec(prop_oneof![number(), json_value()], 0..40),
        start in edge_int(),
        step in edge_int(),
        counter in prop::option::of(edge_int()),
    ) {
        if let Ok(report) = audit(&numbers, start, step, counter) {
            prop_assert!(report.gaps.len() <= 10 && report.duplicates.len() <= 10);
            prop_assert!(report.distinct <= report.total);
        }
    }

    #[test]
    fn block_allocator_never_panics(
        block in 0u64..5,
        ranges in prop::collection::vec((edge_int(), edge_int(), edge_int(), 0u64..5), 0..6),
        takes in prop::collection::vec(0u64..4, 0..12),
    ) {
        if let Ok(mut allocator) = BlockAllocator::new(block) {
            for ((first, last, step, count), take) in ranges.into_iter().zip(takes) {
                let _ = allocator.refill(ReservedRange { first, last, step, count });
                let _ = allocator.take(take);
                let _ = allocator.next();
                let _ = allocator.refill_request("orders", take);
            }
        }
    }
}
