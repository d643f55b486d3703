//! Where each trigger's progress lives: one document per trigger in the state collection (next
//! to the counters), never on local disk. `{ _id: <trigger id>, token, backfillDone, updatedAt,
//! lease: {owner, epoch, expiresAt} }`. The lease (core `lease` plan) lives in the same document,
//! so every write here is conditioned on still holding it (the core's `held_filter`): a stale
//! instance cannot move the token. Reads and writes are core commands on `Collection::Leases`.

use mongo_seq_core::lease::document::held_filter;
use mongo_seq_core::{
    state_and_waiting_dead_letters, Collection, Command, Reply, SeqError, UpdateStatement,
};
use serde_json::{json, Map, Value};

use crate::error::SidecarError;
use crate::fence::Fence;
use crate::mongo::{documents, Mongo, ResumeToken};
use crate::probe::Probe;

#[derive(Debug, Clone, Default)]
pub struct Stored {
    pub token: Option<ResumeToken>,
    pub backfill_done: bool,
    /// The trigger's dead letters waiting (read with the state document, in the same `find`).
    pub dead_letters: u64,
}

/// One trigger's state document.
pub struct StateStore<M> {
    mongo: M,
    trigger: String,
    probe: Probe,
}

impl<M: Mongo> StateStore<M> {
    pub fn new(mongo: M, trigger: &str, probe: Probe) -> Self {
        Self {
            mongo,
            trigger: trigger.to_owned(),
            probe,
        }
    }

    /// The state document, and how many dead letters wait (one `find`).
    pub async fn load(&self) -> Result<Stored, SidecarError> {
        let read = state_and_waiting_dead_letters(&self.trigger);
        let found = documents(self.mongo.execute(read).await?, "state")?;
        let own_id = Value::String(self.trigger.clone());
        let dead_letters = found
            .iter()
            .filter(|d| d.get("_id") != Some(&own_id))
            .count();
        let Some(document) = found.into_iter().find(|d| d.get("_id") == Some(&own_id)) else {
            return Ok(Stored {
                dead_letters: u64::try_from(dead_letters).unwrap_or(u64::MAX),
                ..Stored::default()
            });
        };
        let stored = Stored {
            token: document
                .get("token")
                .filter(|token| !token.is_null())
                .map(|token| ResumeToken(token.clone())),
            backfill_done: document.get("backfillDone") == Some(&Value::Bool(true)),
            dead_letters: u64::try_from(dead_letters).unwrap_or(u64::MAX),
        };
        // The token's age counts from when it was stored, by whichever instance.
        if let (Some(_), Some(at)) = (&stored.token, document.get("updatedAt").and_then(date_ms)) {
            self.probe.token_stored(at, true);
        }
        Ok(stored)
    }

    /// Stores the token (and, when given, the backfill flag) in one update, where `fence` still
    /// holds the lease.
    pub async fn save(
        &self,
        token: Option<&ResumeToken>,
        backfill_done: Option<bool>,
        fence: &Fence,
    ) -> Result<(), SidecarError> {
        let mut set = Map::new();
        if let Some(token) = token {
            set.insert("token".to_owned(), token.0.clone());
        }
        if let Some(done) = backfill_done {
            set.insert("backfillDone".to_owned(), Value::Bool(done));
        }
        self.write(set, fence).await
    }

    /// Forgets the token (history lost): the next start backfills and starts from now.
    pub async fn forget_token(&self, fence: &Fence) -> Result<(), SidecarError> {
        let mut set = Map::new();
        set.insert("token".to_owned(), Value::Null);
        set.insert("backfillDone".to_owned(), Value::Bool(false));
        self.write(set, fence).await
    }

    async fn write(&self, mut set: Map<String, Value>, fence: &Fence) -> Result<(), SidecarError> {
        fence.check()?;
        let stored_token = set.get("token").is_some_and(|t| !t.is_null());
        let now = self.mongo.now_ms();
        set.insert(
            "updatedAt".to_owned(),
            json!({ "$date": { "$numberLong": now.to_string() } }),
        );
        let write = Command::Update {
            collection: Collection::Leases,
            updates: vec![UpdateStatement {
                filter: held_filter(&self.trigger, &fence.owner, fence.epoch),
                update: json!({ "$set": set }),
            }],
            ordered: true,
        };
        let result = match self.mongo.execute(write).await? {
            Reply::WriteResult(result) => result,
            other => {
                return Err(SidecarError::Reply(format!(
                    "state of `{}`: expected a write result, got {other:?}",
                    self.trigger
                )))
            }
        };
        if let Some(error) = result.write_concern_error {
            return Err(SeqError::WriteConcernFailed {
                code: error.code,
                message: error.errmsg,
            }
            .into());
        }
        if let Some(error) = result.write_errors.into_iter().next() {
            return Err(SeqError::from(error).into());
        }
        if result.n == 0 {
            self.probe.fenced();
            fence.lose();
            return Err(SidecarError::Fenced(format!(
                "state of `{}`: the lease (epoch {}) is no longer this instance's",
                self.trigger, fence.epoch
            )));
        }
        if stored_token {
            self.probe.token_stored(now, false);
        }
        Ok(())
    }
}

/// Milliseconds of an Extended JSON date (`{"$date": {"$numberLong": …}}` or `{"$date": n}`).
fn date_ms(value: &Value) -> Option<i64> {
    match value.get("$date")? {
        Value::Number(n) => n.as_i64(),
        Value::Object(long) => long.get("$numberLong")?.as_str()?.parse().ok(),
        _ => None,
    }
}
