//! The counters and state collections on a sharded cluster (the core's
//! `counter::shard_key`): their entry in the cluster's catalog, `config.collections`, read
//! through `mongos` before the first write; and a write the server refused for its shard key,
//! read as the core's `UNSUPPORTED_SHARD_KEY` naming the collection.

use futures_util::TryStreamExt;
use mongo_seq_core::{shard_key_refusal, Collection as CoreCollection, SeqError};
use mongodb::bson::{doc, Document};
use mongodb::error::Error;
use mongodb::options::ReadConcern;

use super::{classify, convert, ExecuteError, Executor, Failed};

/// A collection's namespace and its catalog entry.
#[derive(Debug, Clone, PartialEq)]
pub struct CatalogEntry {
    /// `db.coll`.
    pub namespace: String,
    /// Its `config.collections` document: `None` when it has none (an unsharded collection, or
    /// no sharded cluster: a replica set's `config` database has no such collection).
    pub entry: Option<serde_json::Value>,
}

impl Executor {
    /// The catalog entries of the `wanted` collections (`config.collections`, by `_id` = the
    /// namespace), in their order, read with one `find`. A user without the privilege to read
    /// the catalog gets the server's Unauthorized (13).
    pub async fn catalog_entries(
        &self,
        wanted: &[CoreCollection],
    ) -> Result<Vec<CatalogEntry>, ExecuteError> {
        let mut collections = Vec::with_capacity(wanted.len());
        for &collection in wanted {
            let place = self.place(collection).map_err(Failed::into_error)?;
            collections.push(&place.collection);
        }
        let namespaces: Vec<String> = collections
            .iter()
            .map(|c| c.namespace().to_string())
            .collect();
        let catalog = self
            .counters
            .collection
            .client()
            .database("config")
            .collection::<Document>("collections");
        let found: Vec<Document> = catalog
            .find(doc! { "_id": { "$in": &namespaces } })
            // Explicit, as every read here (the client's default is not inherited).
            .read_concern(ReadConcern::majority())
            .await
            .map_err(ExecuteError::Mongo)?
            .try_collect()
            .await
            .map_err(ExecuteError::Mongo)?;
        Ok(namespaces
            .into_iter()
            .map(|namespace| {
                let entry = found
                    .iter()
                    .find(|d| d.get_str("_id") == Ok(namespace.as_str()))
                    .cloned()
                    .map(convert::from_doc);
                CatalogEntry { namespace, entry }
            })
            .collect())
    }

    /// The core's `UNSUPPORTED_SHARD_KEY` when `e` refused a write on the counters or state
    /// collection for its shard key.
    pub(super) fn shard_key_refusal(
        &self,
        collection: Option<CoreCollection>,
        e: &Error,
    ) -> Option<SeqError> {
        let place = match collection? {
            CoreCollection::Counters => &self.counters,
            CoreCollection::Leases => self.leases.as_ref()?,
            CoreCollection::Documents | CoreCollection::Ledger => return None,
        };
        let code = classify::server_code(e)?;
        shard_key_refusal(
            &place.collection.namespace().to_string(),
            i64::from(code),
            &classify::mongo_message(e),
        )
    }
}

#[cfg(test)]
mod tests {
    use mongo_seq_core::Collection as CoreCollection;
    use mongodb::options::ClientOptions;
    use mongodb::Client;

    use super::*;
    use crate::executor::classify::tests::server_error;

    /// An executor on `app.counters` and `app.mongo_seq_state` of a client that never connects
    /// (nothing here sends a command).
    async fn executor() -> Executor {
        let options = ClientOptions::parse("mongodb://127.0.0.1:1/")
            .await
            .unwrap();
        let client = Client::with_options(options).unwrap();
        let db = client.database("app");
        Executor::new(db.collection("counters"))
            .with_documents(db.collection("orders"))
            .with_leases(db.collection("mongo_seq_state"))
    }

    #[tokio::test]
    async fn a_write_refused_for_its_shard_key_is_unsupported_shard_key_naming_the_collection() {
        let executor = executor().await;
        let refused = server_error(
            61,
            "ShardKeyNotFound",
            "Failed to target upsert by query :: could not extract exact shard key",
        );
        for (collection, namespace) in [
            (CoreCollection::Counters, "app.counters"),
            (CoreCollection::Leases, "app.mongo_seq_state"),
        ] {
            let error = executor
                .shard_key_refusal(Some(collection), &refused)
                .unwrap();
            assert_eq!(error.code(), "UNSUPPORTED_SHARD_KEY");
            let message = error.to_string();
            assert!(
                message.contains(&format!(
                    "the collection {namespace} is sharded on a key other than `_id`"
                )),
                "{message}"
            );
            assert!(
                message.contains("could not extract exact shard key"),
                "{message}"
            );
        }
        // The numbered collection may be sharded on anything: its documents are the user's.
        assert!(executor
            .shard_key_refusal(Some(CoreCollection::Documents), &refused)
            .is_none());
        let other = server_error(11600, "InterruptedAtShutdown", "shutting down");
        assert!(executor
            .shard_key_refusal(Some(CoreCollection::Counters), &other)
            .is_none());
    }
}
