//! Reading a case's inputs (the vector files' conventions: Extended JSON integers, `null` for
//! not given).

use mongo_seq_core::{
    ejson, ClusterTime, InsertDates, Intent, LeaseRequest, NumberingSpec, Period, SeqError,
    SequenceSpec,
};
use serde::Serialize;
use serde_json::Value;

pub(crate) fn arg<'a>(input: &'a Value, key: &str) -> &'a Value {
    input.get(key).unwrap_or(&Value::Null)
}

pub(crate) fn int(input: &Value, key: &str) -> i64 {
    ejson::read_i64(arg(input, key)).unwrap_or_else(|e| panic!("input `{key}` {e}"))
}

pub(crate) fn opt_int(input: &Value, key: &str) -> Option<i64> {
    match arg(input, key) {
        Value::Null => None,
        _ => Some(int(input, key)),
    }
}

pub(crate) fn opt_doc(input: &Value, key: &str) -> Option<Value> {
    Some(arg(input, key).clone()).filter(|v| !v.is_null())
}

pub(crate) fn text<'a>(input: &'a Value, key: &str) -> &'a str {
    arg(input, key).as_str().unwrap_or("")
}

pub(crate) fn list(input: &Value, key: &str) -> Vec<Value> {
    arg(input, key).as_array().cloned().unwrap_or_default()
}

pub(crate) fn to_json<T: Serialize>(value: T) -> Value {
    serde_json::to_value(value).expect("outputs serialize")
}

pub(crate) fn spec(input: &Value) -> Result<SequenceSpec, SeqError> {
    SequenceSpec::parse(arg(input, "options"))
}

pub(crate) fn numbering(input: &Value) -> Result<NumberingSpec, SeqError> {
    NumberingSpec::from_json(arg(input, "numbering"))
}

pub(crate) fn intent(input: &Value) -> Intent {
    serde_json::from_value(arg(input, "intent").clone()).expect("intent input")
}

/// The `period` input (a period's text), if any.
pub(crate) fn period(input: &Value) -> Option<Period> {
    arg(input, "period")
        .as_str()
        .map(|text| Period::parse(text).expect("period input"))
}

/// The `dateField` and `nowMs` inputs of an insert.
pub(crate) fn insert_dates(input: &Value) -> InsertDates {
    InsertDates {
        date_field: arg(input, "dateField").as_str().map(str::to_owned),
        now_ms: opt_int(input, "nowMs"),
    }
}

/// The optional `afterClusterTime` input (`{"$timestamp": {t, i}}`).
pub(crate) fn after(input: &Value) -> Option<ClusterTime> {
    opt_doc(input, "afterClusterTime")
        .map(|time| serde_json::from_value(time).expect("afterClusterTime input"))
}

pub(crate) fn lease_request(input: &Value) -> LeaseRequest {
    serde_json::from_value(arg(input, "request").clone()).expect("request input")
}
