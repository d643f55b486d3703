//! The READMEs' error tables are the core's one list of codes (`SeqError::ERROR_CODES`, in
//! `crates/mongo-seq-core/src/error/codes.rs`), rendered: a code added, renamed or reworded there
//! fails this test until the tables say the same. `TIDY_BLESS=1` rewrites them.

use crate::source::{read, root};

const CODES_FILE: &str = "crates/mongo-seq-core/src/error/codes.rs";

/// The documents holding a generated table.
const DOCUMENTS: [&str; 2] = ["crates/mongo-seq-core/README.md", "js/README.md"];

const BEGIN: &str = "<!-- error codes: generated from crates/mongo-seq-core/src/error/codes.rs (TIDY_BLESS=1 cargo test -p mongo-seq-tidy error_tables rewrites it) -->";
const END: &str = "<!-- end of the generated error codes -->";

/// The first Rust string literal of `text` (no raw strings; `\"` and `\\` resolved) and the
/// text after it.
fn string_literal(text: &str) -> Option<(String, &str)> {
    let start = text.find('"')? + 1;
    let mut value = String::new();
    let mut chars = text[start..].char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            '\\' => value.push(chars.next()?.1),
            '"' => return Some((value, &text[start + i + 1..])),
            c => value.push(c),
        }
    }
    None
}

/// `(code, meaning)` of every `code("…", "…")` row of `ERROR_CODES`.
fn codes(source: &str) -> Vec<(String, String)> {
    let list = source
        .split("const ERROR_CODES")
        .nth(1)
        .and_then(|rest| rest.split("];").next())
        .unwrap_or_else(|| panic!("ERROR_CODES in {CODES_FILE}"));
    list.split("code(")
        .skip(1)
        .map(|row| {
            let (code, rest) = string_literal(row).expect("a code");
            let (meaning, _) = string_literal(rest).expect("a meaning");
            (code, meaning)
        })
        .collect()
}

fn table(codes: &[(String, String)]) -> String {
    let mut out = String::from("| code | when |\n|---|---|\n");
    for (code, meaning) in codes {
        out.push_str(&format!("| `{code}` | {meaning} |\n"));
    }
    out
}

/// `text` with its generated section replaced by `table`, or why it cannot be.
fn regenerate(text: &str, table: &str) -> Result<String, String> {
    let (before, rest) = text
        .split_once(BEGIN)
        .ok_or("no generated error table (its opening marker)")?;
    let (_, after) = rest
        .split_once(END)
        .ok_or("the generated error table is not closed")?;
    Ok(format!("{before}{BEGIN}\n{table}{END}{after}"))
}

#[test]
fn error_tables_are_generated_from_the_codes() {
    let codes = codes(&read(&root().join(CODES_FILE)));
    assert!(
        codes.len() > 30 && codes.iter().any(|(c, _)| c == "SEQUENCE_CONFLICT"),
        "{codes:?}"
    );
    let table = table(&codes);
    let bless = std::env::var_os("TIDY_BLESS").is_some();
    let mut stale = Vec::new();
    for document in DOCUMENTS {
        let path = root().join(document);
        let text = read(&path);
        let fresh = regenerate(&text, &table).unwrap_or_else(|e| panic!("{document}: {e}"));
        if fresh != text {
            if bless {
                std::fs::write(&path, fresh).unwrap_or_else(|e| panic!("{document}: {e}"));
            } else {
                stale.push(document);
            }
        }
    }
    assert!(
        stale.is_empty(),
        "the error tables of {stale:?} differ from {CODES_FILE}: run \
         TIDY_BLESS=1 cargo test -p mongo-seq-tidy error_tables and read the diff"
    );
}

#[test]
fn a_row_is_read_with_its_escapes_and_a_table_replaced_between_its_markers_only() {
    let source = r#"const ERROR_CODES: &[ErrorCode] = &[
    code("A", "`a` is \"quoted\""),
    code(
        "B",
        "b",
    ),
];"#;
    assert_eq!(
        codes(source),
        [
            ("A".to_owned(), "`a` is \"quoted\"".to_owned()),
            ("B".to_owned(), "b".to_owned())
        ]
    );
    let text = format!("intro\n{BEGIN}\nold\n{END}\nrest\n");
    let fresh = regenerate(&text, "new\n").expect("markers");
    assert_eq!(fresh, format!("intro\n{BEGIN}\nnew\n{END}\nrest\n"));
    assert!(regenerate("no table", "new\n").is_err());
    assert!(regenerate(&format!("{BEGIN} unclosed"), "new\n").is_err());
}
