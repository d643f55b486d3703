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
