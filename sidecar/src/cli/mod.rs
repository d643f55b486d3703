//! Command line, the binary's edge: parses arguments (clap), sets up logging, runs one
//! subcommand (a file each: its flags, their raw → validated step through `config`, the work,
//! the output), and maps the result to an exit code ([`EXIT_CODES`]: 0 ok, 1 failure or failed
//! check, 2 usage or configuration error, 3 refused without `--force`, 4 another sidecar runs
//! with this instance id). The only place that
//! uses `anyhow`: every module below returns typed errors, which a subcommand classifies
//! (`CliError`).

mod adopt;
mod check;
mod completions;
mod counters;
mod health;
mod import;
mod location;
mod logging;
mod report;
mod retry;
mod rewind;
mod sequence;
mod set_next;
mod sidecar;
mod trigger_flags;
mod void;

use std::process::ExitCode;

use anyhow::Context;
use clap::Parser;

use crate::config::{self, Config, ConfigError};
use crate::redact::redact;

pub use adopt::AdoptArgs;
pub use check::CheckArgs;
pub use completions::CompletionsArgs;
pub use counters::CountersArgs;
pub use health::HealthArgs;
pub use import::{ImportArgs, Source};
pub use location::{CountersLocation, UriArg};
pub use logging::{LogFormat, LOG_LEVELS};
pub use report::ReportArgs;
pub use retry::RetryArgs;
pub use rewind::RewindArgs;
pub use sequence::SequenceFlags;
pub use set_next::SetNextArgs;
pub use sidecar::SidecarArgs;
pub use void::VoidArgs;

/// `--version`: the crate's version, with the commit when the build was given one
/// (`MONGO_SEQ_COMMIT`, set by `make image`).
pub fn version() -> &'static str {
    static VERSION: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    VERSION.get_or_init(|| match option_env!("MONGO_SEQ_COMMIT") {
        Some(commit) if !commit.is_empty() => {
            format!("{} (commit {commit})", env!("CARGO_PKG_VERSION"))
        }
        _ => env!("CARGO_PKG_VERSION").to_owned(),
    })
}

/// What each exit status means (`--help`, sidecar/CONFIG.md).
pub const EXIT_CODES: &str = "Exit status: 0 success; 1 failure, or a check that found \
problems, or an import with --apply that found nothing to import; 2 usage or configuration \
error (nothing was done); 3 refused without --force, nothing written (set-next backwards: \
BACKWARDS_REFUSED; rewind of a gapless sequence or of counters a sidecar keeps: REWIND_REFUSED; \
void of a number a document holds, not issued, voided already, or during a gapless intent); \
4 the sidecar stopped because another running sidecar has its instance id (DUPLICATE_INSTANCE).";

#[derive(Debug, Parser)]
#[command(
    name = "mongo-seq",
    version = version(),
    about = "Sequential numbers for MongoDB documents: the sidecar and its tools",
    after_help = EXIT_CODES
)]
pub struct Cli {
    /// Log format (logs go to standard error).
    #[arg(long, global = true, value_enum, env = "MONGO_SEQ_LOG_FORMAT", default_value_t = LogFormat::Human)]
    pub log_format: LogFormat,
    /// Log filter: a level (off, error, warn, info, debug, trace), or comma-separated
    /// `target=level` directives, e.g. `info,mongo_seq=debug` (RUST_LOG wins when set).
    #[arg(
        long,
        global = true,
        env = "MONGO_SEQ_LOG_LEVEL",
        default_value = "info",
        value_parser = logging::parse_filter
    )]
    pub log_level: String,
    #[command(subcommand)]
    pub subcommand: Subcommand,
}

/// What `mongo-seq` is asked to do (a MongoDB command is a core `Command`; this is not one).
#[derive(Debug, clap::Subcommand)]
pub enum Subcommand {
    /// Run the daemon: number inserted documents of every configured trigger.
    Sidecar(SidecarArgs),
    /// Account for every number of a series: held, voided, deleted, unexplained gaps,
    /// duplicates, dead letters, unnumbered documents, counter.
    Check(CheckArgs),
    /// The auditor's report of a period: per series the definition, first and last number,
    /// held, voided, deleted and unexplained numbers, the chain of seals, date order, dead
    /// letters and numbers per day, as one self-contained HTML page and/or JSON.
    Report(ReportArgs),
    /// List the counters and their values.
    Counters(CountersArgs),
    /// Make N the next number a counter issues (never backwards without --force).
    SetNext(SetNextArgs),
    /// Rewrite the definition a counter records (start, step, bounds, reset, format, gapless) to
    /// the sequence's options on purpose, and say what changed.
    Adopt(AdoptArgs),
    /// Void numbers no document holds (a cancelled invoice's), with a reason, in the ledger.
    Void(VoidArgs),
    /// Set every counter of a sequence (each scope) back to its start (refused for a gapless
    /// sequence, or counters a sidecar keeps, without --force).
    Rewind(RewindArgs),
    /// Number the dead letters of a config's triggers now (documents a trigger could not number,
    /// repaired since); the lease holder also retries them every `dead_letter_retry_ms`.
    Retry(RetryArgs),
    /// Ask a running sidecar's /healthz: exit 0 when healthy, 1 otherwise (for container checks).
    Health(HealthArgs),
    /// Adopt the counters of mongoose-sequence or mongoose-auto-increment/@typegoose (dry run unless --apply).
    Import(ImportArgs),
    /// Print a shell completion script (e.g. `mongo-seq completions bash > /etc/bash_completion.d/mongo-seq`).
    Completions(CompletionsArgs),
}

/// How a subcommand failed, which decides the exit code.
pub(crate) enum CliError {
    /// Exit 2: the arguments or the configuration are refused (nothing was done).
    Usage(anyhow::Error),
    /// Exit 1: the work failed.
    Runtime(anyhow::Error),
    /// Exit 1 without a message of its own: a check found problems (already reported).
    CheckFailed,
    /// Exit 3: refused without `--force`; nothing was written.
    Refused(anyhow::Error),
    /// Exit 4: the sidecar stopped, another running sidecar has its instance id.
    DuplicateInstance(anyhow::Error),
}

impl CliError {
    pub(crate) fn usage(e: impl Into<anyhow::Error>) -> Self {
        Self::Usage(e.into())
    }

    pub(crate) fn runtime(e: impl Into<anyhow::Error>) -> Self {
        Self::Runtime(e.into())
    }
}

impl From<ConfigError> for CliError {
    fn from(e: ConfigError) -> Self {
        Self::usage(e)
    }
}

impl From<anyhow::Error> for CliError {
    fn from(e: anyhow::Error) -> Self {
        Self::Runtime(e)
    }
}

pub fn run() -> ExitCode {
    let cli = Cli::parse();
    logging::init(cli.log_format, &cli.log_level);
    match dispatch(cli.subcommand) {
        Ok(()) => ExitCode::SUCCESS,
        Err(CliError::CheckFailed) => ExitCode::from(1),
        Err(CliError::Usage(e)) => {
            eprintln!("mongo-seq: {}", redact(&describe(&e)));
            ExitCode::from(2)
        }
        Err(CliError::Runtime(e)) => {
            eprintln!("mongo-seq: {}", redact(&describe(&e)));
            ExitCode::from(1)
        }
        Err(CliError::Refused(e)) => {
            eprintln!("mongo-seq: {}", redact(&describe(&e)));
            ExitCode::from(3)
        }
        Err(CliError::DuplicateInstance(e)) => {
            eprintln!("mongo-seq: {}", redact(&describe(&e)));
            ExitCode::from(4)
        }
    }
}

fn dispatch(subcommand: Subcommand) -> Result<(), CliError> {
    match subcommand {
        Subcommand::Sidecar(args) => sidecar::run(&args),
        Subcommand::Check(args) => check::run(&args),
        Subcommand::Report(args) => report::run(&args),
        Subcommand::Counters(args) => counters::run(&args),
        Subcommand::SetNext(args) => set_next::run(&args),
        Subcommand::Adopt(args) => adopt::run(&args),
        Subcommand::Void(args) => void::run(&args),
        Subcommand::Rewind(args) => rewind::run(&args),
        Subcommand::Retry(args) => retry::run(&args),
        Subcommand::Health(args) => health::run(&args),
        Subcommand::Import(args) => import::run(&args),
        Subcommand::Completions(args) => completions::run(&args),
    }
}

/// An error and its causes, `a: b: c`, leaving out a cause its parent already quotes (most of
/// our errors put their cause in their own message).
fn describe(e: &anyhow::Error) -> String {
    let mut out = String::new();
    for cause in e.chain() {
        // A driver error without its debug fields (`labels: {}, source: None, …`).
        let cause = match cause.downcast_ref::<mongodb::error::Error>() {
            Some(driver) => mongo_seq::executor::mongo_message(driver),
            None => cause.to_string(),
        };
        if out.is_empty() {
            out = cause;
        } else if !out.contains(&cause) {
            out.push_str(": ");
            out.push_str(&cause);
        }
    }
    out
}

/// The async runtime a subcommand runs its work on.
fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("start the async runtime")
}

/// A config file, read and validated (refused: a usage error).
fn load_config(path: &std::path::Path) -> Result<Config, CliError> {
    Ok(config::load(path)?)
}

/// The triggers of `config` (read from `path`) named `name`, or all of them; a name no trigger
/// has is a usage error listing the ones it has.
fn triggers_named<'a>(
    config: &'a Config,
    path: &std::path::Path,
    name: Option<&str>,
) -> Result<Vec<&'a crate::config::TriggerSpec>, CliError> {
    let chosen: Vec<_> = config
        .triggers
        .iter()
        .filter(|t| name.is_none_or(|name| t.id == name))
        .collect();
    if chosen.is_empty() {
        let names: Vec<String> = config
            .triggers
            .iter()
            .map(|t| format!("`{}`", t.id))
            .collect();
        return Err(CliError::usage(anyhow::anyhow!(
            "--trigger: {} has no trigger named `{}` (its triggers: {})",
            path.display(),
            name.unwrap_or_default(),
            names.join(", ")
        )));
    }
    Ok(chosen)
}

/// A core refusal of the arguments: a usage error with the core's code.
fn core_usage(e: &mongo_seq_core::SeqError) -> CliError {
    CliError::usage(anyhow::anyhow!("{e} ({})", e.code()))
}
