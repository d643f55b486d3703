//! Where a tool connects: `--uri` (else `MONGO_SEQ_URI`, else `MONGODB_URI`), and where the
//! counters are (`--config`, or `--counters database.collection`). Checked like the
//! configuration's (`config::resolve_uri`, `Namespace::parse`), named by flag.

use std::path::PathBuf;

use clap::Args;

use super::{load_config, CliError};
use crate::config::{self, Config, Key, Namespace, FALLBACK_URI_ENV, URI_ENV};
use crate::connection::Connection;

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
    pub(super) fn resolve(&self) -> Result<String, CliError> {
        config::resolve_uri([
            (self.uri.clone(), Key::flag("--uri")),
            (config::env_var(URI_ENV), Key::Var(URI_ENV)),
            (
                config::env_var(FALLBACK_URI_ENV),
                Key::Var(FALLBACK_URI_ENV),
            ),
        ])?
        .ok_or_else(|| {
            CliError::usage(anyhow::anyhow!(
                "no connection string: pass --uri or set {URI_ENV}"
            ))
        })
    }
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

impl CountersLocation {
    /// The counters collection (its namespace, and a connection to it) and, when from a
    /// config, the config (for sequence options).
    pub(super) async fn connect(
        &self,
    ) -> Result<(Namespace, Connection, Option<Config>), CliError> {
        let (uri, ns, config) = match &self.config {
            Some(path) => {
                let config = load_config(path)?;
                (config.uri.clone(), config.counters.clone(), Some(config))
            }
            None => {
                let uri = self.uri.resolve()?;
                let counters = self
                    .counters
                    .as_deref()
                    .filter(|counters| counters.contains('.'))
                    .ok_or_else(|| {
                        CliError::usage(anyhow::anyhow!(
                            "pass --config, or --counters database.collection"
                        ))
                    })?;
                let ns = Namespace::parse(&Key::flag("--counters"), counters, None)?;
                (uri, ns, None)
            }
        };
        let client = crate::server::connect(&uri)
            .await
            .map_err(CliError::runtime)?;
        let mongo = Connection::for_tool(&client, None, &ns);
        Ok((ns, mongo, config))
    }
}
