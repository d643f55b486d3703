//! The binary's [`Mongo`]: a trigger's (or a tool's) collections on one client of the official
//! `mongodb` crate. Commands go through the [`Executor`] (the one place a core command meets
//! the driver), change streams through [`DriverStream`]; both report failures already
//! classified. Commands are counted by the driver's command monitoring (see `metrics`).

mod stream;

use std::time::{SystemTime, UNIX_EPOCH};

use mongo_seq_core::{Collection, Command, Reply};
use mongodb::Client;

pub use stream::DriverStream;

use crate::config::Namespace;
use crate::error::SidecarError;
use crate::mongo::{CatalogEntry, Mongo, Watch};
use mongo_seq::executor::Executor;

/// A trigger's collections on one client: `Collection::Documents` is the watched collection,
/// `Counters` the counters, `Leases` the state collection (lease and resume token). The tools
/// have no state collection, and `counters`/`set-next` no documents collection.
#[derive(Clone)]
pub struct Connection {
    executor: Executor,
}

impl Connection {
    /// A trigger's connection.
    pub fn for_trigger(
        client: &Client,
        documents: &Namespace,
        counters: &Namespace,
        state: &Namespace,
    ) -> Self {
        Self {
            executor: Executor::new(collection(client, counters))
                .with_documents(collection(client, documents))
                .with_leases(collection(client, state)),
        }
    }

    /// The tools' connection: the counters and, for `check`, the numbered collection.
    pub fn for_tool(client: &Client, documents: Option<&Namespace>, counters: &Namespace) -> Self {
        let executor = Executor::new(collection(client, counters));
        Self {
            executor: match documents {
                Some(documents) => executor.with_documents(collection(client, documents)),
                None => executor,
            },
        }
    }
}

impl Connection {
    /// `Collection::Ledger` is `ledger` (voids, deletion records).
    #[must_use]
    pub fn with_ledger(self, client: &Client, ledger: &Namespace) -> Self {
        Self {
            executor: self.executor.with_ledger(collection(client, ledger)),
        }
    }
}

fn collection(client: &Client, ns: &Namespace) -> mongodb::Collection<mongodb::bson::Document> {
    client.database(&ns.db).collection(&ns.coll)
}

impl Mongo for Connection {
    type Stream = DriverStream;

    async fn execute(&self, command: Command) -> Result<Reply, SidecarError> {
        Ok(self.executor.execute(command).await?)
    }

    async fn watch(&self, watch: Watch) -> Result<DriverStream, SidecarError> {
        let documents = self
            .executor
            .documents()
            .ok_or_else(|| SidecarError::Reply("no documents collection here".to_owned()))?
            .clone();
        DriverStream::open(documents, watch).await
    }

    async fn catalog_entries(
        &self,
        collections: &[Collection],
    ) -> Result<Vec<CatalogEntry>, SidecarError> {
        Ok(self.executor.catalog_entries(collections).await?)
    }

    fn now_ms(&self) -> i64 {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
            .unwrap_or(0)
    }
}

/// This process's incarnation (`TwinWatch`: of two twins the greater stops):
/// `<ms since the Unix epoch, 13 digits>-<ObjectId>`, so that of two processes started with one
/// instance id the later one has the greater (an ObjectId alone orders by the second only: twins
/// started within a second would be ordered at random). Here, beside the wall clock's one reader.
pub fn incarnation() -> String {
    let started_ms = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis());
    format!("{started_ms:013}-{}", bson::oid::ObjectId::new().to_hex())
}
