//! Reading the repository: where it is, which crates it has, and source text without comments
//! (a comment or a doc link is not a dependency) or without test modules (tests may spawn
//! threads, unwrap, build fixtures from any layer).

use std::path::{Path, PathBuf};

/// The repository root (this crate is `tests/tidy`).
pub fn root() -> PathBuf {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    here.ancestors()
        .nth(2)
        .expect("tests/tidy sits two levels below the root")
        .to_path_buf()
}

/// `path` relative to the root, with `/` separators.
pub fn relative(path: &Path) -> String {
    let root = root();
    path.strip_prefix(&root)
        .unwrap_or(path)
        .to_string_lossy()
        .replace('\\', "/")
}

/// Folders never searched: build output, installed packages and tools (`.tools/`, where
/// `scripts/setup` puts its ~40,000 files), version control.
fn skipped(name: &str) -> bool {
    matches!(
        name,
        "target" | "node_modules" | ".git" | ".tools" | "dist" | "wasm"
    )
}

/// Every file under `dir` whose name ends with one of `extensions`, sorted.
pub fn files(dir: &Path, extensions: &[&str]) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(next) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&next) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let name = entry.file_name().to_string_lossy().into_owned();
            if path.is_dir() {
                if !skipped(&name) {
                    stack.push(path);
                }
            } else if extensions.iter().any(|e| name.ends_with(e)) {
                found.push(path);
            }
        }
    }
    found.sort();
    found
}

/// The top-level modules of a crate's `src` folder (`period.rs` and `sequence/` → `period`,
/// `sequence`), its roots (`lib.rs`, `main.rs`) left out.
pub fn top_level_modules(src: &Path) -> std::collections::BTreeSet<String> {
    std::fs::read_dir(src)
        .unwrap_or_else(|e| panic!("read {}: {e}", src.display()))
        .flatten()
        .map(|e| {
            e.file_name()
                .to_string_lossy()
                .trim_end_matches(".rs")
                .to_owned()
        })
        .filter(|name| name != "lib" && name != "main")
        .collect()
}

pub fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()))
}

/// A crate of the workspace: its folder and its manifest's text.
pub struct Crate {
    pub dir: PathBuf,
    pub manifest: String,
}

impl Crate {
    /// The folder relative to the root (`crates/mongo-seq-core`, `sidecar`).
    pub fn name(&self) -> String {
        relative(&self.dir)
    }

    /// The product's crates ship; the simulator's and the tests' do not.
    pub fn is_product(&self) -> bool {
        let name = self.name();
        // The simulator, test crates, and what users copy or run beside the product (an example
        // service, the benchmarks) are not the product.
        !(name.starts_with("sim")
            || name.starts_with("tests/")
            || name.starts_with("examples/")
            || name.starts_with("bench/"))
    }

    /// A binary's crate: its edge (`src/main.rs`, `src/cli/`) may use anyhow.
    pub fn is_binary(&self) -> bool {
        self.dir.join("src/main.rs").is_file()
    }

    /// The crates named in its `[dependencies]` tables (not dev- or build-dependencies).
    pub fn dependencies(&self) -> Vec<String> {
        let mut names = Vec::new();
        let mut inside = false;
        for line in self.manifest.lines() {
            let line = line.trim();
            if line.starts_with('[') {
                inside = line == "[dependencies]"
                    || (line.starts_with("[target.") && line.ends_with(".dependencies]"));
                continue;
            }
            if inside && !line.starts_with('#') {
                if let Some((name, _)) = line.split_once('=') {
                    names.push(name.trim().trim_matches('"').to_owned());
                }
            }
        }
        names
    }
}

/// Every crate in the repository: a folder with a `Cargo.toml` that has a `[package]`, found by
/// listing folders (so a crate added later is checked without editing this list).
pub fn crates() -> Vec<Crate> {
    let found: Vec<Crate> = files(&root(), &["Cargo.toml"])
        .into_iter()
        .filter_map(|manifest_path| {
            let manifest = read(&manifest_path);
            manifest.contains("[package]").then(|| Crate {
                dir: manifest_path.parent().expect("a folder").to_path_buf(),
                manifest,
            })
        })
        .collect();
    assert!(
        found.len() >= 3,
        "found no crates under {}",
        root().display()
    );
    found
}

/// The crate in `folder` (relative to the root); fails if it moved (update ARCHITECTURE.md too).
pub fn crate_at(folder: &str) -> Crate {
    crates()
        .into_iter()
        .find(|c| c.name() == folder)
        .unwrap_or_else(|| panic!("no crate at {folder}: update ARCHITECTURE.md and tests/tidy"))
}

/// The sidecar: the product crate with a `src/main.rs` (wherever it is and whatever its package
/// is called).
pub fn sidecar() -> Crate {
    let mut binaries: Vec<Crate> = crates()
        .into_iter()
        .filter(|c| c.is_product() && c.is_binary())
        .collect();
    assert_eq!(
        binaries.len(),
        1,
        "expected one product binary (the sidecar), found {:?}",
        binaries.iter().map(Crate::name).collect::<Vec<_>>()
    );
    binaries.remove(0)
}

#[derive(Clone, Copy, PartialEq)]
pub enum Lang {
    Rust,
    Js,
}

#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Code,
    Comment,
    Literal,
}

/// Each byte's kind: code, comment, or inside a string or char literal (quotes included).
fn kinds(text: &str, lang: Lang) -> Vec<Kind> {
    let bytes = text.as_bytes();
    let mut kinds = vec![Kind::Code; bytes.len()];
    let mut i = 0;
    let at = |i: usize| bytes.get(i).copied().unwrap_or(0);
    let ident = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    while i < bytes.len() {
        let start = i;
        let b = bytes[i];
        let kind;
        if b == b'/' && at(i + 1) == b'/' {
            while i < bytes.len() && bytes[i] != b'\n' {
                i += 1;
            }
            kind = Kind::Comment;
        } else if b == b'/' && at(i + 1) == b'*' {
            let mut depth = 0;
            loop {
                if i >= bytes.len() {
                    break;
                }
                if at(i) == b'/' && at(i + 1) == b'*' {
                    depth += 1;
                    i += 2;
                } else if at(i) == b'*' && at(i + 1) == b'/' {
                    depth -= 1;
                    i += 2;
                    if depth == 0 || lang == Lang::Js {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
            kind = Kind::Comment;
        } else if lang == Lang::Rust
            && (b == b'r' || (b == b'b' && at(i + 1) == b'r'))
            && (i == 0 || !ident(bytes[i - 1]))
            && {
                let mut j = if b == b'b' { i + 2 } else { i + 1 };
                while at(j) == b'#' {
                    j += 1;
                }
                at(j) == b'"'
            }
        {
            // A raw string: r"…", r#"…"#, br"…".
            let mut j = if b == b'b' { i + 2 } else { i + 1 };
            let mut hashes = 0;
            while at(j) == b'#' {
                hashes += 1;
                j += 1;
            }
            j += 1;
            loop {
                if j >= bytes.len() {
                    break;
                }
                if bytes[j] == b'"' && (1..=hashes).all(|h| at(j + h) == b'#') {
                    j += 1 + hashes;
                    break;
                }
                j += 1;
            }
            i = j;
            kind = Kind::Literal;
        } else if b == b'"' || (lang == Lang::Js && (b == b'\'' || b == b'`')) {
            i += 1;
            while i < bytes.len() && bytes[i] != b {
                if bytes[i] == b'\\' {
                    i += 1;
                }
                i += 1;
            }
            i += 1;
            kind = Kind::Literal;
        } else if lang == Lang::Rust && b == b'\'' {
            // A char literal ('x', '\n', '{'), or a lifetime or label ('a), which is code.
            if at(i + 1) == b'\\' {
                i += 2;
                while i < bytes.len() && bytes[i] != b'\'' {
                    i += 1;
                }
                i += 1;
                kind = Kind::Literal;
            } else {
                let width = text[i + 1..].chars().next().map_or(1, char::len_utf8);
                if at(i + 1 + width) == b'\'' {
                    i += 2 + width;
                    kind = Kind::Literal;
                } else {
                    i += 1;
                    kind = Kind::Code;
                }
            }
        } else {
            i += 1;
            kind = Kind::Code;
        }
        let end = i.min(bytes.len());
        for k in &mut kinds[start..end] {
            *k = kind;
        }
    }
    kinds
}

/// The text with every comment blanked (newlines kept, so line numbers hold).
pub fn without_comments(text: &str, lang: Lang) -> String {
    let kinds = kinds(text, lang);
    let bytes: Vec<u8> = text
        .bytes()
        .zip(&kinds)
        .map(|(b, k)| {
            if *k == Kind::Comment && b != b'\n' {
                b' '
            } else {
                b
            }
        })
        .collect();
    // Blanking whole multi-byte characters keeps the text UTF-8.
    String::from_utf8(bytes).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

/// Rust code without comments, string contents and the items marked `#[cfg(test)]` (the test
/// modules): what the code names, not what it says.
pub fn bare_rust_code(text: &str) -> String {
    let code = rust_code(text);
    let kinds = kinds(&code, Lang::Rust);
    let bytes: Vec<u8> = code
        .bytes()
        .zip(&kinds)
        .map(|(b, k)| {
            if *k == Kind::Literal && b != b'\n' && b != b'"' {
                b' '
            } else {
                b
            }
        })
        .collect();
    String::from_utf8(bytes).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

/// Rust code without comments and without the items marked `#[cfg(test)]` (the test modules).
pub fn rust_code(text: &str) -> String {
    let code = without_comments(text, Lang::Rust);
    let kinds = kinds(text, Lang::Rust);
    let bytes = code.as_bytes();
    let mut out = code.clone().into_bytes();
    let mut from = 0;
    while let Some(found) = code[from..].find("#[cfg(test)]") {
        let start = from + found;
        // The item runs to its `;` or to the brace closing its first `{`.
        let mut i = start + "#[cfg(test)]".len();
        let mut depth = 0usize;
        while i < bytes.len() {
            if kinds[i] == Kind::Code {
                match bytes[i] {
                    b'{' => depth += 1,
                    b'}' => {
                        depth = depth.saturating_sub(1);
                        if depth == 0 {
                            break;
                        }
                    }
                    b';' if depth == 0 => break,
                    _ => {}
                }
            }
            i += 1;
        }
        let end = (i + 1).min(bytes.len());
        for b in &mut out[start..end] {
            if *b != b'\n' {
                *b = b' ';
            }
        }
        from = end;
    }
    String::from_utf8(out).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

/// The string literals of a text (their contents, without quotes or escapes resolved), each
/// with its byte offset.
pub fn string_literals(text: &str, lang: Lang) -> Vec<(usize, String)> {
    let kinds = kinds(text, lang);
    let mut literals = Vec::new();
    let mut i = 0;
    while i < text.len() {
        if kinds[i] == Kind::Literal {
            let start = i;
            while i < text.len() && kinds[i] == Kind::Literal {
                i += 1;
            }
            let raw = &text[start..i];
            let inner = raw
                .trim_start_matches(['r', 'b', '#'])
                .trim_end_matches('#')
                .trim_matches(['"', '\'', '`']);
            literals.push((start, inner.to_owned()));
        } else {
            i += 1;
        }
    }
    literals
}

/// The 1-based line of a byte offset.
pub fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].matches('\n').count() + 1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comments_strings_and_test_modules_are_told_apart() {
        let text = "use std::fs; // std::net\nlet a = \"{ } // x\"; let c = '{';\nfn f<'a>() {}\n#[cfg(test)]\nmod tests {\n    fn g() { let s = \"}\"; }\n}\nfn after() {}\n";
        let code = rust_code(text);
        assert!(code.contains("use std::fs;"));
        assert!(!code.contains("std::net"));
        assert!(
            code.contains("\"{ } // x\""),
            "a string is not a comment: {code}"
        );
        assert!(code.contains("fn f<'a>() {}"));
        assert!(!code.contains("fn g"), "the test module is cut: {code}");
        assert!(
            code.contains("fn after() {}"),
            "only the test module is cut: {code}"
        );
        assert_eq!(code.lines().count(), text.lines().count());
        let literals: Vec<String> = string_literals(text, Lang::Rust)
            .into_iter()
            .map(|(_, s)| s)
            .collect();
        assert_eq!(literals, ["{ } // x", "{", "}"]);
        assert!(bare_rust_code("let a = \"std::fs\"; std::net").contains("\"       \"; std::net"));
    }

    #[test]
    fn js_strings_and_comments() {
        let text = "const a = ['x', \"y\", `z`]; // 'w'\n/* 'v' */";
        let literals: Vec<String> = string_literals(text, Lang::Js)
            .into_iter()
            .map(|(_, s)| s)
            .collect();
        assert_eq!(literals, ["x", "y", "z"]);
        assert!(!without_comments(text, Lang::Js).contains('w'));
    }

    #[test]
    fn the_crates_are_found_by_listing_folders() {
        let names: Vec<String> = crates().iter().map(Crate::name).collect();
        for expected in [
            "crates/mongo-seq-core",
            "crates/mongo-seq-wasm",
            "tests/tidy",
        ] {
            assert!(
                names.iter().any(|n| n == expected),
                "{expected} in {names:?}"
            );
        }
    }
}
