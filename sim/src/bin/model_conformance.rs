//! The drivers' unified-format spec tests against the simulation's model (see
//! `mongo_seq_sim::conformance`):
//!
//!     model_conformance [--verbose] [SPEC_ROOT]   (default .tools/spec-tests/pymongo-<version>/test)
//!
//! Prints each simplified and failed test, the skip reasons grouped, and
//! `MODEL-CONFORMANCE passed=… simplified=… skipped=… failed=…`; exits 1 on a failure.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use bson::Bson;
use mongo_seq_sim::conformance::{run_test, Verdict};

/// The spec areas the model claims to model (CRUD and change streams).
const DIRECTORIES: &[&str] = &["crud/unified", "change_streams/unified"];
/// What the model stands for when a file asks for a server: a replica set of this version.
const MODEL_VERSION: [u32; 3] = [7, 0, 0];

fn version(text: &str) -> [u32; 3] {
    let mut parts = text.split('.').map(|p| p.parse().unwrap_or(0));
    [
        parts.next().unwrap_or(0),
        parts.next().unwrap_or(0),
        parts.next().unwrap_or(0),
    ]
}

/// Why a file's or test's runOnRequirements exclude the model (None: one alternative holds).
fn unmet(requirements: Option<&Bson>) -> Option<String> {
    let list = requirements?.as_array()?;
    let mut reasons = Vec::new();
    for requirement in list.iter().filter_map(Bson::as_document) {
        let reason = if requirement
            .get_str("minServerVersion")
            .is_ok_and(|v| version(v) > MODEL_VERSION)
        {
            Some("needs a server version above the model's (it follows the 7.0 manual)".to_owned())
        } else if requirement
            .get_str("maxServerVersion")
            .is_ok_and(|v| version(v) < MODEL_VERSION)
        {
            Some("written for servers older than the model's".to_owned())
        } else if requirement
            .get_array("topologies")
            .is_ok_and(|t| !t.iter().any(|t| t.as_str() == Some("replicaset")))
        {
            Some("needs a topology other than a replica set".to_owned())
        } else if requirement.get_str("serverless") == Ok("require")
            || requirement.contains_key("serverParameters")
        {
            Some("needs a serverless deployment or server parameters".to_owned())
        } else {
            None
        };
        match reason {
            None => return None,
            Some(r) => reasons.push(r),
        }
    }
    reasons.into_iter().next()
}

fn default_root() -> PathBuf {
    let spec = std::fs::read_to_string("tests/conformance/specs.mjs").unwrap_or_default();
    let pinned = spec
        .lines()
        .find_map(|l| l.strip_prefix("export const PYMONGO_VERSION = \""))
        .and_then(|rest| rest.split('"').next())
        .unwrap_or("4.20.1")
        .to_owned();
    PathBuf::from(format!(".tools/spec-tests/pymongo-{pinned}/test"))
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let verbose = args.iter().any(|a| a == "--verbose");
    let root = args
        .iter()
        .find(|a| !a.starts_with("--"))
        .map(PathBuf::from)
        .unwrap_or_else(default_root);
    if !root.is_dir() {
        eprintln!(
            "model-conformance: no spec files at {} (run tests/conformance/fetch-specs)",
            root.display()
        );
        return ExitCode::from(2);
    }
    let (mut passed, mut simplified, mut skipped, mut failed) = (0, 0, 0, 0);
    let mut reasons: BTreeMap<String, usize> = BTreeMap::new();
    for directory in DIRECTORIES {
        let mut files: Vec<PathBuf> = std::fs::read_dir(root.join(directory))
            .map(|d| {
                d.filter_map(|e| e.ok().map(|e| e.path()))
                    .filter(|p| p.extension().is_some_and(|x| x == "json"))
                    .collect()
            })
            .unwrap_or_default();
        files.sort();
        for path in files {
            let name = path
                .strip_prefix(&root)
                .unwrap_or(Path::new(""))
                .display()
                .to_string();
            let Ok(text) = std::fs::read_to_string(&path) else {
                continue;
            };
            let Ok(json) = serde_json::from_str::<serde_json::Value>(&text) else {
                eprintln!("model-conformance: {name}: not JSON");
                return ExitCode::from(2);
            };
            let Ok(Bson::Document(file)) = Bson::try_from(json) else {
                continue;
            };
            let file_unmet = unmet(file.get("runOnRequirements"));
            for test in file
                .get_array("tests")
                .map(|a| a.to_vec())
                .unwrap_or_default()
                .iter()
                .filter_map(Bson::as_document)
            {
                let description = test.get_str("description").unwrap_or_default();
                let verdict = match file_unmet
                    .clone()
                    .or_else(|| unmet(test.get("runOnRequirements")))
                {
                    Some(reason) => Verdict::Skipped(reason),
                    None if test.contains_key("skipReason") => {
                        Verdict::Skipped("the spec skips it".into())
                    }
                    None => run_test(&name, &file, test),
                };
                match verdict {
                    Verdict::Passed => {
                        passed += 1;
                        if verbose {
                            println!("PASS {name} :: {description}");
                        }
                    }
                    Verdict::Simplified(why) => {
                        simplified += 1;
                        println!("SIMPLIFIED {name} :: {description} — {why}");
                    }
                    Verdict::Skipped(why) => {
                        skipped += 1;
                        *reasons.entry(why).or_default() += 1;
                    }
                    Verdict::Failed(why) => {
                        failed += 1;
                        println!("FAIL {name} :: {description} — {why}");
                    }
                }
            }
        }
    }
    let mut grouped: Vec<_> = reasons.into_iter().collect();
    grouped.sort_by_key(|(_, count)| std::cmp::Reverse(*count));
    for (reason, count) in grouped {
        println!("SKIP {count:4} × {reason}");
    }
    println!("MODEL-CONFORMANCE passed={passed} simplified={simplified} skipped={skipped} failed={failed}");
    if failed > 0 {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
