//! `mongo-seq sidecar`: the daemon, until SIGTERM or Ctrl-C (then a graceful shutdown).

use std::path::PathBuf;

use clap::Args;
use tokio_util::sync::CancellationToken;
use tracing::info;

use super::{load_config, runtime, CliError};
use crate::error::SidecarError;
use crate::server::{self, RunOptions, ServerError};

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

pub(super) fn run(args: &SidecarArgs) -> Result<(), CliError> {
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
        let options = RunOptions {
            backfill: args.backfill,
        };
        server::run(config, options, shutdown)
            .await
            .map_err(|e| match e {
                ServerError::Trigger(SidecarError::DuplicateInstance { .. }) => {
                    CliError::DuplicateInstance(e.into())
                }
                other => CliError::runtime(other),
            })
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
                    biased;
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
