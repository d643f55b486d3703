//! `mongo-seq completions <shell>`: a shell completion script on standard output.

use anyhow::Context;
use clap::{Args, CommandFactory};

use super::{Cli, CliError};

#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

pub(super) fn run(args: &CompletionsArgs) -> Result<(), CliError> {
    // Generated into memory: clap_complete panics on a failed write (e.g. `| head`).
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut Cli::command(), "mongo-seq", &mut script);
    std::io::Write::write_all(&mut std::io::stdout(), &script)
        .context("write the completion script")?;
    Ok(())
}
