//! `audit.json`'s ops: the account of a counter's numbers, unnumbered documents against dead
//! letters (`None`: not one of them).

use mongo_seq_core::{account, unnumbered, SeqError};
use serde_json::Value;

use super::input::{int, list, opt_int, to_json};

pub(crate) const FILE: &str = "audit.json";

#[test]
fn audit_vectors() {
    super::replay(FILE);
}

pub(crate) fn run(op: &str, input: &Value) -> Option<Result<Value, SeqError>> {
    Some(match op {
        "account" => account(
            int(input, "start"),
            int(input, "step"),
            opt_int(input, "counter"),
            &list(input, "held"),
            &list(input, "ledger"),
        )
        .map(to_json),
        "unnumbered" => Ok(to_json(unnumbered(
            &list(input, "documents"),
            &list(input, "deadLetters"),
        ))),
        _ => return None,
    })
}
