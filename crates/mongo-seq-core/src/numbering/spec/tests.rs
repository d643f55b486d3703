use super::*;

#[test]
fn document_fields_are_id_scope_and_field_none_inside_another() {
    let spec = |options: Value, field: &str| {
        NumberingSpec::new(SequenceSpec::parse(&options).unwrap(), field, None, false).unwrap()
    };
    assert_eq!(
        spec(json!({ "name": "n" }), "seq").document_fields(),
        ["_id", "seq"]
    );
    assert_eq!(
        spec(
            json!({ "name": "n", "scope": ["tenant", "a.b"] }),
            "meta.seq"
        )
        .document_fields(),
        ["_id", "a.b", "meta.seq", "tenant"]
    );
    // A scope inside another scope field, `_id` as a scope, a prefix that is not a parent.
    assert_eq!(
        spec(
            json!({ "name": "n", "scope": ["a", "a.b", "_id", "ab"] }),
            "a.seq"
        )
        .document_fields(),
        ["_id", "a", "ab"]
    );
}

fn numbering(
    options: Value,
    field: &str,
    format_field: Option<&str>,
) -> Result<NumberingSpec, String> {
    let spec = SequenceSpec::parse(&options).unwrap();
    NumberingSpec::new(spec, field, format_field, false)
        .map_err(|e| format!("{} {}", e.code(), e.option_name().unwrap_or("")))
}

#[test]
fn gapless_numbering_keeps_its_fence_field_free() {
    let gapless = |options: Value, format_field: Option<&str>| {
        let spec = SequenceSpec::parse(&options).unwrap();
        NumberingSpec::new(spec, "no", format_field, true)
            .map_err(|e| format!("{} {}", e.code(), e.option_name().unwrap_or("")))
    };
    let formatted = json!({"name": "o", "format": "X{seq}"});
    let spec = gapless(formatted.clone(), Some("code")).unwrap();
    assert_eq!(spec.fence_field(), "noEpoch");
    assert_eq!(
        gapless(formatted, Some("noEpoch")).unwrap_err(),
        "INVALID_ARGUMENT formatField"
    );
    assert_eq!(
        gapless(json!({"name": "o", "scope": ["noEpoch"]}), None).unwrap_err(),
        "INVALID_ARGUMENT scope"
    );
    // Only gapless numbering moves numbers, and only it reserves the name.
    let plain = SequenceSpec::parse(&json!({"name": "o", "scope": ["noEpoch"]})).unwrap();
    assert!(NumberingSpec::new(plain, "no", None, false).is_ok());
}

#[test]
fn rules() {
    let plain = json!({"name": "o"});
    let formatted = json!({"name": "o", "format": "X{seq}", "scope": ["t"]});
    assert!(numbering(plain.clone(), "seq", None).is_ok());
    assert!(numbering(formatted.clone(), "seq", Some("code")).is_ok());
    assert_eq!(
        numbering(plain.clone(), "_id", None).unwrap_err(),
        "INVALID_ARGUMENT field"
    );
    assert_eq!(
        numbering(plain.clone(), "", None).unwrap_err(),
        "INVALID_ARGUMENT field"
    );
    assert_eq!(
        numbering(plain, "seq", Some("code")).unwrap_err(),
        "INVALID_ARGUMENT format"
    );
    assert_eq!(
        numbering(formatted.clone(), "seq", None).unwrap_err(),
        "INVALID_ARGUMENT formatField"
    );
    assert_eq!(
        numbering(formatted.clone(), "seq", Some("seq")).unwrap_err(),
        "INVALID_ARGUMENT formatField"
    );
    assert_eq!(
        numbering(formatted.clone(), "seq", Some("_id.x")).unwrap_err(),
        "INVALID_ARGUMENT formatField"
    );
    assert_eq!(
        numbering(formatted, "t", Some("code")).unwrap_err(),
        "INVALID_ARGUMENT scope"
    );
}

#[test]
fn field_paths_follow_the_core_rules() {
    let plain = json!({"name": "o"});
    for bad in ["a..b", "$x", "a.$b", "a\u{1}"] {
        assert_eq!(
            numbering(plain.clone(), bad, None).unwrap_err(),
            "INVALID_ARGUMENT field",
            "{bad}"
        );
    }
    assert!(numbering(plain, "meta.seq", None).is_ok());
}

#[test]
fn the_unique_index_covers_the_scope_and_the_number_where_it_exists() {
    let spec = SequenceSpec::parse(&json!({"name": "o", "scope": ["t", "y.z"]})).unwrap();
    let numbering = NumberingSpec::new(spec, "meta.seq", None, false).unwrap();
    assert_eq!(
        serde_json::to_value(numbering.unique_index()).unwrap(),
        json!({
            "op": "createIndex",
            "collection": "documents",
            "name": "mongo_seq_meta.seq",
            "keys": {"t": 1, "y.z": 1, "meta.seq": 1},
            "unique": true,
            "partialFilterExpression": {"meta.seq": {"$exists": true}},
        })
    );
    assert_eq!(
        numbering.unnumbered(),
        json!({"meta.seq": {"$exists": false}})
    );
}

#[test]
fn conditions_guard_first_numbers_and_periods_are_written() {
    let sequence =
        SequenceSpec::parse(&json!({"name": "inv", "reset": "yearly", "format": "{yyyy}-{seq}"}))
            .unwrap();
    let numbering = NumberingSpec::new(sequence, "no", Some("code"), true)
        .unwrap()
        .with_condition(json!({"status": "issued"}))
        .unwrap()
        .with_date_field("issuedAt")
        .unwrap();
    let period = Period::parse("2026").unwrap();
    let first = numbering.statement(&json!(1), 5, None, Some(&period));
    assert_eq!(
        serde_json::to_value(&first).unwrap(),
        json!({
            "filter": {"_id": 1, "no": {"$exists": false}, "$and": [{"status": "issued"}]},
            "update": {"$set": {"no": {"$numberLong": "5"}, "code": "2026-5", "noPeriod": "2026"}},
        })
    );
    // A move keeps a number the document got while it matched.
    let moved = numbering.statement(&json!(1), 4, Some(5), Some(&period));
    assert_eq!(moved.filter, json!({"_id": 1, "no": {"$numberLong": "5"}}));
    assert_eq!(
        numbering.present_filter(&[json!(1)]),
        json!({"_id": {"$in": [1]}, "$or": [{"no": {"$exists": true}}, {"status": "issued"}]})
    );
    assert_eq!(
        numbering.unnumbered_filter(&[json!(1)]),
        json!({"_id": {"$in": [1]}, "no": {"$exists": false}, "$and": [{"status": "issued"}]})
    );
    let Command::CreateIndex { keys, .. } = numbering.unique_index() else {
        panic!("an index")
    };
    assert_eq!(keys, json!({"noPeriod": 1, "no": 1}));
    assert_eq!(numbering.document_fields(), ["_id", "issuedAt", "no"]);
    let plain = NumberingSpec::new(
        SequenceSpec::parse(&json!({"name": "p"})).unwrap(),
        "no",
        None,
        false,
    )
    .unwrap();
    assert_eq!(
        plain.present_filter(&[json!(1)]),
        json!({"_id": {"$in": [1]}})
    );
    assert_eq!(
        plain
            .clone()
            .with_condition(json!([1]))
            .unwrap_err()
            .option_name(),
        Some("condition")
    );
    assert_eq!(
        plain.with_date_field("at").unwrap_err().option_name(),
        Some("dateField")
    );
}

#[test]
fn a_shard_key_the_unique_index_cannot_start_with_refuses_it() {
    let spec = |options: Value| {
        NumberingSpec::new(SequenceSpec::parse(&options).unwrap(), "no", None, false).unwrap()
    };
    let plain = spec(json!({"name": "orders"}));
    let scoped = spec(json!({"name": "orders", "scope": ["tenant"], "reset": "yearly"}));
    let refusing = |numbering: &NumberingSpec, entry: Value| {
        numbering.shard_key_refusing_unique_index(Some(&entry))
    };
    assert_eq!(plain.shard_key_refusing_unique_index(None), None);
    let hashed = json!({"_id": "shop.orders", "key": {"customerId": "hashed"}});
    assert_eq!(
        refusing(&plain, hashed),
        Some(r#"{ customerId: "hashed" }"#.to_owned())
    );
    assert!(refusing(&plain, json!({"key": {"_id": 1}})).is_some());
    assert_eq!(refusing(&plain, json!({"key": {"no": 1}})), None);
    assert!(refusing(&plain, json!({"key": {"no": "hashed"}})).is_some());
    assert_eq!(
        refusing(&plain, json!({"key": {"x": 1}, "dropped": true})),
        None
    );
    assert_eq!(refusing(&scoped, json!({"key": {"tenant": 1}})), None);
    assert_eq!(
        refusing(&scoped, json!({"key": {"tenant": 1, "noPeriod": 1}})),
        None
    );
    assert!(refusing(&scoped, json!({"key": {"tenant": "hashed"}})).is_some());
    assert!(refusing(&scoped, json!({"key": {"noPeriod": 1}})).is_some());
    assert!(refusing(
        &scoped,
        json!({"key": {"tenant": 1, "region": 1, "x": 1, "y": 1}})
    )
    .is_some());
}
