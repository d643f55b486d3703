use super::*;
use serde_json::json;

use crate::sequence::period::Period;

fn code(raw: Value) -> &'static str {
    SequenceSpec::parse(&raw).err().map_or("OK", |e| e.code())
}

#[test]
fn keys_are_the_normalized_options_keys() {
    // `counterId`, `maxBlock` and `sealFields` are left out of the normalized options when unset, `reset`, `timeZone`
    // and `yearStart` when the sequence never resets; a periodic sequence has no
    // `counterId`: the two together name every key.
    let named = SequenceSpec::parse(
        &json!({"name": "orders", "counterId": "orders.seq", "block": 2, "maxBlock": 5, "sealFields": ["total"]}),
    )
    .expect("valid");
    let yearly = SequenceSpec::parse(&json!({"name": "orders", "reset": "yearly"})).expect("valid");
    let mut keys: Vec<String> = Vec::new();
    for spec in [named, yearly] {
        let normalized = serde_json::to_value(&spec).expect("serializable");
        keys.extend(normalized.as_object().expect("an object").keys().cloned());
    }
    keys.sort_unstable();
    keys.dedup();
    let mut known = SequenceSpec::KEYS.to_vec();
    known.sort_unstable();
    assert_eq!(keys, known);
}

#[test]
fn defaults_and_round_trip() {
    let spec = SequenceSpec::parse(&json!({"name": "orders"})).expect("valid");
    assert_eq!((spec.start(), spec.step(), spec.block()), (1, 1, 1));
    let normalized = serde_json::to_value(&spec).expect("serializable");
    assert_eq!(SequenceSpec::parse(&normalized).as_ref(), Ok(&spec));
}

#[test]
fn errors() {
    assert_eq!(code(json!([])), "INVALID_OPTION");
    assert_eq!(code(json!({"name": "a", "colour": 1})), "UNKNOWN_OPTION");
    assert_eq!(code(json!({})), "INVALID_NAME");
    assert_eq!(code(json!({"name": 42})), "INVALID_NAME");
    assert_eq!(code(json!({"name": "a", "step": 0})), "INVALID_STEP");
    assert_eq!(code(json!({"name": "a", "step": "1"})), "INVALID_OPTION");
    assert_eq!(code(json!({"name": "a", "block": 0})), "INVALID_OPTION");
    assert_eq!(code(json!({"name": "a", "block": 1_000_000})), "OK");
    assert_eq!(
        code(json!({"name": "a", "block": 1_000_001})),
        "INVALID_OPTION"
    );
    assert_eq!(
        code(json!({"name": "a", "min": 5, "max": 4})),
        "INVALID_BOUNDS"
    );
    assert_eq!(
        code(json!({"name": "a", "start": 0, "min": 1})),
        "INVALID_BOUNDS"
    );
    assert_eq!(
        code(json!({"name": "a", "start": {"$numberLong": "-9223372036854775808"}})),
        "INVALID_OPTION"
    );
    assert_eq!(
        code(json!({"name": "a", "scope": ["x", "x"]})),
        "INVALID_SCOPE"
    );
    assert_eq!(code(json!({"name": "a", "format": "x"})), "INVALID_FORMAT");
    assert_eq!(code(json!({"name": "a/b"})), "INVALID_NAME");
}

#[test]
fn trigger_keys() {
    assert_eq!(
        SequenceSpec::trigger_keys().collect::<Vec<_>>().join(", "),
        "start, step, min, max, scope, format, reset, timeZone, yearStart, counterField, counterId, sealFields"
    );
    let keys = |v: Value| v.as_object().cloned().unwrap();
    let spec = SequenceSpec::parse_trigger("o", &keys(json!({"step": 10, "scope": ["t"]})));
    assert_eq!(spec.map(|s| (s.step(), s.block())), Ok((10, 1)));
    let error = SequenceSpec::parse_trigger("o", &keys(json!({"block": 5}))).unwrap_err();
    assert_eq!(
        (error.code(), error.option_name()),
        ("UNKNOWN_OPTION", Some("block"))
    );
    let error = SequenceSpec::parse_trigger("o", &keys(json!({"step": "10"}))).unwrap_err();
    assert_eq!(
        (error.code(), error.option_name()),
        ("INVALID_OPTION", Some("step"))
    );
    let error = SequenceSpec::parse_trigger("a/b", &Map::new()).unwrap_err();
    assert_eq!(error.option_name(), Some("name"));
}

#[test]
fn further_follows_the_direction() {
    let up = SequenceSpec::parse(&json!({"name": "a"})).unwrap();
    let down = SequenceSpec::parse(&json!({"name": "a", "step": -1})).unwrap();
    assert_eq!(up.further(Some(3), Some(5)), Some(5));
    assert_eq!(down.further(Some(3), Some(5)), Some(3));
    assert_eq!(down.further(None, Some(5)), Some(5));
    assert_eq!(up.further(None, None), None);
}

#[test]
fn periodic_options() {
    let parse = |raw: Value| SequenceSpec::parse(&raw);
    let normalized = |raw: Value| serde_json::to_value(parse(raw).unwrap()).unwrap();
    let yearly = normalized(json!({"name": "inv", "reset": "yearly"}));
    assert_eq!(
        (&yearly["reset"], &yearly["timeZone"], &yearly["yearStart"]),
        (&json!("yearly"), &json!("UTC"), &json!(1))
    );
    let monthly = normalized(json!({"name": "t", "reset": "monthly", "timeZone": "Europe/Paris"}));
    assert_eq!(monthly["timeZone"], "Europe/Paris");
    assert!(monthly.get("yearStart").is_none());
    let plain =
        normalized(json!({"name": "p", "reset": null, "timeZone": null, "yearStart": null}));
    assert!(plain.get("reset").is_none() && plain.get("timeZone").is_none());
    for raw in [yearly, monthly, plain] {
        let spec = parse(raw.clone()).unwrap();
        assert_eq!(serde_json::to_value(&spec).unwrap(), raw, "round trip");
    }
    let spec =
        parse(json!({"name": "f", "reset": "yearly", "yearStart": {"$numberLong": "4"}})).unwrap();
    assert_eq!((spec.year_start(), spec.time_zone()), (4, "UTC"));

    let error = |raw: Value| {
        let e = parse(raw).unwrap_err();
        (e.code(), e.option_name().unwrap_or("").to_owned())
    };
    let option = |name: &str| ("INVALID_OPTION", name.to_owned());
    assert_eq!(
        error(json!({"name": "a", "reset": "weekly"})),
        option("reset")
    );
    assert_eq!(error(json!({"name": "a", "reset": true})), option("reset"));
    assert_eq!(
        error(json!({"name": "a", "reset": "yearly", "yearStart": 13})),
        option("yearStart")
    );
    assert_eq!(
        error(json!({"name": "a", "reset": "yearly", "yearStart": 0})),
        option("yearStart")
    );
    assert_eq!(
        error(json!({"name": "a", "reset": "yearly", "yearStart": 4.5})),
        option("yearStart")
    );
    assert_eq!(
        error(json!({"name": "a", "reset": "monthly", "yearStart": 4})),
        option("yearStart")
    );
    assert_eq!(
        error(json!({"name": "a", "yearStart": 1})),
        option("yearStart")
    );
    assert_eq!(
        error(json!({"name": "a", "timeZone": "UTC"})),
        option("timeZone")
    );
    assert_eq!(
        error(json!({"name": "a", "reset": "daily", "timeZone": "Paris"})),
        option("timeZone")
    );
    assert_eq!(
        error(json!({"name": "a", "reset": "daily", "timeZone": 1})),
        option("timeZone")
    );
    assert_eq!(
        error(json!({"name": "a", "reset": "yearly", "counterId": "x"})),
        option("counterId")
    );
    let format = ("INVALID_FORMAT", "format".to_owned());
    assert_eq!(
        error(json!({"name": "a", "format": "{yyyy}-{seq}"})),
        format
    );
    assert_eq!(
        error(json!({"name": "a", "reset": "yearly", "format": "{mm}-{seq}"})),
        format
    );
    assert_eq!(
        error(json!({"name": "a", "reset": "monthly", "format": "{dd}-{seq}"})),
        format
    );
    assert!(parse(json!({"name": "a", "reset": "daily", "format": "{yy}{mm}{dd}-{seq}"})).is_ok());
}

#[test]
fn periodic_counter_ids() {
    let spec =
        SequenceSpec::parse(&json!({"name": "inv", "scope": ["t"], "reset": "yearly"})).unwrap();
    let period = Period::parse("2026").unwrap();
    let doc = json!({"t": "acme"});
    assert_eq!(
        spec.counter_id_in(Some(&doc), Some(&period)).as_deref(),
        Ok("inv/t=acme/2026")
    );
    let code =
        |r: Result<String, SeqError>| r.map_err(|e| (e.code(), e.option_name().map(str::to_owned)));
    let period_error = Err(("INVALID_ARGUMENT", Some("period".to_owned())));
    assert_eq!(code(spec.counter_id(Some(&doc))), period_error);
    let month = Period::parse("2026-01").unwrap();
    assert_eq!(
        code(spec.counter_id_in(Some(&doc), Some(&month))),
        period_error
    );
    let plain = SequenceSpec::parse(&json!({"name": "inv"})).unwrap();
    assert_eq!(code(plain.counter_id_in(None, Some(&period))), period_error);
    assert!(spec.check_counter_id("inv/t=acme/2026").is_ok());
    for bad in [
        "inv/t=acme",
        "inv/2026",
        "inv/t=acme/2026-01",
        "inv/t=acme/2026/2027",
        "invx/t=a/2026",
    ] {
        assert!(spec.check_counter_id(bad).is_err(), "{bad}");
    }
    let unscoped = SequenceSpec::parse(&json!({"name": "inv", "reset": "monthly"})).unwrap();
    assert!(unscoped.check_counter_id("inv/2026-01").is_ok());
    assert!(unscoped.check_counter_id("inv").is_err());
    assert_eq!(
        unscoped
            .period_of_counter_id("inv/2026-01")
            .map(Period::text)
            .as_deref(),
        Some("2026-01")
    );
    assert_eq!(spec.period_of_counter_id("inv/t=a/2026-01"), None);
    let next = spec
        .next_period_start(&period)
        .unwrap()
        .map(|d| d.to_string());
    assert_eq!(next.as_deref(), Some("2027-01-01"));
    assert!(spec.next_period_start(&month).is_err());
    assert_eq!(
        unscoped.format_value(5, Some(&month)),
        None,
        "no format, no formatted id"
    );
}

#[test]
fn a_missing_period_says_how_to_give_one() {
    for (reset, example) in [
        ("yearly", "\"2026\""),
        ("monthly", "\"2026-05\""),
        ("daily", "\"2026-05-31\""),
    ] {
        let spec =
            SequenceSpec::parse(&json!({"name": "invoices", "reset": reset})).expect("valid");
        let error = spec.check_period(None).expect_err("a period is required");
        assert_eq!(error.code(), "INVALID_ARGUMENT");
        let message = error.to_string();
        assert!(
            message.contains("give a date, or a period such as"),
            "{message}"
        );
        assert!(message.contains(example), "{message}");
    }
}

#[test]
fn max_block_defaults_to_ten_blocks_and_is_checked() {
    let max = |raw: Value| SequenceSpec::parse(&raw).map(|spec| spec.max_block());
    assert_eq!(max(json!({"name": "a"})), Ok(1), "block 1 never grows");
    assert_eq!(max(json!({"name": "a", "block": 100})), Ok(1000));
    assert_eq!(max(json!({"name": "a", "block": 500_000})), Ok(1_000_000));
    assert_eq!(
        max(json!({"name": "a", "block": 100, "maxBlock": 100})),
        Ok(100)
    );
    assert_eq!(
        max(json!({"name": "a", "block": 100, "maxBlock": {"$numberLong": "5000"}})),
        Ok(5000)
    );
    // The default never makes options invalid: with a step that large the block stays `block`.
    let huge_step = json!({"name": "a", "block": 2, "step": i64::MAX / 4});
    assert_eq!(max(huge_step), Ok(2));
    for (raw, reason) in [
        (
            json!({"name": "a", "block": 100, "maxBlock": 99}),
            "at least `block` (100)",
        ),
        (
            json!({"name": "a", "maxBlock": 1_000_001}),
            "at most 1000000",
        ),
        (json!({"name": "a", "maxBlock": "10"}), "integer"),
        (
            json!({"name": "a", "block": 2, "maxBlock": 3, "step": i64::MAX / 2}),
            "must fit",
        ),
    ] {
        let error = SequenceSpec::parse(&raw).expect_err("refused");
        assert_eq!(
            (error.code(), error.option_name()),
            ("INVALID_OPTION", Some("maxBlock")),
            "{raw}"
        );
        assert!(error.to_string().contains(reason), "{error} ({raw})");
    }
    // Normalized: left out when default, kept otherwise; both parse back to an equal spec.
    for raw in [
        json!({"name": "a", "block": 100}),
        json!({"name": "a", "block": 100, "maxBlock": 400}),
    ] {
        let spec = SequenceSpec::parse(&raw).expect("valid");
        let normalized = serde_json::to_value(&spec).expect("serializable");
        assert_eq!(
            normalized.get("maxBlock").is_some(),
            raw.get("maxBlock").is_some()
        );
        assert_eq!(SequenceSpec::parse(&normalized).as_ref(), Ok(&spec));
    }
    let trigger = SequenceSpec::parse_trigger("o", json!({"maxBlock": 5}).as_object().unwrap());
    assert_eq!(trigger.map_err(|e| e.code()).err(), Some("UNKNOWN_OPTION"));
}
