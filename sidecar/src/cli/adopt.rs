//! `mongo-seq adopt <counter id>`: rewrites the definition a counter records to the
//! sequence's options on purpose, and says what changed. Every reservation compares its own
//! options with the counter's definition and refuses another one (`SEQUENCE_CONFLICT`); after
//! the options of a sequence were changed on purpose (a new `max`, a `format`), `adopt` makes the
//! counter say so. The number is left as it is (`set-next` moves it).

use clap::Args;
use mongo_seq_core::error::describe_definition;
use mongo_seq_core::{AdoptDefinition, SeqError};

use super::{core_usage, runtime, CliError, CountersLocation, SequenceFlags};
use crate::error::SidecarError;

#[derive(Debug, Args)]
#[command(
    after_help = "The definition comes from the sequence's options: the trigger of --config \
that uses the sequence (with its mode: gapless or not), or the flags (--start, --step, --min, \
--max, --reset, --time-zone, --year-start, --format, and --gapless for a gapless trigger's; --step 1 \
for a sequence with the defaults), never guessed. A sequence that resets has one counter per period: name it with \
--period or by its id (`invoices/2026`). Exit status: 0 adopted (or already the same), 1 \
failure (a counter that does not exist: nothing written), 2 usage error."
)]
pub struct AdoptArgs {
    /// Counter id: the sequence name, a scoped id such as `orders/tenantId=acme`, or one with its
    /// period last (`invoices/2026`).
    pub name: String,
    /// The period of the counter, for a sequence that resets (`2026`, `2026-05`, `2026-05-17`).
    #[arg(long, value_name = "PERIOD")]
    pub period: Option<String>,
    /// Without --config: the counter is a gapless trigger's (`gapless = true`), which its
    /// definition records (with --config the trigger says).
    #[arg(long)]
    pub gapless: bool,
    /// Print JSON: `{counterId, previous, definition, changed}` (previous null: it recorded none).
    #[arg(long)]
    pub json: bool,
    /// The sequence's options come from the trigger of `--config` that uses it, or from the flags.
    #[command(flatten)]
    pub location: CountersLocation,
    /// The sequence's options, without --config.
    #[command(flatten)]
    pub options: SequenceFlags,
}

pub(super) fn run(args: &AdoptArgs) -> Result<(), CliError> {
    let (spec, counter_id) = super::set_next::counter(
        &args.name,
        args.period.as_deref(),
        args.gapless,
        &args.location,
        &args.options,
        "adopt",
    )?;
    // A counter id the sequence cannot have is refused before connecting.
    AdoptDefinition::new(&spec, &counter_id).map_err(|e| core_usage(&e))?;
    runtime()?.block_on(async {
        let (_, mongo, _) = args.location.connect().await?;
        let outcome = crate::tools::counters::adopt(&mongo, &spec, &counter_id)
            .await
            .map_err(|e| match e {
                SidecarError::Core(core @ SeqError::InvalidArgument { .. }) => {
                    CliError::runtime(anyhow::anyhow!("{core}"))
                }
                other => CliError::runtime(other),
            })?;
        if args.json {
            let json = serde_json::to_value(&outcome).unwrap_or_default();
            println!(
                "{}",
                serde_json::to_string_pretty(&crate::tools::counters::exact_numbers(json))
                    .unwrap_or_default()
            );
        } else if outcome.changed.is_empty() {
            println!(
                "{counter_id}: definition unchanged {}",
                describe_definition(&outcome.definition)
            );
        } else {
            println!(
                "{counter_id}: definition {} → {} (changed: {})",
                describe_definition(&outcome.previous),
                describe_definition(&outcome.definition),
                outcome.changed.join(", ")
            );
        }
        Ok(())
    })
}
