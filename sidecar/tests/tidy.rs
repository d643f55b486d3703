//! Tidy tests: the sidecar's rules about its own modules (ARCHITECTURE.md), checked on its source
//! text, so that breaking one fails `cargo test` instead of waiting for a reviewer. The rules for
//! every crate (file length, anyhow, import circles, driver calls, `select!`) are in
//! `tests/tidy`.

use std::path::{Path, PathBuf};

fn sidecar() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Every `.rs` file under `dir`, with its path relative to `dir`.
fn rust_files(dir: &Path) -> Vec<(String, String)> {
    let mut files = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(next) = stack.pop() {
        for entry in std::fs::read_dir(&next).expect("read a source folder") {
            let path = entry.expect("a folder entry").path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let text = std::fs::read_to_string(&path).expect("read a source file");
                let relative = path.strip_prefix(dir).expect("below dir");
                files.push((relative.to_string_lossy().replace('\\', "/"), text));
            }
        }
    }
    files.sort();
    assert!(!files.is_empty(), "no sources under {}", dir.display());
    files
}

/// The source without comment lines (doc links are not dependencies).
fn code(text: &str) -> String {
    text.lines()
        .filter(|line| !line.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn one_way_to_take_a_lock_and_one_wall_clock() {
    for (path, text) in rust_files(&sidecar().join("src")) {
        let code = code(&text);
        if path != "lock.rs" {
            assert!(
                !code.contains(".lock()"),
                "{path}: take a lock with crate::lock::lock (one way to treat a poisoned mutex)"
            );
        }
        // The trigger's only clocks are the interface's `now_ms` and tokio's.
        if !matches!(path.as_str(), "connection/mod.rs" | "metrics.rs") {
            assert!(
                !code.contains("SystemTime"),
                "{path}: the wall clock is Mongo::now_ms (a simulator's is simulated)"
            );
        }
        assert!(
            !code.contains("std::time::Instant"),
            "{path}: monotonic time is tokio::time::Instant (a paused tokio clock drives it)"
        );
    }
}
