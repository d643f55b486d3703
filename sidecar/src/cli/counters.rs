//! `mongo-seq counters`: every counter and its value, as a table or JSON.

use clap::Args;
use serde_json::json;

use super::{runtime, CliError, CountersLocation};
use crate::tools::counters;

#[derive(Debug, Args)]
pub struct CountersArgs {
    #[command(flatten)]
    pub location: CountersLocation,
    /// Print JSON: `[{id, seq}]`, `seq` a number, or a decimal string beyond 2^53 − 1 (where
    /// JSON parsers such as JavaScript's lose digits), or null with `invalid` (what is stored)
    /// when it is not an integer. With --config, a counter of a trigger's sequence (its id
    /// read by the core, its scope fields those of the sequence) has `trigger`, that trigger's
    /// name.
    #[arg(long)]
    pub json: bool,
}

pub(super) fn run(args: &CountersArgs) -> Result<(), CliError> {
    runtime()?.block_on(async {
        let (ns, mongo, config) = args.location.connect().await?;
        let list = counters::list(&mongo).await.map_err(CliError::runtime)?;
        if args.json {
            // With --config, each counter of a trigger's sequence names that trigger.
            let triggers = config.as_ref().map_or(&[][..], |c| c.triggers.as_slice());
            let rows: Vec<_> = list
                .iter()
                .map(|row| {
                    let mut json = row.to_json();
                    let sequence = counters::sequence_of(
                        &row.id,
                        triggers.iter().map(|t| t.numbering.sequence()),
                    );
                    let trigger = triggers
                        .iter()
                        .find(|t| Some(t.numbering.sequence()) == sequence);
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
            println!("no counters in {ns}");
        } else {
            let width = list.iter().map(|row| row.id.len()).max().unwrap_or(0);
            for row in list {
                match row.seq {
                    Ok(seq) => println!("{:width$}  {seq}", row.id),
                    Err(raw) => println!("{:width$}  {raw} (not an integer)", row.id),
                }
            }
        }
        Ok(())
    })
}
