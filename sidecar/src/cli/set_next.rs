//! `mongo-seq set-next <counter id> <next>`: moves a counter, with the options of the sequence
//! it belongs to (never guessed): from the `--config` trigger that uses it, or given as flags
//! (`--start`, `--step`, …: any sequence, one the npm package or the mongoose plugin keeps too).

use clap::Args;
use mongo_seq_core::{CounterKey, Period, SeqError, SequenceSpec, SetNext};

use super::{core_usage, runtime, CliError, CountersLocation, SequenceFlags};
use crate::error::SidecarError;

#[derive(Debug, Args)]
#[command(
    after_help = "The sequence's options (start, step, bounds, scope, counter field and \
id) decide the value stored: they come from the trigger of --config that uses the sequence, or \
from the flags (--start, --step, --min, --max, --scope, --format, --counter-field, --counter-id, \
--reset, --time-zone, --year-start; validated as the config file's keys), never guessed — pass \
--step 1 for a sequence with the defaults. A sequence that resets (yearly, monthly, daily) has one \
counter per period: name it with --period (`set-next invoices 500 --period 2026 --reset yearly`) \
or by its id (`invoices/2026`, `invoices/tenantId=acme/2026-05`). Exit status: 0 done, 1 failure, 2 usage error, 3 refused without --force (backwards: \
BACKWARDS_REFUSED; nothing written)."
)]
pub struct SetNextArgs {
    /// Counter id: the sequence name, a scoped id such as `orders/tenantId=acme`, or one with its
    /// period last (`invoices/2026`).
    pub name: String,
    /// The next number to issue.
    #[arg(allow_hyphen_values = true)]
    pub next: i64,
    /// Allow moving the counter backwards (numbers may then be issued twice) or to a value off
    /// the sequence's grid `start + k·step`.
    #[arg(long)]
    pub force: bool,
    /// The period of the counter, for a sequence that resets: `2026` (yearly: the fiscal year,
    /// named after the calendar year it ends in), `2026-05` (monthly), `2026-05-17` (daily).
    /// Appended to the counter id (the same as writing `invoices/2026`).
    #[arg(long, value_name = "PERIOD")]
    pub period: Option<String>,
    /// Without --config: the counter is a gapless trigger's (`gapless = true`), which its
    /// definition records (with --config the trigger says).
    #[arg(long)]
    pub gapless: bool,
    /// The sequence's options come from the trigger of `--config` that uses it (`--uri` /
    /// `--counters` only override where the counters are), or from the flags below.
    #[command(flatten)]
    pub location: CountersLocation,
    /// The sequence's options, without --config.
    #[command(flatten)]
    pub options: SequenceFlags,
}

pub(super) fn run(args: &SetNextArgs) -> Result<(), CliError> {
    let (spec, counter_id) = counter(
        &args.name,
        args.period.as_deref(),
        args.gapless,
        &args.location,
        &args.options,
        "set-next",
    )?;
    // Refused arguments (off the grid, out of bounds, not this sequence's id) before connecting.
    SetNext::new(&spec, &counter_id, args.next, args.force).map_err(|e| core_usage(&e))?;
    runtime()?.block_on(async {
        let (_, mongo, _) = args.location.connect().await?;
        let outcome =
            crate::tools::counters::set_next(&mongo, &spec, &counter_id, args.next, args.force)
                .await
                .map_err(|e| match e {
                    SidecarError::Core(core @ SeqError::BackwardsRefused { .. }) => {
                        CliError::Refused(anyhow::anyhow!(
                            "{core} (pass --force to move the counter backwards)"
                        ))
                    }
                    other => CliError::runtime(other),
                })?;
        println!(
            "{counter_id}: next number is {} (was {})",
            outcome.next,
            outcome
                .previous_last
                .map_or("unset".to_owned(), |last| format!("last issued {last}"))
        );
        Ok(())
    })
}

/// The sequence's options (start, step, bounds, scope, reset), from the trigger of `--config`
/// that uses the sequence, or from the flags: `set-next` and `adopt` (`tool`) never guess them (a
/// wrong step stores a wrong counter). The counter id — `name`, with `--period` appended — must
/// be one of that sequence's (its scope fields, in order; a period of its kind exactly when it
/// resets), as the core reads it.
pub(super) fn counter(
    name: &str,
    period: Option<&str>,
    gapless: bool,
    location: &CountersLocation,
    options: &SequenceFlags,
    tool: &str,
) -> Result<(SequenceSpec, String), CliError> {
    if gapless && location.config.is_some() {
        return Err(CliError::usage(anyhow::anyhow!(
            "--gapless describes a sequence given as flags: with --config the trigger says whether it is gapless"
        )));
    }
    let key = counter_key(name, period)?;
    let mut spec = super::sequence::of(&key.name, location.config.as_deref(), options, tool)?.0;
    if gapless {
        spec = spec.with_gapless(true);
    }
    let counter_id = checked_counter_id(&key, &spec)?;
    Ok((spec, counter_id))
}

/// The id of counter `key`, refused (a usage error) unless it is one of `spec`'s counters: its
/// sequence, its scope, and a period exactly when the sequence resets.
pub(super) fn checked_counter_id(
    key: &CounterKey,
    spec: &SequenceSpec,
) -> Result<String, CliError> {
    key.belongs_to(spec).map_err(|e| {
        let hint = if key.period.is_none() && spec.reset().is_periodic() {
            " (pass the counter's period with --period)"
        } else {
            ""
        };
        CliError::usage(anyhow::anyhow!("{e} ({}){hint}", e.code()))
    })?;
    key.id().map_err(|e| core_usage(&e))
}

/// The counter id argument `name` read back, with `--period` appended (refused when the id
/// names a period already).
pub(super) fn counter_key(name: &str, period: Option<&str>) -> Result<CounterKey, CliError> {
    let mut key = CounterKey::parse(name).map_err(|e| core_usage(&e))?;
    if let Some(text) = period {
        if let Some(given) = &key.period {
            return Err(CliError::usage(anyhow::anyhow!(
                "--period {text}: the counter id `{name}` has its period ({}) already",
                given.text()
            )));
        }
        key.period = Some(Period::from_text("period", text).map_err(|e| core_usage(&e))?);
    }
    Ok(key)
}
