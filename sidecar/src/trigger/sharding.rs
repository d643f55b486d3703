//! On a sharded cluster, the counters and state collections must be unsharded or sharded on
//! `_id` (the core's rule, `counter::shard_key`): checked from the cluster's catalog (one `find`)
//! at every session start, before the first write, so a wrong shard key stops the trigger with the
//! core's `UNSUPPORTED_SHARD_KEY` (retried with backoff, reported by /healthz and the logs)
//! instead of failing on each counter. Without the privilege to read the catalog the check is
//! left to the first write, whose refusal the executor reads as the same error.

use mongo_seq_core::{check_shard_key, Collection};
use tracing::warn;

use super::Trigger;
use crate::error::{MongoFailure, SidecarError};
use crate::mongo::Mongo;

/// The server's Unauthorized: this user may not read `config.collections`.
const UNAUTHORIZED: i32 = 13;

impl<M: Mongo> Trigger<M> {
    pub(super) async fn check_sharding(&self) -> Result<(), SidecarError> {
        let both = [Collection::Counters, Collection::Leases];
        match self.mongo.catalog_entries(&both).await {
            Ok(found) => {
                for collection in found {
                    check_shard_key(&collection.namespace, collection.entry.as_ref())?;
                }
            }
            Err(SidecarError::Mongo(MongoFailure {
                code: Some(UNAUTHORIZED),
                message,
                ..
            })) => {
                warn!(trigger = self.id(), error = %message, "cannot read config.collections to check the shard keys of the counters and state collections; a shard key other than _id will be reported at the first write instead (grant find on config.collections to check it at start)");
            }
            Err(e) => return Err(e),
        }
        Ok(())
    }
}
