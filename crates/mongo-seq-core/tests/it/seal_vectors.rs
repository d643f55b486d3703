//! Replays `tests/vectors/seal.json` through the native core (`tests/runtimes/vector-cases.mjs`
//! replays it through Wasm, and the Python check of `docs/sealed-series.md` re-computes its
//! seals). `SEAL_VECTORS_BLESS=1` writes the core's output into cases that have none (a new
//! verifySeries case), to be read before it is committed.

use std::path::PathBuf;

use mongo_seq_core::seal::link::Link;
use mongo_seq_core::seal::verify::{verify_series, StoredLink};
use mongo_seq_core::SeqError;
use serde_json::{json, Value};

fn path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/vectors/seal.json")
}

fn optional_text(value: &Value) -> Option<&str> {
    value.as_str()
}

fn run(op: &str, input: &Value) -> Result<Value, SeqError> {
    match op {
        "sealLink" => {
            let link = Link::from_json("link", &input["link"])?;
            let previous = optional_text(&input["previous"]);
            let sealed = link.sealed(previous)?;
            Ok(json!({"encoding": sealed.encoding, "hash": sealed.seal.hash}))
        }
        "verifySeries" => {
            let links = StoredLink::list_from_json("links", &input["links"])?;
            let report = verify_series(
                input["series"].as_str().unwrap_or_default(),
                &links,
                optional_text(&input["anchor"]),
                optional_text(&input["head"]),
            );
            Ok(serde_json::to_value(report).expect("a report serializes"))
        }
        other => panic!("unknown op {other}"),
    }
}

#[test]
fn seal_vectors() {
    let text = std::fs::read_to_string(path()).expect("seal.json");
    let mut file: Value = serde_json::from_str(&text).expect("seal.json is JSON");
    let bless = std::env::var_os("SEAL_VECTORS_BLESS").is_some();
    let mut blessed = false;
    let mut problems = Vec::new();
    let cases = file["cases"].as_array_mut().expect("cases");
    assert!(cases.len() > 20);
    for case in cases.iter_mut() {
        let name = case["name"].as_str().unwrap_or_default().to_owned();
        let result = run(case["op"].as_str().unwrap_or_default(), &case["input"]);
        match (&result, case.get("output"), case.get("error")) {
            (Ok(actual), Some(expected), None) if actual == expected => {}
            (Ok(actual), None, None) if bless => {
                case["output"] = actual.clone();
                blessed = true;
            }
            (Err(error), None, Some(expected))
                if expected["code"] == error.code()
                    && error
                        .to_string()
                        .contains(expected["messageIncludes"].as_str().unwrap_or_default()) => {}
            _ => problems.push(format!("── {name}\nresult: {result:?}\nexpected: {case}")),
        }
    }
    if blessed {
        let pretty = serde_json::to_string_pretty(&file).expect("serializes") + "\n";
        std::fs::write(path(), pretty).expect("writing seal.json");
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
