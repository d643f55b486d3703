//! On a sharded cluster, the counters and state collections must be unsharded or sharded on
//! `_id` (the core's rule, `counter::shard_key`): checked from the cluster's catalog (one `find`)
//! at every session start, before the first write, so a wrong shard key stops the trigger with the
//! core's `UNSUPPORTED_SHARD_KEY` (retried with backoff, reported by /healthz and the logs)
//! instead of failing on each counter. Without the privilege to read the catalog the check is
//! left to the first write, whose refusal the executor reads as the same error. The same read
//! brings the numbered collection's entry: whether its shard key refuses the unique index
//! (`index.rs`).

use mongo_seq_core::{check_shard_key, Collection};
use tracing::warn;

use super::Trigger;
use crate::error::{MongoFailure, SidecarError};
use crate::mongo::Mongo;

/// The server's Unauthorized: this user may not read `config.collections`.
const UNAUTHORIZED: i32 = 13;

/// The numbered collection's place in the cluster's catalog, as read at session start.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum DocumentsCatalog {
    /// Its `config.collections` entry (`None`: unsharded, or a replica set).
    Read(Option<serde_json::Value>),
    /// The catalog could not be read (no privilege): unknown.
    Unknown,
}

impl<M: Mongo> Trigger<M> {
    /// Checks the counters' and state collections' shard keys, and reads the numbered
    /// collection's entry (one `find` for the three), for the unique index's decision.
    pub(super) async fn check_sharding(&self) -> Result<DocumentsCatalog, SidecarError> {
        let all = [
            Collection::Counters,
            Collection::Leases,
            Collection::Documents,
        ];
        match self.mongo.catalog_entries(&all).await {
            Ok(found) => {
                let mut documents = None;
                for (collection, target) in found.into_iter().zip(all) {
                    match target {
                        Collection::Documents => documents = collection.entry,
                        _ => check_shard_key(&collection.namespace, collection.entry.as_ref())?,
                    }
                }
                Ok(DocumentsCatalog::Read(documents))
            }
            Err(SidecarError::Mongo(MongoFailure {
                code: Some(UNAUTHORIZED),
                message,
                ..
            })) => {
                warn!(trigger = self.id(), error = %message, "cannot read config.collections to check the shard keys of the counters and state collections; a shard key other than _id will be reported at the first write instead (grant find on config.collections to check it at start)");
                Ok(DocumentsCatalog::Unknown)
            }
            Err(e) => Err(e),
        }
    }
}
