//! The imports between a crate's modules form no circle (ARCHITECTURE.md, cross-cutting), in
//! every crate: a module is a file (`a.rs`, `a/mod.rs`, `a/b.rs`), found through the `mod`
//! declarations from each crate root (`lib.rs`, `main.rs`, `bin/*.rs`), test modules left out.
//!
//! An import is a path that names another module of the crate: `crate::…`, `super::…`,
//! `self::…`, or a declared child module's name (`use periodic::Series;` in `sequence.rs`), in a
//! `use` or inline in the code. A name re-exported with `pub use` is followed to the module that
//! defines it (`crate::Error` is `error.rs`), and a `pub use` itself is no import: a parent that
//! only re-exports its children does not depend on them. Modules written inline (`mod x { … }`)
//! count as their file.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use crate::source::{bare_rust_code, crates, read, relative, sidecar};

/// A module of one crate: its path from the crate root (`["sequence", "periodic"]`), its file
/// and its code (no comments, no string contents, no test modules).
struct Module {
    path: Vec<String>,
    file: PathBuf,
    code: String,
}

fn is_ident(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// Whether the word at `at` starts a token (not the tail of an identifier or of a `a::b` path).
fn starts_token(code: &[u8], at: usize) -> bool {
    at == 0 || !(is_ident(code[at - 1]) || code[at - 1] == b':' || code[at - 1] == b'$')
}

/// The identifier at the start of `text`.
fn ident(text: &str) -> &str {
    let end = text
        .bytes()
        .position(|b| !is_ident(b))
        .unwrap_or(text.len());
    &text[..end]
}

/// The modules a file declares as files (`mod name;`, any visibility or attributes before it).
fn declared_modules(code: &str) -> Vec<String> {
    let bytes = code.as_bytes();
    let mut found = Vec::new();
    for (at, _) in code.match_indices("mod ") {
        if !starts_token(bytes, at) {
            continue;
        }
        let rest = code[at + 4..].trim_start();
        let name = ident(rest);
        if !name.is_empty() && rest[name.len()..].trim_start().starts_with(';') {
            found.push(name.to_owned());
        }
    }
    found
}

/// Every module of the crate rooted at `root_file`, following its `mod` declarations.
fn module_tree(root_file: &Path) -> Vec<Module> {
    let mut modules = Vec::new();
    let mut stack = vec![(Vec::new(), root_file.to_path_buf())];
    while let Some((path, file)) = stack.pop() {
        let code = bare_rust_code(&read(&file));
        let parent = file.parent().expect("a folder");
        let stem = file.file_stem().expect("a file name").to_string_lossy();
        // A root or a `mod.rs` keeps its children beside it; `a.rs` keeps them in `a/`.
        let dir = if path.is_empty() || stem == "mod" {
            parent.to_path_buf()
        } else {
            parent.join(&*stem)
        };
        for name in declared_modules(&code) {
            let child = [
                dir.join(format!("{name}.rs")),
                dir.join(&name).join("mod.rs"),
            ]
            .into_iter()
            .find(|f| f.is_file());
            if let Some(child) = child {
                let mut child_path = path.clone();
                child_path.push(name);
                stack.push((child_path, child));
            }
        }
        modules.push(Module { path, file, code });
    }
    modules.sort_by(|a, b| a.path.cmp(&b.path));
    modules
}

/// The files of the crate rooted at `root_file` (its modules, test modules left out).
pub fn module_files(root_file: &Path) -> Vec<PathBuf> {
    module_tree(root_file).into_iter().map(|m| m.file).collect()
}

/// A `use` statement: whether it re-exports (`pub use`, `pub(crate) use`) and its text from
/// after `use` to before `;`.
struct UseStatement<'a> {
    public: bool,
    tree: &'a str,
}

fn use_statements(code: &str) -> Vec<UseStatement<'_>> {
    let bytes = code.as_bytes();
    let mut found = Vec::new();
    for (at, _) in code.match_indices("use ") {
        if !starts_token(bytes, at) {
            continue;
        }
        let before = code[..at].trim_end();
        let public = before.ends_with("pub")
            || (before.ends_with(')') && {
                let open = before.rfind('(').unwrap_or(0);
                code[..open].trim_end().ends_with("pub")
            });
        let rest = &code[at + 4..];
        let end = rest.find(';').unwrap_or(rest.len());
        found.push(UseStatement {
            public,
            tree: &rest[..end],
        });
    }
    found
}

/// A use tree's paths, each with the name it brings into scope (`a::{b as c, d::*}` →
/// `(["a","b"], "c")`, `(["a","d","*"], "*")`).
fn expand(tree: &str) -> Vec<(Vec<String>, String)> {
    fn walk(tree: &str, prefix: &[String], out: &mut Vec<(Vec<String>, String)>) {
        let tree = tree.trim().trim_start_matches("::");
        // The part before a top-level `{`, and the group inside it.
        if let Some(open) = tree.find('{') {
            let head: Vec<String> = tree[..open]
                .split("::")
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(String::from)
                .collect();
            let mut base = prefix.to_vec();
            base.extend(head);
            let inner = &tree[open + 1..tree.rfind('}').unwrap_or(tree.len())];
            let mut depth = 0;
            let mut start = 0;
            for (i, c) in inner.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        walk(&inner[start..i], &base, out);
                        start = i + 1;
                    }
                    _ => {}
                }
            }
            walk(&inner[start..], &base, out);
            return;
        }
        if tree.is_empty() {
            return;
        }
        let (path, alias) = match tree.split_once(" as ") {
            Some((path, alias)) => (path, Some(alias.trim())),
            None => (tree, None),
        };
        let mut segments = prefix.to_vec();
        segments.extend(path.split("::").map(|s| s.trim().to_owned()));
        if segments.last().is_some_and(|s| s == "self") {
            segments.pop();
        }
        let name = alias
            .map(str::to_owned)
            .or_else(|| segments.last().cloned())
            .unwrap_or_default();
        out.push((segments, name));
    }
    let mut out = Vec::new();
    walk(tree, &[], &mut out);
    out
}

/// The paths written in the code outside `use` statements that start at `crate`, `super`,
/// `self` or one of `children` (`crate::period::now_ms()` → `["crate","period","now_ms"]`).
fn inline_paths(code: &str, children: &BTreeSet<String>) -> Vec<Vec<String>> {
    // Blank the `use` statements (they are read as trees) and `pub(in crate::…)` visibilities.
    let mut text = code.to_owned();
    for statement in use_statements(code) {
        let start = statement.tree.as_ptr() as usize - code.as_ptr() as usize;
        text.replace_range(
            start..start + statement.tree.len(),
            &" ".repeat(statement.tree.len()),
        );
    }
    let text = text
        .replace("in crate::", "in        ")
        .replace("in super::", "in        ");
    let bytes = text.as_bytes();
    let mut found = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        if !is_ident(bytes[at]) || !starts_token(bytes, at) {
            at += 1;
            continue;
        }
        let mut segments = Vec::new();
        let mut i = at;
        loop {
            let name = ident(&text[i..]);
            if name.is_empty() {
                break;
            }
            segments.push(name.to_owned());
            i += name.len();
            if !text[i..].starts_with("::") {
                break;
            }
            i += 2;
        }
        let first = segments[0].as_str();
        let anchored = matches!(first, "crate" | "super" | "self") || children.contains(first);
        if segments.len() > 1 && anchored {
            found.push(segments);
        }
        at = i.max(at + 1);
    }
    found
}

/// One crate's modules and the imports between them.
pub struct Graph {
    modules: Vec<Module>,
    index: BTreeMap<Vec<String>, usize>,
    /// Per module: a re-exported name → the path it re-exports (as written in that module).
    exports: Vec<BTreeMap<String, Vec<String>>>,
}

impl Graph {
    pub fn new(root_file: &Path) -> Self {
        let modules = module_tree(root_file);
        let index = modules
            .iter()
            .enumerate()
            .map(|(i, m)| (m.path.clone(), i))
            .collect();
        let exports = modules
            .iter()
            .map(|m| {
                use_statements(&m.code)
                    .into_iter()
                    .filter(|s| s.public)
                    .flat_map(|s| expand(s.tree))
                    .filter(|(_, name)| name != "*")
                    .map(|(path, name)| (name, path))
                    .collect()
            })
            .collect();
        Graph {
            modules,
            index,
            exports,
        }
    }

    /// The module `segments` (a path written in module `from`) names, if one of this crate.
    fn resolve(&self, from: &[String], segments: &[String], depth: usize) -> Option<usize> {
        let mut base: Vec<String> = from.to_vec();
        let mut rest = segments;
        match rest.first().map(String::as_str) {
            Some("crate") => {
                base.clear();
                rest = &rest[1..];
            }
            Some("self") => rest = &rest[1..],
            Some("super") => {
                while rest.first().is_some_and(|s| s == "super") {
                    base.pop();
                    rest = &rest[1..];
                }
            }
            Some(first) => {
                let mut child = base.clone();
                child.push(first.to_owned());
                if !self.index.contains_key(&child) {
                    return None;
                }
            }
            None => return None,
        }
        for segment in rest {
            let mut deeper = base.clone();
            deeper.push(segment.clone());
            if self.index.contains_key(&deeper) {
                base = deeper;
                continue;
            }
            // A name of `base`: defined there, or re-exported from elsewhere (maybe another
            // crate: then no module of this one).
            let module = self.index[&base];
            return match self.exports[module].get(segment) {
                Some(target) if depth < 8 => self.resolve(&base, target, depth + 1),
                _ => Some(module),
            };
        }
        self.index.get(&base).copied()
    }

    /// Per module, the modules it imports (itself left out).
    pub fn edges(&self) -> Vec<BTreeSet<usize>> {
        self.modules
            .iter()
            .enumerate()
            .map(|(i, module)| {
                let children: BTreeSet<String> = self
                    .index
                    .keys()
                    .filter(|p| p.len() == module.path.len() + 1 && p.starts_with(&module.path))
                    .filter_map(|p| p.last().cloned())
                    .collect();
                let used = use_statements(&module.code)
                    .into_iter()
                    .filter(|s| !s.public)
                    .flat_map(|s| expand(s.tree))
                    .map(|(path, _)| path)
                    .chain(inline_paths(&module.code, &children));
                used.filter_map(|path| self.resolve(&module.path, &path, 0))
                    .filter(|to| *to != i)
                    .collect()
            })
            .collect()
    }

    /// A module's path from its crate root (`["sequence", "periodic"]`).
    pub fn path(&self, module: usize) -> &[String] {
        &self.modules[module].path
    }

    /// A module's file, from the root.
    pub fn name(&self, module: usize) -> String {
        relative(&self.modules[module].file)
    }

    /// The imports between siblings: an import from inside one child of a module to inside
    /// another child of it is an arrow between the two children, each taken whole (`sequence/`
    /// with its `periodic.rs`). A parent and its own children are one family, left out: the
    /// parent declares them and may use them, they may use its shared items (`use super::…`).
    /// Each arrow comes with the file imports that draw it.
    fn sibling_arrows(&self) -> BTreeMap<(usize, usize), Vec<(usize, usize)>> {
        let mut arrows: BTreeMap<(usize, usize), Vec<(usize, usize)>> = BTreeMap::new();
        for (from, targets) in self.edges().into_iter().enumerate() {
            let p = &self.modules[from].path;
            for to in targets {
                let q = &self.modules[to].path;
                let common = p.iter().zip(q).take_while(|(a, b)| a == b).count();
                if common == p.len() || common == q.len() {
                    continue;
                }
                let a = self.index[&p[..=common]];
                let b = self.index[&q[..=common]];
                arrows.entry((a, b)).or_default().push((from, to));
            }
        }
        arrows
    }

    /// The import circles: each set of two or more sibling modules that reach one another,
    /// with the file imports inside it.
    fn cycles(&self) -> Vec<Vec<String>> {
        let arrows = self.sibling_arrows();
        let n = self.modules.len();
        let mut next: Vec<BTreeSet<usize>> = vec![BTreeSet::new(); n];
        for (a, b) in arrows.keys() {
            next[*a].insert(*b);
        }
        let reach: Vec<BTreeSet<usize>> = (0..n)
            .map(|start| {
                let mut seen = BTreeSet::new();
                let mut stack = vec![start];
                while let Some(v) = stack.pop() {
                    for &w in &next[v] {
                        if seen.insert(w) {
                            stack.push(w);
                        }
                    }
                }
                seen
            })
            .collect();
        let mut placed = BTreeSet::new();
        let mut circles = Vec::new();
        for v in 0..n {
            if placed.contains(&v) || !reach[v].contains(&v) {
                continue;
            }
            let set: BTreeSet<usize> = reach[v]
                .iter()
                .copied()
                .filter(|w| reach[*w].contains(&v))
                .collect();
            placed.extend(set.iter().copied());
            let lines = arrows
                .iter()
                .filter(|((a, b), _)| set.contains(a) && set.contains(b))
                .flat_map(|(_, imports)| imports)
                .map(|(from, to)| format!("{} → {}", self.name(*from), self.name(*to)))
                .collect();
            circles.push(lines);
        }
        circles
    }
}

/// Every crate root: `src/lib.rs`, `src/main.rs`, `src/bin/*.rs`.
fn crate_roots() -> Vec<PathBuf> {
    let mut roots = Vec::new();
    for krate in crates() {
        let src = krate.dir.join("src");
        roots.extend(
            [src.join("lib.rs"), src.join("main.rs")]
                .into_iter()
                .filter(|f| f.is_file()),
        );
        if let Ok(entries) = std::fs::read_dir(src.join("bin")) {
            let mut bins: Vec<PathBuf> = entries
                .flatten()
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|e| e == "rs"))
                .collect();
            bins.sort();
            roots.extend(bins);
        }
    }
    roots
}

#[test]
fn no_crate_s_imports_form_a_circle() {
    let mut circles = Vec::new();
    for root in crate_roots() {
        for lines in Graph::new(&root).cycles() {
            circles.push(format!("{}:\n  {}", relative(&root), lines.join("\n  ")));
        }
    }
    assert!(
        circles.is_empty(),
        "import circles between modules (move the shared item to its own module or to the lower \
         layer; ARCHITECTURE.md): {} circle(s)\n{}",
        circles.len(),
        circles.join("\n")
    );
}

/// The sidecar's modules that may use `tools/` (the operators' tools): the command line, and
/// the tools themselves. The daemon (a trigger, the server, what they hold) never does: what a
/// trigger and a tool share (dead letters, the state document) lives below both.
const TOOLS_USERS: [&str; 2] = ["cli", "tools"];

#[test]
fn the_daemon_does_not_import_the_operators_tools() {
    let root = sidecar().dir.join("src/lib.rs");
    let graph = Graph::new(&root);
    let top = |module: usize| {
        graph.modules[module]
            .path
            .first()
            .cloned()
            .unwrap_or_default()
    };
    let mut found = Vec::new();
    for (from, targets) in graph.edges().into_iter().enumerate() {
        for to in targets {
            if top(to) == "tools" && !TOOLS_USERS.contains(&top(from).as_str()) {
                found.push(format!("{} → {}", graph.name(from), graph.name(to)));
            }
        }
    }
    assert!(
        found.is_empty(),
        "the daemon imports the operators' tools (move what both need below both): {found:#?}"
    );
}

#[test]
fn imports_are_found_in_every_form() {
    let statements: Vec<(Vec<String>, String)> = use_statements(
        "pub(crate) use a::B; use crate::{x::{self, Y as Z}, w::*}; fn f() { reuse(); }",
    )
    .into_iter()
    .flat_map(|s| expand(s.tree))
    .collect();
    let paths: Vec<String> = statements
        .iter()
        .map(|(p, name)| format!("{} {name}", p.join("::")))
        .collect();
    assert_eq!(
        paths,
        ["a::B B", "crate::x x", "crate::x::Y Z", "crate::w::* *"]
    );
    assert!(use_statements("pub(crate) use a::B;")[0].public);
    assert!(!use_statements("use a::B;")[0].public);
    let children: BTreeSet<String> = ["periodic".to_owned()].into();
    let inline: Vec<String> = inline_paths(
        "let a = crate::period::now_ms(); periodic::Series::new(); x::periodic::y(); \
         pub(in crate::a) fn g() {} Self::new(); $crate::m!()",
        &children,
    )
    .into_iter()
    .map(|p| p.join("::"))
    .collect();
    assert_eq!(inline, ["crate::period::now_ms", "periodic::Series::new"]);
    assert_eq!(
        declared_modules("mod a;\n#[cfg(unix)]\npub(crate) mod b ;\nmod c { }\nfn mod_d() {}"),
        ["a", "b"]
    );
}
