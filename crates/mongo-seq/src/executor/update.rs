//! The server's `update` command, built as raw BSON statement by statement (a batch's 1,000
//! statements as a `Document` tree cost ~10× their bytes), its reply handed to the core as a
//! write result: write errors are data the plan reads, not exceptions.

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
        let mut result = Map::new();
        result.insert("kind".to_owned(), Value::String("writeResult".to_owned()));
        for key in ["n", "nModified", "writeErrors", "writeConcernError"] {
            if let Some(value) = reply.get(key) {
                result.insert(key.to_owned(), convert::from_bson(value));
            }
        }
        Reply::from_json(&Value::Object(result)).map_err(|e| Failed::Other(e.into()))
    }
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
