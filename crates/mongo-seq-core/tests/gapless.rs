//! Replays `tests/vectors/gapless.json` (leases, gapless reservations, intent completion)
//! through the native core. Every mismatch is collected and reported.

use std::path::PathBuf;

use mongo_seq_core::intent::Intent;
use mongo_seq_core::{
    ejson, plan_completion, FinishIntent, GaplessReserve, Lease, LeaseRequest, Plan, Reply,
    SeqError, SequenceSpec, Step,
};
use serde::Serialize;
use serde_json::Value;

fn to_json<T: Serialize>(value: T) -> Value {
    serde_json::to_value(value).expect("outputs serialize")
}

fn drive<P: Plan>(
    plan: Result<P, SeqError>,
    steps: &[Value],
    problems: &mut Vec<String>,
) -> Result<Value, SeqError>
where
    P::Output: Serialize,
{
    let mut plan = plan?;
    let mut step = plan.start();
    for (index, expected) in steps.iter().enumerate() {
        match step {
            Ok(Step::Command(command)) => {
                let command = to_json(command);
                if command != expected["command"] {
                    problems.push(format!(
                        "step {index}: command differs\n  expected: {}\n  actual:   {command}",
                        expected["command"]
                    ));
                }
                step = plan.feed(Reply::from_json(&expected["reply"])?);
            }
            Ok(Step::Done(output)) => {
                problems.push(format!(
                    "step {index}: finished early with {}",
                    to_json(output)
                ));
                return Ok(Value::Null);
            }
            Err(e) => {
                problems.push(format!(
                    "step {index}: failed early with {} ({e})",
                    e.code()
                ));
                return Err(e);
            }
        }
    }
    match step {
        Ok(Step::Done(output)) => Ok(to_json(output)),
        Ok(Step::Command(command)) => {
            problems.push(format!(
                "steps ended but the plan still wants {}",
                to_json(command)
            ));
            Ok(Value::Null)
        }
        Err(e) => Err(e),
    }
}

fn int(value: &Value) -> i64 {
    ejson::read_i64(value).expect("integer input")
}

fn run(case: &Value, problems: &mut Vec<String>) -> Result<Value, SeqError> {
    let input = &case["input"];
    let steps = case["steps"].as_array().cloned().unwrap_or_default();
    let spec = || SequenceSpec::parse(&input["options"]);
    match case["op"].as_str().expect("op") {
        "gaplessReserve" => {
            let ids = input["ids"].as_array().cloned().expect("ids");
            let plan = spec().and_then(|s| {
                GaplessReserve::new(
                    &s,
                    input["counterId"].as_str().expect("counterId"),
                    ids,
                    int(&input["epoch"]),
                )
            });
            drive(plan, &steps, problems)
        }
        "finishIntent" => {
            let intent: Intent = serde_json::from_value(input["intent"].clone()).expect("intent");
            let plan = spec().and_then(|s| {
                FinishIntent::new(
                    &s,
                    input["counterId"].as_str().expect("counterId"),
                    &intent,
                    int(&input["seq"]),
                    int(&input["epoch"]),
                )
            });
            drive(plan, &steps, problems)
        }
        "planCompletion" => {
            let intent: Intent = serde_json::from_value(input["intent"].clone()).expect("intent");
            let found: Vec<(Value, Option<Value>)> = input["found"]
                .as_array()
                .expect("found")
                .iter()
                .map(|pair| {
                    (
                        pair[0].clone(),
                        Some(pair[1].clone()).filter(|v| !v.is_null()),
                    )
                })
                .collect();
            let taken: Vec<i64> = input["taken"]
                .as_array()
                .expect("taken")
                .iter()
                .map(int)
                .collect();
            plan_completion(&spec()?, &intent, &found, &taken).map(to_json)
        }
        "lease" => {
            let request: LeaseRequest =
                serde_json::from_value(input["request"].clone()).expect("request");
            drive(Lease::new(&request), &steps, problems)
        }
        other => panic!("unknown op {other}"),
    }
}

#[test]
fn gapless_vectors() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/vectors/gapless.json");
    let vectors: Value =
        serde_json::from_str(&std::fs::read_to_string(&path).expect("read vectors"))
            .expect("parse vectors");
    let cases = vectors["cases"].as_array().expect("cases");
    assert!(cases.len() >= 10);
    let mut failures = Vec::new();
    for case in cases {
        let mut problems = Vec::new();
        let got = run(case, &mut problems);
        match (got, case.get("error")) {
            (Ok(result), None) => {
                if result != case["result"] {
                    problems.push(format!(
                        "result differs\n  expected: {}\n  actual:   {result}",
                        case["result"]
                    ));
                }
            }
            (Ok(result), Some(error)) => {
                problems.push(format!("expected error {error}, got {result}"))
            }
            (Err(e), Some(error)) => {
                if error["code"] != e.code() {
                    problems.push(format!("expected error {error}, got {} ({e})", e.code()));
                }
            }
            (Err(e), None) => problems.push(format!("unexpected error {} ({e})", e.code())),
        }
        if !problems.is_empty() {
            failures.push(format!("── {}\n{}", case["name"], problems.join("\n")));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} gapless vector cases failed:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}
