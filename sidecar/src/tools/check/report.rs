//! `check`'s human report of the accounts: one line per counter (held, voided with reasons,
//! deleted, unexplained gaps as ranges) and one per dead letter. The arithmetic is the core's
//! (`account`, `unnumbered`); this module prints.

use serde_json::Value;

use super::CheckSummary;

/// Most gap ranges a human line shows (`--json` has up to the core's `MAX_RUNS`).
const SHOWN_GAPS: usize = 5;

/// Most numbers out of date order a human line shows (`--json` has the core's examples).
const SHOWN_EARLIER: usize = 3;

/// A date (milliseconds since the epoch, as a report holds it) in RFC 3339.
fn date(ms: Option<&Value>) -> String {
    ms.and_then(Value::as_i64)
        .and_then(|ms| bson::DateTime::from_millis(ms).try_to_rfc3339_string().ok())
        .unwrap_or_else(|| ms.map(text).unwrap_or_default())
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
    for (counter_id, order) in &summary.chronology {
        let earlier = order.get("earlier").and_then(Value::as_u64).unwrap_or(0);
        if earlier == 0 {
            continue;
        }
        let examples: Vec<String> = order
            .get("examples")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .take(SHOWN_EARLIER)
            .map(|e| {
                format!(
                    "{} ({}) after {} ({})",
                    n_of(e, "number"),
                    date(e.get("dateMs")),
                    n_of(e, "previous"),
                    date(e.get("previousDateMs"))
                )
            })
            .collect();
        let more = if earlier > examples.len() as u64 {
            ", …"
        } else {
            ""
        };
        lines.push(format!(
            "  {counter_id}: {earlier} numbers dated before the number before them: {}{more}",
            examples.join(", ")
        ));
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
