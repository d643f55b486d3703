//! `mongo-seq set-next <counter id> <next>`: moves a counter, with the options of the sequence
//! it belongs to (never guessed): from the `--config` trigger that uses it, or given as flags
//! (`--start`, `--step`, …: any sequence, one the npm package or the mongoose plugin keeps too).

use clap::Args;
use mongo_seq_core::{CounterKey, SeqError, SequenceSpec, SetNext};

use super::{core_usage, runtime, CliError, CountersLocation, SequenceFlags};
use crate::error::SidecarError;

#[derive(Debug, Args)]
#[command(
    after_help = "The sequence's options (start, step, bounds, scope, counter field and \
id) decide the value stored: they come from the trigger of --config that uses the sequence, or \
from the flags (--start, --step, --min, --max, --scope, --format, --counter-field, --counter-id; \
validated as the config file's keys), never guessed — pass --step 1 for a sequence with the \
defaults. Exit status: 0 done, 1 failure, 2 usage error, 3 refused without --force (backwards: \
BACKWARDS_REFUSED; nothing written)."
)]
pub struct SetNextArgs {
    /// Counter id: the sequence name, or a scoped id such as `orders/tenantId=acme`.
    pub name: String,
    /// The next number to issue.
    #[arg(allow_hyphen_values = true)]
    pub next: i64,
    /// Allow moving the counter backwards (numbers may then be issued twice) or to a value off
    /// the sequence's grid `start + k·step`.
    #[arg(long)]
    pub force: bool,
    /// The sequence's options come from the trigger of `--config` that uses it (`--uri` /
    /// `--counters` only override where the counters are), or from the flags below.
    #[command(flatten)]
    pub location: CountersLocation,
    /// The sequence's options, without --config.
    #[command(flatten)]
    pub options: SequenceFlags,
}

pub(super) fn run(args: &SetNextArgs) -> Result<(), CliError> {
    let spec = sequence(args)?;
    // Refused arguments (off the grid, out of bounds, not this sequence's id) before connecting.
    SetNext::new(&spec, &args.name, args.next, args.force).map_err(|e| core_usage(&e))?;
    runtime()?.block_on(async {
        let (_, mongo, _) = args.location.connect().await?;
        let outcome =
            crate::tools::counters::set_next(&mongo, &spec, &args.name, args.next, args.force)
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
            "{}: next number is {} (was {})",
            args.name,
            outcome.next,
            outcome
                .previous_last
                .map_or("unset".to_owned(), |last| format!("last issued {last}"))
        );
        Ok(())
    })
}

/// The sequence's options (start, step, bounds, scope), from the trigger of `--config` that
/// uses the sequence, or from the flags: `set-next` never guesses them (a wrong step stores a
/// wrong counter). The counter id must be one of that sequence's (its scope fields, in order).
fn sequence(args: &SetNextArgs) -> Result<SequenceSpec, CliError> {
    let key = CounterKey::parse(&args.name).map_err(|e| core_usage(&e))?;
    let name = key.name.as_str();
    let spec = super::sequence::of(
        name,
        args.location.config.as_deref(),
        &args.options,
        "set-next",
    )?
    .0;
    key.belongs_to(&spec).map_err(|e| core_usage(&e))?;
    Ok(spec)
}
