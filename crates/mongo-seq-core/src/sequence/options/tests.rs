use super::*;
use serde_json::json;

fn code(raw: Value) -> &'static str {
    SequenceSpec::parse(&raw).err().map_or("OK", |e| e.code())
}

#[test]
fn keys_are_the_normalized_options_keys() {
    // `counterId` is left out of the normalized options when unset: set it.
    let spec =
        SequenceSpec::parse(&json!({"name": "orders", "counterId": "orders.seq"})).expect("valid");
    let normalized = serde_json::to_value(&spec).expect("serializable");
    let mut keys: Vec<&str> = normalized
        .as_object()
        .expect("an object")
        .keys()
        .map(String::as_str)
        .collect();
    let mut known = SequenceSpec::KEYS.to_vec();
    keys.sort_unstable();
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
        "start, step, min, max, scope, format, counterField, counterId"
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
