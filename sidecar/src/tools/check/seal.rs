//! `mongo-seq check --seal`: a sealed series' chains verified as stored, by the core's plan
//! (`VerifySeal`: the counters, the documents, the ledger, one report per counter), and their
//! lines. The verdict is the core's (`verified`, the failures by number); this module runs the
//! plan and prints.

use mongo_seq_core::seal::verify::SeriesSealReport;
use mongo_seq_core::VerifySeal;
use serde_json::Value;

use super::CheckTarget;
use crate::error::SidecarError;
use crate::mongo::Mongo;
use crate::run_plan::run_tool_plan;

/// Most failures a human report lists per series after the first (`--json` has them all).
const SHOWN_FAILURES: usize = 10;

/// Verifies every series of `target`'s sealed sequence through `mongo` (its counters, the
/// target's documents and the ledger): one report per counter, by counter id.
pub async fn verify_seal<M: Mongo>(
    mongo: &M,
    target: &CheckTarget,
) -> Result<Vec<SeriesSealReport>, SidecarError> {
    let numbering = &target.trigger.numbering;
    let mut plan = VerifySeal::new(numbering.sequence(), numbering.field())?;
    run_tool_plan(mongo, &mut plan).await
}

/// Why the chains fail (`check`'s exit status 1), one phrase per series that does not verify,
/// its first failure named.
pub fn problems(reports: &[SeriesSealReport]) -> Vec<String> {
    reports
        .iter()
        .filter(|report| !report.verified)
        .filter_map(|report| {
            let first = report.failures.first()?;
            let more = match report.failures.len() {
                1 => String::new(),
                n => format!(" ({} more failures)", n - 1),
            };
            Some(format!(
                "{}: the sealed chain breaks at number {} ({}): {}: {}{more}",
                report.series,
                first.number,
                first.kind.name(),
                first.reason.code(),
                first.detail
            ))
        })
        .collect()
}

/// The reports as JSON (integers beyond 2^53 − 1 as decimal strings, like `check`'s).
pub fn to_json(reports: &[SeriesSealReport]) -> Value {
    crate::tools::counters::exact_numbers(serde_json::to_value(reports).unwrap_or_default())
}

/// The summary line of a target's chains: how many series, how many verify.
pub fn line(ns: &impl std::fmt::Display, field: &str, reports: &[SeriesSealReport]) -> String {
    let failing = reports.iter().filter(|r| !r.verified).count();
    let links: u64 = reports.iter().map(|r| r.links).sum();
    format!(
        "{ns} field {field}: sealed chains of {} series, {links} links: {}",
        reports.len(),
        match failing {
            0 => "every one verifies".to_owned(),
            1 => "1 DOES NOT VERIFY".to_owned(),
            n => format!("{n} DO NOT VERIFY"),
        }
    )
}

/// The human report's lines: per series the links verified, the first and last link's hash,
/// the numbers not sealed, and each failure (the first one first).
pub fn lines(reports: &[SeriesSealReport]) -> Vec<String> {
    let mut lines = Vec::new();
    for report in reports {
        let summary = |link: &Option<mongo_seq_core::seal::verify::LinkSummary>| {
            link.as_ref().map_or_else(
                || "none".to_owned(),
                |l| format!("{} ({}) {}", l.number, l.kind.name(), l.hash),
            )
        };
        let verdict = if report.verified {
            "verified"
        } else {
            "DOES NOT VERIFY"
        };
        let mut line = format!(
            "  seal {}: {verdict}: {} links, first {}, last {}",
            report.series,
            report.links,
            summary(&report.first),
            summary(&report.last)
        );
        for (n, what) in [
            (report.pending, "issued, not sealed yet"),
            (report.before_sealing, "numbered before sealing"),
        ] {
            if n > 0 {
                line.push_str(&format!(", {n} {what}"));
            }
        }
        lines.push(line);
        for (index, failure) in report.failures.iter().enumerate() {
            if index == SHOWN_FAILURES {
                lines.push(format!(
                    "    … {} more (--json lists them all)",
                    report.failures.len() - index
                ));
                break;
            }
            let first = if index == 0 { "first failure: " } else { "" };
            lines.push(format!(
                "    {first}number {} ({}): {}: {}",
                failure.number,
                failure.kind.name(),
                failure.reason.code(),
                failure.detail
            ));
        }
    }
    lines
}
