//! `mongo-seq void <sequence> <number>… --reason "…"`: records numbers no document will hold in
//! the ledger (the core's `VoidNumbers`), from the trigger that numbers the sequence — the
//! `--config` trigger, or the one the flags describe (`--db`, `--collection`, `--field`, the
//! sequence's options: those of `check`): its collection and field are where a held number is
//! looked for, its counters and ledger where the counter is read and the entries written.

use clap::Args;
use mongo_seq_core::{SeqError, VoidNumbers, VoidOutcome, VoidRequest};

use super::trigger_flags::{TriggerFlags, TriggerKeys, TRIGGER_FLAGS};
use super::{core_usage, load_config, runtime, CliError};
use crate::config::{Config, TriggerSpec};
use crate::connection::Connection;
use crate::error::SidecarError;
use crate::mongo::Mongo;
use crate::run_plan::run_tool_plan;

#[derive(Debug, Args)]
#[command(
    after_help = "A voided number is never handed out again and cannot be voided twice; \
`check` counts it as accounted for. Only numbers the counter has issued and no document holds \
can be voided: the sequence's trigger in --config (or, without it, --db, --collection, --field \
and the sequence's options as flags, as `check` takes them) says which collection and field hold \
its numbers. Entries go to the ledger collection (`[mongodb] ledger`, default `mongo_seq_ledger` \
beside the counters): `{ _id: { counter, number }, sequence, kind: \"void\", reason, at, by }`. \
A sequence that resets (yearly, monthly, daily) has one counter per period: name it with \
--period or by its id (`invoices/2026`); a scoped one by its id (`orders/tenantId=acme`). Exit \
status: 0 done; 1 failure; 2 usage error (no reason, a number off the grid, …); 3 refused, \
nothing written: a number a document holds (NUMBER_HELD), one the counter has not issued \
(NUMBER_NOT_ISSUED), one already voided or recorded as deleted (ALREADY_VOIDED), or a gapless \
intent pending on the counter (INTENT_PENDING: try again in a moment)."
)]
pub struct VoidArgs {
    /// Counter id: the sequence name, a scoped id such as `orders/tenantId=acme`, or one with its
    /// period last (`invoices/2026`).
    pub name: String,
    /// The numbers to void (at most 1,000).
    #[arg(required = true, allow_negative_numbers = true)]
    pub numbers: Vec<i64>,
    /// Why (required): kept with each number, shown by audits.
    #[arg(long)]
    pub reason: String,
    /// Who voids them [default: the config's instance id].
    #[arg(long)]
    pub by: Option<String>,
    /// The period of the counter, for a sequence that resets: `2026`, `2026-05`, `2026-05-17`.
    #[arg(long, value_name = "PERIOD")]
    pub period: Option<String>,
    /// The sidecar config whose trigger numbers the sequence (connection, collection, field,
    /// counters, ledger).
    #[arg(long, short, conflicts_with_all = TRIGGER_FLAGS)]
    pub config: Option<std::path::PathBuf>,
    /// Without --config: the trigger that numbers the sequence, as a `[[trigger]]` with the same
    /// keys (its sequence is the counter id's).
    #[command(flatten)]
    pub flags: TriggerFlags,
}

pub(super) fn run(args: &VoidArgs) -> Result<(), CliError> {
    let config = match &args.config {
        Some(path) => load_config(path)?,
        None => flags_config(args)?,
    };
    let (trigger, counter_id) = trigger(args, &config)?;
    let request = VoidRequest {
        counter_id: counter_id.clone(),
        numbers: args.numbers.clone(),
        field: trigger.numbering.field().to_owned(),
        reason: args.reason.clone(),
        by: args
            .by
            .clone()
            .unwrap_or_else(|| config.settings.lease.instance_id.clone()),
        // Checked with the arguments; the time of the void is taken once connected.
        now_ms: 0,
    };
    let spec = trigger.numbering.sequence();
    // Refused arguments (no reason, off the grid, twice in the list) before connecting.
    VoidNumbers::new(spec, &request).map_err(|e| core_usage(&e))?;
    let outcome: VoidOutcome = runtime()?.block_on(async {
        let client = crate::server::connect(&config.uri)
            .await
            .map_err(CliError::runtime)?;
        let mongo = Connection::for_tool(&client, Some(&trigger.ns), &config.counters)
            .with_ledger(&client, &config.ledger);
        let request = VoidRequest {
            now_ms: mongo.now_ms(),
            ..request.clone()
        };
        let mut plan = VoidNumbers::new(spec, &request).map_err(|e| core_usage(&e))?;
        run_tool_plan(&mongo, &mut plan).await.map_err(refusal)
    })?;
    let numbers: Vec<String> = outcome.numbers.iter().map(i64::to_string).collect();
    println!(
        "{counter_id}: voided {} in {} (reason: {})",
        numbers.join(", "),
        config.ledger,
        request.reason.trim()
    );
    Ok(())
}

/// A refusal of the plan (exit 3, nothing written) or another failure (exit 1).
fn refusal(error: SidecarError) -> CliError {
    match error {
        SidecarError::Core(core @ SeqError::VoidRefused { .. }) => {
            CliError::Refused(anyhow::anyhow!("{core} ({})", core.code()))
        }
        other => CliError::runtime(other),
    }
}

/// The config the flags describe: its one trigger numbers the counter id's sequence.
fn flags_config(args: &VoidArgs) -> Result<Config, CliError> {
    if args.flags.filter.is_some() {
        return Err(CliError::usage(anyhow::anyhow!(
            "void --match: a number is held by every document of the collection that holds it in its series, whether or not it matches the trigger's `match` now (a cancelled invoice keeps its number): void reads no `match`"
        )));
    }
    let key = super::set_next::counter_key(&args.name, args.period.as_deref())?;
    let keys = TriggerKeys {
        sequence: Some(key.name),
        // A sealed series is numbered by a gapless trigger only: --seal-fields describes one.
        gapless: args.flags.options.given("sealFields").is_some(),
        numbers_only: true,
        ..TriggerKeys::default()
    };
    Ok(args.flags.config(keys)?.0)
}

/// The trigger of `config` that numbers the sequence the counter id (with `--period`) names,
/// and the id, checked to be one of its counters.
fn trigger<'a>(args: &VoidArgs, config: &'a Config) -> Result<(&'a TriggerSpec, String), CliError> {
    let key = super::set_next::counter_key(&args.name, args.period.as_deref())?;
    let Some(trigger) = config
        .triggers
        .iter()
        .find(|t| t.numbering.sequence().name() == key.name)
    else {
        let known: Vec<String> = config
            .triggers
            .iter()
            .map(|t| format!("`{}`", t.numbering.sequence().name()))
            .collect();
        return Err(CliError::usage(anyhow::anyhow!(
            "no trigger of {} numbers sequence `{}` (its sequences: {}): void needs the trigger's collection and field to refuse a number a document holds",
            args.config.as_deref().unwrap_or(std::path::Path::new("the flags")).display(),
            key.name,
            known.join(", ")
        )));
    };
    let counter_id = super::set_next::checked_counter_id(&key, trigger.numbering.sequence())?;
    Ok((trigger, counter_id))
}
