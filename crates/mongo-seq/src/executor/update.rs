//! The server's `update` command, built as raw BSON statement by statement (a batch's 1,000
//! statements as a `Document` tree cost ~10× their bytes), its reply handed to the core as a
//! write result: write errors are data the plan reads, not exceptions; its `operationTime` is
//! when the write happened, for the plan's reads after it.

use mongo_seq_core::{Reply, UpdateStatement};
use mongodb::bson::{doc, Document, RawArrayBuf, RawDocumentBuf};
use mongodb::options::WriteConcern;
use serde_json::{Map, Value};

use super::{convert, document, ExecuteError, Failed, Place};

impl Place {
    /// Runs `statements` (`multi` each, as `updateMany`) with the core's write concern.
    pub(super) async fn update(
        &self,
        statements: Vec<UpdateStatement>,
        multi: bool,
        ordered: bool,
        write: Option<WriteConcern>,
    ) -> Result<Reply, Failed> {
        let mut updates = RawArrayBuf::new();
        for statement in statements {
            updates.push(raw(&statement_of(statement, multi)?)?);
        }
        let mut command = RawDocumentBuf::new();
        command.append("update", self.collection.name());
        command.append("updates", updates);
        command.append("ordered", ordered);
        if let Some(concern) = &write {
            match mongodb::bson::to_document(concern) {
                Ok(concern) if !concern.is_empty() => {
                    command.append("writeConcern", raw(&concern)?);
                }
                _ => {}
            }
        }
        let reply = self.db.run_raw_command(command).await?;
        write_result(&reply)
    }
}

/// The core's write result from the server's reply to an `update`: what it did, and its
/// `operationTime` (a replica set's reply says when the write happened, and the plan's next
/// read of the documents waits for it with `afterClusterTime`; a standalone's has none).
fn write_result(reply: &Document) -> Result<Reply, Failed> {
    let mut result = Map::new();
    result.insert("kind".to_owned(), Value::String("writeResult".to_owned()));
    for key in [
        "n",
        "nModified",
        "writeErrors",
        "writeConcernError",
        "operationTime",
    ] {
        if let Some(value) = reply.get(key) {
            result.insert(key.to_owned(), convert::from_bson(value));
        }
    }
    Reply::from_json(&Value::Object(result)).map_err(|e| Failed::Other(e.into()))
}

fn raw(document: &Document) -> Result<RawDocumentBuf, Failed> {
    RawDocumentBuf::from_document(document)
        .map_err(|e| Failed::Other(ExecuteError::Invalid(format!("not BSON: {e}"))))
}

fn statement_of(statement: UpdateStatement, multi: bool) -> Result<Document, Failed> {
    let mut out = doc! { "q": document(statement.filter)?, "u": document(statement.update)? };
    if multi {
        out.insert("multi", true);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use mongo_seq_core::{ClusterTime, Reply, WriteResult};
    use mongodb::bson::{doc, Timestamp};

    #[test]
    fn an_update_s_reply_keeps_its_operation_time() {
        let reply = doc! {
            "n": 2, "nModified": 1, "ok": 1.0,
            "operationTime": Timestamp { time: 1_700_000_000, increment: 4 },
            "$clusterTime": { "clusterTime": Timestamp { time: 1_700_000_000, increment: 5 } },
        };
        let Ok(Reply::WriteResult(result)) = super::write_result(&reply) else {
            panic!("a write result")
        };
        assert_eq!(
            result,
            WriteResult {
                n: 2,
                n_modified: 1,
                operation_time: ClusterTime::new(1_700_000_000, 4),
                ..WriteResult::default()
            }
        );
        // A standalone server's reply has none.
        let Ok(Reply::WriteResult(result)) = super::write_result(&doc! { "n": 1, "ok": 1.0 })
        else {
            panic!("a write result")
        };
        assert_eq!(result.operation_time, None);
    }
}
