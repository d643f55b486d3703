//! The unique index that makes the database itself refuse a number held twice in a counter (the
//! core's `NumberingSpec::unique_index`), created at every session start; when documents
//! already share a number, the error says which.

use mongo_seq_core::{Collection, Command, Reply};
use serde_json::{json, Map, Value};

use super::Trigger;
use crate::error::{DuplicateNumbers, SidecarError};
use crate::mongo::{count, documents, Mongo};
use mongo_seq::executor::convert;

impl<M: Mongo> Trigger<M> {
    pub(super) async fn ensure_index(&self) -> Result<(), SidecarError> {
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
        let field = numbering.field();
        let scope = numbering.sequence().scope();
        let mut group = Map::new();
        group.insert("n".to_owned(), Value::String(format!("${field}")));
        for (i, scope) in scope.iter().enumerate() {
            group.insert(format!("s{i}"), Value::String(format!("${scope}")));
        }
        let pipeline = vec![
            json!({ "$match": numbering.numbered() }),
            json!({ "$group": { "_id": group, "count": { "$sum": 1 } } }),
            json!({ "$match": { "count": { "$gt": 1 } } }),
            json!({ "$limit": 1 }),
        ];
        let aggregate = Command::Aggregate {
            collection: Collection::Documents,
            pipeline,
        };
        let found = documents(self.mongo.execute(aggregate).await?, "aggregate")?;
        let index = numbering.index_name();
        let Some(duplicate) = found.first() else {
            return Ok(SidecarError::Reply(format!(
                "cannot create the unique index `{index}`: the server reports a duplicate key, but no number is held twice now"
            )));
        };
        let key = duplicate.get("_id").cloned().unwrap_or(Value::Null);
        let shown = |name: &str| key.get(name).map_or("null".to_owned(), convert::relaxed);
        let scope: Vec<String> = scope
            .iter()
            .enumerate()
            .map(|(i, name)| format!("{name}: {}", shown(&format!("s{i}"))))
            .collect();
        Ok(SidecarError::DuplicateNumbers(Box::new(DuplicateNumbers {
            index,
            namespace: self.spec.ns.to_string(),
            field: field.to_owned(),
            value: shown("n"),
            scope: if scope.is_empty() {
                String::new()
            } else {
                format!(" in scope {{{}}}", scope.join(", "))
            },
            count: count(duplicate.get("count")),
        })))
    }
}
