//! Replays `tests/vectors/core.json` (shared with the JS packages) through the native core.
//! Every mismatch is collected and reported with expected/actual JSON.

use std::collections::BTreeSet;
use std::path::PathBuf;

use mongo_seq_core::{
    audit, check_count, check_field_path, check_insert_fields, ejson, format_seq, BlockAllocator,
    CurrentValue, OptimisticInsert, Plan, Reply, Reservation, ReserveRequest, ReservedRange,
    SeedFromMax, SeqError, SequenceSpec, SetNext, Step,
};
use serde::Serialize;
use serde_json::{json, Value};

fn vectors() -> Value {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/vectors/core.json");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("parsing {}: {e}", path.display()))
}

/// What running a case (or one call) produced.
type Outcome = Result<Value, SeqError>;

fn arg<'a>(input: &'a Value, key: &str) -> &'a Value {
    input.get(key).unwrap_or(&Value::Null)
}

fn int(input: &Value, key: &str) -> i64 {
    ejson::read_i64(arg(input, key)).unwrap_or_else(|e| panic!("input `{key}` {e}"))
}

fn opt_int(input: &Value, key: &str) -> Option<i64> {
    match arg(input, key) {
        Value::Null => None,
        _ => Some(int(input, key)),
    }
}

fn opt_doc(input: &Value, key: &str) -> Option<Value> {
    Some(arg(input, key).clone()).filter(|v| !v.is_null())
}

fn to_json<T: Serialize>(value: T) -> Value {
    serde_json::to_value(value).expect("outputs serialize")
}

fn spec(input: &Value) -> Result<SequenceSpec, SeqError> {
    SequenceSpec::parse(arg(input, "options"))
}

/// Drives a plan through the case's steps; returns the outcome and the step problems found.
fn drive<P: Plan>(plan: Result<P, SeqError>, steps: &[Value], problems: &mut Vec<String>) -> Outcome
where
    P::Output: Serialize + Clone,
{
    let mut plan = plan?;
    let mut step = plan.start();
    for (index, expected) in steps.iter().enumerate() {
        let command = match &step {
            Ok(Step::Command(command)) => to_json(command),
            Ok(Step::Done(output)) => {
                problems.push(format!(
                    "step {index}: plan finished early with {}",
                    to_json(output)
                ));
                return step.map(|_| Value::Null);
            }
            Err(error) => {
                problems.push(format!(
                    "step {index}: plan failed early with {} ({error})",
                    error.code()
                ));
                return Err(error.clone());
            }
        };
        if command != expected["command"] {
            problems.push(format!(
                "step {index}: command differs\n  expected: {}\n  actual:   {}",
                expected["command"], command
            ));
        }
        match Reply::from_json(&expected["reply"]) {
            Ok(reply) => step = plan.feed(reply),
            // A reply that does not parse never reaches the plan, which keeps waiting.
            Err(error) => return Err(error),
        }
    }
    // A finished plan reports the same result again and refuses further replies.
    let replay = plan.start().map(|s| to_json(StepView::from(&s)));
    let first = step
        .as_ref()
        .map(|s| to_json(StepView::from(s)))
        .map_err(Clone::clone);
    if replay.as_ref().map_err(SeqError::code) != first.as_ref().map_err(SeqError::code) {
        problems.push("start() after the last feed does not repeat the outcome".to_owned());
    }
    match step {
        Ok(Step::Done(output)) => {
            if plan.feed(Reply::None).err().map(|e| e.code()) != Some("UNEXPECTED_REPLY") {
                problems.push("feeding a finished plan must fail with UNEXPECTED_REPLY".to_owned());
            }
            Ok(to_json(output))
        }
        Ok(Step::Command(command)) => {
            problems.push(format!(
                "steps ended but the plan still wants {}",
                to_json(command)
            ));
            Ok(Value::Null)
        }
        Err(error) => Err(error),
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
enum StepView {
    Command(Value),
    Done(Value),
}

impl<T: Serialize> From<&Step<T>> for StepView {
    fn from(step: &Step<T>) -> Self {
        match step {
            Step::Command(command) => Self::Command(to_json(command)),
            Step::Done(output) => Self::Done(to_json(output)),
        }
    }
}

fn run_block(input: &Value, calls: &[Value], problems: &mut Vec<String>) -> Outcome {
    let block = u64::try_from(int(input, "block")).unwrap_or(0);
    let mut allocator = BlockAllocator::new(block)?;
    for (index, call) in calls.iter().enumerate() {
        let args = call["args"].as_array().cloned().unwrap_or_default();
        let method = call["method"].as_str().unwrap_or("");
        let u = |i: usize| {
            args.get(i)
                .and_then(Value::as_u64)
                .unwrap_or_else(|| panic!("call {index}: arg {i}"))
        };
        let got: Outcome = match method {
            "isEmpty" => Ok(json!(allocator.is_empty())),
            "remaining" => Ok(json!(allocator.remaining())),
            "next" => Ok(to_json(allocator.next())),
            "take" => Ok(to_json(allocator.take(u(0)))),
            "discard" => Ok(json!(allocator.discard())),
            "refillRequest" => Ok(to_json(
                allocator.refill_request(args[0].as_str().unwrap_or(""), u(1)),
            )),
            "refill" => {
                let range: ReservedRange =
                    serde_json::from_value(args[0].clone()).expect("range arg");
                allocator.refill(range).map(|()| Value::Null)
            }
            other => panic!("unknown blockAllocator method {other}"),
        };
        compare(&format!("call {index} {method}"), call, &got, problems);
    }
    Ok(Value::Null)
}

fn run(case: &Value, problems: &mut Vec<String>) -> Outcome {
    let input = &case["input"];
    let steps = case["steps"].as_array().cloned().unwrap_or_default();
    match case["op"].as_str().unwrap_or("") {
        "parseOptions" => spec(input).map(to_json),
        "counterId" => spec(input)?
            .counter_id(opt_doc(input, "document").as_ref())
            .map(Value::String),
        "formatSeq" => format_seq(
            arg(input, "template").as_str().unwrap_or(""),
            int(input, "value"),
        )
        .map(Value::String),
        "audit" => {
            let numbers = arg(input, "numbers")
                .as_array()
                .cloned()
                .unwrap_or_default();
            audit(
                &numbers,
                int(input, "start"),
                int(input, "step"),
                opt_int(input, "counter"),
            )
            .map(to_json)
        }
        "reserve" => {
            let plan = spec(input).and_then(|spec| {
                let request = ReserveRequest::from_json(arg(input, "request"))?;
                Reservation::new(&spec, &request)
            });
            drive(plan, &steps, problems)
        }
        "current" => {
            let plan = spec(input).and_then(|spec| {
                CurrentValue::new(&spec, arg(input, "counterId").as_str().unwrap_or(""))
            });
            drive(plan, &steps, problems)
        }
        "setNext" => {
            let plan = spec(input).and_then(|spec| {
                let force = arg(input, "force").as_bool().unwrap_or(false);
                SetNext::new(
                    &spec,
                    arg(input, "counterId").as_str().unwrap_or(""),
                    int(input, "next"),
                    force,
                )
            });
            drive(plan, &steps, problems)
        }
        "seedFromMax" => {
            let plan = spec(input).and_then(|spec| {
                SeedFromMax::new(
                    &spec,
                    arg(input, "counterId").as_str().unwrap_or(""),
                    int(input, "value"),
                )
            });
            drive(plan, &steps, problems)
        }
        "insertOptimistic" => {
            let plan = spec(input).and_then(|spec| {
                let document = opt_doc(input, "document");
                OptimisticInsert::new(
                    &spec,
                    arg(input, "field").as_str().unwrap_or(""),
                    document.as_ref(),
                    arg(input, "formatField").as_str(),
                )?
                .with_max_attempts(arg(input, "maxAttempts"))
            });
            drive(plan, &steps, problems)
        }
        "checkCount" => check_count(
            arg(input, "argument").as_str().unwrap_or(""),
            arg(input, "value"),
        )
        .map(|count| json!(count)),
        "checkFieldPath" => check_field_path(
            arg(input, "argument").as_str().unwrap_or(""),
            arg(input, "field").as_str().unwrap_or(""),
        )
        .map(|()| Value::Null),
        "checkInsertFields" => spec(input).and_then(|spec| {
            check_insert_fields(
                &spec,
                arg(input, "field").as_str().unwrap_or(""),
                arg(input, "formatField").as_str(),
            )
            .map(|()| Value::Null)
        }),
        "blockAllocator" => run_block(
            input,
            case["calls"].as_array().map_or(&[][..], Vec::as_slice),
            problems,
        ),
        other => panic!("unknown op {other:?}"),
    }
}

/// Compares an outcome with `expected.output` / `expected.error`.
fn compare(label: &str, expected: &Value, got: &Outcome, problems: &mut Vec<String>) {
    match (expected.get("error"), got) {
        (Some(error), Err(actual)) => {
            if error["code"] != actual.code() {
                problems.push(format!(
                    "{label}: expected error {}, got {} ({actual})",
                    error["code"],
                    actual.code()
                ));
            }
            if let Some(fragment) = error.get("messageIncludes").and_then(Value::as_str) {
                if !actual.to_string().contains(fragment) {
                    problems.push(format!(
                        "{label}: message {:?} lacks {fragment:?}",
                        actual.to_string()
                    ));
                }
            }
        }
        (Some(error), Ok(actual)) => problems.push(format!(
            "{label}: expected error {}, got output {actual}",
            error["code"]
        )),
        (None, Err(actual)) => problems.push(format!(
            "{label}: unexpected error {} ({actual})",
            actual.code()
        )),
        (None, Ok(actual)) => {
            let want = expected.get("output").unwrap_or(&Value::Null);
            if want != actual {
                problems.push(format!(
                    "{label}: output differs\n  expected: {}\n  actual:   {}",
                    serde_json::to_string(want).unwrap_or_default(),
                    serde_json::to_string(actual).unwrap_or_default()
                ));
            }
        }
    }
}

#[test]
fn core_vectors() {
    let vectors = vectors();
    let cases = vectors["cases"].as_array().expect("cases array");
    let ops = vectors["ops"].as_object().expect("ops object");
    let mut failures = Vec::new();
    let mut names = BTreeSet::new();
    let mut codes = BTreeSet::new();
    for case in cases {
        let name = case["name"].as_str().unwrap_or("?").to_owned();
        assert!(names.insert(name.clone()), "duplicate case name {name}");
        let op = case["op"].as_str().unwrap_or("");
        assert!(ops.contains_key(op), "{name}: op {op} not described in ops");
        for key in case["input"].as_object().expect("input object").keys() {
            let params = ops[op]["params"].as_array().expect("params");
            assert!(
                params.iter().any(|p| p == key),
                "{name}: input `{key}` is not a param of {op}"
            );
        }
        let mut problems = Vec::new();
        let got = run(case, &mut problems);
        if op != "blockAllocator" || case.get("error").is_some() {
            compare("result", case, &got, &mut problems);
        }
        collect_codes(case, &mut codes);
        if !problems.is_empty() {
            failures.push(format!("── {name} ({op})\n{}", problems.join("\n")));
        }
    }
    // Codes of the lease and intent plans have their vectors in gapless.json.
    let gapless =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/vectors/gapless.json");
    if let Ok(text) = std::fs::read_to_string(gapless) {
        collect_codes(
            &serde_json::from_str(&text).expect("gapless.json parses"),
            &mut codes,
        );
    }
    let missing: Vec<_> = SeqError::CODES
        .iter()
        .filter(|c| !codes.contains(**c))
        .collect();
    assert!(
        missing.is_empty(),
        "error codes without a vector: {missing:?}"
    );
    assert!(
        failures.is_empty(),
        "{} of {} vector cases failed:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}

fn collect_codes(value: &Value, codes: &mut BTreeSet<String>) {
    match value {
        Value::Object(map) => {
            if let Some(Value::String(code)) = map.get("error").and_then(|e| e.get("code")) {
                codes.insert(code.clone());
            }
            map.values().for_each(|v| collect_codes(v, codes));
        }
        Value::Array(items) => items.iter().for_each(|v| collect_codes(v, codes)),
        _ => {}
    }
}
