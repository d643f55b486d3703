//! The shells hold no rule of the core's (ARCHITECTURE.md: the Wasm crate, `js/`, the sidecar).

use crate::source::{
    self, bare_rust_code, crate_at, files, line_of, read, relative, rust_code, sidecar,
    string_literals, Lang,
};

/// The core's option keys, read from `SequenceSpec::OPTIONS` (their one home: each row's first
/// column; `SequenceSpec::KEYS` is that column).
fn option_keys() -> Vec<String> {
    let table = read(
        &crate_at("crates/mongo-seq-core")
            .dir
            .join("src/sequence/options/table.rs"),
    );
    let code = rust_code(&table);
    let rows = code
        .split("const OPTIONS")
        .nth(1)
        .and_then(|rest| rest.split("];").next())
        .expect("SequenceSpec::OPTIONS in crates/mongo-seq-core/src/sequence/options/table.rs");
    let keys: Vec<String> = rows
        .split("option(")
        .skip(1)
        .filter_map(|row| string_literals(row, Lang::Rust).into_iter().next())
        .map(|(_, key)| key)
        .collect();
    assert!(
        keys.len() > 5 && keys.iter().any(|k| k == "refillAhead"),
        "{keys:?}"
    );
    keys
}

/// Where a file restates option keys: a list (`[…]`) holding two or more of them, a `match` arm
/// or pattern (`"scope" =>`, `"min" | "max"`), or a `case "scope":`.
fn copies_of_option_keys(text: &str, lang: Lang, keys: &[String]) -> Vec<String> {
    let code = source::without_comments(text, lang);
    let literals: Vec<(usize, String)> = string_literals(&code, lang)
        .into_iter()
        .filter(|(_, s)| keys.contains(s))
        .collect();
    let mut found = Vec::new();
    for (at, key) in &literals {
        let end = at + key.len() + 2;
        let after = code[end.min(code.len())..].trim_start();
        let before = code[..*at].trim_end();
        if after.starts_with("=>")
            || after.starts_with('|')
            || before.ends_with('|')
            || before.ends_with("case")
        {
            found.push(format!("line {}: {key:?} matched on", line_of(&code, *at)));
        }
    }
    // Lists: the option-key literals between a `[` and its `]`.
    let bytes = code.as_bytes();
    let literal_at = |i: usize| literals.iter().find(|(at, _)| *at == i);
    let all_literals = string_literals(&code, lang);
    let inside_literal = |i: usize| {
        all_literals
            .iter()
            .any(|(at, s)| i >= *at && i < at + s.len() + 2)
    };
    let mut open: Vec<(usize, Vec<String>)> = Vec::new();
    for (i, b) in bytes.iter().enumerate() {
        if let Some((_, key)) = literal_at(i) {
            if let Some((_, list)) = open.last_mut() {
                list.push(key.clone());
            }
        }
        if inside_literal(i) {
            continue;
        }
        match b {
            b'[' => open.push((i, Vec::new())),
            b']' => {
                if let Some((start, mut list)) = open.pop() {
                    list.sort();
                    list.dedup();
                    if list.len() >= 2 {
                        found.push(format!(
                            "line {}: a list of {list:?}",
                            line_of(&code, start)
                        ));
                    }
                }
            }
            _ => {}
        }
    }
    found
}

#[test]
fn the_wasm_crate_has_no_rule_of_its_own() {
    // Conversions and errors only: it restates no option key and builds no command.
    let keys = option_keys();
    let mut found = Vec::new();
    for path in files(&crate_at("crates/mongo-seq-wasm").dir.join("src"), &[".rs"]) {
        let text = read(&path);
        for copy in copies_of_option_keys(&text, Lang::Rust, &keys) {
            found.push(format!("{}: {copy}", relative(&path)));
        }
        let code = bare_rust_code(&text);
        for (n, line) in code.lines().enumerate() {
            if line.contains("Command::") || line.contains("Command {") || line.contains("json!") {
                found.push(format!(
                    "{}:{}: builds a command or a document",
                    relative(&path),
                    n + 1
                ));
            }
        }
    }
    assert!(
        found.is_empty(),
        "the Wasm crate converts and reports; rules and commands are the core's: {found:#?}"
    );
}

/// The npm package's own code (not its type declarations).
fn js_sources() -> Vec<std::path::PathBuf> {
    let sources: Vec<_> = files(&source::root().join("js/src"), &[".js", ".mjs", ".cjs"]);
    assert!(!sources.is_empty(), "no js/src");
    sources
}

#[test]
fn the_js_layer_has_no_copy_of_the_option_keys() {
    // The mongoose plugin takes them from the core: `core.optionKeys()`.
    let keys = option_keys();
    let mut found = Vec::new();
    for path in js_sources() {
        for copy in copies_of_option_keys(&read(&path), Lang::Js, &keys) {
            found.push(format!("{}: {copy}", relative(&path)));
        }
    }
    assert!(
        found.is_empty(),
        "option keys restated in JS (ask core.optionKeys()): {found:#?}"
    );
}

#[test]
fn the_js_layer_writes_no_query_or_update_operator() {
    // Filters, updates and pipelines are the core's commands; execute.js runs them as they are.
    let mut found = Vec::new();
    for path in js_sources() {
        let code = source::without_comments(&read(&path), Lang::Js);
        let literals = string_literals(&code, Lang::Js);
        for (at, literal) in &literals {
            if literal.starts_with('$')
                && literal[1..].starts_with(|c: char| c.is_ascii_alphabetic())
            {
                found.push(format!(
                    "{}:{}: {literal:?}",
                    relative(&path),
                    line_of(&code, *at)
                ));
            }
        }
        // Unquoted keys: `{ $set: … }`.
        for (n, line) in code.lines().enumerate() {
            let mut rest = line;
            while let Some(i) = rest.find('$') {
                let word: String = rest[i + 1..]
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric())
                    .collect();
                let after = rest[i + 1 + word.len()..].trim_start();
                let quoted = literals
                    .iter()
                    .any(|(_, l)| l.contains(&format!("${word}")));
                if !word.is_empty() && after.starts_with(':') && !quoted {
                    found.push(format!("{}:{}: ${word}", relative(&path), n + 1));
                }
                rest = &rest[i + 1..];
            }
        }
    }
    assert!(
        found.is_empty(),
        "MongoDB operators written in JS: {found:#?}"
    );
}

/// Driver calls and command documents of the `mongodb` crate.
const DRIVER_CALLS: [&str; 15] = [
    "doc!",
    "rawdoc!",
    "run_command",
    "run_raw_command",
    "find_one_and_update",
    "update_one",
    "update_many",
    "insert_one",
    "insert_many",
    "delete_many",
    "count_documents",
    "create_index",
    "drop_index",
    "with_options",
    "list_collection_names",
];

/// The driver calls the sidecar makes outside `connection/`, each with why.
const DRIVER_CALLS_OUTSIDE_THE_CONNECTION: [(&str, &str, &str); 2] = [
    (
        "sidecar/src/server.rs",
        "with_options",
        "builds the process's one client",
    ),
    (
        "sidecar/src/tools/check/mod.rs",
        "list_collection_names",
        "`check` says which collections exist when the one asked for does not",
    ),
];

#[test]
fn the_sidecar_reaches_the_driver_through_its_executor_and_connection() {
    let src = sidecar().dir.join("src");
    let mut found = Vec::new();
    for path in files(&src, &[".rs"]) {
        let name = relative(&path);
        let inside =
            path.starts_with(src.join("executor")) || path.starts_with(src.join("connection"));
        if inside {
            continue;
        }
        let code = bare_rust_code(&read(&path));
        for (n, line) in code.lines().enumerate() {
            for call in DRIVER_CALLS {
                let word = line.match_indices(call).any(|(i, _)| {
                    let before = line[..i].chars().last();
                    let after = line[i + call.len()..].chars().next();
                    let ident =
                        |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_');
                    !ident(before) && (call.ends_with('!') || !ident(after))
                });
                let listed = DRIVER_CALLS_OUTSIDE_THE_CONNECTION
                    .iter()
                    .any(|(file, listed, _)| *file == name && *listed == call);
                if word && !listed {
                    found.push(format!("{name}:{}: {call}", n + 1));
                }
            }
        }
    }
    assert!(
        found.is_empty(),
        "driver calls outside the sidecar's executor/ and connection/ (run a core Command \
         through Mongo::execute): {found:#?}"
    );
}

/// The sidecar's files that still write MongoDB operators themselves, each with what they
/// write: the queries that are not yet core plans. A file leaves this list when its query moves
/// to the core; no other file may write one.
const SIDECAR_QUERIES_NOT_YET_IN_THE_CORE: [(&str, &str); 2] = [
    (
        "sidecar/src/state.rs",
        "the state document's `$set` (lease, resume token, `backfillDone`); a fence read from `n == 0`",
    ),
    (
        "sidecar/src/config/filter.rs",
        "which operators a trigger's `match` may use (a change stream's `$match` takes it)",
    ),
];

/// Extended JSON's type keys: values, not operators.
const EXTENDED_JSON_KEYS: [&str; 15] = [
    "$numberLong",
    "$numberInt",
    "$numberDouble",
    "$numberDecimal",
    "$date",
    "$oid",
    "$binary",
    "$timestamp",
    "$regularExpression",
    "$symbol",
    "$code",
    "$minKey",
    "$maxKey",
    "$undefined",
    "$dbPointer",
];

#[test]
fn the_sidecar_writes_operators_only_where_listed() {
    // Filters, updates and pipelines are the core's commands; the sidecar runs them. The files
    // that still write their own are listed, with what they write.
    let root = sidecar().dir.join("src/lib.rs");
    let listed: Vec<&str> = SIDECAR_QUERIES_NOT_YET_IN_THE_CORE
        .iter()
        .map(|(file, _)| *file)
        .collect();
    let mut unlisted = Vec::new();
    let mut writing = Vec::new();
    for path in crate::imports::module_files(&root) {
        let name = relative(&path);
        let code = rust_code(&read(&path));
        let operators: Vec<String> = string_literals(&code, Lang::Rust)
            .into_iter()
            .filter(|(_, literal)| {
                literal.starts_with('$')
                    && literal[1..].starts_with(|c: char| c.is_ascii_alphabetic())
                    && !EXTENDED_JSON_KEYS.contains(&literal.as_str())
            })
            .map(|(at, literal)| format!("{name}:{}: {literal}", line_of(&code, at)))
            .collect();
        if operators.is_empty() {
            continue;
        }
        writing.push(name.clone());
        if !listed.contains(&name.as_str()) {
            unlisted.extend(operators);
        }
    }
    assert!(
        unlisted.is_empty(),
        "MongoDB operators written in the sidecar (make the query a core plan): {unlisted:#?}"
    );
    let stale: Vec<&&str> = listed
        .iter()
        .filter(|file| !writing.iter().any(|w| w == *file))
        .collect();
    assert!(
        stale.is_empty(),
        "listed in SIDECAR_QUERIES_NOT_YET_IN_THE_CORE but writing no operator any more (take \
         them off the list): {stale:?}"
    );
}

#[test]
fn the_sidecar_takes_a_lock_one_way_and_reads_one_wall_clock() {
    // One way to treat a poisoned mutex (`lock::lock`); the wall clock is `Mongo::now_ms` (a
    // simulator's is simulated), monotonic time tokio's (a paused tokio clock drives it).
    let src = sidecar().dir.join("src");
    let prefix = format!("{}/", relative(&src));
    let mut found = Vec::new();
    for path in files(&src, &[".rs"]) {
        let name = relative(&path);
        let file = name.strip_prefix(prefix.as_str()).unwrap_or(&name);
        let code = source::without_comments(&read(&path), Lang::Rust);
        if file != "lock.rs" && code.contains(".lock()") {
            found.push(format!("{name}: a lock taken without crate::lock::lock"));
        }
        let clock_edge = matches!(file, "connection/mod.rs" | "metrics.rs");
        if !clock_edge && code.contains("SystemTime") {
            found.push(format!(
                "{name}: SystemTime (the wall clock is Mongo::now_ms)"
            ));
        }
        if code.contains("std::time::Instant") {
            found.push(format!(
                "{name}: std::time::Instant (use tokio::time::Instant)"
            ));
        }
    }
    assert!(found.is_empty(), "{found:#?}");
}

#[test]
fn every_select_in_the_sidecar_is_biased() {
    // A run under a paused clock and a simulated Mongo is a function of its seed: no random
    // branch choice.
    let mut found = Vec::new();
    for path in files(&sidecar().dir.join("src"), &[".rs"]) {
        let code = bare_rust_code(&read(&path));
        for (at, _) in code.match_indices("select!") {
            let body = code[at + "select!".len()..].trim_start();
            let first = body.trim_start_matches(['{', '(']).trim_start();
            if !first.starts_with("biased;") {
                found.push(format!("{}:{}", relative(&path), line_of(&code, at)));
            }
        }
    }
    assert!(
        found.is_empty(),
        "tokio::select! without `biased;`: {found:?}"
    );
}

#[test]
fn copies_of_keys_are_seen() {
    let keys: Vec<String> = ["start", "step", "scope"].map(String::from).into();
    let js = "const a = [\"start\", \"step\"]; f(\"start\"); g([\"force\", \"scope\"]);\nswitch (k) { case \"scope\": }";
    let found = copies_of_option_keys(js, Lang::Js, &keys);
    assert_eq!(found.len(), 2, "{found:?}");
    let rust = "match key { \"start\" => 1, \"step\" | \"scope\" => 2 }";
    assert_eq!(copies_of_option_keys(rust, Lang::Rust, &keys).len(), 3);
}
