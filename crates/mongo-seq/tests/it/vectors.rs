//! The core's vector file (`tests/vectors/core.json`) through this library, where the library
//! has a layer of its own: options given as configuration (`SequenceOptions::try_from` →
//! `Sequences::sequence` → `Sequence::options`), counter ids (`Sequence::scoped` →
//! `counter_id`), formats (`Sequence::format`), and the plans of `current`, `set_next`,
//! `seed_from_max`, `rewind_all` and reservations run by the library's loop ([`run_plan`]) with
//! the vectors' replies, commands compared one by one. (The core replays every case natively,
//! `crates/mongo-seq-core/tests/it/vectors/mod.rs`; the driver's side of each command is covered
//! against the server by the other tests here.)

use std::path::PathBuf;

use mongo_seq::core::{
    AdoptDefinition, Command, CurrentValue, Plan, Reply, Reservation, ReserveRequest,
    RewindSequence, SeedFromMax, SetNext, Spelling,
};
use mongo_seq::{run_plan, Error, Execute, Period, SeqError, SequenceOptions, Sequences};
use mongodb::options::{ClientOptions, ServerAddress};
use serde::Serialize;
use serde_json::Value;

type Outcome = Result<Value, Error>;

fn load() -> Value {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/vectors/core.json");
    serde_json::from_str(&std::fs::read_to_string(path).expect("core.json")).expect("JSON")
}

/// A client that never connects: these cases send nothing to a server.
fn client() -> mongodb::Client {
    let options = ClientOptions::builder()
        .hosts(vec![ServerAddress::Tcp {
            host: "127.0.0.1".to_owned(),
            port: Some(9),
        }])
        .build();
    mongodb::Client::with_options(options).expect("a client")
}

/// The sequence a case's `options` define, through the library's configuration path.
fn sequence(seqs: &Sequences, input: &Value) -> Result<mongo_seq::Sequence, Error> {
    let options = input.get("options").cloned().unwrap_or(Value::Null);
    let name = options
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_owned();
    seqs.sequence(&name, SequenceOptions::try_from(options)?)
}

/// Answers each command with the next step's reply, recording every command that differs.
struct Scripted {
    steps: std::vec::IntoIter<Value>,
    problems: Vec<String>,
}

impl Execute for Scripted {
    type Error = SeqError;

    async fn execute(&mut self, command: Command) -> Result<Reply, SeqError> {
        let Some(step) = self.steps.next() else {
            self.problems.push(format!(
                "a command beyond the steps: {}",
                serde_json::to_value(&command).unwrap()
            ));
            return Err(SeqError::UnexpectedReply {
                reason: "no more steps".to_owned(),
            });
        };
        let actual = serde_json::to_value(&command).expect("a command serializes");
        if actual != step["command"] {
            self.problems.push(format!(
                "command differs\n  expected: {}\n  actual:   {actual}",
                step["command"]
            ));
        }
        Reply::from_json(&step["reply"])
    }
}

async fn drive<P>(plan: Result<P, SeqError>, case: &Value, problems: &mut Vec<String>) -> Outcome
where
    P: Plan + Send,
    P::Output: Serialize,
{
    let mut plan = plan?;
    let steps = case["steps"].as_array().cloned().unwrap_or_default();
    let mut scripted = Scripted {
        steps: steps.into_iter(),
        problems: Vec::new(),
    };
    let outcome = run_plan(&mut plan, &mut scripted).await;
    if scripted.steps.len() > 0 {
        scripted
            .problems
            .push(format!("{} steps left unused", scripted.steps.len()));
    }
    problems.extend(scripted.problems);
    Ok(serde_json::to_value(outcome?).expect("an output serializes"))
}

fn int(input: &Value, key: &str) -> i64 {
    mongo_seq::core::ejson::read_i64(&input[key]).expect("an integer input")
}

async fn run(seqs: &Sequences, case: &Value, problems: &mut Vec<String>) -> Option<Outcome> {
    let input = &case["input"];
    let counter_id = input["counterId"].as_str().unwrap_or("");
    let force = input["force"].as_bool().unwrap_or(false);
    let spec = || sequence(seqs, input).map(|s| s.options().clone());
    let core = |e: Error| match e {
        Error::Sequence(e) => e,
        other => panic!("not a core error: {other}"),
    };
    Some(match case["op"].as_str()? {
        "parseOptions" => {
            sequence(seqs, input).map(|s| serde_json::to_value(s.options()).expect("serializes"))
        }
        "counterId" => sequence(seqs, input).and_then(|s| {
            let mut s = match input.get("document").filter(|d| !d.is_null()) {
                Some(document) => {
                    s.scoped(&mongodb::bson::to_document(document).expect("a document"))?
                }
                None => s,
            };
            // A period: the handle of that period's counter (`in_period`).
            if let Some(text) = input["period"].as_str() {
                s = s.in_period(&Period::from_text("period", text)?)?;
            }
            Ok(Value::String(s.counter_id()?.to_owned()))
        }),
        "formatSeq" => {
            let template = input["template"].as_str().unwrap_or("");
            let value = int(input, "value");
            match input["period"].as_str() {
                // A period's tokens: a sequence resetting as the period reads.
                Some(text) => Period::from_text("period", text)
                    .map_err(Error::from)
                    .and_then(|period| {
                        let options = SequenceOptions::new()
                            .reset(period.reset())
                            .format(template);
                        let name = format!("vectors-{}", period.reset().name());
                        let s = seqs.sequence(&name, options)?;
                        Ok(s.format_in(value, Some(&period))
                            .map_or(Value::Null, Value::String))
                    }),
                None => seqs
                    .sequence("vectors", SequenceOptions::new().format(template))
                    .map(|s| s.format(value).map_or(Value::Null, Value::String)),
            }
        }
        "current" => {
            let plan = spec()
                .map_err(core)
                .and_then(|s| CurrentValue::new(&s, counter_id));
            drive(plan, case, problems).await
        }
        "setNext" => {
            let next = int(input, "next");
            let plan = spec()
                .map_err(core)
                .and_then(|s| SetNext::new(&s, counter_id, next, force));
            drive(plan, case, problems).await
        }
        "seedFromMax" => {
            let value = int(input, "value");
            let plan = spec()
                .map_err(core)
                .and_then(|s| SeedFromMax::new(&s, counter_id, value));
            drive(plan, case, problems).await
        }
        "adoptDefinition" => {
            let gapless = input["gapless"].as_bool().unwrap_or(false);
            let plan = spec()
                .map_err(core)
                .and_then(|s| AdoptDefinition::new(&s.with_gapless(gapless), counter_id));
            drive(plan, case, problems).await
        }
        "rewindAll" => {
            let gapless = input["gapless"].as_bool();
            let rewind = match input["existing"].as_bool() {
                Some(true) => RewindSequence::of_existing,
                _ => RewindSequence::new,
            };
            let plan = spec().map_err(core).map(|s| rewind(&s, force, gapless));
            drive(plan, case, problems).await
        }
        "reserve" => {
            let plan = spec()
                .map_err(core)
                .and_then(|s| Reservation::new(&s, &ReserveRequest::from_json(&input["request"])?));
            drive(plan, case, problems).await
        }
        _ => return None,
    })
}

#[tokio::test]
async fn the_core_s_vectors_through_the_library() {
    let vectors = load();
    let db = client().database("vectors");
    let (mut ran, mut failures) = (0, Vec::new());
    for case in vectors["cases"].as_array().expect("cases") {
        let name = case["name"].as_str().unwrap_or("?");
        let mut problems = Vec::new();
        // Fresh Sequences per case: the cases reuse names with other options.
        let Some(outcome) = run(&Sequences::new(&db), case, &mut problems).await else {
            continue;
        };
        ran += 1;
        match (case.get("error"), &outcome) {
            (Some(error), Err(actual)) => {
                if actual.code() != error["code"].as_str() {
                    problems.push(format!("expected {}, got {actual:?}", error["code"]));
                }
                // The vectors' messages name options as the core does (`timeZone`); the
                // library's are the same in Rust's spelling (`time_zone`).
                let core_message = match actual {
                    Error::Sequence(core) => {
                        if actual.to_string() != core.message_in(Spelling::Snake) {
                            problems
                                .push(format!("message {actual} is not the core's in snake_case"));
                        }
                        core.to_string()
                    }
                    other => other.to_string(),
                };
                if let Some(fragment) = error["messageIncludes"].as_str() {
                    if !core_message.contains(fragment) {
                        problems.push(format!("message {core_message} lacks {fragment:?}"));
                    }
                }
            }
            (Some(error), Ok(output)) => {
                problems.push(format!("expected {}, got output {output}", error["code"]))
            }
            (None, Err(actual)) => problems.push(format!("unexpected error {actual}")),
            (None, Ok(output)) => {
                if &case["output"] != output {
                    problems.push(format!(
                        "output differs\n  expected: {}\n  actual:   {output}",
                        case["output"]
                    ));
                }
            }
        }
        if !problems.is_empty() {
            failures.push(format!("{name}:\n  {}", problems.join("\n  ")));
        }
    }
    assert!(ran > 150, "only {ran} cases ran");
    assert!(
        failures.is_empty(),
        "{} of {ran} cases failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
    println!("{ran} vector cases through the library");
}
