//! The README's quick start is the crate documentation's, which runs as a doc test: the README's
//! ```` ```rust ```` block must be that example's visible lines, exactly.

fn visible_quick_start(lib: &str) -> String {
    let docs: Vec<&str> = lib
        .lines()
        .filter_map(|line| line.strip_prefix("//!"))
        .map(|line| line.strip_prefix(' ').unwrap_or(line))
        .collect();
    let start = docs
        .iter()
        .position(|l| *l == "# Quick start")
        .expect("a quick start");
    // After the dependencies' ```toml block: its closing fence, then the example's opening one.
    let toml = start
        + docs[start..]
            .iter()
            .position(|l| *l == "```toml")
            .expect("a toml block");
    let toml_end = toml + 1 + docs[toml + 1..].iter().position(|l| *l == "```").unwrap();
    let open = toml_end
        + 1
        + docs[toml_end + 1..]
            .iter()
            .position(|l| *l == "```")
            .unwrap();
    let close = open
        + 1
        + docs[open + 1..]
            .iter()
            .position(|l| *l == "```")
            .expect("its end");
    docs[open + 1..close]
        .iter()
        .filter(|line| !(line.starts_with("# ") || **line == "#"))
        .map(|line| format!("{line}\n"))
        .collect()
}

fn readme_rust_block(readme: &str) -> String {
    let mut lines = readme.lines().skip_while(|l| *l != "```rust").skip(1);
    let block: Vec<&str> = lines.by_ref().take_while(|l| *l != "```").collect();
    block.iter().map(|line| format!("{line}\n")).collect()
}

#[test]
fn the_readme_quick_start_is_the_doc_tested_one() {
    let root = env!("CARGO_MANIFEST_DIR");
    let lib = std::fs::read_to_string(format!("{root}/src/lib.rs")).unwrap();
    let readme = std::fs::read_to_string(format!("{root}/README.md")).unwrap();
    let (docs, readme) = (visible_quick_start(&lib), readme_rust_block(&readme));
    assert!(docs.contains("Sequences::new(&db)"), "{docs}");
    assert_eq!(
        readme, docs,
        "crates/mongo-seq/README.md's quick start differs from lib.rs's"
    );
}

/// Every Rust block of the Markdown that documents this crate runs (the quick start above) or
/// says why it does not (`rust no-run: <why>`), as the JS blocks do (tests/node/readme-code).
#[test]
fn every_rust_block_of_the_readmes_runs_or_says_why_not() {
    let root = env!("CARGO_MANIFEST_DIR");
    for file in [
        "README.md",
        "../../README.md",
        "../../examples/rust/README.md",
    ] {
        let text = std::fs::read_to_string(format!("{root}/{file}")).unwrap();
        let mut inside = false;
        for (number, line) in text.lines().enumerate() {
            if inside {
                inside = !line.starts_with("```");
                continue;
            }
            if let Some(info) = line.strip_prefix("```") {
                inside = true;
                if let Some(rest) = info.strip_prefix("rust") {
                    let ok = (file == "README.md" && rest.is_empty())
                        || rest
                            .strip_prefix(" no-run: ")
                            .is_some_and(|why| !why.is_empty());
                    assert!(
                        ok,
                        "{file}:{}: ```{info} (run it, or mark it `no-run: <why>`)",
                        number + 1
                    );
                }
            }
        }
    }
}
