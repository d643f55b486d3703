//! The core's part of `periods.json`: local date → period → counter id → formatted id (the
//! hosts replay instant → local date).

use mongo_seq_core::{check_instant, CounterKey, LocalDate, SeqError, SequenceSpec};
use serde_json::{json, Value};

use super::{int, load, text};

/// The sequence of a `periods.json` case (see its conventions).
fn period_options(case: &Value) -> Value {
    let mut options =
        json!({ "name": "inv", "reset": case["reset"], "timeZone": case["timeZone"] });
    for key in ["yearStart", "format"] {
        if let Some(value) = case.get(key) {
            options[key] = value.clone();
        }
    }
    if let Some(document) = case.get("document").and_then(Value::as_object) {
        options["scope"] = json!(document.keys().collect::<Vec<_>>());
    }
    options
}

/// The core's part of one `periods.json` case: what it gives, in the file's terms.
fn run_period_case(case: &Value) -> Result<Value, (SeqError, &'static str)> {
    let mut out = serde_json::Map::new();
    if let Some(instant) = case.get("instant") {
        let ms = text(case, "instant")
            .parse::<i64>()
            .expect("instant: ms as a string");
        check_instant("date", None, ms).map_err(|e| (e, "instant"))?;
        out.insert("instant".to_owned(), instant.clone());
    }
    let spec = SequenceSpec::parse(&period_options(case)).expect("the case's sequence");
    let date = LocalDate::parse("date", text(case, "localDate")).expect("localDate");
    let period = spec
        .period_of(date, "date")
        .map_err(|e| (e, "period"))?
        .expect("a periodic sequence");
    out.insert("period".to_owned(), json!(period.text()));
    let counter_id = spec
        .counter_id_in(case.get("document"), Some(&period))
        .expect("counter id");
    let key = CounterKey::parse(&counter_id).expect("the id parses back");
    assert_eq!(
        key.period,
        Some(period),
        "{counter_id}: the period reads back"
    );
    key.belongs_to(&spec)
        .expect("the id belongs to its sequence");
    out.insert("counterId".to_owned(), json!(counter_id));
    let next = spec.next_period_start(&period).expect("its own period");
    out.insert(
        "nextPeriodStart".to_owned(),
        next.map_or(Value::Null, |d| json!(d.to_string())),
    );
    if case.get("format").is_some() {
        let value = int(case, "value");
        out.insert(
            "formatted".to_owned(),
            json!(spec.format_value(value, Some(&period))),
        );
    }
    Ok(Value::Object(out))
}

#[test]
fn period_vectors() {
    let vectors = load("periods.json");
    let cases = vectors["cases"].as_array().expect("cases array");
    let mut failures = Vec::new();
    for case in cases {
        let name = case["name"].as_str().unwrap_or("?");
        match (run_period_case(case), case.get("error")) {
            (Ok(got), None) => {
                for (key, value) in got.as_object().expect("an object") {
                    if case.get(key) != Some(value) {
                        failures.push(format!(
                            "{name}: {key} is {value}, expected {}",
                            case.get(key).unwrap_or(&Value::Null)
                        ));
                    }
                }
            }
            (Ok(got), Some(error)) => {
                failures.push(format!("{name}: expected {error}, got {got}"));
            }
            (Err((error, stage)), Some(expected)) => {
                if expected["code"] != error.code() || expected["stage"] != stage {
                    failures.push(format!(
                        "{name}: expected {expected}, got {} at {stage} ({error})",
                        error.code()
                    ));
                }
            }
            (Err((error, stage)), None) => {
                failures.push(format!("{name}: failed at {stage}: {error}"));
            }
        }
    }
    assert!(cases.len() >= 50, "periods.json holds the issue's cases");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
