//! `mongo-seq retry`: numbers the dead letters of a config's triggers now (documents a trigger
//! could not number, repaired since), instead of waiting for the lease holder's next retry
//! (`dead_letter_retry_ms`). The round is `tools/dead_letters.rs`'s, without a lease: like the
//! package's `assign`, every write is conditioned on the document still unnumbered, so a running
//! sidecar and `retry` never give one document two numbers. A gapless trigger's numbers are only
//! its lease holder's to give: its dead letters are listed, not numbered.

use std::path::PathBuf;

use clap::Args;
use serde_json::Value;

use super::{load_config, runtime, CliError};
use crate::connection::Connection;
use crate::tools::dead_letters;

#[derive(Debug, Args)]
#[command(
    after_help = "Each dead letter is resolved (`numbered`: its document has a number \
now; `gone`: deleted, or no longer matching the trigger's `match`) and kept with `resolvedAt`, or \
still waits (an attempt more, the reason as it is now; listed). Exit status: 0 when no dead \
letter of the triggers waits any more, 1 when some still wait (a gapless trigger's always do: \
its lease holder retries them every `dead_letter_retry_ms`), 2 usage error."
)]
pub struct RetryArgs {
    /// The sidecar config whose triggers' dead letters to retry.
    #[arg(long, short)]
    pub config: PathBuf,
    /// Only the trigger with this name (default: every trigger).
    #[arg(long)]
    pub trigger: Option<String>,
}

pub(super) fn run(args: &RetryArgs) -> Result<(), CliError> {
    let config = load_config(&args.config)?;
    let triggers = super::triggers_named(&config, &args.config, args.trigger.as_deref())?;
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
            if trigger.numbering.gapless() {
                still += stored.len();
                println!(
                    "{}: {} dead letters wait; gapless: only the trigger's lease holder numbers them (a running sidecar retries them every dead_letter_retry_ms)",
                    trigger.id,
                    stored.len()
                );
                for letter in &stored {
                    println!("  {}", describe(letter));
                }
                continue;
            }
            let outcome = dead_letters::retry(&mongo, trigger, &stored, None, || Ok(()), |_| {})
                .await
                .map_err(CliError::runtime)?;
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

/// A stored dead letter in one line: its document, reason and code.
fn describe(stored: &Value) -> String {
    let field = |key: &str| stored.get(key).and_then(Value::as_str).unwrap_or_default();
    let id =
        mongo_seq_core::dead_letter_document(stored).map_or_else(String::new, Value::to_string);
    format!("{id}: {} ({})", field("reason"), field("code"))
}
