//! Where each trigger's progress lives: one document per trigger in the state collection (next
//! to the counters), never on local disk. `{ _id: <trigger id>, token, backfillDone, updatedAt,
//! lease: {owner, epoch, expiresAt} }`. The lease (core `lease` plan) lives in the same document,
//! so every write here is conditioned on still holding it: a stale instance cannot move the token.

use mongodb::bson::{doc, Bson, DateTime, Document};
use mongodb::change_stream::event::ResumeToken;
use mongodb::Collection;

use crate::error::SidecarError;
use crate::lease::Fence;
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
        let Some(document) = self
            .collection
            .find_one(doc! { "_id": &self.trigger })
            .await?
        else {
            return Ok(Stored::default());
        };
        let token = match document.get("token") {
            None | Some(Bson::Null) => None,
            Some(token) => Some(
                mongodb::bson::from_bson::<ResumeToken>(token.clone()).map_err(|e| {
                    SidecarError::Reply(format!("stored resume token of `{}`: {e}", self.trigger))
                })?,
            ),
        };
        Ok(Stored {
            token,
            backfill_done: document.get_bool("backfillDone").unwrap_or(false),
        })
    }

    /// The filter of a write by the lease holder `fence`.
    fn fenced(&self, fence: &Fence) -> Result<Document, SidecarError> {
        fence.check()?;
        Ok(doc! { "_id": &self.trigger, "lease.owner": &fence.owner, "lease.epoch": fence.epoch })
    }

    fn refused(&self, fence: &Fence) -> SidecarError {
        self.metrics
            .fenced
            .with_label_values(&[&self.trigger])
            .inc();
        fence.lose();
        SidecarError::Fenced(format!(
            "state of `{}`: the lease (epoch {}) is no longer this instance's",
            self.trigger, fence.epoch
        ))
    }

    /// Stores the token (and, when given, the backfill flag) in one update, where `fence` still
    /// holds the lease.
    pub async fn save(
        &self,
        token: Option<&ResumeToken>,
        backfill_done: Option<bool>,
        fence: &Fence,
    ) -> Result<(), SidecarError> {
        let mut set = doc! { "updatedAt": DateTime::now() };
        if let Some(token) = token {
            let token = mongodb::bson::to_bson(token)
                .map_err(|e| SidecarError::Reply(format!("resume token: {e}")))?;
            set.insert("token", token);
        }
        if let Some(done) = backfill_done {
            set.insert("backfillDone", done);
        }
        let result = self
            .collection
            .update_one(self.fenced(fence)?, doc! { "$set": set })
            .await?;
        if result.matched_count == 0 {
            return Err(self.refused(fence));
        }
        Ok(())
    }

    /// Forgets the token (history lost): the next start backfills and starts from now.
    pub async fn forget_token(&self, fence: &Fence) -> Result<(), SidecarError> {
        let result = self
            .collection
            .update_one(self.fenced(fence)?, doc! { "$set": { "token": Bson::Null, "backfillDone": false, "updatedAt": DateTime::now() } })
            .await?;
        if result.matched_count == 0 {
            return Err(self.refused(fence));
        }
        Ok(())
    }
}
