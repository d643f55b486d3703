//! `mongo-seq check`: what to audit (a config's triggers, or one given by flags — the same raw
//! trigger the file gives, through the same validation), the audit (`tools/check/`), the report and the exit status.

use std::path::PathBuf;

use clap::Args;
use serde_json::{json, Map, Value};

use super::{load_config, runtime, CliError, SequenceFlags, UriArg};
use crate::config::{self, Key, Keys, Namespace, RawTrigger};
use crate::connection::Connection;
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
document without one is reported (exit 1)."
)]
pub struct CheckArgs {
    /// Check the triggers of this sidecar config: connection, collection, field, sequence
    /// options, counters and `match` all come from it.
    #[arg(long, short, conflicts_with_all = ["uri", "db", "collection", "sequence", "counters", super::sequence::SEQUENCE_FLAGS, "format_field", "filter"])]
    pub config: Option<PathBuf>,
    /// With --config: only the trigger with this name (default: every trigger).
    #[arg(long, requires = "config")]
    pub trigger: Option<String>,
    #[command(flatten)]
    pub uri: UriArg,
    /// Database of the collection.
    #[arg(long, required_unless_present = "config")]
    pub db: Option<String>,
    /// The numbered collection.
    #[arg(long, required_unless_present = "config")]
    pub collection: Option<String>,
    /// The field holding the number.
    #[arg(long, default_value = "seq", conflicts_with = "config")]
    pub field: String,
    /// Counter (sequence) name; default `<db>.<collection>` like the sidecar's.
    #[arg(long)]
    pub sequence: Option<String>,
    /// Counters collection: `collection` in --db, or `database.collection`.
    #[arg(long, default_value = "counters")]
    pub counters: String,
    /// The ledger of voided and deleted numbers: `collection` in the counters' database, or
    /// `database.collection` (with --config: its `[mongodb] ledger`).
    #[arg(long, default_value = crate::config::LEDGER_DEFAULT, conflicts_with = "config")]
    pub ledger: String,
    /// The sidecar's state collection, where its dead letters are: `collection` in the
    /// counters' database, or `database.collection` (with --config: its `[mongodb] state`).
    #[arg(long, default_value = "mongo_seq_state", conflicts_with = "config")]
    pub state: String,
    /// The sequence's options, as the file's `[[trigger]]` keys of the same names.
    #[command(flatten)]
    pub options: SequenceFlags,
    /// The field holding the formatted id (with --format; the audit reads the numbers, so it
    /// may be left out).
    #[arg(long, value_name = "FIELD")]
    pub format_field: Option<String>,
    /// Only documents matching this query, as JSON (a trigger's `match`), e.g. '{"type": "order"}'.
    #[arg(long = "match", id = "filter", value_name = "JSON")]
    pub filter: Option<String>,
    /// Also fail (exit 1) when there are gaps (implied for a gapless trigger with --config).
    #[arg(long)]
    pub gapless: bool,
    /// Print the full report as JSON instead of the one-line summary (with --config: an array,
    /// one report per trigger). Every integer is a JSON number, or a decimal string beyond
    /// 2^53 − 1 (where JavaScript's `JSON.parse` would lose digits), wherever it is.
    #[arg(long)]
    pub json: bool,
}

pub(super) fn run(args: &CheckArgs) -> Result<(), CliError> {
    let (uri, targets) = targets(args)?;
    let reports = runtime()?.block_on(async {
        let client = crate::server::connect(&uri)
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
            );
            let ledger = Connection::for_tool(&client, Some(&target.ledger), &target.counters);
            let gapless = target.gapless() || args.gapless;
            let summary = audit_collection(&mongo, &ledger, &target, gapless)
                .await
                .map_err(CliError::runtime)?;
            reports.push((target, summary));
        }
        Ok::<_, CliError>(reports)
    })?;
    if args.json {
        let json = |(target, summary): &(CheckTarget, CheckSummary)| {
            let mut value = serde_json::to_value(summary).unwrap_or_default();
            if let (true, Some(object)) = (target.named, value.as_object_mut()) {
                object.insert("trigger".to_owned(), json!(target.trigger.id));
            }
            value
        };
        let value = match args.config {
            Some(_) => Value::Array(reports.iter().map(json).collect()),
            None => reports.first().map(json).unwrap_or_default(),
        };
        println!(
            "{}",
            serde_json::to_string_pretty(&value).unwrap_or_default()
        );
    } else {
        for (target, summary) in &reports {
            println!("{}", summary.line(target));
            for line in report::lines(summary) {
                println!("{line}");
            }
        }
    }
    let mut clean = true;
    for (target, summary) in &reports {
        let problems = summary.problems();
        if !problems.is_empty() {
            clean = false;
            eprintln!(
                "mongo-seq: check failed for {} field {}: {}",
                target.trigger.ns,
                target.field(),
                problems.join(", ")
            );
        }
    }
    if clean {
        Ok(())
    } else {
        Err(CliError::CheckFailed)
    }
}

/// The connection string and what to check: the config's triggers, or the one the flags give.
fn targets(args: &CheckArgs) -> Result<(String, Vec<CheckTarget>), CliError> {
    let Some(path) = &args.config else {
        let uri = args.uri.resolve()?;
        return Ok((uri, vec![flags_target(args)?]));
    };
    let config = load_config(path)?;
    let targets = super::triggers_named(&config, path, args.trigger.as_deref())?
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

/// The trigger the flags describe: the raw trigger a `[[trigger]]` would be, validated as one
/// (errors name the flags).
fn flags_target(args: &CheckArgs) -> Result<CheckTarget, CliError> {
    let (Some(db), Some(collection)) = (&args.db, &args.collection) else {
        return Err(CliError::usage(anyhow::anyhow!(
            "pass --config, or --db and --collection"
        )));
    };
    let mut raw = RawTrigger {
        database: db.clone(),
        collection: collection.clone(),
        field: args.field.clone(),
        sequence: args.sequence.clone(),
        filter: args.filter.as_deref().map(match_flag).transpose()?,
        gapless: Some(args.gapless),
        ..RawTrigger::default()
    };
    args.options.fill(&mut raw);
    raw.format_field = args.format_field.clone();
    if raw.format.is_some() && raw.format_field.is_none() {
        // The audit reads numbers, not formatted ids: the format is checked with the sequence,
        // and no field is needed for it.
        config::validate_sequence(&raw, &format!("{db}.{collection}"), Keys::Flags)?;
        raw.format = None;
    }
    let trigger = config::validate_trigger(raw, Keys::Flags)?;
    let counters = Namespace::parse(&Key::flag("--counters"), &args.counters, Some(db))?;
    let ledger = Namespace::parse(&Key::flag("--ledger"), &args.ledger, Some(&counters.db))?;
    let state = Namespace::parse(&Key::flag("--state"), &args.state, Some(&counters.db))?;
    Ok(CheckTarget {
        trigger,
        counters,
        ledger,
        state,
        named: false,
    })
}

/// `--match` as written: a JSON object (validated with the trigger, as a file's `match`).
fn match_flag(text: &str) -> Result<Map<String, Value>, CliError> {
    match serde_json::from_str(text) {
        Ok(Value::Object(filter)) => Ok(filter),
        Ok(_) => Err(CliError::usage(anyhow::anyhow!(
            "--match: must be a JSON object"
        ))),
        Err(e) => Err(CliError::usage(anyhow::anyhow!(
            "--match: not JSON ({e}): {text}"
        ))),
    }
}
