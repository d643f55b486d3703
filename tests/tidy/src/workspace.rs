//! Rules for every crate, found by listing folders (a crate added later is checked too).

use crate::source::{bare_rust_code, crates, files, read, relative};

/// The limit the protocol issue set: a file longer than this holds more than one concern.
const MAX_LINES: usize = 500;

#[test]
fn no_product_file_is_longer_than_the_limit() {
    let mut long = Vec::new();
    for krate in crates().into_iter().filter(|c| c.is_product()) {
        for folder in ["src", "tests"] {
            for path in files(&krate.dir.join(folder), &[".rs"]) {
                let lines = read(&path).lines().count();
                if lines > MAX_LINES {
                    long.push(format!("{}: {lines} lines", relative(&path)));
                }
            }
        }
    }
    assert!(
        long.is_empty(),
        "files over {MAX_LINES} lines (split by concern; move a big test module to its own file): \
         {long:#?}"
    );
}

/// Test binaries Cargo finds in a crate's `tests/` (a `x.rs`, or a folder `x/` with `main.rs`),
/// relative to the root.
fn test_binaries(tests: &std::path::Path) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(tests) else {
        return Vec::new();
    };
    let mut found: Vec<String> = entries
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| {
            (path.is_file() && path.extension().is_some_and(|e| e == "rs"))
                || path.join("main.rs").is_file()
        })
        .map(|path| relative(&path))
        .collect();
    found.sort();
    found
}

#[test]
fn one_integration_test_binary_per_crate() {
    // Every test binary links tokio and the driver again: one per crate (`tests/it/main.rs` and
    // its modules) compiles and links a change once. The library's `processes.rs` is apart: its
    // `main` (`harness = false`) is also the worker processes it starts, which a test of libtest
    // could only be by passing as a test in every other run.
    const APART: [&str; 1] = ["crates/mongo-seq/tests/processes.rs"];
    let mut more = Vec::new();
    for krate in crates() {
        let binaries: Vec<String> = test_binaries(&krate.dir.join("tests"))
            .into_iter()
            .filter(|binary| !APART.contains(&binary.as_str()))
            .collect();
        if binaries.len() > 1 {
            more.push(format!("{}: {binaries:?}", krate.name()));
        }
    }
    assert!(
        more.is_empty(),
        "crates with more than one integration-test binary (make the files modules of \
         `tests/it/main.rs`): {more:#?}"
    );
    for apart in APART {
        assert!(
            crate::source::root().join(apart).is_file(),
            "{apart} is gone: take it off the list"
        );
    }
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

/// Where `text` names a tracker issue by its number (the word, a space, an optional `#`, digits):
/// the byte offset of each mention.
fn issue_numbers(text: &str) -> Vec<usize> {
    let lower = text.to_ascii_lowercase();
    let bytes = lower.as_bytes();
    let mut found = Vec::new();
    for (at, _) in lower.match_indices("issue") {
        if at > 0 && bytes[at - 1].is_ascii_alphanumeric() {
            continue;
        }
        let mut i = at + "issue".len();
        if bytes.get(i) == Some(&b's') {
            i += 1;
        }
        if bytes.get(i) != Some(&b' ') {
            continue;
        }
        i += 1;
        if bytes.get(i) == Some(&b'#') {
            i += 1;
        }
        if bytes.get(i).is_some_and(u8::is_ascii_digit) {
            found.push(at);
        }
    }
    found
}

#[test]
fn no_file_names_an_issue_a_reader_cannot_look_up() {
    // The project's own tracker is not public: an issue number tells a reader nothing. Say what is
    // meant (the feature, a docs section). Upstream trackers (a GitHub URL, MongoDB's SERVER-…)
    // can be looked up, and tests/FAKE-SERVER.md cites the test server's own issues.
    let extensions = [
        ".rs", ".md", ".mjs", ".js", ".ts", ".mts", ".json", ".toml", ".py", ".sh",
    ];
    let mut found = Vec::new();
    for path in files(&crate::source::root(), &extensions) {
        let name = relative(&path);
        if name.split('/').any(|part| part.starts_with('.')) || name == "tests/FAKE-SERVER.md" {
            continue;
        }
        let text = read(&path);
        for at in issue_numbers(&text) {
            let line = crate::source::line_of(&text, at);
            let words = text.lines().nth(line - 1).unwrap_or_default();
            let upstream = ["github.com", "SERVER-", "jira"]
                .iter()
                .any(|u| words.contains(u));
            if !upstream {
                found.push(format!("{name}:{line}: {}", words.trim()));
            }
        }
    }
    assert!(
        found.is_empty(),
        "mentions of an issue by number: {found:#?}"
    );
}

#[test]
fn issue_numbers_are_found_in_every_form() {
    let text = format!(
        "see {w} {}, {W}s {} and 24, {w} #{}",
        20,
        11,
        3,
        w = "issue",
        W = "Issue"
    );
    assert_eq!(issue_numbers(&text).len(), 3);
    assert!(issue_numbers("reissue 5; the issue is 5; issues: 4; tissue 3").is_empty());
}
