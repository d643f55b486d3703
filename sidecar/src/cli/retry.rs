//! `mongo-seq retry`: numbers the dead letters of a config's triggers now (documents a trigger
//! could not number, repaired since), instead of waiting for the lease holder's next retry
//! (`dead_letter_retry_ms`). The round is `crate::dead_letters`', without a lease: like the
//! package's `assign`, every write is conditioned on the document still unnumbered, so a running
//! sidecar and `retry` never give one document two numbers. A gapless trigger's numbers are only
//! its lease holder's to give: `retry` takes the trigger's lease when it is free (nobody runs the
//! trigger), numbers them as its holder and releases it; while a sidecar holds it they are
//! listed, not numbered (the holder retries them itself). The trigger comes from `--config`, or
//! from the flags `check` takes (`--db`, `--collection`, `--field`, the sequence's options, …).

use std::path::PathBuf;

use std::sync::Arc;

use clap::Args;
use mongo_seq_core::LeaseInfo;
use serde_json::Value;

use super::trigger_flags::{TriggerFlags, TriggerKeys, TRIGGER_FLAGS};
use super::{load_config, runtime, CliError};
use crate::config::{Settings, TriggerSpec};
use crate::connection::Connection;
use crate::dead_letters::{self, RetryOutcome};
use crate::liveness::Beacon;
use crate::trigger::{Shared, Trigger};

#[derive(Debug, Args)]
#[command(
    after_help = "Each dead letter is resolved (`numbered`: its document has a number \
now; `gone`: deleted, or no longer matching the trigger's `match`) and kept with `resolvedAt`, or \
still waits (an attempt more, the reason as it is now; listed). Exit status: 0 when no dead \
letter of the triggers waits any more, 1 when some still wait, 2 usage error. A gapless \
trigger's are numbered only by its lease holder: `retry` takes the lease when nobody holds it \
(and releases it); while a running sidecar holds it they are listed and still wait (it retries \
them every `dead_letter_retry_ms`). Without --config the trigger is described by flags, as \
`check` takes them (--db, --collection, --field, --sequence, the sequence's options, --match, \
--format-field, --gapless, --date-field; --trigger names it: its dead letters are kept under its \
name, `<db>.<collection>.<field>` by default)."
)]
pub struct RetryArgs {
    /// The sidecar config whose triggers' dead letters to retry.
    #[arg(long, short, conflicts_with_all = TRIGGER_FLAGS, conflicts_with_all = ["sequence", "gapless", "date_field"])]
    pub config: Option<PathBuf>,
    /// Only the trigger with this name (default: every trigger); without --config, the name of
    /// the trigger the flags describe (its `name`).
    #[arg(long)]
    pub trigger: Option<String>,
    /// Without --config: the counter (sequence) name; default `<db>.<collection>`.
    #[arg(long)]
    pub sequence: Option<String>,
    /// Without --config: the trigger is gapless (`gapless = true`).
    #[arg(long)]
    pub gapless: bool,
    /// Without --config: the document's date field that places it in a period (`date_field`).
    #[arg(long, value_name = "FIELD")]
    pub date_field: Option<String>,
    /// Without --config: the trigger, as a `[[trigger]]` with the same keys.
    #[command(flatten)]
    pub flags: TriggerFlags,
}

pub(super) fn run(args: &RetryArgs) -> Result<(), CliError> {
    let config = match &args.config {
        Some(path) => load_config(path)?,
        None => {
            let keys = TriggerKeys {
                name: args.trigger.clone(),
                sequence: args.sequence.clone(),
                gapless: args.gapless,
                date_field: args.date_field.clone(),
                numbers_only: false,
            };
            args.flags.config(keys)?.0
        }
    };
    let triggers = match &args.config {
        Some(path) => super::triggers_named(&config, path, args.trigger.as_deref())?,
        None => config.triggers.iter().collect(),
    };
    let still = runtime()?.block_on(async {
        let client = crate::server::connect(&config.uri)
            .await
            .map_err(CliError::runtime)?;
        let mut still = 0usize;
        for trigger in triggers {
            let mongo =
                Connection::for_trigger(&client, &trigger.ns, &config.counters, &config.state);
            let stored = dead_letters::waiting(&mongo, &trigger.id)
                .await
                .map_err(CliError::runtime)?;
            if stored.is_empty() {
                println!("{}: no dead letters", trigger.id);
                continue;
            }
            let outcome = if trigger.numbering.gapless() {
                let mongo = mongo.with_ledger(&client, &config.ledger);
                match gapless_round(trigger, &config.settings, mongo, &stored).await? {
                    Ok(outcome) => outcome,
                    Err(holder) => {
                        still += stored.len();
                        println!(
                            "{}: {} dead letters wait; gapless: only the trigger's lease holder numbers them, and {} holds the lease (epoch {}): it retries them every dead_letter_retry_ms",
                            trigger.id,
                            stored.len(),
                            holder.owner,
                            holder.epoch
                        );
                        for letter in &stored {
                            println!("  {}", describe(letter));
                        }
                        continue;
                    }
                }
            } else {
                dead_letters::retry(&mongo, trigger, &stored, None, || Ok(()), |_| {}, |_| {})
                    .await
                    .map_err(CliError::runtime)?
            };
            println!(
                "{}: {} dead letters: {} numbered, {} gone, {} still waiting",
                trigger.id,
                stored.len(),
                outcome.numbered.len(),
                outcome.gone.len(),
                outcome.waiting.len()
            );
            for letter in &outcome.waiting {
                println!("  {}: {} ({})", letter.id, letter.reason, letter.code);
            }
            still += outcome.waiting.len();
        }
        Ok::<_, CliError>(still)
    })?;
    if still == 0 {
        Ok(())
    } else {
        eprintln!("mongo-seq: {still} dead letters still wait");
        Err(CliError::CheckFailed)
    }
}

/// A gapless trigger's round: as the holder of its lease, taken if free under an owner of its
/// own (`<instance id>/retry`: the sidecar's own instance id would reclaim a running sidecar's
/// lease), then released. `Err`: the lease as found, held by someone else.
async fn gapless_round(
    trigger: &TriggerSpec,
    settings: &Settings,
    mongo: Connection,
    stored: &[Value],
) -> Result<Result<RetryOutcome, LeaseInfo>, CliError> {
    let mut settings = settings.clone();
    settings.lease.instance_id = format!("{}/retry", settings.lease.instance_id);
    let shared = Shared {
        beacon: Arc::new(Beacon::bind()),
        incarnation: Some(crate::connection::incarnation()),
        ..Shared::default()
    };
    Trigger::new(trigger.clone(), settings, mongo, &shared)
        .retry_dead_letters_once(stored)
        .await
        .map_err(CliError::runtime)
}

/// A stored dead letter in one line: its document, reason and code.
fn describe(stored: &Value) -> String {
    let field = |key: &str| stored.get(key).and_then(Value::as_str).unwrap_or_default();
    let id =
        mongo_seq_core::dead_letter_document(stored).map_or_else(String::new, Value::to_string);
    format!("{id}: {} ({})", field("reason"), field("code"))
}
