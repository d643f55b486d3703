//! Command line: parses arguments, sets up logging, runs one subcommand, maps the result to an
//! exit code (0 ok, 1 failure or failed check, 2 usage or configuration error). The only place
//! that uses `anyhow`.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::{Args, CommandFactory, Parser, Subcommand, ValueEnum};
use mongo_seq_core::SequenceSpec;
use serde_json::json;
use tokio_util::sync::CancellationToken;
use tracing::{error, info};

use crate::config::{self, Config, FALLBACK_URI_ENV, URI_ENV};
use crate::redact::{redact, RedactingWriter};
use crate::server::{self, RunOptions};

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

#[derive(Debug, Parser)]
#[command(
    name = "mongo-seq",
    version = version(),
    about = "Sequential numbers for MongoDB documents: the sidecar and its tools"
)]
pub struct Cli {
    /// Log format (logs go to standard error).
    #[arg(long, global = true, value_enum, env = "MONGO_SEQ_LOG_FORMAT", default_value_t = LogFormat::Human)]
    pub log_format: LogFormat,
    /// Log filter, e.g. `info`, `debug`, `mongo_seq=debug` (RUST_LOG wins when set).
    #[arg(
        long,
        global = true,
        env = "MONGO_SEQ_LOG_LEVEL",
        default_value = "info"
    )]
    pub log_level: String,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum LogFormat {
    Human,
    Json,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the daemon: number inserted documents of every configured trigger.
    Sidecar(SidecarArgs),
    /// Audit a collection's numbers: duplicates, gaps, unnumbered documents, counter.
    Check(CheckArgs),
    /// List the counters and their values.
    Counters(CountersArgs),
    /// Make N the next number a counter issues (never backwards without --force).
    SetNext(SetNextArgs),
    /// Ask a running sidecar's /healthz: exit 0 when healthy, 1 otherwise (for container checks).
    Health(HealthArgs),
    /// Print a shell completion script (e.g. `mongo-seq completions bash > /etc/bash_completion.d/mongo-seq`).
    Completions(CompletionsArgs),
}

#[derive(Debug, Args)]
pub struct SidecarArgs {
    /// The TOML configuration file (see sidecar/CONFIG.md).
    #[arg(long, short)]
    pub config: PathBuf,
    /// Number documents that have no number (in _id order) before watching, even when resuming.
    #[arg(long)]
    pub backfill: bool,
    /// Validate the configuration and exit.
    #[arg(long)]
    pub check_config: bool,
}

/// Where to connect: `--uri`, else MONGO_SEQ_URI, else MONGODB_URI.
#[derive(Debug, Args)]
pub struct UriArg {
    /// Connection string (default: $MONGO_SEQ_URI, then $MONGODB_URI).
    #[arg(long)]
    pub uri: Option<String>,
}

impl UriArg {
    fn resolve(&self) -> anyhow::Result<String> {
        self.uri
            .clone()
            .or_else(|| std::env::var(URI_ENV).ok())
            .or_else(|| std::env::var(FALLBACK_URI_ENV).ok())
            .filter(|u| !u.trim().is_empty())
            .ok_or_else(|| anyhow::anyhow!("no connection string: pass --uri or set {URI_ENV}"))
    }
}

#[derive(Debug, Args)]
pub struct CheckArgs {
    #[command(flatten)]
    pub uri: UriArg,
    /// Database of the collection.
    #[arg(long)]
    pub db: String,
    /// The numbered collection.
    #[arg(long)]
    pub collection: String,
    /// The field holding the number.
    #[arg(long, default_value = "seq")]
    pub field: String,
    /// Counter (sequence) name; default `<db>.<collection>` like the sidecar's.
    #[arg(long)]
    pub sequence: Option<String>,
    /// Counters collection: `collection` in --db, or `database.collection`.
    #[arg(long, default_value = "counters")]
    pub counters: String,
    /// First number of the sequence.
    #[arg(long, default_value_t = 1, allow_hyphen_values = true)]
    pub start: i64,
    /// Step of the sequence.
    #[arg(long, default_value_t = 1, allow_hyphen_values = true)]
    pub step: i64,
    /// Scope fields (per-tenant counters), comma-separated.
    #[arg(long, value_delimiter = ',')]
    pub scope: Vec<String>,
    /// Also fail (exit 1) when there are gaps.
    #[arg(long)]
    pub gapless: bool,
    /// Print the full report as JSON instead of the one-line summary.
    #[arg(long)]
    pub json: bool,
}

/// Where the counters are: from a config file, or `--uri` + `--counters`.
#[derive(Debug, Args)]
pub struct CountersLocation {
    /// Take URI and counters collection from this sidecar config.
    #[arg(long, short)]
    pub config: Option<PathBuf>,
    #[command(flatten)]
    pub uri: UriArg,
    /// Counters collection as `database.collection` (without --config).
    #[arg(long)]
    pub counters: Option<String>,
}

#[derive(Debug, Args)]
pub struct CountersArgs {
    #[command(flatten)]
    pub location: CountersLocation,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct SetNextArgs {
    /// Counter id: the sequence name, or a scoped id such as `orders/tenantId=acme`.
    pub name: String,
    /// The next number to issue.
    #[arg(allow_hyphen_values = true)]
    pub next: i64,
    /// Allow moving the counter backwards (numbers may then be issued twice).
    #[arg(long)]
    pub force: bool,
    #[command(flatten)]
    pub location: CountersLocation,
}

#[derive(Debug, Args)]
pub struct HealthArgs {
    /// Take the address from this sidecar config's `[http]` (an unspecified bind such as
    /// 0.0.0.0 is asked on loopback).
    #[arg(long, short, conflicts_with = "addr")]
    pub config: Option<PathBuf>,
    /// Address of the sidecar's HTTP endpoint [default: 127.0.0.1:9464].
    #[arg(long)]
    pub addr: Option<std::net::SocketAddr>,
    /// Give up after this many milliseconds (connecting and reading included).
    #[arg(long, default_value_t = 3000, value_parser = clap::value_parser!(u64).range(1..=600_000))]
    pub timeout_ms: u64,
    /// Print /healthz's JSON instead of the one-line summary.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

/// Failure classes mapped to exit codes.
enum Failure {
    Usage(anyhow::Error),
    Runtime(anyhow::Error),
    CheckFailed,
}

impl From<anyhow::Error> for Failure {
    fn from(e: anyhow::Error) -> Self {
        Self::Runtime(e)
    }
}

pub fn run() -> ExitCode {
    let cli = Cli::parse();
    init_logging(cli.log_format, &cli.log_level);
    match dispatch(cli.command) {
        Ok(()) => ExitCode::SUCCESS,
        Err(Failure::CheckFailed) => ExitCode::from(1),
        Err(Failure::Usage(e)) => {
            eprintln!("mongo-seq: {}", redact(&format!("{e:#}")));
            ExitCode::from(2)
        }
        Err(Failure::Runtime(e)) => {
            eprintln!("mongo-seq: {}", redact(&format!("{e:#}")));
            ExitCode::from(1)
        }
    }
}

fn init_logging(format: LogFormat, level: &str) {
    use tracing_subscriber::EnvFilter;
    let filter = EnvFilter::try_from_default_env()
        .or_else(|_| EnvFilter::try_new(level))
        .unwrap_or_else(|_| EnvFilter::new("info"));
    let writer = || RedactingWriter(std::io::stderr());
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(writer)
        .with_ansi(false);
    let _ = match format {
        LogFormat::Human => builder.try_init(),
        LogFormat::Json => builder.json().flatten_event(true).try_init(),
    };
}

fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("start the async runtime")
}

fn dispatch(command: Command) -> Result<(), Failure> {
    match command {
        Command::Sidecar(args) => sidecar(args),
        Command::Check(args) => check(args),
        Command::Counters(args) => counters(args),
        Command::SetNext(args) => set_next(args),
        Command::Health(args) => health(args),
        Command::Completions(args) => {
            // Generated into memory: clap_complete panics on a failed write (e.g. `| head`).
            let mut script = Vec::new();
            clap_complete::generate(args.shell, &mut Cli::command(), "mongo-seq", &mut script);
            std::io::Write::write_all(&mut std::io::stdout(), &script)
                .context("write the completion script")?;
            Ok(())
        }
    }
}

fn health(args: HealthArgs) -> Result<(), Failure> {
    let addr = match (&args.addr, &args.config) {
        (Some(addr), _) => *addr,
        (None, Some(path)) => config::load_http_addr(path)
            .map_err(|e| Failure::Usage(e.into()))?
            .ok_or_else(|| {
                Failure::Usage(anyhow::anyhow!(
                    "{}: [http] is disabled, so there is no /healthz to ask",
                    path.display()
                ))
            })?,
        (None, None) => std::net::SocketAddr::from(([127, 0, 0, 1], 9464)),
    };
    if addr.port() == 0 {
        return Err(Failure::Usage(anyhow::anyhow!(
            "the sidecar's port is 0 (a free one, picked at start and logged as `http listening … addr=`): pass --addr"
        )));
    }
    let timeout = std::time::Duration::from_millis(args.timeout_ms);
    let reply = runtime()?
        .block_on(crate::probe::healthz(addr, timeout))
        .map_err(|e| Failure::Runtime(e.into()))?;
    if args.json {
        println!("{}", reply.body);
    } else {
        println!("{}", reply.summary());
    }
    if reply.healthy() {
        Ok(())
    } else {
        Err(Failure::CheckFailed)
    }
}

fn load_config(path: &std::path::Path) -> Result<Config, Failure> {
    config::load(path).map_err(|e| Failure::Usage(e.into()))
}

fn sidecar(args: SidecarArgs) -> Result<(), Failure> {
    let config = load_config(&args.config)?;
    if args.check_config {
        println!(
            "config {} is valid: {} trigger(s)",
            args.config.display(),
            config.triggers.len()
        );
        return Ok(());
    }
    let rt = runtime()?;
    rt.block_on(async {
        let shutdown = CancellationToken::new();
        let signals = shutdown.clone();
        tokio::spawn(async move {
            wait_for_signal().await;
            info!("shutdown requested: finishing the batch in flight");
            signals.cancel();
        });
        server::run(
            config,
            RunOptions {
                backfill: args.backfill,
            },
            shutdown,
        )
        .await
        .map_err(|e| {
            error!(error = %e, "sidecar failed");
            Failure::Runtime(e.into())
        })
    })
}

async fn wait_for_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = term.recv() => {}
                    _ = tokio::signal::ctrl_c() => {}
                }
            }
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}

fn check(args: CheckArgs) -> Result<(), Failure> {
    let uri = args.uri.resolve().map_err(Failure::Usage)?;
    let name = args
        .sequence
        .clone()
        .unwrap_or_else(|| format!("{}.{}", args.db, args.collection));
    let spec = SequenceSpec::parse(&json!({
        "name": name,
        "start": { "$numberLong": args.start.to_string() },
        "step": { "$numberLong": args.step.to_string() },
        "scope": args.scope,
    }))
    .map_err(|e| Failure::Usage(anyhow::anyhow!("{e} ({})", e.code())))?;
    let target = crate::check::CheckTarget {
        db: args.db.clone(),
        collection: args.collection.clone(),
        field: args.field.clone(),
        counters: args.counters.clone(),
        spec,
    };
    let summary = runtime()?.block_on(async {
        let client = server::connect(&uri).await?;
        crate::check::run(&client, &target)
            .await
            .map_err(anyhow::Error::from)
    })?;
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&summary).unwrap_or_default()
        );
    } else {
        println!("{}", summary.line(&target));
    }
    if summary.duplicates > 0 || (args.gapless && summary.gaps > 0) {
        return Err(Failure::CheckFailed);
    }
    Ok(())
}

/// The counters collection and, when from a config, the config (for sequence options).
async fn counters_collection(
    location: &CountersLocation,
) -> Result<(mongodb::Collection<mongodb::bson::Document>, Option<Config>), Failure> {
    let (uri, ns, config) = match &location.config {
        Some(path) => {
            let config = load_config(path)?;
            (
                config.uri.clone(),
                (config.counters.db.clone(), config.counters.coll.clone()),
                Some(config),
            )
        }
        None => {
            let uri = location.uri.resolve().map_err(Failure::Usage)?;
            let ns = location
                .counters
                .as_deref()
                .and_then(|c| c.split_once('.'))
                .map(|(d, c)| (d.to_owned(), c.to_owned()))
                .ok_or_else(|| {
                    Failure::Usage(anyhow::anyhow!(
                        "pass --config, or --counters database.collection"
                    ))
                })?;
            (uri, ns, None)
        }
    };
    let client = server::connect(&uri)
        .await
        .map_err(|e| Failure::Runtime(e.into()))?;
    Ok((client.database(&ns.0).collection(&ns.1), config))
}

fn counters(args: CountersArgs) -> Result<(), Failure> {
    runtime()?.block_on(async {
        let (collection, _) = counters_collection(&args.location).await?;
        let list = crate::admin::list(&collection)
            .await
            .map_err(|e| Failure::Runtime(e.into()))?;
        if args.json {
            let rows: Vec<_> = list
                .iter()
                .map(|(id, seq)| json!({ "id": id, "seq": seq }))
                .collect();
            println!(
                "{}",
                serde_json::to_string_pretty(&rows).unwrap_or_default()
            );
        } else if list.is_empty() {
            println!("no counters in {}", collection.namespace());
        } else {
            let width = list.iter().map(|(id, _)| id.len()).max().unwrap_or(0);
            for (id, seq) in list {
                println!("{id:width$}  {seq}");
            }
        }
        Ok(())
    })
}

fn set_next(args: SetNextArgs) -> Result<(), Failure> {
    runtime()?.block_on(async {
        let (collection, config) = counters_collection(&args.location).await?;
        let name = args.name.split('/').next().unwrap_or_default();
        // The sequence's options (step, bounds, scope) come from the config when it names it.
        let spec = config
            .as_ref()
            .and_then(|c| c.triggers.iter().find(|t| t.sequence.name() == name))
            .map(|t| t.sequence.clone());
        let spec = match spec {
            Some(spec) => spec,
            None => {
                // Scope field names are read from the id (`name/field=value/...`).
                let scope: Vec<&str> = args
                    .name
                    .split('/')
                    .skip(1)
                    .filter_map(|p| p.split_once('=').map(|(f, _)| f))
                    .collect();
                SequenceSpec::parse(&json!({ "name": name, "scope": scope }))
                    .map_err(|e| Failure::Usage(anyhow::anyhow!("{e} ({})", e.code())))?
            }
        };
        let outcome = crate::admin::set_next(&collection, &spec, &args.name, args.next, args.force)
            .await
            .map_err(|e| match e {
                crate::error::SidecarError::Core(core) if core.code() == "BACKWARDS_REFUSED" => {
                    Failure::Runtime(anyhow::anyhow!(
                        "{core} (pass --force to move the counter backwards)"
                    ))
                }
                other => Failure::Runtime(other.into()),
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
