//! Strategies shared by the property tests (each test crate uses some of them).
#![allow(dead_code)]

use proptest::prelude::*;
use serde_json::{json, Map, Value};

/// Integers around the edges the core must handle: the i64 limits, zero, ±1, 2^53, small values.
pub fn edge_int() -> impl Strategy<Value = i64> {
    prop_oneof![
        Just(i64::MIN),
        Just(i64::MAX),
        Just(0),
        Just(1),
        Just(-1),
        Just(1 << 53),
        -20i64..20,
        any::<i64>(),
    ]
}

pub fn number() -> impl Strategy<Value = Value> {
    prop_oneof![
        edge_int().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>()
            .prop_map(|f| serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)),
        edge_int().prop_map(|i| json!({"$numberLong": i.to_string()})),
        any::<i32>().prop_map(|i| json!({"$numberInt": i.to_string()})),
        prop_oneof![
            Just("NaN"),
            Just("Infinity"),
            Just("-Infinity"),
            Just("5.0"),
            Just("1e300"),
            Just("x")
        ]
        .prop_map(|s| json!({"$numberDouble": s})),
        ".{0,6}".prop_map(|s| json!({"$numberLong": s})),
    ]
}

pub fn key() -> impl Strategy<Value = String> {
    // The option keys the core knows, and keys of documents, replies and Extended JSON.
    let keys: Vec<&'static str> = mongo_seq_core::SequenceSpec::KEYS
        .into_iter()
        .chain([
            "_id",
            "seq",
            "kind",
            "document",
            "tenantId",
            "a",
            "$oid",
            "$numberLong",
        ])
        .collect();
    prop_oneof![prop::sample::select(keys).prop_map(str::to_owned), ".{0,8}",]
}

pub fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z/%#=.{}:0-9 ]{0,12}",
        ".{0,12}",
        Just("INV-{seq:06}".to_owned()),
        Just("orders".to_owned())
    ]
}

pub fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        number(),
        text().prop_map(Value::String)
    ];
    leaf.prop_recursive(3, 24, 5, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
            prop::collection::vec((key(), inner), 0..6)
                .prop_map(|entries| Value::Object(entries.into_iter().collect::<Map<_, _>>())),
        ]
    })
}
