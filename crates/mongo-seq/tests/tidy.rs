//! Tidy tests: the library's structural rules (ARCHITECTURE.md, "crates/mongo-seq"), checked on
//! its source text, so that breaking one fails `cargo test` instead of waiting for a reviewer.

use std::path::{Path, PathBuf};

const MAX_LINES: usize = 500;

/// Every `.rs` file under `src/`, with its path relative to it, and its code without comment
/// lines (doc examples are not the library's code).
fn sources() -> Vec<(String, String, usize)> {
    let src = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    let mut stack = vec![src.clone()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect("a source folder") {
            let path = entry.expect("an entry").path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let text = std::fs::read_to_string(&path).expect("a source file");
                let code: Vec<&str> = text
                    .lines()
                    .filter(|l| !l.trim_start().starts_with("//"))
                    .collect();
                files.push((relative(&path, &src), code.join("\n"), text.lines().count()));
            }
        }
    }
    files.sort();
    assert!(files.len() > 10, "the sources were found");
    files
}

fn relative(path: &Path, root: &Path) -> String {
    let relative = path.strip_prefix(root).expect("below src");
    relative.to_string_lossy().replace('\\', "/")
}

#[test]
fn no_file_is_over_500_lines() {
    for (file, _, lines) in sources() {
        assert!(
            lines <= MAX_LINES,
            "src/{file}: {lines} lines (at most {MAX_LINES})"
        );
    }
}

/// **Architecture Invariant:** the executor knows the core and the driver only, so the sidecar
/// and applications run plans through it without the rest of this crate.
#[test]
fn the_executor_imports_nothing_of_the_rest_of_the_crate() {
    for (file, code, _) in sources()
        .into_iter()
        .filter(|(f, ..)| f.starts_with("executor/"))
    {
        for line in code.lines().filter(|l| l.contains("crate::")) {
            assert!(
                line.contains("crate::executor"),
                "src/{file} uses the rest of the crate: {line}"
            );
        }
    }
}

/// **Architecture Invariant:** no global state, no task the library does not own (the only
/// spawn is a counter's refill, whose handle the counter keeps and aborts), and nothing that
/// blocks the runtime.
#[test]
fn no_global_state_no_stray_task_no_blocking() {
    for (file, code, _) in sources() {
        for line in code.lines() {
            let word = |w: &str| {
                line.split(|c: char| !c.is_alphanumeric() && c != '_')
                    .any(|t| t == w)
            };
            assert!(
                !(word("static") && !line.contains("&'static") && !line.contains("'static")),
                "src/{file}: a static: {line}"
            );
            for blocking in [
                "thread::sleep",
                "block_on",
                "std::fs",
                "std::net",
                "blocking_",
            ] {
                assert!(!line.contains(blocking), "src/{file} blocks: {line}");
            }
            if line.contains("spawn(") {
                assert_eq!(
                    file, "counter.rs",
                    "a task spawned outside a counter: {line}"
                );
            }
        }
    }
}

/// **Architecture Invariant:** the library's lock is never held across an `.await`: every
/// `lock()` is a short statement or a block that ends before the next `.await` (checked
/// loosely: no line both locks and awaits).
#[test]
fn no_line_locks_and_awaits() {
    for (file, code, _) in sources() {
        for line in code.lines() {
            assert!(
                !(line.contains(".lock()") && line.contains(".await")),
                "src/{file}: {line}"
            );
        }
    }
}

/// The handles are `Send + Sync + 'static` and every future is `Send`, so they go into any
/// task (a compile-time check: this test fails by not compiling).
#[test]
fn handles_and_futures_are_send_and_sync() {
    fn handle<T: Send + Sync + Clone + 'static>() {}
    fn future<F: std::future::Future + Send>(_: F) {}
    handle::<mongo_seq::Sequences>();
    handle::<mongo_seq::Sequence>();
    handle::<mongo_seq::executor::Executor>();
    fn futures(seqs: mongo_seq::Sequences, sequence: mongo_seq::Sequence) {
        let orders = seqs.counters().clone();
        future(sequence.next());
        future(sequence.next_many(3));
        future(sequence.set_next(5));
        future(seqs.insert_one(&orders, mongodb::bson::doc! {}, "orders"));
        future(seqs.insert_many(&orders, [mongodb::bson::doc! {}], "orders"));
        future(seqs.insert_optimistic(&orders, mongodb::bson::doc! {}, None));
        future(seqs.wait_for_number(&orders, 1, None));
    }
    let _ = futures;
}
