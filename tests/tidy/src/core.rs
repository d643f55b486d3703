//! The core's invariants (ARCHITECTURE.md, `crates/mongo-seq-core`).

use std::collections::{BTreeMap, BTreeSet};

use crate::architecture;
use crate::source::{self, bare_rust_code, crate_at, files, read, relative, rust_code};

const CORE: &str = "crates/mongo-seq-core";

/// The core's dependencies: data, JSON and error derives. Anything else must be just as free of
/// I/O, clocks and randomness before it joins this list.
const CORE_DEPENDENCIES: [&str; 4] = ["serde", "serde_json", "sha2", "thiserror"];

/// What reaches the outside world or a clock: files, sockets, processes, threads, the
/// environment, time, randomness, printing, and the shells' runtime and driver.
const FORBIDDEN: [&str; 17] = [
    "std::fs",
    "std::net",
    "std::io",
    "std::process",
    "std::thread",
    "std::env",
    "std::time",
    "SystemTime",
    "Instant",
    "println!",
    "eprintln!",
    "print!",
    "dbg!",
    "tokio",
    "mongodb",
    "bson::",
    "rand::",
];

#[test]
fn the_core_depends_on_no_io_clock_or_randomness_crate() {
    let core = crate_at(CORE);
    let extra: Vec<String> = core
        .dependencies()
        .into_iter()
        .filter(|d| !CORE_DEPENDENCIES.contains(&d.as_str()))
        .collect();
    assert!(
        extra.is_empty(),
        "{CORE}/Cargo.toml depends on {extra:?}: the core does no I/O, reads no clock, draws no \
         random numbers (allowed: {CORE_DEPENDENCIES:?})"
    );
}

#[test]
fn the_core_does_no_io_and_reads_no_clock() {
    let mut found = Vec::new();
    for path in files(&crate_at(CORE).dir.join("src"), &[".rs"]) {
        let code = bare_rust_code(&read(&path));
        for (n, line) in code.lines().enumerate() {
            for word in FORBIDDEN {
                if line.contains(word) {
                    found.push(format!("{}:{}: {word}", relative(&path), n + 1));
                }
            }
        }
    }
    assert!(
        found.is_empty(),
        "I/O, a clock or randomness in the core (a shell does it and passes the result in, \
         e.g. `nowMs`, a `wait` command): {found:#?}"
    );
}

#[test]
fn the_core_denies_every_panic_path() {
    let lib = read(&crate_at(CORE).dir.join("src/lib.rs"));
    let code = source::without_comments(&lib, source::Lang::Rust);
    assert!(
        code.contains("#![forbid(unsafe_code)]"),
        "{CORE}/src/lib.rs: forbid(unsafe_code)"
    );
    let deny = code
        .split("#![deny(")
        .nth(1)
        .and_then(|rest| rest.split(')').next())
        .unwrap_or_default();
    for lint in [
        "clippy::unwrap_used",
        "clippy::expect_used",
        "clippy::panic",
        "clippy::indexing_slicing",
        "clippy::arithmetic_side_effects",
        "clippy::unreachable",
        "clippy::todo",
        "clippy::unimplemented",
    ] {
        assert!(
            deny.contains(lint),
            "{CORE}/src/lib.rs no longer denies {lint}: the core never panics on input"
        );
    }
}

/// The top-level module a core file belongs to (`counter/seed.rs` → `counter`).
fn module_of(path: &str) -> String {
    let first = path.split('/').next().unwrap_or(path);
    first.trim_end_matches(".rs").to_owned()
}

/// The first identifier at the start of `text`.
fn ident(text: &str) -> String {
    text.chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect()
}

/// Which top-level module each name the crate root re-exports comes from (`pub use
/// counter::seed::SeedFromMax;` → `SeedFromMax` → `counter`).
fn re_exports(lib: &str) -> BTreeMap<String, String> {
    let code = rust_code(lib);
    let mut names = BTreeMap::new();
    for statement in code.split("pub use ").skip(1) {
        let statement = statement.split(';').next().unwrap_or_default();
        let module = ident(statement);
        for word in statement.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')) {
            if !word.is_empty() {
                names
                    .entry(word.to_owned())
                    .or_insert_with(|| module.clone());
            }
        }
    }
    names
}

/// The top-level modules a file's code reaches through `crate::` (`crate::counter::…`,
/// `crate::{protocol::Plan, SeqError}`, a re-exported `crate::SeqError`).
fn dependencies(
    code: &str,
    modules: &BTreeSet<String>,
    exports: &BTreeMap<String, String>,
) -> BTreeSet<String> {
    let resolve = |name: &str| -> Option<String> {
        if modules.contains(name) {
            Some(name.to_owned())
        } else {
            exports.get(name).cloned()
        }
    };
    let mut found = BTreeSet::new();
    let mut rest = code;
    while let Some(at) = rest.find("crate::") {
        rest = &rest[at + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            // Top-level items of the group: the first identifier after `{` and after each `,`
            // at depth one.
            let mut depth = 1;
            let mut item_start = true;
            for (i, c) in group.char_indices() {
                if item_start && (c.is_ascii_alphanumeric() || c == '_') {
                    found.extend(resolve(&ident(&group[i..])));
                    item_start = false;
                }
                match c {
                    '{' => depth += 1,
                    '}' => {
                        depth -= 1;
                        if depth == 0 {
                            break;
                        }
                    }
                    ',' if depth == 1 => item_start = true,
                    _ => {}
                }
            }
        } else {
            found.extend(resolve(&ident(rest)));
        }
    }
    found
}

#[test]
fn core_modules_only_use_lower_layers() {
    let src = crate_at(CORE).dir.join("src");
    let layers = architecture::core_layers();
    let modules = source::top_level_modules(&src);
    let listed: BTreeSet<String> = layers.iter().cloned().collect();
    assert_eq!(
        modules, listed,
        "every top-level module of {CORE}/src is in ARCHITECTURE.md's layer line, once"
    );
    let rank: BTreeMap<&str, usize> = layers
        .iter()
        .enumerate()
        .map(|(i, m)| (m.as_str(), i))
        .collect();
    let exports = re_exports(&read(&src.join("lib.rs")));
    let mut upward = Vec::new();
    for path in files(&src, &[".rs"]) {
        let name = path
            .strip_prefix(&src)
            .expect("below src")
            .to_string_lossy()
            .replace('\\', "/");
        if name == "lib.rs" {
            continue;
        }
        let from = module_of(&name);
        for to in dependencies(&rust_code(&read(&path)), &modules, &exports) {
            if to != from && rank[to.as_str()] > rank[from.as_str()] {
                upward.push(format!("{name} uses crate::{to}"));
            }
        }
    }
    assert!(
        upward.is_empty(),
        "a core module uses a higher layer (ARCHITECTURE.md: {}): {upward:#?}",
        layers.join(" → ")
    );
}

#[test]
fn a_dependency_is_found_in_every_form() {
    let modules: BTreeSet<String> = ["counter", "protocol", "error"].map(String::from).into();
    let exports: BTreeMap<String, String> = [("SeqError".to_owned(), "error".to_owned())].into();
    let code = "use crate::counter::range::X;\nuse crate::{protocol::{plan::Plan, reply::Reply}, SeqError};";
    let found = dependencies(code, &modules, &exports);
    assert_eq!(
        found,
        ["counter", "error", "protocol"].map(String::from).into()
    );
}
