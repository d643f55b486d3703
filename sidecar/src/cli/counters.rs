//! `mongo-seq counters`: the counters, their values and definitions, as a table or
//! JSON: every counter, or
//! one sequence's (`--sequence`, its options from `--config` or the flags: the counter field and
//! id it reads, the scope fields its ids have).

use clap::Args;
use serde_json::json;

use super::{runtime, CliError, CountersLocation, SequenceFlags};
use crate::tools::counters;

#[derive(Debug, Args)]
pub struct CountersArgs {
    #[command(flatten)]
    pub location: CountersLocation,
    /// Only this sequence's counters (unscoped, each scope, each period of a sequence that
    /// resets, and the one --counter-id names).
    #[arg(long)]
    pub sequence: Option<String>,
    /// The sequence's options (with --sequence, without --config): its counters are read with
    /// its counter field and id.
    #[command(flatten)]
    pub options: SequenceFlags,
    /// Print JSON: `[{id, seq}]`, `seq` a number, or a decimal string beyond 2^53 − 1 (where
    /// JSON parsers such as JavaScript's lose digits), or null with `invalid` (what is stored)
    /// when it is not an integer. With --config, a counter of a trigger's sequence (its id
    /// read by the core, its scope fields those of the sequence) has `trigger`, that trigger's
    /// name; a counter of a period (a sequence that resets: `invoices/2026`) has `period` and
    /// `series` (its id without the period). Every counter has `definition`: the options it
    /// records (start, step, min, max, reset, timeZone, yearStart, format, gapless), or null when
    /// it records none yet.
    #[arg(long)]
    pub json: bool,
}

pub(super) fn run(args: &CountersArgs) -> Result<(), CliError> {
    // The one sequence asked for, checked before connecting.
    let only = match &args.sequence {
        Some(name) => Some(
            super::sequence::of(
                name,
                args.location.config.as_deref(),
                &args.options,
                "counters --sequence",
            )?
            .0,
        ),
        None if args.options.any() => {
            return Err(CliError::usage(anyhow::anyhow!(
                "--start, --step, … describe one sequence: pass --sequence NAME with them"
            )))
        }
        None => None,
    };
    runtime()?.block_on(async {
        let (ns, mongo, config) = args.location.connect().await?;
        let triggers = config.as_ref().map_or(&[][..], |c| c.triggers.as_slice());
        let sequences: Vec<_> = triggers.iter().map(|t| t.numbering.sequence()).collect();
        let list = counters::list(&mongo, &sequences, only.as_ref())
            .await
            .map_err(CliError::runtime)?;
        if args.json {
            // With --config, each counter of a trigger's sequence names that trigger.
            let rows: Vec<_> = list
                .iter()
                .map(|row| {
                    let mut json = row.to_json();
                    let trigger = triggers
                        .iter()
                        .find(|t| Some(t.numbering.sequence().name()) == row.sequence.as_deref());
                    if let (Some(trigger), Some(object)) = (trigger, json.as_object_mut()) {
                        object.insert("trigger".to_owned(), json!(trigger.id));
                    }
                    json
                })
                .collect();
            println!(
                "{}",
                serde_json::to_string_pretty(&rows).unwrap_or_default()
            );
        } else if list.is_empty() {
            match &only {
                Some(spec) => println!("no counters of sequence `{}` in {ns}", spec.name()),
                None => println!("no counters in {ns}"),
            }
        } else {
            let width = list.iter().map(|row| row.id.len()).max().unwrap_or(0);
            let values: Vec<String> = list
                .iter()
                .map(|row| match &row.seq {
                    Ok(seq) => seq.to_string(),
                    Err(raw) => format!("{raw} (not an integer)"),
                })
                .collect();
            let value_width = values.iter().map(String::len).max().unwrap_or(0);
            for (row, value) in list.iter().zip(values) {
                // A counter of a period names it: one line per period of each series.
                let period = row
                    .period
                    .as_ref()
                    .map_or_else(String::new, |(_, period)| format!("  (period {period})"));
                // The definition it records, or that it records none yet.
                let definition = row.definition.as_ref().map_or_else(
                    || "no definition yet".to_owned(),
                    mongo_seq_core::error::describe_definition,
                );
                println!(
                    "{:width$}  {value:value_width$}  {definition}{period}",
                    row.id
                );
            }
        }
        Ok(())
    })
}
