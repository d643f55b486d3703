//! Where each trigger's progress lives: one document per trigger in the state collection (next
//! to the counters), never on local disk. `{ _id: <trigger id>, token, backfillDone, updatedAt }`.

use mongodb::bson::{doc, Bson, DateTime, Document};
use mongodb::change_stream::event::ResumeToken;
use mongodb::Collection;

use crate::error::SidecarError;
use crate::metrics::Metrics;

#[derive(Debug, Clone, Default)]
pub struct Stored {
    pub token: Option<ResumeToken>,
    pub backfill_done: bool,
}

#[derive(Clone)]
pub struct StateStore {
    pub collection: Collection<Document>,
    pub trigger: String,
    pub metrics: Metrics,
}

impl StateStore {
    pub async fn load(&self) -> Result<Stored, SidecarError> {
        self.metrics.command(&self.trigger, "find");
        let Some(document) = self.collection.find_one(doc! { "_id": &self.trigger }).await? else {
            return Ok(Stored::default());
        };
        let token = match document.get("token") {
            None | Some(Bson::Null) => None,
            Some(token) => Some(
                mongodb::bson::from_bson::<ResumeToken>(token.clone())
                    .map_err(|e| SidecarError::Reply(format!("stored resume token of `{}`: {e}", self.trigger)))?,
            ),
        };
        Ok(Stored { token, backfill_done: document.get_bool("backfillDone").unwrap_or(false) })
    }

    /// Stores the token (and, when given, the backfill flag) in one upsert.
    pub async fn save(&self, token: Option<&ResumeToken>, backfill_done: Option<bool>) -> Result<(), SidecarError> {
        let mut set = doc! { "updatedAt": DateTime::now() };
        if let Some(token) = token {
            let token = mongodb::bson::to_bson(token).map_err(|e| SidecarError::Reply(format!("resume token: {e}")))?;
            set.insert("token", token);
        }
        if let Some(done) = backfill_done {
            set.insert("backfillDone", done);
        }
        self.metrics.command(&self.trigger, "update");
        self.collection.update_one(doc! { "_id": &self.trigger }, doc! { "$set": set }).upsert(true).await?;
        Ok(())
    }

    /// Forgets the token (history lost): the next start backfills and starts from now.
    pub async fn forget_token(&self) -> Result<(), SidecarError> {
        self.metrics.command(&self.trigger, "update");
        self.collection
            .update_one(doc! { "_id": &self.trigger }, doc! { "$set": { "token": Bson::Null, "backfillDone": false, "updatedAt": DateTime::now() } })
            .upsert(true)
            .await?;
        Ok(())
    }
}
