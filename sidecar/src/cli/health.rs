//! `mongo-seq health`: a running sidecar's `/healthz` as an exit code (container checks).

use std::net::SocketAddr;
use std::path::PathBuf;

use clap::Args;

use super::{runtime, CliError};
use crate::config;

#[derive(Debug, Args)]
pub struct HealthArgs {
    /// Take the address from this sidecar config's `[http]` (an unspecified bind such as
    /// 0.0.0.0 is asked on loopback).
    #[arg(long, short, conflicts_with = "addr")]
    pub config: Option<PathBuf>,
    /// Address of the sidecar's HTTP endpoint [default: 127.0.0.1:9464].
    #[arg(long)]
    pub addr: Option<SocketAddr>,
    /// Give up after this many milliseconds (connecting and reading included).
    #[arg(long, default_value_t = 3000, value_parser = clap::value_parser!(u64).range(1..=600_000))]
    pub timeout_ms: u64,
    /// Print /healthz's JSON instead of the one-line summary.
    #[arg(long)]
    pub json: bool,
}

pub(super) fn run(args: &HealthArgs) -> Result<(), CliError> {
    let addr = match (&args.addr, &args.config) {
        (Some(addr), _) => *addr,
        (None, Some(path)) => config::load_http_addr(path)?.ok_or_else(|| {
            CliError::usage(anyhow::anyhow!(
                "{}: [http] is disabled, so there is no /healthz to ask",
                path.display()
            ))
        })?,
        (None, None) => SocketAddr::from(([127, 0, 0, 1], 9464)),
    };
    if addr.port() == 0 {
        return Err(CliError::usage(anyhow::anyhow!(
            "the sidecar's port is 0 (a free one, picked at start and logged as `http listening … addr=`): pass --addr"
        )));
    }
    let timeout = std::time::Duration::from_millis(args.timeout_ms);
    let reply = runtime()?
        .block_on(crate::tools::health_check::healthz(addr, timeout))
        .map_err(CliError::runtime)?;
    if args.json {
        println!("{}", reply.body);
    } else {
        println!("{}", reply.summary());
    }
    if reply.healthy() {
        Ok(())
    } else {
        Err(CliError::CheckFailed)
    }
}
