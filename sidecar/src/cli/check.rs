//! `mongo-seq check`: what to audit (a config's triggers, or one given by flags — the same raw
//! trigger the file gives, through the same validation), the audit (`tools/check/`), the report and the exit status.

use std::path::PathBuf;

use clap::Args;
use serde_json::{json, Value};

use mongo_seq_core::seal::verify::SeriesSealReport;

use super::trigger_flags::{TriggerFlags, TriggerKeys, TRIGGER_FLAGS};
use super::{load_config, runtime, CliError};
use crate::connection::Connection;
use crate::tools::check::seal::{self, verify_seal};
use crate::tools::check::{
    audit_collection, ensure_exists, report, CheckError, CheckSummary, CheckTarget,
};

#[derive(Debug, Args)]
#[command(
    after_help = "Every number of each counter, from `start` to the counter, is accounted for: \
held by a document, voided (the ledger's `void` entries, with their reasons), deleted (the \
ledger's `deleted` entries), or an unexplained gap; documents without a usable number either \
wait as dead letters (the sidecar recorded why; `mongo-seq retry`) or are unexplained. Exit \
status: 0 when the summary is clean, 1 when it is not (numbers held twice — by several \
documents, or held and voided or recorded deleted —, documents without a usable number and no \
dead letter, numbers off the step grid, a counter behind the largest number; unexplained gaps \
too with --gapless or a gapless trigger; voids, deletions and dead letters never fail; the \
reasons go to standard error), 2 on a usage error or when the database or collection does \
not exist. Run it when the sidecar has caught up: documents inserted a moment ago are not \
numbered yet. A sequence that resets (--reset yearly|monthly|daily, or a trigger's `reset`) \
is audited per period, each period's series on its own (duplicates, gaps, grid and counter within \
the period): a number's period is the one written beside it in `<field>Period`; a numbered \
document without one is reported (exit 1). With a date field (the trigger's `date_field`, or \
--date-field) each number dated before the number before it in its series is listed and fails \
the check (--no-chronological skips it). With --seal, check verifies a sealed series' chains \
instead (a trigger's `seal_fields`; with flags, --seal-fields): every link re-computed from the \
documents, the ledger and the counters, per series (counter) the links verified, the first and \
last hash, and each link that does not verify with its reason — FIELD_CHANGED (a sealed field \
changed), LINK_MISSING (a sealed document deleted without a record, or the last links removed), \
LINK_INSERTED, OUT_OF_ORDER, SEAL_REMOVED —, the first one named on standard error (exit 1); \
numbers issued but not sealed yet, and numbers from before the series was sealed, are counted, \
not failed."
)]
pub struct CheckArgs {
    #[command(flatten)]
    pub audited: AuditedArgs,
    /// Check the date order too: each number whose date (the trigger's `date_field`) is earlier
    /// than the date of the number before it in its series is listed, and fails the check
    /// (exit 1). On by default for a trigger with a `date_field`.
    #[arg(long, overrides_with = "no_chronological")]
    pub chronological: bool,
    /// Do not check the date order (see --chronological).
    #[arg(long)]
    pub no_chronological: bool,
    /// Verify the sealed chains instead of the accounts (the trigger's `seal_fields`; with
    /// flags: --seal-fields): any link that does not verify fails the check (exit 1). With
    /// --config, its triggers that seal (one named by --trigger must).
    #[arg(long, conflicts_with_all = ["gapless", "chronological", "date_field"])]
    pub seal: bool,
    /// Print the full report as JSON instead of the one-line summary (with --config: an array,
    /// one report per trigger). Every integer is a JSON number, or a decimal string beyond
    /// 2^53 − 1 (where JavaScript's `JSON.parse` would lose digits), wherever it is.
    #[arg(long)]
    pub json: bool,
}

/// What `check` and `report` audit: a config's triggers, or the one the flags describe.
#[derive(Debug, Args)]
pub struct AuditedArgs {
    /// Audit the triggers of this sidecar config: connection, collection, field, sequence
    /// options, counters and `match` all come from it.
    #[arg(long, short, conflicts_with_all = TRIGGER_FLAGS, conflicts_with_all = ["sequence", "date_field"])]
    pub config: Option<PathBuf>,
    /// With --config: only the trigger with this name (default: every trigger).
    #[arg(long, requires = "config")]
    pub trigger: Option<String>,
    /// Counter (sequence) name; default `<db>.<collection>` like the sidecar's.
    #[arg(long)]
    pub sequence: Option<String>,
    /// Without --config: the trigger, as a `[[trigger]]` with the same keys (the formatted ids
    /// are not read: `--format` needs no `--format-field`).
    #[command(flatten)]
    pub flags: TriggerFlags,
    /// Also fail (exit 1) when there are gaps (implied for a gapless trigger with --config).
    #[arg(long)]
    pub gapless: bool,
    /// Without --config: each document's issue date (`date_field`, a sequence that resets);
    /// the date order is then checked (see `check --chronological`).
    #[arg(long, value_name = "FIELD")]
    pub date_field: Option<String>,
}

pub(super) fn run(args: &CheckArgs) -> Result<(), CliError> {
    let (uri, targets) = targets(&args.audited, args.seal)?;
    if args.chronological {
        if let Some(undated) = targets.iter().find(|t| t.date_field().is_none()) {
            return Err(CliError::usage(anyhow::anyhow!(
                "--chronological needs the date of each document: the trigger `{}` has no `date_field` (with flags: --date-field)",
                undated.trigger.id
            )));
        }
    }
    let audits = audit_all(
        &uri,
        targets,
        Audit {
            accounts: !args.seal,
            seals: args.seal,
            gapless: args.audited.gapless,
            chronological: !args.no_chronological,
        },
    )?;
    let found: Vec<(CheckTarget, Found<CheckSummary, Vec<SeriesSealReport>>)> = audits
        .into_iter()
        .map(|(target, audited)| {
            let found = match (audited.summary, audited.seals) {
                (_, Some(seals)) => Found::Chains(seals),
                (summary, None) => Found::Accounts(summary.unwrap_or_default()),
            };
            (target, found)
        })
        .collect();
    if args.json {
        let json = |(target, found): &(CheckTarget, Found<CheckSummary, Vec<SeriesSealReport>>)| {
            let mut value = found.json(target);
            if let (true, Some(object)) = (target.named, value.as_object_mut()) {
                object.insert("trigger".to_owned(), json!(target.trigger.id));
            }
            value
        };
        let value = match args.audited.config {
            Some(_) => Value::Array(found.iter().map(json).collect()),
            None => found.first().map(json).unwrap_or_default(),
        };
        println!(
            "{}",
            serde_json::to_string_pretty(&value).unwrap_or_default()
        );
    } else {
        for (target, found) in &found {
            for line in found.lines(target) {
                println!("{line}");
            }
        }
    }
    let mut clean = true;
    for (target, found) in &found {
        if let Some(failure) = found.failure() {
            clean = false;
            eprintln!(
                "mongo-seq: check{} failed for {} field {}: {failure}",
                if args.seal { " --seal" } else { "" },
                target.trigger.ns,
                target.field(),
            );
        }
    }
    if clean {
        Ok(())
    } else {
        Err(CliError::CheckFailed)
    }
}

/// What `check` found for one target: its accounts, or (`--seal`) its sealed chains.
enum Found<A, C> {
    Accounts(A),
    Chains(C),
}

impl Found<CheckSummary, Vec<SeriesSealReport>> {
    /// The report as `--json` prints it.
    fn json(&self, target: &CheckTarget) -> Value {
        match self {
            Self::Accounts(summary) => serde_json::to_value(summary).unwrap_or_default(),
            Self::Chains(reports) => json!({
                "collection": target.trigger.ns.to_string(),
                "field": target.field(),
                "seal": seal::to_json(reports),
            }),
        }
    }

    /// The human report: the summary line, then the details.
    fn lines(&self, target: &CheckTarget) -> Vec<String> {
        match self {
            Self::Accounts(summary) => {
                let mut lines = vec![summary.line(target)];
                lines.extend(report::lines(summary));
                lines
            }
            Self::Chains(reports) => {
                let mut lines = vec![seal::line(&target.trigger.ns, target.field(), reports)];
                lines.extend(seal::lines(reports));
                lines
            }
        }
    }

    /// Why the check fails, if it does.
    fn failure(&self) -> Option<String> {
        let (problems, separator) = match self {
            Self::Accounts(summary) => (summary.problems(), ", "),
            // Each names a series' first failure, in a sentence of its own.
            Self::Chains(reports) => (seal::problems(reports), "; "),
        };
        (!problems.is_empty()).then(|| problems.join(separator))
    }
}

/// What to audit of each target: its accounts (`gapless`: gaps are findings for every target;
/// `chronological`: the date order of the targets with a date field), its sealed chains (the
/// targets that seal).
#[derive(Debug, Clone, Copy)]
pub(super) struct Audit {
    pub accounts: bool,
    pub seals: bool,
    pub gapless: bool,
    pub chronological: bool,
}

/// One target's audit: its accounts, its chains' reports (`None`: not asked, or not sealed).
#[derive(Debug)]
pub(super) struct Audited {
    pub summary: Option<CheckSummary>,
    pub seals: Option<Vec<SeriesSealReport>>,
}

/// Audits each of `targets` on `uri`, as `audit` says.
pub(super) fn audit_all(
    uri: &str,
    targets: Vec<CheckTarget>,
    audit: Audit,
) -> Result<Vec<(CheckTarget, Audited)>, CliError> {
    runtime()?.block_on(async {
        let client = crate::server::connect(uri)
            .await
            .map_err(CliError::runtime)?;
        let mut reports = Vec::with_capacity(targets.len());
        for target in targets {
            ensure_exists(&client, &target).await.map_err(|e| match e {
                CheckError::Missing(missing) => CliError::usage(missing),
                CheckError::Failed(e) => CliError::runtime(e),
            })?;
            let mongo = Connection::for_trigger(
                &client,
                &target.trigger.ns,
                &target.counters,
                &target.state,
            )
            .with_ledger(&client, &target.ledger);
            let summary = if audit.accounts {
                let ledger = Connection::for_tool(&client, Some(&target.ledger), &target.counters);
                let gapless = target.gapless() || audit.gapless;
                let date_order = target.date_field().filter(|_| audit.chronological);
                Some(
                    audit_collection(&mongo, &ledger, &target, gapless, date_order)
                        .await
                        .map_err(CliError::runtime)?,
                )
            } else {
                None
            };
            let sealed = target.trigger.numbering.sequence().sealed();
            let seals = if audit.seals && sealed {
                Some(
                    verify_seal(&mongo, &target)
                        .await
                        .map_err(CliError::runtime)?,
                )
            } else {
                None
            };
            reports.push((target, Audited { summary, seals }));
        }
        Ok(reports)
    })
}

/// The connection string and what to check: the config's triggers, or the one the flags give.
pub(super) fn targets(
    args: &AuditedArgs,
    seal: bool,
) -> Result<(String, Vec<CheckTarget>), CliError> {
    let Some(path) = &args.config else {
        let (uri, target) = flags_target(args, seal)?;
        if seal && !target.trigger.numbering.sequence().sealed() {
            return Err(CliError::usage(anyhow::anyhow!(
                "--seal needs --seal-fields: the fields the series' seals chain"
            )));
        }
        return Ok((uri, vec![target]));
    };
    let config = load_config(path)?;
    let mut chosen = super::triggers_named(&config, path, args.trigger.as_deref())?;
    if seal {
        let sealed = |t: &&crate::config::TriggerSpec| t.numbering.sequence().sealed();
        if let Some(unsealed) = chosen
            .iter()
            .find(|t| !sealed(t))
            .filter(|_| args.trigger.is_some())
        {
            return Err(CliError::usage(anyhow::anyhow!(
                "--seal: the trigger `{}` of {} has no `seal_fields` (a sealed series lists the fields its seals chain)",
                unsealed.id,
                path.display()
            )));
        }
        chosen.retain(sealed);
        if chosen.is_empty() {
            return Err(CliError::usage(anyhow::anyhow!(
                "--seal: no trigger of {} has `seal_fields` (a sealed series lists the fields its seals chain)",
                path.display()
            )));
        }
    }
    let targets = chosen
        .into_iter()
        .map(|t| CheckTarget {
            trigger: t.clone(),
            counters: config.counters.clone(),
            ledger: config.ledger.clone(),
            state: config.state.clone(),
            named: true,
        })
        .collect();
    Ok((config.uri, targets))
}

/// The trigger the flags describe, validated as a file's (errors name the flags).
fn flags_target(args: &AuditedArgs, seal: bool) -> Result<(String, CheckTarget), CliError> {
    let (config, trigger) = args.flags.config(TriggerKeys {
        sequence: args.sequence.clone(),
        // A sealed series is gapless (only the gapless protocol seals).
        gapless: args.gapless || seal,
        date_field: args.date_field.clone(),
        numbers_only: true,
        ..TriggerKeys::default()
    })?;
    let target = CheckTarget {
        trigger,
        counters: config.counters,
        ledger: config.ledger,
        state: config.state,
        named: false,
    };
    Ok((config.uri, target))
}
