//! ARCHITECTURE.md stays true: every path it names exists, every code name it names is in the
//! code, it stays a short map, and its core layer line is the one the layering test enforces.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crate::source::{files, read, root};

/// A map, not a manual, read in a quarter of an hour: one paragraph per folder and its invariant;
/// a longer text belongs in the modules' docs, an exception in a tidy allow-list.
const MAX_LINES: usize = 250;

/// Words in backquotes that look like paths but are not files.
const NOT_PATHS: [&str; 1] = [
    // The npm package's subpath export.
    "mongo-seq/mongoose",
];

fn document() -> String {
    read(&root().join("ARCHITECTURE.md"))
}

/// The core's top-level modules, lowest layer first: the backquoted names after "lowest first"
/// in ARCHITECTURE.md's layer paragraph (`protocol/` → `protocol`, `error.rs` → `error`).
pub fn core_layers() -> Vec<String> {
    let text = document();
    let paragraph = text
        .split("\n\n")
        .find(|p| p.contains("lowest first"))
        .expect("ARCHITECTURE.md names the core's layers in a paragraph saying \"lowest first\"");
    let after = paragraph.split("lowest first").nth(1).unwrap_or_default();
    let layers: Vec<String> = spans(after)
        .into_iter()
        .filter(|s| s.ends_with('/') || s.ends_with(".rs"))
        .map(|s| s.trim_end_matches('/').trim_end_matches(".rs").to_owned())
        .collect();
    assert!(
        layers.len() > 3,
        "the layer line lists the core's modules: {layers:?}"
    );
    layers
}

/// The backquoted spans of a text.
fn spans(text: &str) -> Vec<String> {
    text.split('`')
        .enumerate()
        .filter(|(i, _)| i % 2 == 1)
        .map(|(_, s)| s.to_owned())
        .collect()
}

/// The targets of Markdown links `[text](target)` that are not URLs.
fn links(line: &str) -> Vec<String> {
    line.split("](")
        .skip(1)
        .filter_map(|rest| rest.split(')').next())
        .filter(|t| !t.contains("://") && !t.starts_with('#'))
        .map(|t| t.split('#').next().unwrap_or(t).to_owned())
        .collect()
}

const EXTENSIONS: [&str; 10] = [
    ".rs", ".js", ".mjs", ".ts", ".md", ".toml", ".json", ".yml", ".yaml", ".sh",
];

/// A span as a path, if it is one: `sim/src/executor.rs::run_plan` → `sim/src/executor.rs`.
fn as_path(span: &str) -> Option<String> {
    let span = span
        .split("::")
        .next()
        .unwrap_or(span)
        .trim_end_matches("()");
    let plain = span
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '/' | '*'));
    let looks = span.contains('/') || EXTENSIONS.iter().any(|e| span.ends_with(e));
    (plain && looks && !span.starts_with('/') && !NOT_PATHS.contains(&span))
        .then(|| span.to_owned())
}

/// Whether `path` (maybe with one `*` in its last part) names something under `base`.
fn exists(base: &Path, path: &str) -> bool {
    let path = path.trim_end_matches('/');
    let (dir, pattern) = path.rsplit_once('/').unwrap_or(("", path));
    match pattern.split_once('*') {
        None => base.join(path).exists(),
        Some((prefix, suffix)) => std::fs::read_dir(base.join(dir))
            .map(|entries| {
                entries.flatten().any(|e| {
                    let name = e.file_name().to_string_lossy().into_owned();
                    name.starts_with(prefix) && name.ends_with(suffix)
                })
            })
            .unwrap_or(false),
    }
}

/// A bare file name (`session.rs`) found anywhere under `base`.
fn found_below(base: &Path, name: &str) -> bool {
    !name.contains('/')
        && files(base, &[name])
            .iter()
            .any(|p| p.file_name().is_some_and(|f| f == name))
}

#[test]
fn every_path_architecture_md_names_exists() {
    let root = root();
    // Paths are from the root, or from a folder the enclosing headings name in backquotes.
    let mut bases: Vec<(usize, Vec<PathBuf>)> = Vec::new();
    let mut missing = Vec::new();
    let mut fenced = false;
    for (n, line) in document().lines().enumerate() {
        if line.starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        // A backquoted span must not cross a line, or the spans after it pair up wrongly.
        if line.matches('`').count() % 2 == 1 {
            missing.push(format!(
                "ARCHITECTURE.md:{}: a `span` crosses the line's end",
                n + 1
            ));
        }
        if let Some(level) = line
            .strip_prefix('#')
            .map(|l| 1 + l.chars().take_while(|c| *c == '#').count())
        {
            bases.retain(|(l, _)| *l < level);
            // A heading's folders, from the root or from an enclosing heading's folder.
            let enclosing: Vec<PathBuf> = std::iter::once(root.clone())
                .chain(bases.iter().flat_map(|(_, b)| b.iter().cloned()))
                .collect();
            let named: Vec<PathBuf> = spans(line)
                .iter()
                .filter_map(|s| as_path(s))
                .flat_map(|p| enclosing.iter().map(move |base| base.join(&p)))
                .filter(|p| p.is_dir())
                .collect();
            bases.push((level, named));
        }
        for path in spans(line)
            .iter()
            .filter_map(|s| as_path(s))
            .chain(links(line))
        {
            let bases = bases.iter().flat_map(|(_, b)| b);
            let ok = exists(&root, &path)
                || bases
                    .clone()
                    .any(|base| exists(base, &path) || found_below(base, &path));
            if !ok {
                missing.push(format!("ARCHITECTURE.md:{}: {path}", n + 1));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "paths ARCHITECTURE.md names that do not exist (from the root, or from a folder the \
         heading names): {missing:#?}"
    );
}

/// Every identifier-like word in the code (Rust, JS, TypeScript, manifests, scripts).
fn code_words() -> BTreeSet<String> {
    let root = root();
    let mut words = BTreeSet::new();
    let mut sources = files(
        &root,
        &[
            ".rs",
            ".js",
            ".mjs",
            ".cjs",
            ".ts",
            ".toml",
            ".json",
            "Makefile",
            "Containerfile",
        ],
    );
    sources.extend(files(&root.join("scripts"), &[""]));
    sources.extend(files(&root.join("js/scripts"), &[""]));
    sources.push(root.join(".ci/run"));
    for path in sources {
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        for word in text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')) {
            if !word.is_empty() {
                words.insert(word.to_owned());
            }
        }
    }
    words
}

#[test]
fn every_code_name_architecture_md_names_exists() {
    // `SequenceSpec::KEYS`, `Plan::current_step`, `core.optionKeys()`, `BlockCounter`: each
    // part must be a word of the code (a renamed type or function fails here).
    let words = code_words();
    let mut missing = Vec::new();
    for (n, line) in document().lines().enumerate() {
        for span in spans(line) {
            if as_path(&span).is_some() {
                continue;
            }
            let name = span.trim_end_matches("()");
            let parts: Vec<&str> = name.split("::").flat_map(|p| p.split('.')).collect();
            let identifier = |p: &&str| {
                p.chars()
                    .next()
                    .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                    && p.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            };
            if parts.iter().all(identifier) {
                for part in parts {
                    if !words.contains(part) {
                        missing.push(format!("ARCHITECTURE.md:{}: `{span}` ({part})", n + 1));
                    }
                }
            }
        }
    }
    assert!(
        missing.is_empty(),
        "names ARCHITECTURE.md gives that the code does not have: {missing:#?}"
    );
}

#[test]
fn architecture_md_is_a_short_map() {
    let lines = document().lines().count();
    assert!(
        lines <= MAX_LINES,
        "ARCHITECTURE.md has {lines} lines (at most {MAX_LINES}): a map, not a manual; details \
         belong in the modules' docs"
    );
}

/// The `###` sections of the code map, each with the `####` sections below it: (heading, text).
fn code_map_areas(text: &str) -> Vec<(String, String)> {
    let map = text
        .split("\n## ")
        .find(|s| s.starts_with("Code map"))
        .expect("a `## Code map` section");
    map.split("\n### ")
        .skip(1)
        .map(|area| {
            let (heading, body) = area.split_once('\n').unwrap_or((area, ""));
            (heading.to_owned(), body.to_owned())
        })
        .collect()
}

#[test]
fn the_code_map_names_every_module_of_the_product() {
    // Each product crate's area names every top-level module of its `src` (a file `x.rs` or a
    // folder `x/`): a module added later cannot be left off the map.
    let text = document();
    let areas = code_map_areas(&text);
    let mut missing = Vec::new();
    for krate in crate::source::crates()
        .into_iter()
        .filter(|c| c.is_product())
    {
        let src = krate.dir.join("src");
        let folder = crate::source::relative(&src);
        let Some((_, body)) = areas
            .iter()
            .find(|(heading, _)| spans(heading).contains(&folder))
        else {
            missing.push(format!("{folder}: no `### `{folder}`` area"));
            continue;
        };
        let named = spans(body);
        for module in crate::source::top_level_modules(&src) {
            let file = format!("{module}.rs");
            let dir = format!("{module}/");
            let on_map = named.iter().any(|span| {
                let span = span.trim_end_matches("()");
                span == file
                    || span == dir
                    || span.ends_with(&format!("/{file}"))
                    || span.ends_with(&format!("/{dir}"))
            });
            if !on_map {
                missing.push(format!("{folder}: {file} or {dir}"));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "modules the code map does not name (one phrase in their crate's area): {missing:#?}"
    );
}

#[test]
fn every_area_has_an_architecture_invariant() {
    // Each `###` and `####` section of the code map states at least one invariant.
    let text = document();
    let map = text
        .split("\n## ")
        .find(|s| s.starts_with("Code map"))
        .expect("a `## Code map` section");
    let mut sections: Vec<(String, bool)> = Vec::new();
    for line in map.lines().skip(1) {
        if line.starts_with("### ") || line.starts_with("#### ") {
            sections.push((line.to_owned(), false));
        } else if line.contains("**Architecture Invariant") {
            if let Some(last) = sections.last_mut() {
                last.1 = true;
            }
        }
    }
    let without: Vec<&String> = sections
        .iter()
        .filter(|(_, has)| !has)
        .map(|(h, _)| h)
        .collect();
    assert!(
        sections.len() > 10,
        "the code map has its areas: {sections:?}"
    );
    assert!(
        without.is_empty(),
        "code map sections without an invariant: {without:#?}"
    );
}

#[test]
fn every_relative_link_of_the_documentation_resolves() {
    // Every Markdown file's `[text](path)` (READMEs, guides, this document): a file moved by a
    // refactoring leaves no dead link behind.
    let mut dead = Vec::new();
    for path in files(&root(), &[".md"]) {
        let folder = path.parent().expect("a folder");
        for (n, line) in read(&path).lines().enumerate() {
            for target in links(line) {
                if !target.is_empty()
                    && !target.starts_with("mailto:")
                    && !folder.join(&target).exists()
                {
                    dead.push(format!(
                        "{}:{}: {target}",
                        crate::source::relative(&path),
                        n + 1
                    ));
                }
            }
        }
    }
    assert!(dead.is_empty(), "dead links: {dead:#?}");
}

#[test]
fn spans_and_paths() {
    assert_eq!(
        as_path("sim/src/executor.rs::run_plan").as_deref(),
        Some("sim/src/executor.rs")
    );
    assert_eq!(as_path("protocol/"), Some("protocol/".to_owned()));
    assert_eq!(as_path("SequenceSpec::KEYS"), None);
    assert_eq!(as_path("/healthz"), None);
    assert_eq!(as_path("w: \"majority\""), None);
    assert!(exists(
        &root(),
        "crates/mongo-seq-core/tests/it/no_panic*.rs"
    ));
    assert!(!exists(
        &root(),
        "crates/mongo-seq-core/tests/it/nothing*.rs"
    ));
    assert_eq!(
        links("see [leases](crates/x.rs), [y](https://e.org)"),
        ["crates/x.rs"]
    );
}
