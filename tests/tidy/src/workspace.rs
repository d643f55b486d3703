//! Rules for every crate, found by listing folders (a crate added later is checked too).

use crate::source::{bare_rust_code, crates, files, read, relative};

/// The limit the protocol issue set: a file longer than this holds more than one concern.
const MAX_LINES: usize = 500;

/// Files over the limit when the limit came to the core, at most as long as they were then: a
/// file here may shrink (and must leave this list once it is within the limit), never grow.
const OVER_THE_LIMIT: [(&str, usize); 4] = [
    ("crates/mongo-seq-core/src/counter/reservation.rs", 537),
    ("crates/mongo-seq-core/src/import/counters.rs", 588),
    ("crates/mongo-seq-core/src/numbering/intent.rs", 557),
    ("crates/mongo-seq-core/tests/vectors.rs", 662),
];

#[test]
fn no_product_file_is_longer_than_the_limit() {
    let mut long = Vec::new();
    let mut listed_but_short = Vec::new();
    for krate in crates().into_iter().filter(|c| c.is_product()) {
        for folder in ["src", "tests"] {
            for path in files(&krate.dir.join(folder), &[".rs"]) {
                let name = relative(&path);
                let lines = read(&path).lines().count();
                let limit = OVER_THE_LIMIT
                    .iter()
                    .find(|(listed, _)| *listed == name)
                    .map_or(MAX_LINES, |(_, was)| *was);
                if lines > limit {
                    long.push(format!("{name}: {lines} lines (at most {limit})"));
                } else if limit > MAX_LINES && lines <= MAX_LINES {
                    listed_but_short.push(name);
                }
            }
        }
    }
    assert!(
        long.is_empty(),
        "files over {MAX_LINES} lines, or longer than they were (split by concern; move a big \
         test module to its own file): {long:#?}"
    );
    assert!(
        listed_but_short.is_empty(),
        "within the limit now: take them off OVER_THE_LIMIT in tests/tidy/src/workspace.rs: \
         {listed_but_short:?}"
    );
}

#[test]
fn every_file_over_the_limit_still_exists() {
    let root = crate::source::root();
    let gone: Vec<&str> = OVER_THE_LIMIT
        .iter()
        .map(|(name, _)| *name)
        .filter(|name| !root.join(name).is_file())
        .collect();
    assert!(gone.is_empty(), "take them off OVER_THE_LIMIT: {gone:?}");
}

#[test]
fn anyhow_is_only_at_a_binary_s_edge() {
    // A binary's `src/main.rs` and `src/cli/` may turn errors into messages with anyhow; every
    // other place returns a typed error (thiserror) a caller can match on.
    let mut found = Vec::new();
    for krate in crates() {
        let src = krate.dir.join("src");
        if krate.dependencies().iter().any(|d| d == "anyhow") && !krate.is_binary() {
            found.push(format!("{}/Cargo.toml (a library)", krate.name()));
        }
        for path in files(&src, &[".rs"]) {
            let edge = krate.is_binary()
                && (path == src.join("main.rs") || path.starts_with(src.join("cli")));
            let code = bare_rust_code(&read(&path));
            let uses = ["anyhow::", "anyhow!", "use anyhow"]
                .iter()
                .any(|u| code.contains(u));
            if !edge && uses {
                found.push(relative(&path));
            }
        }
    }
    assert!(
        found.is_empty(),
        "anyhow outside a binary's main.rs and cli/: {found:#?}"
    );
}
