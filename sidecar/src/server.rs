//! The daemon, wiring only: the client, the HTTP endpoint, one task per trigger (each built by
//! `Trigger::new` on its `Connection`), under one cancellation token and task tracker. Returns
//! when every task has finished after `shutdown` was cancelled, or after a trigger failed in a
//! way that stops the process (another process with this instance id, `DuplicateInstance`):
//! then the others shut down gracefully and the error is returned.

use std::net::SocketAddr;
use std::time::Duration;

use mongodb::options::ClientOptions;
use mongodb::Client;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use tracing::{error, info, warn};

use crate::config::Config;
use crate::connection::Connection;
use crate::error::SidecarError;
use crate::health::Health;
use crate::metrics::Metrics;
use crate::redact::redact;
use crate::trigger::{Shared, Trigger};
use mongo_seq::executor::mongo_message;

#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    #[error("MongoDB client: {}", mongo_message(.0))]
    Mongo(#[from] mongodb::error::Error),
    #[error("cannot listen on {addr} (config key `http.port`; several sidecars on one host need a port each, e.g. MONGO_SEQ_HTTP_PORT): {source}")]
    Bind {
        addr: SocketAddr,
        source: std::io::Error,
    },
    /// A trigger stopped the process.
    #[error("{0} ({code})", code = .0.code())]
    Trigger(SidecarError),
}

/// How the daemon was started.
#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    /// Number unnumbered documents before watching, even when a resume token is stored.
    pub backfill: bool,
}

/// A client for `uri` (connections are made lazily).
pub async fn connect(uri: &str) -> Result<Client, mongodb::error::Error> {
    client_with(ClientOptions::parse(uri).await?)
}

fn client_with(mut options: ClientOptions) -> Result<Client, mongodb::error::Error> {
    options.app_name = Some("mongo-seq".to_owned());
    Client::with_options(options)
}

/// The longest a shutdown takes once requested: the batch in flight, the token, the lease
/// release; past it the daemon returns anyway (CONFIG.md promises it; safe, see there).
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(10);

pub async fn run(
    config: Config,
    options: RunOptions,
    shutdown: CancellationToken,
) -> Result<(), ServerError> {
    // `mongodb+srv://` is looked up here (DNS): a shutdown does not wait for it.
    let client_options = tokio::select! {
        biased;
        parsed = ClientOptions::parse(&config.uri) => parsed?,
        () = shutdown.cancelled() => return Ok(()),
    };
    run_with_options(
        config,
        client_options,
        options,
        Metrics::new(),
        Health::default(),
        shutdown,
    )
    .await
}

/// Like [`run`] with given client options (tests pass ones with their own command monitor,
/// which keeps receiving every command) and shared metrics and health.
pub async fn run_with_options(
    config: Config,
    client_options: ClientOptions,
    options: RunOptions,
    metrics: Metrics,
    health: Health,
    shutdown: CancellationToken,
) -> Result<(), ServerError> {
    let mut client_options = client_options;
    let watched = config
        .triggers
        .iter()
        .map(|t| ((t.ns.db.clone(), t.ns.coll.clone()), t.id.clone()))
        .collect();
    client_options.command_event_handler =
        Some(metrics.command_monitor(watched, client_options.command_event_handler.take()));
    let client = client_with(client_options)?;
    let listener = match config.http {
        Some(addr) => Some(
            crate::http::bind(addr)
                .await
                .map_err(|source| ServerError::Bind { addr, source })?,
        ),
        None => None,
    };
    health.set_instance(&config.settings.lease.instance_id);
    info!(uri = %redact(&config.uri), instance = config.settings.lease.instance_id, triggers = config.triggers.len(), counters = %config.counters, state = %config.state, ledger = %config.ledger, "mongo-seq sidecar starting");

    // Cancelled by a shutdown request, or by a trigger that stops the process (its error).
    let stop = shutdown.child_token();
    let (fatal, mut fatal_errors) = tokio::sync::mpsc::unbounded_channel::<SidecarError>();
    let tracker = TaskTracker::new();
    if let Some(listener) = listener {
        if let Ok(addr) = listener.local_addr() {
            info!(%addr, "http listening: /healthz /metrics");
        }
        let (health, metrics, stop) = (health.clone(), metrics.clone(), stop.clone());
        tracker.spawn(async move {
            if let Err(e) = crate::http::serve(listener, health, metrics, stop).await {
                error!(error = %e, "http endpoint failed");
            }
        });
    }
    let shared = Shared {
        metrics: metrics.clone(),
        health,
        // Lives as long as this daemon: while it is bound, nobody takes over our leases early.
        beacon: std::sync::Arc::new(crate::liveness::Beacon::bind()),
        // Unique to this process and ordered by start time (`TwinWatch`: the greater stops):
        // the start in milliseconds, zero-padded, then an ObjectId (random per process).
        incarnation: Some(crate::connection::incarnation()),
    };
    for spec in config.triggers {
        let mongo = Connection::for_trigger(&client, &spec.ns, &config.counters, &config.state)
            .with_ledger(&client, &config.ledger);
        let id = spec.id.clone();
        let trigger = Trigger::new(spec, config.settings.clone(), mongo, &shared);
        let (stop, fatal) = (stop.clone(), fatal.clone());
        tracker.spawn(async move {
            let run = trigger.run(stop.clone(), options.backfill);
            if let Err(e) = crate::metrics::for_trigger(&id, run).await {
                let _ = fatal.send(e);
                stop.cancel();
            }
        });
    }
    tracker.close();
    let deadline = async {
        stop.cancelled().await;
        tokio::time::sleep(SHUTDOWN_GRACE).await;
    };
    tokio::select! {
        biased;
        () = tracker.wait() => {}
        () = deadline => warn!(grace_secs = SHUTDOWN_GRACE.as_secs(), "shutdown: tasks still running; stopping anyway"),
    }
    info!("mongo-seq sidecar stopped");
    match fatal_errors.try_recv() {
        Ok(e) => Err(ServerError::Trigger(e)),
        Err(_) => Ok(()),
    }
}
