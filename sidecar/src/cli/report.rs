//! `mongo-seq report`: the auditor's report (`tools/report/`) of what `check` audits, for one
//! period or all, written as a self-contained HTML page and/or JSON. Every flag is validated
//! before anything is read or written.

use std::path::{Path, PathBuf};

use clap::Args;
use mongo_seq_core::Period;

use super::check::{audit_all, targets, Audit, AuditedArgs};
use super::{core_usage, CliError};
use crate::tools::report::{html, trigger_report, AuditReport};

#[derive(Debug, Args)]
#[command(
    group = clap::ArgGroup::new("output").required(true).multiple(true).args(["html", "json"]),
    after_help = "The report an auditor archives, per series (counter: scope values and period): \
the sequence's definition; the first and last number held, with their issue dates (the \
trigger's `date_field`, else the document's ObjectId creation time); where every number went — \
held, voided (with the reasons), deleted (recorded), unexplained gaps, held twice — as counts \
and ranges; the chain of seals (verified, BROKEN with its first failure, or not sealed) with \
its first and last seal; the numbers dated before the number before them (with a date field); \
the trigger's dead letters; and a chart of the numbers issued per day (UTC). The facts are \
`check`'s (`mongo-seq check --help`). The HTML page is one file: inline CSS and SVG, no \
script, nothing fetched, printable on A4; a broken chain is in red at the top of the page and \
of its series. Exit status as check's: 0 when nothing is found, 1 when a series or trigger has \
a finding or a chain is broken (the files are written all the same; the findings go to \
standard error too), 2 on a usage error (nothing read, nothing written)."
)]
pub struct ReportArgs {
    #[command(flatten)]
    pub audited: AuditedArgs,
    /// Only the series of this period and of the months and days within it: `2026` is the
    /// yearly series 2026 and the monthly 2026-01 to 2026-12 (YYYY, YYYY-MM or YYYY-MM-DD;
    /// default: every period). A sequence that never resets has no period: its series is
    /// always in.
    #[arg(long, value_name = "PERIOD")]
    pub period: Option<String>,
    /// Write the report as one self-contained HTML page to FILE.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// Write the report as JSON to FILE (`-`: standard output). Every integer is a JSON
    /// number, or a decimal string beyond 2^53 − 1.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
}

/// Standard output, for `--json`.
const STDOUT: &str = "-";

pub(super) fn run(args: &ReportArgs) -> Result<(), CliError> {
    let period = args
        .period
        .as_deref()
        .map(|text| Period::from_text("--period", text))
        .transpose()
        .map_err(|e| core_usage(&e))?;
    if let Some(html) = &args.html {
        if html.as_os_str() == STDOUT {
            return Err(usage(
                "--html: `-` (standard output) is for --json only; give a file",
            ));
        }
        writable("--html", html)?;
    }
    if let Some(json) = args.json.as_deref().filter(|j| j.as_os_str() != STDOUT) {
        writable("--json", json)?;
        if args.html.as_deref() == Some(json) {
            return Err(usage("--html and --json name the same file"));
        }
    }
    let (uri, targets) = targets(&args.audited, false)?;
    let audit = Audit {
        accounts: true,
        seals: true,
        gapless: args.audited.gapless,
        chronological: true,
    };
    let audited = audit_all(&uri, targets, audit)?;
    let mut triggers = Vec::with_capacity(audited.len());
    for (target, audited) in &audited {
        // The chains' reports of a sealed trigger's series (`None`: not sealed).
        let summary = audited.summary.clone().unwrap_or_default();
        triggers.push(trigger_report(
            target,
            &summary,
            audited.seals.as_deref(),
            period,
        ));
    }
    let generated_at = bson::DateTime::now()
        .try_to_rfc3339_string()
        .unwrap_or_default();
    let report = AuditReport::new(triggers, period, generated_at, super::version().to_owned());
    let to_stdout = args
        .json
        .as_deref()
        .is_some_and(|j| j.as_os_str() == STDOUT);
    if let Some(json) = &args.json {
        let text = serde_json::to_string_pretty(&report.to_json()).unwrap_or_default();
        if to_stdout {
            println!("{text}");
        } else {
            write("--json", json, &text)?;
        }
    }
    if let Some(html) = &args.html {
        write("--html", html, &html::render(&report))?;
    }
    let series: usize = report.triggers.iter().map(|t| t.series.len()).sum();
    let said = format!(
        "report: {series} series{}: {}",
        report
            .period
            .as_deref()
            .map_or_else(String::new, |p| format!(" of period {p}")),
        if report.clean { "clean" } else { "FINDINGS" },
    );
    if to_stdout {
        eprintln!("{said}");
    } else {
        println!("{said}");
    }
    if report.clean {
        return Ok(());
    }
    for broken in &report.broken_chains {
        eprintln!("mongo-seq: report: {broken}: the chain of seals is BROKEN");
    }
    for finding in report.findings() {
        eprintln!("mongo-seq: report: {finding}");
    }
    Err(CliError::CheckFailed)
}

fn usage(message: &str) -> CliError {
    CliError::usage(anyhow::anyhow!("{message}"))
}

/// Refuses an output file whose directory does not exist, or that is a directory.
fn writable(flag: &str, path: &Path) -> Result<(), CliError> {
    if path.is_dir() {
        return Err(usage(&format!(
            "{flag}: {} is a directory; give a file",
            path.display()
        )));
    }
    let parent = path.parent().filter(|p| !p.as_os_str().is_empty());
    if let Some(parent) = parent.filter(|p| !p.is_dir()) {
        return Err(usage(&format!(
            "{flag}: the directory {} does not exist",
            parent.display()
        )));
    }
    Ok(())
}

fn write(flag: &str, path: &Path, text: &str) -> Result<(), CliError> {
    std::fs::write(path, text).map_err(|e| {
        CliError::runtime(anyhow::anyhow!(
            "{flag}: cannot write {}: {e}",
            path.display()
        ))
    })
}
