//! `mongo-seq set-next <counter id> <next>`: moves a counter, with the options of the sequence
//! it belongs to (never guessed).

use clap::Args;
use mongo_seq_core::{CounterKey, SeqError, SequenceSpec, SetNext};

use super::{core_usage, load_config, runtime, CliError, CountersLocation};
use crate::error::SidecarError;

#[derive(Debug, Args)]
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
    /// Required: the sequence's options (step, bounds, scope) come from the trigger of this
    /// config that uses it. `--uri`/`--counters` only override where the counters are.
    #[command(flatten)]
    pub location: CountersLocation,
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
                        CliError::runtime(anyhow::anyhow!(
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
/// uses the sequence: `set-next` never guesses them (a wrong step stores a wrong counter). The
/// counter id must be one of that sequence's (its scope fields, in order).
fn sequence(args: &SetNextArgs) -> Result<SequenceSpec, CliError> {
    let key = CounterKey::parse(&args.name).map_err(|e| core_usage(&e))?;
    let name = key.name.as_str();
    let Some(path) = &args.location.config else {
        return Err(CliError::usage(anyhow::anyhow!(
            "set-next needs the sequence's options (start, step, min, max, scope) to store the right counter value: pass --config with the sidecar config whose trigger uses sequence `{name}`"
        )));
    };
    let config = load_config(path)?;
    let sequences = config.triggers.iter().map(|t| t.numbering.sequence());
    if let Some(sequence) = sequences.clone().find(|s| s.name() == name) {
        key.belongs_to(sequence).map_err(|e| core_usage(&e))?;
        return Ok(sequence.clone());
    }
    let known: Vec<String> = sequences.map(|s| format!("`{}`", s.name())).collect();
    Err(CliError::usage(anyhow::anyhow!(
        "no trigger of {} uses sequence `{name}` (its sequences: {}); set-next only moves counters whose options it knows",
        path.display(),
        known.join(", ")
    )))
}
