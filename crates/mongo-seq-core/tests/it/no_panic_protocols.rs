//! Property tests for the sidecar's protocols: batch numbering, gapless groups and completions,
//! lease acquisition and renewal, backfill seeding and counter ids. Arbitrary documents and
//! replies never panic; counter ids parse back to what made them, and only those parse.

use mongo_seq_core::Intent;
use mongo_seq_core::{
    AcquireLease, Assign, ClusterTime, CompleteIntent, CompletePending, CounterKey, LeaseRequest,
    NumberBatch, NumberGapless, NumberingSpec, Plan, RenewLease, Reply, ScopeValue,
    SeedFromExisting, SequenceSpec, Step, WriteConcernError, WriteError, WriteResult,
};
use proptest::prelude::*;
use serde_json::{json, Map, Value};

use crate::common;
use common::{edge_int, json_value, number};

/// Values a document field may hold: numbers of every form, strings, ids, junk.
fn field_value() -> BoxedStrategy<Value> {
    prop_oneof![
        number(),
        "[a-c/%#]{0,3}".prop_map(Value::from),
        Just(json!({"$oid": "65a1b2c3d4e5f60718293a4b"})),
        Just(json!([1])),
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        json_value(),
    ]
    .boxed()
}

fn intent_value() -> BoxedStrategy<Value> {
    prop_oneof![
        field_value(),
        (edge_int(), 0i64..4, prop::collection::vec(field_value(), 0..4), edge_int()).prop_map(
            |(first, count, ids, epoch)| json!({"first": first, "count": count, "ids": ids, "epoch": epoch})
        ),
    ]
    .boxed()
}

/// Documents as any collection may hold them: counters, leases, numbered documents, groups.
fn document() -> BoxedStrategy<Value> {
    let entry = prop_oneof![
        field_value().prop_map(|v| ("_id".to_owned(), v)),
        prop_oneof![
            Just(json!("orders")),
            Just(json!("orders/t=a")),
            Just(json!(1))
        ]
        .prop_map(|v| ("_id".to_owned(), v)),
        field_value().prop_map(|v| ("seq".to_owned(), v)),
        field_value().prop_map(|v| ("epoch".to_owned(), v)),
        field_value().prop_map(|v| ("t".to_owned(), v)),
        field_value().prop_map(|v| ("n".to_owned(), v)),
        intent_value().prop_map(|v| ("intent".to_owned(), v)),
        (field_value(), field_value(), field_value()).prop_map(|(o, e, x)| (
            "lease".to_owned(),
            json!({"owner": o, "epoch": e, "expiresAt": x})
        )),
        prop::collection::btree_map("s[01]", field_value(), 0..3)
            .prop_map(|key| ("_id".to_owned(), json!(key))),
    ];
    prop::collection::vec(entry, 0..6)
        .prop_map(|entries| Value::Object(entries.into_iter().collect::<Map<_, _>>()))
        .boxed()
}

fn write_result() -> BoxedStrategy<Reply> {
    let error = (
        prop_oneof![0u64..4, any::<u64>()],
        prop_oneof![Just(11000i64), Just(121), any::<i64>()],
    )
        .prop_map(|(index, code)| WriteError {
            index,
            code,
            errmsg: "e".to_owned(),
        });
    (
        prop_oneof![0u64..4, any::<u64>()],
        prop_oneof![0u64..4, any::<u64>()],
        prop::collection::vec(error, 0..3),
        prop::option::of(any::<i64>().prop_map(|code| WriteConcernError {
            code,
            errmsg: "w".to_owned(),
        })),
        prop::option::of((any::<u32>(), any::<u32>())),
    )
        .prop_map(|(n, n_modified, write_errors, write_concern_error, time)| {
            Reply::WriteResult(WriteResult {
                n,
                n_modified,
                write_errors,
                write_concern_error,
                operation_time: time.and_then(|(t, i)| ClusterTime::new(t, i)),
            })
        })
        .boxed()
}

fn reply() -> BoxedStrategy<Reply> {
    prop_oneof![
        Just(Reply::None),
        Just(Reply::Inserted),
        Just(Reply::DuplicateKey),
        document().prop_map(|document| Reply::Document { document }),
        prop::collection::vec(document(), 0..4)
            .prop_map(|documents| Reply::Documents { documents }),
        write_result(),
        prop::collection::vec(
            prop_oneof![
                "[0-9]{4}-[0-9]{2}-[0-9]{2}",
                Just("2026-01-01".to_owned()),
                ".{0,12}"
            ],
            0..4
        )
        .prop_map(|dates| Reply::LocalDates { dates }),
    ]
    .boxed()
}

/// A periodic numbering on match (usually valid), with or without a date field.
fn dated_numbering() -> impl Strategy<Value = NumberingSpec> {
    (
        prop::sample::select(vec!["yearly", "monthly", "daily"]),
        0i64..14,
        any::<bool>(),
        any::<bool>(),
        prop_oneof![
            Just(json!({"status": "issued"})),
            Just(json!({})),
            json_value()
        ],
    )
        .prop_filter_map(
            "valid numbering",
            |(reset, year_start, scoped, dated, condition)| {
                let mut options = json!({"name": "inv", "reset": reset, "format": "{yyyy}-{seq}"});
                if reset == "yearly" {
                    options["yearStart"] = json!(year_start);
                }
                if scoped {
                    options["scope"] = json!(["t"]);
                }
                let spec = SequenceSpec::parse(&options).ok()?;
                let numbering = NumberingSpec::new(spec, "n", Some("code"), false)
                    .ok()?
                    .with_condition(condition)
                    .ok()?;
                if dated {
                    numbering.with_date_field("at").ok()
                } else {
                    Some(numbering)
                }
            },
        )
}

/// A document as a periodic batch sees it: an `_id`, maybe a scope value, maybe a date.
fn dated_document() -> BoxedStrategy<Value> {
    prop_oneof![
        document(),
        (any::<i32>(), edge_int(), ".{0,4}").prop_map(|(id, ms, t)| json!({
            "_id": id, "t": t, "at": {"$date": {"$numberLong": ms.to_string()}}
        })),
        ("[0-9a-f]{24}", ".{0,30}")
            .prop_map(|(hex, at)| json!({"_id": {"$oid": hex}, "at": {"$date": at}})),
    ]
    .boxed()
}

fn numbering() -> impl Strategy<Value = NumberingSpec> {
    (
        prop_oneof![Just(1i64), Just(-1), Just(3), edge_int()],
        edge_int(),
        prop::option::of(edge_int()),
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
    )
        .prop_filter_map("valid numbering", |(step, start, max, scoped, formatted, gapless)| {
            let mut options = json!({"name": "orders", "step": {"$numberLong": step.to_string()},
                                     "start": {"$numberLong": start.to_string()}});
            if let Some(max) = max {
                options["max"] = json!({"$numberLong": max.to_string()});
            }
            if scoped {
                options["scope"] = json!(["t"]);
            }
            if formatted {
                options["format"] = json!("N{seq:04}");
            }
            let spec = SequenceSpec::parse(&options).ok()?;
            NumberingSpec::new(spec, "n", formatted.then_some("code"), gapless).ok()
        })
}

/// Feeds replies while the plan asks for commands, draining notes on the way.
/// No anchor, or any timestamp (zero included: the core must not trust its callers).
fn cluster_time() -> impl Strategy<Value = Option<ClusterTime>> {
    prop::option::of((any::<u32>(), any::<u32>()).prop_map(|(t, i)| ClusterTime { t, i }))
}

fn drive<P: Plan>(mut plan: P, replies: Vec<Reply>) {
    let _ = plan.drain_notes();
    let mut step = plan.current_step();
    for reply in replies {
        match step {
            Ok(Step::Command(_)) => {
                step = plan.feed(reply);
                let _ = plan.drain_notes();
            }
            _ => return,
        }
    }
}

fn request(held: Option<i64>, now: i64, ttl: i64, min: i64) -> LeaseRequest {
    LeaseRequest {
        lease_id: "t".into(),
        owner: "me".into(),
        now_ms: now,
        ttl_ms: ttl,
        held,
        min_epoch: min,
        release: false,
        process: None,
        holder_gone: None,
        incarnation: None,
    }
}

/// A scope value the core can encode, and the document value that makes it.
fn scope_value() -> BoxedStrategy<Value> {
    prop_oneof![
        ".{0,8}".prop_map(Value::from),
        "[%#/=a]{0,4}".prop_map(Value::from),
        edge_int().prop_map(|i| json!({"$numberLong": i.to_string()})),
        any::<i32>().prop_map(Value::from),
        any::<bool>().prop_map(Value::from),
        "[0-9a-fA-F]{24}".prop_map(|hex| json!({"$oid": hex})),
    ]
    .boxed()
}

/// Pieces counter-id look-alikes are made of.
fn id_like() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop_oneof![
            Just("o"),
            Just("/"),
            Just("="),
            Just("#"),
            Just("%"),
            Just("%2F"),
            Just("%2f"),
            Just("%25"),
            Just("%23"),
            Just("oid:"),
            Just("65a1b2c3d4e5f60718293a4b"),
            Just("true"),
            Just("-"),
            Just("0"),
            Just("12"),
            Just("t"),
            Just("."),
            Just("é"),
            Just("\n"),
            Just(" "),
        ],
        0..10,
    )
    .prop_map(|pieces| pieces.concat())
}

proptest! {
    #[test]
    fn periodic_batches_and_assigns_never_panic(
        numbering in dated_numbering(),
        documents in prop::collection::vec(dated_document(), 0..6),
        times in prop::collection::vec(prop::option::of(edge_int()), 0..6),
        epoch in edge_int(), verify in any::<bool>(),
        now in prop::option::of(edge_int()),
        sort in prop::option::of(prop_oneof![Just(json!({"at": -1})), json_value()]),
        replies in prop::collection::vec(reply(), 0..14),
    ) {
        if let Ok(plan) = NumberBatch::dated(&numbering, documents, &times, epoch, verify, None) {
            drive(plan, replies.clone());
        }
        if let Ok(plan) = Assign::new(&numbering, sort.as_ref(), now) {
            drive(plan, replies);
        }
    }

    #[test]
    fn batches_never_panic(numbering in numbering(), documents in prop::collection::vec(document(), 0..6),
                           epoch in edge_int(), verify in any::<bool>(), after in cluster_time(),
                           replies in prop::collection::vec(reply(), 0..12)) {
        if let Ok(plan) = NumberBatch::new(&numbering, documents, epoch, verify, after) {
            drive(plan, replies);
        }
    }

    #[test]
    fn gapless_groups_and_completions_never_panic(numbering in numbering(), n in 0usize..4, epoch in edge_int(),
                                                  first in edge_int(), taken in prop::collection::vec(edge_int(), 0..3),
                                                  after in cluster_time(),
                                                  replies in prop::collection::vec(reply(), 0..12)) {
        let ids: Vec<Value> = (0..n).map(|i| json!(i)).collect();
        for counter_id in ["orders", "orders/t=a"] {
            if let Ok(plan) = NumberGapless::new(&numbering, counter_id, ids.clone(), epoch, after) {
                drive(plan, replies.clone());
            }
            let intent = Intent { first, count: n as u64, ids: ids.clone(), epoch };
            if let Ok(plan) = CompleteIntent::new(&numbering, counter_id, &intent, taken.clone(), epoch, after) {
                drive(plan, replies.clone());
            }
        }
        if let Ok(plan) = CompletePending::new(&numbering, epoch) {
            drive(plan, replies.clone());
        }
        if let Ok(plan) = SeedFromExisting::new(&numbering) {
            drive(plan, replies);
        }
    }

    #[test]
    fn lease_acquisition_and_renewal_never_panic(now in edge_int(), ttl in edge_int(), held in edge_int(), min in edge_int(),
                                                 replies in prop::collection::vec(reply(), 0..8)) {
        if let Ok(plan) = AcquireLease::new(&request(None, now, ttl, min), "orders") {
            drive(plan, replies.clone());
        }
        if let Ok(plan) = RenewLease::new(&request(Some(held), now, ttl, min)) {
            drive(plan, replies);
        }
    }

    #[test]
    fn write_replies_never_panic(n in json_value(), modified in json_value(), errors in json_value(), concern in json_value()) {
        let _ = Reply::from_json(&json!({"kind": "writeResult", "n": n, "nModified": modified,
                                         "writeErrors": errors, "writeConcernError": concern}));
        let _ = Reply::from_json(&json!({"kind": "writeResult", "writeErrors": [{"index": n, "code": modified, "errmsg": concern}]}));
        let _ = Reply::from_json(&json!({"kind": "documents", "documents": errors}));
    }

    #[test]
    fn counter_ids_parse_back_to_what_made_them(values in prop::collection::vec(scope_value(), 0..4)) {
        let fields: Vec<String> = ["t", "year", "c.r", "x.y.z"].iter().take(values.len()).map(|f| (*f).to_owned()).collect();
        let mut document = json!({"t": null, "year": null, "c": {}, "x": {"y": {}}});
        for (field, value) in fields.iter().zip(&values) {
            match field.as_str() {
                "c.r" => document["c"]["r"] = value.clone(),
                "x.y.z" => document["x"]["y"]["z"] = value.clone(),
                other => document[other] = value.clone(),
            }
        }
        let spec = SequenceSpec::parse(&json!({"name": "app.orders", "scope": fields})).expect("spec");
        if let Ok(id) = spec.counter_id(Some(&document)) {
            let key = CounterKey::parse(&id).expect("an id the core wrote parses");
            prop_assert_eq!(key.id(), Ok(id.clone()));
            prop_assert_eq!(key.name.as_str(), "app.orders");
            prop_assert!(key.belongs_to(&spec).is_ok());
            for ((field, parsed), value) in key.scope.iter().zip(&values) {
                prop_assert!(fields.contains(field));
                let expected = match value {
                    Value::String(text) => ScopeValue::String(text.clone()),
                    Value::Bool(flag) => ScopeValue::Boolean(*flag),
                    Value::Object(map) if map.contains_key("$oid") => ScopeValue::ObjectId(
                        map["$oid"].as_str().unwrap_or_default().to_ascii_lowercase()),
                    number => ScopeValue::Integer(mongo_seq_core::ejson::read_i64(number).expect("integer")),
                };
                prop_assert_eq!(parsed, &expected);
                // The parsed value names the same counter as the document's.
                let mut single = json!({});
                single["v"] = parsed.to_json();
                let one = SequenceSpec::parse(&json!({"name": "o", "scope": ["v"]})).expect("spec");
                let mut original = json!({});
                original["v"] = value.clone();
                prop_assert_eq!(one.counter_id(Some(&single)), one.counter_id(Some(&original)));
            }
        }
    }

    #[test]
    fn only_canonical_ids_parse(text in prop_oneof![id_like(), ".{0,16}"]) {
        if let Ok(key) = CounterKey::parse(&text) {
            prop_assert_eq!(key.id(), Ok(text));
        }
    }
}
