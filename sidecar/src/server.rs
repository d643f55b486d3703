//! The daemon: one task per trigger plus the HTTP endpoint, under one cancellation token and
//! task tracker. Returns when every task has finished after `shutdown` was cancelled.

use std::net::SocketAddr;

use mongodb::options::ClientOptions;
use mongodb::Client;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use tracing::{error, info};

use crate::config::Config;
use crate::exec::Executor;
use crate::health::Health;
use crate::lease::LeaseKeeper;
use crate::metrics::Metrics;
use crate::redact::redact;
use crate::state::StateStore;
use crate::trigger::Trigger;

#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    #[error("MongoDB client: {0}")]
    Mongo(#[from] mongodb::error::Error),
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        addr: SocketAddr,
        source: std::io::Error,
    },
}

/// How the daemon was started.
#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    /// Number unnumbered documents before watching, even when a resume token is stored.
    pub backfill: bool,
}

/// A client for `uri` (connections are made lazily).
pub async fn connect(uri: &str) -> Result<Client, mongodb::error::Error> {
    let mut options = ClientOptions::parse(uri).await?;
    options.app_name = Some("mongo-seq".to_owned());
    Client::with_options(options)
}

pub async fn run(
    config: Config,
    options: RunOptions,
    shutdown: CancellationToken,
) -> Result<(), ServerError> {
    let client = connect(&config.uri).await?;
    run_with_client(
        config,
        client,
        options,
        Metrics::new(),
        Health::default(),
        shutdown,
    )
    .await
}

/// Like [`run`] with a given client (tests pass one with command monitoring) and shared
/// metrics and health.
pub async fn run_with_client(
    config: Config,
    client: Client,
    options: RunOptions,
    metrics: Metrics,
    health: Health,
    shutdown: CancellationToken,
) -> Result<(), ServerError> {
    let listener = match config.http {
        Some(addr) => Some(
            crate::http::bind(addr)
                .await
                .map_err(|source| ServerError::Bind { addr, source })?,
        ),
        None => None,
    };
    health.set_instance(&config.settings.lease.instance_id);
    info!(uri = %redact(&config.uri), instance = config.settings.lease.instance_id, triggers = config.triggers.len(), counters = %config.counters, state = %config.state, "mongo-seq sidecar starting");

    let tracker = TaskTracker::new();
    if let Some(listener) = listener {
        if let Ok(addr) = listener.local_addr() {
            info!(%addr, "http listening: /healthz /metrics");
        }
        let (health, metrics, shutdown) = (health.clone(), metrics.clone(), shutdown.clone());
        tracker.spawn(async move {
            if let Err(e) = crate::http::serve(listener, health, metrics, shutdown).await {
                error!(error = %e, "http endpoint failed");
            }
        });
    }
    let counters = client
        .database(&config.counters.db)
        .collection(&config.counters.coll);
    let state = client
        .database(&config.state.db)
        .collection(&config.state.coll);
    for spec in config.triggers {
        metrics.register_trigger(&spec.id);
        let db = client.database(&spec.ns.db);
        let trigger = Trigger {
            docs: db.collection(&spec.ns.coll),
            db,
            exec: Executor {
                counters: counters.clone(),
                leases: Some(state.clone()),
                metrics: metrics.clone(),
                label: spec.id.clone(),
            },
            lease: LeaseKeeper {
                exec: Executor {
                    counters: counters.clone(),
                    leases: Some(state.clone()),
                    metrics: metrics.clone(),
                    label: spec.id.clone(),
                },
                lease_id: spec.id.clone(),
                sequence: spec.sequence.name().to_owned(),
                settings: config.settings.lease.clone(),
                metrics: metrics.clone(),
            },
            state: StateStore {
                collection: state.clone(),
                trigger: spec.id.clone(),
                metrics: metrics.clone(),
            },
            settings: config.settings.clone(),
            metrics: metrics.clone(),
            health: health.clone(),
            spec,
        };
        tracker.spawn(trigger.run(shutdown.clone(), options.backfill));
    }
    tracker.close();
    tracker.wait().await;
    info!("mongo-seq sidecar stopped");
    Ok(())
}
