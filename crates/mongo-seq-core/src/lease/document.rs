//! Leases: which of several sidecars with the same configuration is the active one for a
//! trigger, and the **epoch** that fences the ones that lost it.
//!
//! A lease lives in a document of the leases collection (the sidecar uses its state collection,
//! the trigger's own state document): `{ _id, lease: { owner, epoch, expiresAt, incarnation? } }`, times in
//! milliseconds since the Unix epoch. The core has no clock: the caller passes `nowMs` (its own
//! clock) and the time to live. The epoch grows by one on every change of holder; the holder
//! stamps it on its counters and every counter update requires `epoch ≤ its epoch`, so an
//! instance that lost the lease cannot reserve numbers once the new holder touched a counter.
//!
//! ```text
//! findOne {_id}
//!  ├─ none / no `lease` ─────────► findOneAndUpdate {_id, lease: absent} {$set lease: me, epoch e+1} upsert
//!  ├─ owner = me, epoch = held ──► findOneAndUpdate {_id, lease.owner: me, lease.epoch: E} {$set lease.expiresAt}   (renew)
//!  ├─ owner = me, held = none, ─► takeover (this process's own lease, e.g. read again to raise the epoch)
//!  │  same incarnation
//!  ├─ held = none, and expired ──► findOneAndUpdate {_id, lease.owner, lease.epoch, lease.expiresAt (as read)}
//!  │  or proved gone (holderGone)    {$set lease: me, epoch E+1}                                          (takeover)
//!  └─ otherwise ─────────────────► done: busy {owner, epoch, expiresAt, incarnation}
//! a `none` reply (someone else moved first) or duplicateKey (racing first acquisitions) → read again
//! ```
//!
//! `release` sets `expiresAt: 0` where the caller still holds the lease, so a standby takes
//! over at once after a graceful shutdown.
//!
//! The owner id names an instance; the **incarnation** (`incarnation`, a nonce the caller draws
//! once per process: the core draws no randomness) names the process. A lease of the caller's
//! owner id under another incarnation (or none: a lease written without one) is not the
//! caller's: it is busy until it expires or its holder is proved gone, like anyone else's. So
//! two live processes started with one instance id do not take the lease from each other in
//! turn; the one that stands by finds its own id renewing it ([`crate::lease::twin`]).
//!
//! A crashed holder cannot release: its successor would wait for the lease to expire. The
//! caller may store facts about its process with the lease (`process`, opaque here); whoever
//! finds the lease busy gets them back, may establish from them (with I/O the core does not do)
//! that this process no longer exists, and asks again with `holderGone {owner, epoch}`: then
//! the lease is taken over at once, conditioned on the lease as read, exactly as if it had
//! expired. A proof about another owner or epoch takes nothing over.

use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

use crate::ejson;
use crate::error::SeqError;
use crate::protocol::command::{id_filter, Collection, Command, ReturnDocument, UpdateOptions};
use crate::protocol::machine::{Machine, MachinePlan};
use crate::protocol::plan::{Retries, Step};
use crate::protocol::reply::{unexpected, Reply};

/// What the caller wants.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LeaseRequest {
    /// `_id` of the lease document.
    pub lease_id: String,
    /// This instance's id (unique among running instances).
    pub owner: String,
    /// The caller's clock, ms since the Unix epoch.
    pub now_ms: i64,
    /// Time to live of the lease, ms (> 0).
    pub ttl_ms: i64,
    /// The epoch the caller believes it holds (`None` when it holds nothing).
    #[serde(default)]
    pub held: Option<i64>,
    /// A new epoch is minted above this too (the highest epoch seen on the counters).
    #[serde(default)]
    pub min_epoch: i64,
    /// Give the lease up (only where the caller holds `held`).
    #[serde(default)]
    pub release: bool,
    /// Facts about the caller's process, stored with a lease it acquires (`lease.process`), for
    /// a successor to find out whether that process still exists. Opaque to the core.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub process: Option<Value>,
    /// The holder the caller has established no longer exists: take its lease over now, even
    /// before it expires (only while the lease is still that owner's, at that epoch).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub holder_gone: Option<LeaseHolder>,
    /// This process's nonce, drawn once per process (non-empty), stored with a lease it takes
    /// (`lease.incarnation`): only a lease of the same owner and incarnation is reclaimed at
    /// once; one of another process with the same owner id is busy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub incarnation: Option<String>,
}

/// A lease holder: who, at which epoch.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LeaseHolder {
    pub owner: String,
    pub epoch: i64,
}

/// A lease as stored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LeaseInfo {
    pub owner: String,
    pub epoch: i64,
    pub expires_at_ms: i64,
    /// The holder's process facts, when it stored some.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub process: Option<Value>,
    /// The holder's incarnation, when it stored one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub incarnation: Option<String>,
}

/// The outcome of a lease plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "camelCase")]
pub enum LeaseOutcome {
    /// The caller holds the lease until `expiresAtMs`. `acquired`: the epoch is new (first
    /// acquisition or takeover): stamp it on the counters and complete pending intents first.
    #[serde(rename_all = "camelCase")]
    Held {
        epoch: i64,
        expires_at_ms: i64,
        acquired: bool,
    },
    /// Someone else holds it (or, when the caller thought it held it, it was lost). `process`,
    /// `incarnation`: the holder's, when it stored them.
    #[serde(rename_all = "camelCase")]
    Busy {
        owner: String,
        epoch: i64,
        expires_at_ms: i64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        process: Option<Value>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        incarnation: Option<String>,
    },
    /// `release`: done (or there was nothing of the caller's to release).
    Released,
}

#[derive(Debug, Clone)]
enum Phase {
    Read,
    Write { epoch: i64, acquired: bool },
    Release,
}

/// The lease plan; see the module docs.
pub type Lease = MachinePlan<LeaseMachine>;

/// The state of a [`Lease`].
#[derive(Debug, Clone)]
pub struct LeaseMachine {
    request: LeaseRequest,
    expires_at: i64,
    phase: Phase,
    retries: Retries,
}

/// Parses the `lease` field of a lease document (`None` when absent or null).
pub fn read_lease(document: &Value, lease_id: &str) -> Result<Option<LeaseInfo>, SeqError> {
    let bad = |reason: String| SeqError::MalformedLease {
        lease_id: lease_id.to_owned(),
        reason,
    };
    let lease = match document.get("lease") {
        None | Some(Value::Null) => return Ok(None),
        Some(Value::Object(lease)) => lease,
        Some(other) => {
            return Err(bad(format!(
                "`lease` must be a document, got {}",
                ejson::describe(other)
            )))
        }
    };
    let owner = match lease.get("owner") {
        Some(Value::String(owner)) if !owner.is_empty() => owner.clone(),
        Some(other) => {
            return Err(bad(format!(
                "`lease.owner` must be a non-empty string, got {}",
                ejson::describe(other)
            )))
        }
        None => return Err(bad("`lease.owner` is missing".to_owned())),
    };
    let int = |key: &str| -> Result<i64, SeqError> {
        let value = lease
            .get(key)
            .ok_or_else(|| bad(format!("`lease.{key}` is missing")))?;
        ejson::read_i64(value).map_err(|reason| bad(format!("`lease.{key}` {reason}")))
    };
    let epoch = int("epoch")?;
    if epoch < 1 {
        return Err(bad(format!(
            "`lease.epoch` must be at least 1, got {epoch}"
        )));
    }
    let process = match lease.get("process") {
        None | Some(Value::Null) => None,
        Some(Value::Object(facts)) => Some(Value::Object(facts.clone())),
        Some(other) => {
            return Err(bad(format!(
                "`lease.process` must be a document, got {}",
                ejson::describe(other)
            )))
        }
    };
    let incarnation = match lease.get("incarnation") {
        None | Some(Value::Null) => None,
        Some(Value::String(nonce)) if !nonce.is_empty() => Some(nonce.clone()),
        Some(other) => {
            return Err(bad(format!(
                "`lease.incarnation` must be a non-empty string, got {}",
                ejson::describe(other)
            )))
        }
    };
    Ok(Some(LeaseInfo {
        owner,
        epoch,
        expires_at_ms: int("expiresAt")?,
        process,
        incarnation,
    }))
}

impl Lease {
    pub fn new(request: &LeaseRequest) -> Result<Self, SeqError> {
        if request.lease_id.is_empty() || request.owner.is_empty() {
            return Err(SeqError::invalid_argument(
                "lease",
                "leaseId and owner must be non-empty",
            ));
        }
        if request.incarnation.as_deref() == Some("") {
            return Err(SeqError::invalid_argument(
                "incarnation",
                "must be non-empty when given",
            ));
        }
        if request.ttl_ms <= 0 {
            return Err(SeqError::invalid_argument("ttlMs", "must be positive"));
        }
        if request.release && request.held.is_none() {
            return Err(SeqError::invalid_argument(
                "held",
                "release needs the epoch held",
            ));
        }
        let expires_at = request
            .now_ms
            .checked_add(request.ttl_ms)
            .ok_or_else(|| SeqError::overflow("nowMs + ttlMs"))?;
        let (phase, command) = match (request.release, request.held) {
            (true, Some(epoch)) => (Phase::Release, release_command(request, epoch)),
            _ => (Phase::Read, read_command(&request.lease_id)),
        };
        let machine = LeaseMachine {
            request: request.clone(),
            expires_at,
            phase,
            retries: Retries::default(),
        };
        Ok(MachinePlan::begin(machine, Ok(Step::Command(command))))
    }
}

impl LeaseMachine {
    fn lease_value(&self, epoch: i64) -> Value {
        let mut lease = json!({
            "owner": self.request.owner,
            "epoch": ejson::long(epoch),
            "expiresAt": ejson::long(self.expires_at),
        });
        if let Some(object) = lease.as_object_mut() {
            if let Some(process) = &self.request.process {
                object.insert("process".to_owned(), process.clone());
            }
            if let Some(incarnation) = &self.request.incarnation {
                object.insert("incarnation".to_owned(), Value::String(incarnation.clone()));
            }
        }
        lease
    }

    fn new_epoch(&self, previous: i64) -> Result<i64, SeqError> {
        previous
            .max(self.request.min_epoch)
            .max(0)
            .checked_add(1)
            .ok_or_else(|| SeqError::overflow("lease epoch"))
    }

    fn write(
        &mut self,
        filter: Map<String, Value>,
        set: Value,
        upsert: bool,
        epoch: i64,
        acquired: bool,
    ) -> Step<LeaseOutcome> {
        self.phase = Phase::Write { epoch, acquired };
        Step::Command(Command::FindOneAndUpdate {
            collection: Collection::Leases,
            filter: Value::Object(filter),
            update: json!({ "$set": set }),
            options: UpdateOptions {
                upsert,
                return_document: ReturnDocument::After,
            },
        })
    }

    fn on_read(&mut self, reply: Reply) -> Result<Step<LeaseOutcome>, SeqError> {
        let request = self.request.clone();
        let current = match reply {
            Reply::Document { document } => read_lease(&document, &request.lease_id)?,
            Reply::None => None,
            other => return Err(unexpected(&other, "findOne")),
        };
        let mut filter = id_filter(&request.lease_id);
        let Some(lease) = current else {
            filter.insert("lease".to_owned(), json!({ "$exists": false }));
            let epoch = self.new_epoch(0)?;
            let set = json!({ "lease": self.lease_value(epoch) });
            return Ok(self.write(filter, set, true, epoch, true));
        };
        filter.insert("lease.owner".to_owned(), Value::String(lease.owner.clone()));
        filter.insert("lease.epoch".to_owned(), ejson::long(lease.epoch));
        let mine = lease.owner == request.owner;
        // Mutant (simulator only): renew whatever epoch this owner's lease has now.
        let renew_any = crate::mutants::active(crate::mutants::Mutant::RenewWithoutEpoch)
            && request.held.is_some();
        if mine
            && (request.held == Some(lease.epoch) || renew_any)
            && lease.epoch >= request.min_epoch
        {
            let set = json!({ "lease.expiresAt": ejson::long(self.expires_at) });
            return Ok(self.write(filter, set, false, lease.epoch, false));
        }
        // Bump (counters carry a higher epoch); reclaim this process's own lease; or take over
        // a lease that expired or whose holder was proved gone (another process's, even with
        // this owner id: a live twin's lease is never taken, or the two would take it in turn).
        let takeover = match request.held {
            Some(held) => mine && held == lease.epoch,
            None => {
                let gone = request
                    .holder_gone
                    .as_ref()
                    .is_some_and(|gone| gone.owner == lease.owner && gone.epoch == lease.epoch);
                (mine && lease.incarnation == request.incarnation)
                    || lease.expires_at_ms <= request.now_ms
                    || gone
            }
        };
        if takeover {
            filter.insert(
                "lease.expiresAt".to_owned(),
                ejson::long(lease.expires_at_ms),
            );
            let epoch = self.new_epoch(lease.epoch)?;
            let set = json!({ "lease": self.lease_value(epoch) });
            return Ok(self.write(filter, set, false, epoch, true));
        }
        Ok(Step::Done(LeaseOutcome::Busy {
            owner: lease.owner,
            epoch: lease.epoch,
            expires_at_ms: lease.expires_at_ms,
            process: lease.process,
            incarnation: lease.incarnation,
        }))
    }

    fn on_write(
        &mut self,
        epoch: i64,
        acquired: bool,
        reply: Reply,
    ) -> Result<Step<LeaseOutcome>, SeqError> {
        match reply {
            Reply::Document { document } => match read_lease(&document, &self.request.lease_id)? {
                Some(lease) if lease.owner == self.request.owner && lease.epoch == epoch => {
                    Ok(Step::Done(LeaseOutcome::Held {
                        epoch,
                        expires_at_ms: lease.expires_at_ms,
                        acquired,
                    }))
                }
                _ => Err(SeqError::unexpected_reply(
                    "the updated lease document does not hold the lease just written",
                )),
            },
            // Someone moved first: read again.
            Reply::None | Reply::DuplicateKey => {
                self.retries.bump("lease", &self.request.lease_id)?;
                self.phase = Phase::Read;
                Ok(Step::Command(read_command(&self.request.lease_id)))
            }
            other => Err(unexpected(&other, "findOneAndUpdate")),
        }
    }
}

fn read_command(lease_id: &str) -> Command {
    Command::FindOne {
        collection: Collection::Leases,
        filter: Value::Object(id_filter(lease_id)),
        options: None,
    }
}

fn release_command(request: &LeaseRequest, epoch: i64) -> Command {
    Command::FindOneAndUpdate {
        collection: Collection::Leases,
        filter: held_filter(&request.lease_id, &request.owner, epoch),
        update: json!({ "$set": { "lease.expiresAt": ejson::long(0) } }),
        options: UpdateOptions {
            upsert: false,
            return_document: ReturnDocument::After,
        },
    }
}

/// `{_id, lease.owner, lease.epoch}`: the lease document while `owner` holds it at `epoch`. A
/// write on the lease document by its holder (the sidecar's resume token lives there too)
/// takes this filter, so it changes nothing once the lease was taken over.
pub fn held_filter(lease_id: &str, owner: &str, epoch: i64) -> Value {
    let mut filter = id_filter(lease_id);
    filter.insert("lease.owner".to_owned(), Value::String(owner.to_owned()));
    filter.insert("lease.epoch".to_owned(), ejson::long(epoch));
    Value::Object(filter)
}

/// Filter and update (for `updateMany` on the counters collection) that stamp `epoch` on every
/// counter `counters` matches (`$or` branches: a sequence's `name` and `name/…` scoped ids, see
/// [`crate::SequenceSpec::counters_of`]) whose epoch is not higher. It fences, it hands out no
/// number: it carries no [definition](crate::counter::definition) (the holder's reservations do).
pub fn stamp_epoch(counters: &Value, epoch: i64) -> (Value, Value) {
    (
        json!({
            "$or": counters,
            "epoch": { "$not": { "$gt": ejson::long(epoch) } },
        }),
        json!({ "$set": { "epoch": ejson::long(epoch) } }),
    )
}

/// The condition added to every counter update of a holder of `epoch`: the counter was not
/// touched by a later holder (a missing `epoch` matches: counters made before leases existed).
pub fn epoch_condition(epoch: i64) -> Value {
    // Mutant (simulator only): a condition every epoch meets.
    let epoch = if crate::mutants::active(crate::mutants::Mutant::NoEpochCondition) {
        i64::MAX
    } else {
        epoch
    };
    json!({ "$not": { "$gt": ejson::long(epoch) } })
}

impl Machine for LeaseMachine {
    type Output = LeaseOutcome;

    fn on_reply(&mut self, reply: Reply) -> Result<Step<LeaseOutcome>, SeqError> {
        match self.phase.clone() {
            Phase::Read => self.on_read(reply),
            Phase::Write { epoch, acquired } => self.on_write(epoch, acquired, reply),
            Phase::Release => match reply {
                Reply::Document { .. } | Reply::None => Ok(Step::Done(LeaseOutcome::Released)),
                other => Err(unexpected(&other, "findOneAndUpdate")),
            },
        }
    }
}

#[cfg(test)]
pub(crate) mod tests;
