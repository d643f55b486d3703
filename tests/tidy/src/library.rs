//! The Rust library's rules (ARCHITECTURE.md, `crates/mongo-seq/src`): its executor stands on
//! the core and the driver alone, and it holds no global state, spawns no stray task, blocks no
//! runtime and holds no lock across an `.await`.

use crate::imports::Graph;
use crate::source::{crate_at, files, read, relative, without_comments, Lang};

const LIBRARY: &str = "crates/mongo-seq";

/// The library's sources without comments (doc examples are not its code), test modules kept.
fn sources() -> Vec<(String, String)> {
    let src = crate_at(LIBRARY).dir.join("src");
    let found: Vec<(String, String)> = files(&src, &[".rs"])
        .into_iter()
        .map(|path| {
            let code = without_comments(&read(&path), Lang::Rust);
            (relative(&path), code)
        })
        .collect();
    assert!(found.len() > 10, "the library's sources: {found:?}");
    found
}

#[test]
fn the_executor_imports_nothing_of_the_rest_of_the_library() {
    // The sidecar and applications run plans through it without the rest of this crate.
    let graph = Graph::new(&crate_at(LIBRARY).dir.join("src/lib.rs"));
    let inside = |path: &[String]| path.first().is_some_and(|m| m == "executor");
    let mut found = Vec::new();
    for (from, targets) in graph.edges().into_iter().enumerate() {
        for to in targets {
            if inside(graph.path(from)) && !inside(graph.path(to)) {
                found.push(format!("{} → {}", graph.name(from), graph.name(to)));
            }
        }
    }
    assert!(
        found.is_empty(),
        "the library's executor/ uses the rest of the crate: {found:#?}"
    );
}

#[test]
fn the_library_has_no_global_state_no_stray_task_and_blocks_nothing() {
    // The only spawn is a counter's refill, whose handle the counter keeps and aborts.
    let mut found = Vec::new();
    for (file, code) in sources() {
        for line in code.lines() {
            let word = |w: &str| {
                line.split(|c: char| !c.is_alphanumeric() && c != '_')
                    .any(|t| t == w)
            };
            if word("static") && !line.contains("'static") {
                found.push(format!("{file}: a static: {line}"));
            }
            for blocking in [
                "thread::sleep",
                "block_on",
                "std::fs",
                "std::net",
                "blocking_",
            ] {
                if line.contains(blocking) {
                    found.push(format!("{file} blocks: {line}"));
                }
            }
            if line.contains("spawn(") && !file.ends_with("src/counter.rs") {
                found.push(format!("{file}: a task spawned outside a counter: {line}"));
            }
            // Checked loosely: every `lock()` is a short statement or a block that ends before
            // the next `.await`, so no line both locks and awaits.
            if line.contains(".lock()") && line.contains(".await") {
                found.push(format!("{file}: a lock held across an .await: {line}"));
            }
        }
    }
    assert!(found.is_empty(), "{found:#?}");
}
