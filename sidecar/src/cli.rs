//! Command line: parses arguments, sets up logging, runs one subcommand, maps the result to an
//! exit code (0 ok, 1 failure or failed check, 2 usage or configuration error). The only place
//! that uses `anyhow`.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::{Args, CommandFactory, Parser, Subcommand, ValueEnum};
use mongo_seq_core::{SeqError, SequenceSpec};
use serde_json::json;
use tokio_util::sync::CancellationToken;
use tracing::info;

use crate::config::{self, Config, FALLBACK_URI_ENV, URI_ENV};
use crate::connection::Connection;
use crate::error::SidecarError;
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
    /// Adopt the counters of mongoose-sequence or mongoose-auto-increment/@typegoose (dry run unless --apply).
    Import(crate::import::ImportArgs),
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
    /// The connection string, checked like the config's `mongodb.uri` (a usage error naming
    /// where it came from).
    pub(crate) fn resolve(&self) -> anyhow::Result<String> {
        let env = |name: &str| std::env::var(name).ok().filter(|u| !u.trim().is_empty());
        let (uri, from) = match (&self.uri, env(URI_ENV), env(FALLBACK_URI_ENV)) {
            (Some(uri), _, _) => (uri.clone(), "--uri"),
            (None, Some(uri), _) => (uri, URI_ENV),
            (None, None, Some(uri)) => (uri, FALLBACK_URI_ENV),
            (None, None, None) => {
                anyhow::bail!("no connection string: pass --uri or set {URI_ENV}")
            }
        };
        config::check_uri(&uri).map_err(|reason| anyhow::anyhow!("{from}: {reason}"))?;
        Ok(uri)
    }
}

#[derive(Debug, Args)]
#[command(
    after_help = "Exit status: 0 when the summary is clean, 1 when it is not (numbers held \
by several documents, values that are not integers, numbers off the step grid, unnumbered \
documents, a counter behind the largest number; gaps too with --gapless or a gapless trigger; \
the reasons go to standard error), 2 on a usage error or when the database or collection does \
not exist. Run it when the sidecar has caught up: documents inserted a moment ago are not \
numbered yet."
)]
pub struct CheckArgs {
    /// Check the triggers of this sidecar config: connection, collection, field, sequence
    /// options, counters and `match` all come from it.
    #[arg(long, short, conflicts_with_all = ["uri", "db", "collection", "sequence", "counters", "start", "step", "scope", "filter"])]
    pub config: Option<PathBuf>,
    /// With --config: only the trigger with this name (default: every trigger).
    #[arg(long, requires = "config")]
    pub trigger: Option<String>,
    #[command(flatten)]
    pub uri: UriArg,
    /// Database of the collection.
    #[arg(long, required_unless_present = "config")]
    pub db: Option<String>,
    /// The numbered collection.
    #[arg(long, required_unless_present = "config")]
    pub collection: Option<String>,
    /// The field holding the number.
    #[arg(long, default_value = "seq", conflicts_with = "config")]
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
    /// Only documents matching this query, as JSON (a trigger's `match`), e.g. '{"type": "order"}'.
    #[arg(long = "match", id = "filter", value_name = "JSON")]
    pub filter: Option<String>,
    /// Also fail (exit 1) when there are gaps (implied for a gapless trigger with --config).
    #[arg(long)]
    pub gapless: bool,
    /// Print the full report as JSON instead of the one-line summary (with --config: an array,
    /// one report per trigger). `largest` and the counters are JSON numbers, or decimal strings
    /// beyond 2^53 − 1.
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
    /// Print JSON: `[{id, seq}]`, `seq` a number, or a decimal string beyond 2^53 − 1 (where
    /// JSON parsers such as JavaScript's lose digits), or null with `invalid` (what is stored)
    /// when it is not an integer. With --config, a counter of a trigger's sequence (its id
    /// read by the core, its scope fields those of the sequence) has `trigger`, that trigger's
    /// name.
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
    /// Allow moving the counter backwards (numbers may then be issued twice) or to a value off
    /// the sequence's grid `start + k·step`.
    #[arg(long)]
    pub force: bool,
    /// Required: the sequence's options (step, bounds, scope) come from the trigger of this
    /// config that uses it. `--uri`/`--counters` only override where the counters are.
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
pub(crate) enum Failure {
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
            eprintln!("mongo-seq: {}", redact(&describe(&e)));
            ExitCode::from(2)
        }
        Err(Failure::Runtime(e)) => {
            eprintln!("mongo-seq: {}", redact(&describe(&e)));
            ExitCode::from(1)
        }
    }
}

/// An error and its causes, `a: b: c`, leaving out a cause its parent already quotes (most of
/// our errors put their cause in their own message).
fn describe(e: &anyhow::Error) -> String {
    let mut out = String::new();
    for cause in e.chain() {
        // A driver error without its debug fields (`labels: {}, source: None, …`).
        let cause = match cause.downcast_ref::<mongodb::error::Error>() {
            Some(driver) => crate::executor::mongo_message(driver),
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

pub(crate) fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
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
        Command::Import(args) => crate::import::run(&args),
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
        .block_on(crate::health_check::healthz(addr, timeout))
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
    let result = rt.block_on(async {
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
        .map_err(|e| Failure::Runtime(e.into()))
    });
    // Do not wait for what the driver may still run on blocking threads (a DNS lookup).
    rt.shutdown_timeout(std::time::Duration::from_millis(500));
    result
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
    let (uri, targets) = check_targets(&args)?;
    let reports = runtime()?.block_on(async {
        let client = server::connect(&uri)
            .await
            .map_err(|e| Failure::Runtime(e.into()))?;
        let mut reports = Vec::with_capacity(targets.len());
        for target in targets {
            crate::check::ensure_exists(&client, &target)
                .await
                .map_err(|e| match e {
                    crate::check::CheckError::Missing(missing) => Failure::Usage(missing.into()),
                    crate::check::CheckError::Failed(e) => Failure::Runtime(e.into()),
                })?;
            let place = config::Namespace {
                db: target.db.clone(),
                coll: target.collection.clone(),
            };
            let mongo = Connection::for_tool(&client, Some(&place), &target.counters);
            let summary = crate::check::audit_collection(&mongo, &target)
                .await
                .map_err(|e| Failure::Runtime(e.into()))?;
            reports.push((target, summary));
        }
        Ok::<_, Failure>(reports)
    })?;
    if args.json {
        let json = |(target, summary): &(crate::check::CheckTarget, crate::check::CheckSummary)| {
            let mut value = serde_json::to_value(summary).unwrap_or_default();
            if let (Some(id), Some(object)) = (&target.trigger, value.as_object_mut()) {
                object.insert("trigger".to_owned(), json!(id));
            }
            value
        };
        let value = match args.config {
            Some(_) => serde_json::Value::Array(reports.iter().map(json).collect()),
            None => reports.first().map(json).unwrap_or_default(),
        };
        println!(
            "{}",
            serde_json::to_string_pretty(&value).unwrap_or_default()
        );
    } else {
        for (target, summary) in &reports {
            println!("{}", summary.line(target));
        }
    }
    let mut clean = true;
    for (target, summary) in &reports {
        let problems = summary.problems(target.gapless || args.gapless);
        if !problems.is_empty() {
            clean = false;
            eprintln!(
                "mongo-seq: check failed for {}.{} field {}: {}",
                target.db,
                target.collection,
                target.field,
                problems.join(", ")
            );
        }
    }
    if clean {
        Ok(())
    } else {
        Err(Failure::CheckFailed)
    }
}

/// The connection string and what to check: the config's triggers, or the flags.
fn check_targets(args: &CheckArgs) -> Result<(String, Vec<crate::check::CheckTarget>), Failure> {
    use crate::check::CheckTarget;
    if let Some(path) = &args.config {
        let config = load_config(path)?;
        let targets: Vec<CheckTarget> = config
            .triggers
            .iter()
            .filter(|t| args.trigger.as_ref().map_or(true, |name| &t.id == name))
            .map(|t| CheckTarget {
                trigger: Some(t.id.clone()),
                db: t.ns.db.clone(),
                collection: t.ns.coll.clone(),
                field: t.numbering.field().to_owned(),
                counters: config.counters.clone(),
                spec: t.numbering.sequence().clone(),
                filter: t.filter.clone(),
                gapless: t.numbering.gapless(),
            })
            .collect();
        if targets.is_empty() {
            let names: Vec<String> = config
                .triggers
                .iter()
                .map(|t| format!("`{}`", t.id))
                .collect();
            return Err(Failure::Usage(anyhow::anyhow!(
                "--trigger: {} has no trigger named `{}` (its triggers: {})",
                path.display(),
                args.trigger.as_deref().unwrap_or_default(),
                names.join(", ")
            )));
        }
        return Ok((config.uri, targets));
    }
    let uri = args.uri.resolve().map_err(Failure::Usage)?;
    let (Some(db), Some(collection)) = (&args.db, &args.collection) else {
        return Err(Failure::Usage(anyhow::anyhow!(
            "pass --config, or --db and --collection"
        )));
    };
    let name = args
        .sequence
        .clone()
        .unwrap_or_else(|| format!("{db}.{collection}"));
    let spec = SequenceSpec::parse(&json!({
        "name": name,
        "start": { "$numberLong": args.start.to_string() },
        "step": { "$numberLong": args.step.to_string() },
        "scope": args.scope,
    }))
    .map_err(|e| Failure::Usage(anyhow::anyhow!("{e} ({})", e.code())))?;
    config::Namespace::from_flags(["--db", "--collection"], db, collection)
        .map_err(Failure::Usage)?;
    let counters = match args.counters.split_once('.') {
        Some((d, c)) => config::Namespace::from_flags(["--counters", "--counters"], d, c),
        None => config::Namespace::from_flags(["--db", "--counters"], db, &args.counters),
    }
    .map_err(Failure::Usage)?;
    let filter = args
        .filter
        .as_deref()
        .map(|text| {
            let value: serde_json::Value = serde_json::from_str(text)
                .map_err(|e| anyhow::anyhow!("--match: not JSON ({e}): {text}"))?;
            // Checked as the BSON the server gets, kept as its canonical Extended JSON.
            let document = crate::executor::convert::to_doc(value)
                .map_err(|e| anyhow::anyhow!("--match: {e}"))?;
            match crate::executor::convert::from_doc(document) {
                serde_json::Value::Object(filter) => Ok(filter),
                _ => Err(anyhow::anyhow!("--match: must be a JSON object")),
            }
        })
        .transpose()
        .map_err(Failure::Usage)?;
    let target = CheckTarget {
        trigger: None,
        db: db.clone(),
        collection: collection.clone(),
        field: args.field.clone(),
        counters,
        spec,
        filter,
        gapless: args.gapless,
    };
    Ok((uri, vec![target]))
}

/// The counters collection (its namespace, and a connection to it) and, when from a config,
/// the config (for sequence options).
async fn counters_collection(
    location: &CountersLocation,
) -> Result<(config::Namespace, Connection, Option<Config>), Failure> {
    let (uri, ns, config) = match &location.config {
        Some(path) => {
            let config = load_config(path)?;
            (config.uri.clone(), config.counters.clone(), Some(config))
        }
        None => {
            let uri = location.uri.resolve().map_err(Failure::Usage)?;
            let ns = location
                .counters
                .as_deref()
                .and_then(|c| c.split_once('.'))
                .ok_or_else(|| {
                    Failure::Usage(anyhow::anyhow!(
                        "pass --config, or --counters database.collection"
                    ))
                })
                .and_then(|(db, coll)| {
                    config::Namespace::from_flags(["--counters", "--counters"], db, coll)
                        .map_err(Failure::Usage)
                })?;
            (uri, ns, None)
        }
    };
    let client = server::connect(&uri)
        .await
        .map_err(|e| Failure::Runtime(e.into()))?;
    let mongo = Connection::for_tool(&client, None, &ns);
    Ok((ns, mongo, config))
}

fn counters(args: CountersArgs) -> Result<(), Failure> {
    runtime()?.block_on(async {
        let (ns, mongo, config) = counters_collection(&args.location).await?;
        let list = crate::admin::list(&mongo)
            .await
            .map_err(|e| Failure::Runtime(e.into()))?;
        if args.json {
            // With --config, each counter of a trigger's sequence names that trigger.
            let triggers = config.as_ref().map_or(&[][..], |c| c.triggers.as_slice());
            let rows: Vec<_> = list
                .iter()
                .map(|row| {
                    let mut json = row.to_json();
                    let sequence = crate::admin::sequence_of(
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

fn set_next(args: SetNextArgs) -> Result<(), Failure> {
    let spec = set_next_spec(&args)?;
    // Refused arguments (off the grid, out of bounds, not this sequence's id) before connecting.
    mongo_seq_core::SetNext::new(&spec, &args.name, args.next, args.force)
        .map_err(|e| Failure::Usage(anyhow::anyhow!("{e} ({})", e.code())))?;
    runtime()?.block_on(async {
        let (_, mongo, _) = counters_collection(&args.location).await?;
        let outcome = crate::admin::set_next(&mongo, &spec, &args.name, args.next, args.force)
            .await
            .map_err(|e| match e {
                SidecarError::Core(core @ SeqError::BackwardsRefused { .. }) => Failure::Runtime(
                    anyhow::anyhow!("{core} (pass --force to move the counter backwards)"),
                ),
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

/// The sequence's options (start, step, bounds, scope), from the trigger of `--config` that
/// uses the sequence: `set-next` never guesses them (a wrong step stores a wrong counter). The
/// counter id must be one of that sequence's (its scope fields, in order).
fn set_next_spec(args: &SetNextArgs) -> Result<SequenceSpec, Failure> {
    let usage = |e: mongo_seq_core::SeqError| Failure::Usage(anyhow::anyhow!("{e} ({})", e.code()));
    let key = mongo_seq_core::CounterKey::parse(&args.name).map_err(usage)?;
    let name = key.name.as_str();
    let Some(path) = &args.location.config else {
        return Err(Failure::Usage(anyhow::anyhow!(
            "set-next needs the sequence's options (start, step, min, max, scope) to store the right counter value: pass --config with the sidecar config whose trigger uses sequence `{name}`"
        )));
    };
    let config = load_config(path)?;
    let sequences = config.triggers.iter().map(|t| t.numbering.sequence());
    if let Some(sequence) = sequences.clone().find(|s| s.name() == name) {
        key.belongs_to(sequence).map_err(usage)?;
        return Ok(sequence.clone());
    }
    let known: Vec<String> = sequences.map(|s| format!("`{}`", s.name())).collect();
    Err(Failure::Usage(anyhow::anyhow!(
        "no trigger of {} uses sequence `{name}` (its sequences: {}); set-next only moves counters whose options it knows",
        path.display(),
        known.join(", ")
    )))
}
