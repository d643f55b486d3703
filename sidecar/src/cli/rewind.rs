//! `mongo-seq rewind <sequence>`: every counter of a sequence (unscoped and each scope) back to
//! its start — the core's `RewindSequence` (mongoose-sequence's `counterReset(id)` without a
//! reference). Refused for a gapless trigger's sequence, a pending intent, or (options from flags,
//! mode unknown) counters a sidecar keeps, unless `--force`: exit 3, nothing written.

use clap::Args;
use mongo_seq_core::{RewindSequence, SeqError};

use super::{runtime, CliError, CountersLocation, SequenceFlags};
use crate::error::SidecarError;
use crate::run_plan::run_tool_plan;

#[derive(Debug, Args)]
#[command(
    after_help = "For a collection whose documents were removed (tests, a new series): \
numbers already stored would be issued again. The sequence's options (start and step decide the \
value stored; scope, counter field and id which counters) come from the trigger of --config that \
uses it, or from the flags, never guessed. Without --force a gapless trigger's sequence (with \
--config), a counter holding a pending gapless intent, or — options from flags, so the mode is \
unknown — counters a sidecar keeps (a lease `epoch`) are refused. Exit status: 0 done, 1 \
failure, 2 usage error or a sequence without counters (nothing to rewind), 3 refused \
(REWIND_REFUSED; nothing written)."
)]
pub struct RewindArgs {
    /// The sequence whose counters go back to its start.
    pub sequence: String,
    /// Rewind a gapless sequence, or counters a sidecar keeps, anyway.
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

pub(super) fn run(args: &RewindArgs) -> Result<(), CliError> {
    let (spec, gapless) = super::sequence::of(
        &args.sequence,
        args.location.config.as_deref(),
        &args.options,
        "rewind",
    )?;
    runtime()?.block_on(async {
        let (ns, mongo, _) = args.location.connect().await?;
        // Named as a sequence that exists: none of its counters found is refused (the core's).
        let mut plan = RewindSequence::of_existing(&spec, args.force, gapless);
        let outcome = run_tool_plan(&mongo, &mut plan)
            .await
            .map_err(|e| match e {
                SidecarError::Core(refused @ SeqError::RewindRefused { .. }) => {
                    CliError::Refused(anyhow::anyhow!(
                        "{refused} ({}; pass --force to rewind anyway)",
                        refused.code()
                    ))
                }
                SidecarError::Core(unknown @ SeqError::InvalidArgument { .. }) => CliError::usage(
                    anyhow::anyhow!("{unknown} (in {ns}; `mongo-seq counters` lists them)"),
                ),
                other => CliError::runtime(other),
            })?;
        println!(
            "rewound {} counter{} of sequence `{}` in {ns}, next {}",
            outcome.rewound,
            if outcome.rewound == 1 { "" } else { "s" },
            spec.name(),
            outcome.next
        );
        Ok(())
    })
}
