//! `check`'s reads for the account of a series (the ledger's entries of a sequence, a trigger's
//! dead letters waiting) and its human report: one line per counter (held, voided with reasons,
//! deleted, unexplained gaps as ranges) and one per dead letter. The arithmetic is the core's
//! (`account`, `unnumbered`); this module reads and prints.

use mongo_seq_core::{Collection, Command, QueryOptions};
use serde_json::{json, Value};

use super::check::CheckSummary;
use super::dead_letters;
use crate::error::SidecarError;
use crate::mongo::{documents, Mongo};

/// Most dead letters a report lists (the counts are complete).
pub const LISTED: usize = 100;

/// Most gap ranges a human line shows (`--json` has up to the core's `MAX_RUNS`).
const SHOWN_GAPS: usize = 5;

/// The ledger's entries of `sequence`, as stored (`ledger`'s documents collection is the ledger).
pub async fn ledger_entries<M: Mongo>(
    ledger: &M,
    sequence: &str,
) -> Result<Vec<Value>, SidecarError> {
    let find = Command::Find {
        collection: Collection::Documents,
        filter: json!({ "sequence": sequence }),
        options: QueryOptions::default(),
        after_cluster_time: None,
    };
    documents(ledger.execute(find).await?, "ledger")
}

/// The counter id an entry is filed under (`_id.counter`; an unreadable entry under a name of
/// its own, where it explains nothing).
pub fn entry_counter(entry: &Value) -> String {
    entry
        .get("_id")
        .and_then(|id| id.get("counter"))
        .and_then(Value::as_str)
        .map_or_else(|| "(unreadable ledger entries)".to_owned(), str::to_owned)
}

/// The dead letters of `trigger` waiting (`mongo`'s state collection).
pub async fn dead_letters<M: Mongo>(mongo: &M, trigger: &str) -> Result<Vec<Value>, SidecarError> {
    dead_letters::waiting(mongo, trigger).await
}

/// The human report's lines below the summary line: each counter's account, each dead letter.
pub fn lines(summary: &CheckSummary) -> Vec<String> {
    let mut lines = Vec::new();
    for (counter_id, account) in &summary.accounts {
        let n = |key: &str| account.get(key).map(text).unwrap_or_default();
        let count = |key: &str| account.get(key).and_then(Value::as_u64).unwrap_or(0);
        let range = match account.get("end") {
            Some(Value::Null) | None => "nothing issued".to_owned(),
            Some(end) => format!("{}..{}", n("start"), text(end)),
        };
        let mut line = format!(
            "  {counter_id}: {range}: {} held, {} voided",
            count("held"),
            count("voided")
        );
        let reasons: Vec<String> = account
            .get("reasons")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .map(|r| format!("{} {:?}", n_of(r, "count"), n_of(r, "reason")))
            .collect();
        if !reasons.is_empty() {
            line.push_str(&format!(" ({})", reasons.join(", ")));
        }
        line.push_str(&format!(
            ", {} deleted, {} unexplained gaps",
            count("deleted"),
            count("gaps")
        ));
        let gaps: Vec<String> = account
            .get("gapRuns")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .map(|run| match (run.get("first"), run.get("last")) {
                (Some(first), Some(last)) if first == last => text(first),
                (Some(first), Some(last)) => format!("{}..{}", text(first), text(last)),
                _ => String::new(),
            })
            .collect();
        if !gaps.is_empty() {
            let more = if gaps.len() > SHOWN_GAPS { ", …" } else { "" };
            let shown = gaps.iter().take(SHOWN_GAPS).cloned().collect::<Vec<_>>();
            line.push_str(&format!(" ({}{more})", shown.join(", ")));
        }
        for (key, what) in [
            ("duplicates", "held twice"),
            ("outside", "ledger entries outside the series"),
            ("unreadable", "unreadable ledger entries"),
        ] {
            if count(key) > 0 {
                line.push_str(&format!(", {} {what}", count(key)));
            }
        }
        lines.push(line);
    }
    for letter in &summary.dead_letter_list {
        let id = letter
            .get("_id")
            .and_then(|id| id.get("document"))
            .map(Value::to_string)
            .unwrap_or_default();
        lines.push(format!(
            "  dead letter {id}: {} ({}; {} attempts)",
            n_of(letter, "reason"),
            n_of(letter, "code"),
            letter.get("attempts").map(text).unwrap_or_default()
        ));
    }
    lines
}

/// A JSON value as a report shows it: a string without quotes, an Extended JSON integer as its
/// digits, anything else as JSON.
fn text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Object(map) => match map.get("$numberLong").or_else(|| map.get("$numberInt")) {
            Some(Value::String(digits)) => digits.clone(),
            _ => value.to_string(),
        },
        other => other.to_string(),
    }
}

fn n_of(value: &Value, key: &str) -> String {
    value.get(key).map(text).unwrap_or_default()
}
