//! Replays the shared vector files through the native core, one runner for all of them:
//! `tests/vectors/core.json` (also replayed through Wasm by the JS packages), `gapless.json`
//! (leases, intents, gapless numbering) and `batch.json` (the sidecar's protocols: batch
//! numbering, backfill seeding, counter ids, trigger options, write replies), and the core's
//! part of `periods.json` (local date → period → counter id → formatted id; the hosts replay
//! instant → local date), `audit.json` (`audit_ops`) and `ledger.json` (voids). Every mismatch
//! is collected and reported with expected/actual JSON.

use std::collections::BTreeSet;
use std::path::PathBuf;

use mongo_seq_core::assign_matching;
use mongo_seq_core::{
    audit, check_count, check_field_path, check_insert_fields, check_shard_key, ejson, format_seq,
    plan_completion, AcquireLease, AdoptDefinition, BlockAllocator, BlockCounter, CheckNotKept,
    CompleteIntent, CompletePending, CounterKey, CurrentValue, FinishIntent, GaplessReserve, Holds,
    ImportCounters, ImportRequest, InsertNumbered, Lease, Note, NumberBatch, NumberGapless,
    OptimisticInsert, Plan, Refill, RenewLease, Reply, Reservation, ReserveRequest, ReservedRange,
    RewindSequence, SeedFromExisting, SeedFromMax, SeqError, SequenceSpec, SetNext, Step,
};
use mongo_seq_core::{CounterHandle, RouteStep, SeriesCounters, VoidNumbers, VoidRequest};
use serde::Serialize;
use serde_json::{json, Value};

// Driving a plan through a case's steps, and the cases that call an object's methods.
mod replay;
use replay::{drive, handed_over, run_block, run_counter, run_series};
// Reading a case's inputs.
mod input;
use input::{
    after, arg, insert_dates, int, intent, lease_request, list, numbering, opt_doc, opt_int,
    period, spec, text, to_json,
};
// The core's part of periods.json.
mod periods;
// audit.json's ops (and its test).
mod audit_ops;
// An outcome against a case's expected output or error.
mod compare;
use audit_ops::FILE as AUDIT;
use compare::compare;

// With `AUDIT`, audit.json (its test is `audit_ops`'s).
const FILES: [&str; 5] = [
    "core.json",
    "gapless.json",
    "batch.json",
    "periods.json",
    "ledger.json",
];

fn load(file: &str) -> Value {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/vectors")
        .join(file);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("parsing {}: {e}", path.display()))
}

/// What running a case (or one call) produced.
type Outcome = Result<Value, SeqError>;

/// What a case produced besides its outcome: problems found on the way, notes drained.
#[derive(Default)]
struct Trace {
    problems: Vec<String>,
    notes: Vec<Note>,
    /// The commands that differed from a step's (`VECTORS_BLESS=<file>` writes them there, one
    /// JSON line per case, for a reviewed regeneration of the vector files).
    differing: Vec<(usize, Value)>,
    /// The same for an object's calls whose output is a command.
    differing_calls: Vec<(usize, Value)>,
    /// Plans are driven with `take_step`/`feed_and_take` (as the Rust shells drive them).
    take: bool,
}

fn run(case: &Value, trace: &mut Trace) -> Outcome {
    let input = &case["input"];
    let steps = case["steps"].as_array().cloned().unwrap_or_default();
    let counter_id = text(input, "counterId");
    match case["op"].as_str().unwrap_or("") {
        // ---------------------------------------------------------------- core.json
        "parseOptions" => spec(input).map(to_json),
        "counterId" => spec(input)?
            .counter_id_in(opt_doc(input, "document").as_ref(), period(input).as_ref())
            .map(Value::String),
        "formatSeq" => format_seq(
            text(input, "template"),
            int(input, "value"),
            period(input).as_ref(),
        )
        .map(Value::String),
        "audit" => audit(
            &list(input, "numbers"),
            int(input, "start"),
            int(input, "step"),
            opt_int(input, "counter"),
        )
        .map(to_json),
        "reserve" => {
            let plan = spec(input).and_then(|spec| {
                Reservation::new(&spec, &ReserveRequest::from_json(arg(input, "request"))?)
            });
            drive(plan, &steps, trace)
        }
        "current" => drive(
            spec(input).and_then(|spec| CurrentValue::new(&spec, counter_id)),
            &steps,
            trace,
        ),
        "setNext" => {
            let force = arg(input, "force").as_bool().unwrap_or(false);
            let plan = spec(input)
                .and_then(|spec| SetNext::new(&spec, counter_id, int(input, "next"), force));
            drive(plan, &steps, trace)
        }
        "adoptDefinition" => {
            let gapless = arg(input, "gapless").as_bool().unwrap_or(false);
            let plan = spec(input)
                .and_then(|spec| AdoptDefinition::new(&spec.with_gapless(gapless), counter_id));
            drive(plan, &steps, trace)
        }
        "rewindAll" => {
            let force = arg(input, "force").as_bool().unwrap_or(false);
            let gapless = arg(input, "gapless").as_bool();
            let rewind = match arg(input, "existing").as_bool() {
                Some(true) => RewindSequence::of_existing,
                _ => RewindSequence::new,
            };
            let plan = spec(input).map(|spec| rewind(&spec, force, gapless));
            drive(plan, &steps, trace)
        }
        "checkNotKept" => drive(
            spec(input).map(|spec| CheckNotKept::new(&spec)),
            &steps,
            trace,
        ),
        "seedFromMax" => drive(
            spec(input).and_then(|spec| SeedFromMax::new(&spec, counter_id, int(input, "value"))),
            &steps,
            trace,
        ),
        "insertOptimistic" => {
            let plan = spec(input).and_then(|spec| {
                OptimisticInsert::with_max_attempts(
                    &spec,
                    text(input, "field"),
                    opt_doc(input, "document").as_ref(),
                    arg(input, "formatField").as_str(),
                    arg(input, "maxAttempts"),
                )
            });
            drive(plan, &steps, trace)
        }
        "insertOne" => drive(
            spec(input).and_then(|spec| {
                InsertNumbered::one(
                    &spec,
                    text(input, "field"),
                    arg(input, "formatField").as_str(),
                    opt_doc(input, "document").as_ref(),
                    &insert_dates(input),
                )
            }),
            &steps,
            trace,
        ),
        "insertMany" => {
            let documents =
                opt_doc(input, "documents").map(|d| d.as_array().cloned().unwrap_or_default());
            let count = u64::try_from(int(input, "count")).unwrap_or(u64::MAX);
            let plan = spec(input).and_then(|spec| {
                InsertNumbered::many(
                    &spec,
                    text(input, "field"),
                    arg(input, "formatField").as_str(),
                    count,
                    documents.as_deref(),
                    &insert_dates(input),
                )
            });
            drive(plan, &steps, trace)
        }
        "assign" => drive(
            spec(input).and_then(|spec| {
                assign_matching(
                    &spec,
                    text(input, "field"),
                    arg(input, "formatField").as_str(),
                    arg(input, "filter").clone(),
                    opt_doc(input, "sort").as_ref(),
                    arg(input, "dateField").as_str(),
                    opt_int(input, "nowMs"),
                )
            }),
            &steps,
            trace,
        ),
        "counterKey" => {
            let spec = spec(input)?;
            let key = CounterKey::parse(text(input, "counterId"))?;
            key.belongs_to(&spec)?;
            Ok(to_json(key))
        }
        "importCounters" => drive(
            ImportRequest::from_json(arg(input, "request")).map(|r| ImportCounters::new(&r)),
            &steps,
            trace,
        ),
        "checkCount" => {
            check_count(text(input, "argument"), arg(input, "value")).map(|count| json!(count))
        }
        "checkFieldPath" => {
            check_field_path(text(input, "argument"), text(input, "field")).map(|()| Value::Null)
        }
        "checkInsertFields" => spec(input).and_then(|spec| {
            check_insert_fields(
                &spec,
                text(input, "field"),
                arg(input, "formatField").as_str(),
            )
            .map(|()| Value::Null)
        }),
        "blockAllocator" => run_block(
            input,
            case["calls"].as_array().map_or(&[][..], Vec::as_slice),
            trace,
        ),
        "blockCounter" => run_counter(
            input,
            case["calls"].as_array().map_or(&[][..], Vec::as_slice),
            trace,
        ),
        "seriesCounters" => run_series(
            input,
            case["calls"].as_array().map_or(&[][..], Vec::as_slice),
            trace,
        ),
        // -------------------------------------------------------------- ledger.json
        "void" => drive(
            spec(input).and_then(|spec| {
                VoidNumbers::new(&spec, &VoidRequest::from_json(arg(input, "request"))?)
            }),
            &steps,
            trace,
        ),
        // ------------------------------------------------------------- gapless.json
        "gaplessReserve" => drive(
            spec(input).and_then(|s| {
                GaplessReserve::new(&s, counter_id, list(input, "ids"), int(input, "epoch"))
            }),
            &steps,
            trace,
        ),
        "finishIntent" => drive(
            spec(input).and_then(|s| {
                FinishIntent::new(
                    &s,
                    counter_id,
                    &intent(input),
                    int(input, "seq"),
                    int(input, "epoch"),
                )
            }),
            &steps,
            trace,
        ),
        "planCompletion" => {
            // `[id, null]`: nothing; `[id, n]`: a number of the intent's counter; `[id,
            // "elsewhere"]`: a number of another series, or not a number.
            let found: Vec<(Value, Holds)> = list(input, "found")
                .iter()
                .map(|pair| {
                    let holds = match &pair[1] {
                        Value::Null => Holds::Nothing,
                        n => ejson::read_i64(n).map_or(Holds::Elsewhere, Holds::Number),
                    };
                    (pair[0].clone(), holds)
                })
                .collect();
            let taken: Vec<i64> = list(input, "taken")
                .iter()
                .map(|n| ejson::read_i64(n).expect("taken"))
                .collect();
            plan_completion(
                &spec(input)?,
                period(input).as_ref(),
                &intent(input),
                &found,
                &taken,
            )
            .map(to_json)
        }
        "lease" => drive(Lease::new(&lease_request(input)), &steps, trace),
        "acquireLease" => drive(
            AcquireLease::new(&lease_request(input), text(input, "sequence")),
            &steps,
            trace,
        ),
        "renewLease" => drive(RenewLease::new(&lease_request(input)), &steps, trace),
        "numberGapless" => drive(
            numbering(input).and_then(|n| {
                NumberGapless::new(
                    &n,
                    counter_id,
                    list(input, "ids"),
                    int(input, "epoch"),
                    after(input),
                )
            }),
            &steps,
            trace,
        ),
        "completeIntent" => {
            let taken = list(input, "taken")
                .iter()
                .map(|n| ejson::read_i64(n).expect("taken"))
                .collect();
            let plan = numbering(input).and_then(|n| {
                CompleteIntent::new(
                    &n,
                    counter_id,
                    &intent(input),
                    taken,
                    int(input, "epoch"),
                    after(input),
                )
            });
            drive(plan, &steps, trace)
        }
        "completePending" => drive(
            numbering(input).and_then(|n| CompletePending::new(&n, int(input, "epoch"))),
            &steps,
            trace,
        ),
        // --------------------------------------------------------------- batch.json
        "numberBatch" => {
            let verify = arg(input, "verify").as_bool().unwrap_or(false);
            // `times`: per document, the shell's instant (null: none), for periodic batches.
            let times: Vec<Option<i64>> = list(input, "times")
                .iter()
                .map(|t| ejson::read_i64(t).ok())
                .collect();
            let plan = numbering(input).and_then(|n| {
                NumberBatch::dated(
                    &n,
                    list(input, "documents"),
                    &times,
                    int(input, "epoch"),
                    verify,
                    after(input),
                )
            });
            drive(plan, &steps, trace)
        }
        "seedFromExisting" => drive(
            numbering(input).and_then(|n| SeedFromExisting::new(&n)),
            &steps,
            trace,
        ),
        "parseNumbering" => numbering(input).map(to_json),
        "parseTriggerOptions" => {
            let keys = arg(input, "keys").as_object().cloned().unwrap_or_default();
            SequenceSpec::parse_trigger(text(input, "name"), &keys).map(to_json)
        }
        "parseCounterId" => {
            let key = CounterKey::parse(counter_id)?;
            if key.id().as_deref() != Ok(counter_id) {
                trace
                    .problems
                    .push("id() does not give the id back".to_owned());
            }
            if !arg(input, "options").is_null() {
                key.belongs_to(&spec(input)?)?;
            }
            Ok(to_json(key))
        }
        "further" => Ok(to_json(
            spec(input)?.further(opt_int(input, "a"), opt_int(input, "b")),
        )),
        "parseReply" => Reply::from_json(arg(input, "reply")).map(to_json),
        "checkShardKey" => {
            let entry = Some(arg(input, "entry")).filter(|entry| !entry.is_null());
            check_shard_key(text(input, "collection"), entry).map(|()| Value::Null)
        }
        other => audit_ops::run(other, input).unwrap_or_else(|| panic!("unknown op {other:?}")),
    }
}

/// Runs every case of one file; panics with every failure.
fn replay(file: &str) {
    let vectors = load(file);
    let cases = vectors["cases"].as_array().expect("cases array");
    let ops = vectors["ops"].as_object().expect("ops object");
    let mut failures = Vec::new();
    let mut names = BTreeSet::new();
    for case in cases {
        let name = case["name"].as_str().unwrap_or("?").to_owned();
        assert!(
            names.insert(name.clone()),
            "{file}: duplicate case name {name}"
        );
        let op = case["op"].as_str().unwrap_or("");
        assert!(ops.contains_key(op), "{name}: op {op} not described in ops");
        for key in case["input"].as_object().expect("input object").keys() {
            let params = ops[op]["params"].as_array().expect("params");
            assert!(
                params.iter().any(|p| p == key),
                "{name}: input `{key}` is not a param of {op}"
            );
        }
        let mut trace = Trace::default();
        let got = run(case, &mut trace);
        handed_over(case, &got, &mut trace);
        let with_calls = matches!(op, "blockAllocator" | "blockCounter" | "seriesCounters");
        if !with_calls || case.get("error").is_some() {
            compare("result", case, &got, &mut trace.problems);
        }
        let notes = to_json(&trace.notes);
        let want = case.get("notes").cloned().unwrap_or_else(|| json!([]));
        if notes != want {
            trace.problems.push(format!(
                "notes differ\n  expected: {want}\n  actual:   {notes}"
            ));
        }
        if !trace.differing.is_empty() || !trace.differing_calls.is_empty() {
            if let Some(path) = std::env::var_os("VECTORS_BLESS") {
                use std::io::Write;
                let line = json!({"file": file, "name": name, "commands": trace.differing.iter().map(|(i, c)| json!({"index": i, "command": c})).collect::<Vec<_>>(), "calls": trace.differing_calls.iter().map(|(i, c)| json!({"index": i, "output": c})).collect::<Vec<_>>()});
                let mut out = std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(path)
                    .expect("VECTORS_BLESS file");
                writeln!(out, "{line}").expect("write VECTORS_BLESS");
            }
        }
        if !trace.problems.is_empty() {
            failures.push(format!("── {name} ({op})\n{}", trace.problems.join("\n")));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases of {file} failed:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}

#[test]
fn core_vectors() {
    replay("core.json");
}

#[test]
fn gapless_vectors() {
    replay("gapless.json");
}

#[test]
fn batch_vectors() {
    replay("batch.json");
}

#[test]
fn ledger_vectors() {
    replay("ledger.json");
}

#[test]
fn every_error_code_has_a_vector() {
    let mut codes = BTreeSet::new();
    for file in FILES.into_iter().chain([AUDIT]) {
        collect_codes(&load(file), &mut codes);
    }
    let missing: Vec<_> = SeqError::codes().filter(|c| !codes.contains(*c)).collect();
    assert!(
        missing.is_empty(),
        "error codes without a vector: {missing:?}"
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
