//! The unique index that makes the database itself refuse a number held twice in a counter (the
//! core's `NumberingSpec::unique_index`), created at every session start; when documents
//! already share a number, the error says which. On a collection sharded on a key the index
//! cannot start with (the core's `shard_key_refusing_unique_index`), the trigger refuses to
//! start unless it sets `unique_index = false`, which it may only there: it then numbers
//! without the index, and says what is given up (the log, `/healthz`).

use mongo_seq_core::numbering::held_twice::{held_twice, HeldTwice};
use mongo_seq_core::Reply;
use serde_json::Value;

use tracing::warn;

use super::sharding::DocumentsCatalog;
use super::Trigger;
use crate::error::{DuplicateNumbers, SidecarError};
use crate::mongo::{count, documents, Mongo};
use mongo_seq::executor::convert;

impl<M: Mongo> Trigger<M> {
    /// Creates the unique index, or, with `unique_index = false`, checks that the collection's
    /// shard key (`documents`, its catalog entry) refuses it and warns what is given up.
    pub(super) async fn ensure_index(
        &self,
        documents: &DocumentsCatalog,
    ) -> Result<(), SidecarError> {
        let numbering = &self.spec.numbering;
        let refusing = match documents {
            DocumentsCatalog::Read(entry) => {
                Some(numbering.shard_key_refusing_unique_index(entry.as_ref()))
            }
            DocumentsCatalog::Unknown => None,
        };
        let ns = &self.spec.ns;
        let index = numbering.index_name();
        match (self.spec.unique_index, refusing) {
            (true, Some(Some(key))) => {
                return Err(SidecarError::UniqueIndex {
                    code: "UNIQUE_INDEX_REFUSED",
                    message: format!(
                        "the collection {ns} is sharded on {}: the unique index `{index}` on the number cannot exist there (a sharded collection takes a unique index only when its shard key, ranged, starts the index: scope the sequence by the shard key fields), so the server refuses it; set `unique_index = false` on trigger `{}` to number without it (numbers stay unique; a number written by hand or by another tool is no longer refused, `mongo-seq check` finds it)",
                        key,
                        self.id()
                    ),
                });
            }
            (false, Some(None)) => {
                return Err(SidecarError::UniqueIndex {
                    code: "UNIQUE_INDEX_POSSIBLE",
                    message: format!(
                        "trigger `{}` sets `unique_index = false`, but the collection {ns} is not sharded on a key that refuses the unique index `{index}`: remove `unique_index = false` (the index makes the database refuse a number written twice, by hand or by another tool)",
                        self.id()
                    ),
                });
            }
            (false, _) => {
                let message = without_index(&index);
                warn!(trigger = self.id(), "{message}");
                self.probe.without_unique_index(&message);
                return Ok(());
            }
            (true, _) => {}
        }
        match self
            .mongo
            .execute(self.spec.numbering.unique_index())
            .await?
        {
            Reply::None => Ok(()),
            Reply::DuplicateKey => Err(self.duplicate_numbers().await?),
            other => Err(SidecarError::Reply(format!(
                "createIndex: expected none or duplicateKey, got {other:?}"
            ))),
        }
    }

    /// Why the unique index cannot be built, in the trigger's words: one number held by
    /// several documents (one `aggregate`), instead of the server's message.
    async fn duplicate_numbers(&self) -> Result<SidecarError, SidecarError> {
        let numbering = &self.spec.numbering;
        let found = documents(
            self.mongo.execute(held_twice(numbering)).await?,
            "aggregate",
        )?;
        let index = numbering.index_name();
        let Some(duplicate) = found.first() else {
            return Ok(SidecarError::Reply(format!(
                "cannot create the unique index `{index}`: the server reports a duplicate key, but no number is held twice now"
            )));
        };
        let held = HeldTwice::read(numbering, duplicate);
        let shown = |value: Option<&Value>| value.map_or("null".to_owned(), convert::relaxed);
        let scope: Vec<String> = held
            .scope
            .iter()
            .map(|(name, value)| format!("{name}: {}", shown(*value)))
            .collect();
        Ok(SidecarError::DuplicateNumbers(Box::new(DuplicateNumbers {
            index,
            namespace: self.spec.ns.to_string(),
            field: numbering.field().to_owned(),
            value: shown(held.number),
            scope: if scope.is_empty() {
                String::new()
            } else {
                format!(" in scope {{{}}}", scope.join(", "))
            },
            count: count(held.count),
        })))
    }
}

/// What a trigger without the unique index gives up, as its warning says it.
fn without_index(index: &str) -> String {
    format!(
        "unique_index = false: numbering without the unique index `{index}` (the collection's shard key refuses it); numbers stay unique (one atomic counter, each write only where the document has no number yet), but a number written by hand or by another tool is no longer refused: run `mongo-seq check` to find numbers held twice"
    )
}
