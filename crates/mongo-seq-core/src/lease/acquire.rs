//! Holding a trigger's lease, built on the [`Lease`] plan: acquiring it with an epoch above
//! every epoch its counters carry, and renewing it. (Releasing is the `Lease` plan with
//! `release`.) The caller passes `nowMs` and the time to live; the core reads no clock.
//!
//! ```text
//! AcquireLease(request {held: none}, sequence):
//!   Lease ─┬─ busy ─────────────────────────────────────────────► done: busy {owner, epoch, expiresAtMs}
//!          └─ held E ─► find {$or: counters of the sequence} sort {epoch: -1} limit 1 projection {epoch: 1}
//!                       (H = that epoch; 0 when none or unreadable)
//!                       ├─ H ≥ E (the lease document is younger than the counters):
//!                       │    note epochRaised; Lease again with minEpoch H ─► held E' > H / busy
//!                       └─ updateMany {$or: counters of the sequence, epoch: {$not: {$gt: E}}} {$set: {epoch: E}}
//!                            (writeConcernError / writeErrors → WRITE_CONCERN_FAILED / WRITE_FAILED)
//!                            ─► done: held {epoch: E, expiresAtMs, counterEpoch: H}
//! RenewLease(request {held: E}):
//!   Lease ─┬─ held E ───────► done: renewed {expiresAtMs}
//!          └─ otherwise ────► done: lost {owner, epoch, expiresAtMs} (stop: the fence is gone)
//! ```
//!
//! Once the stamp is written, a reservation of an earlier holder (its filter requires
//! `epoch ≤` its own) cannot touch the counters any more. A new holder then completes the
//! pending intents ([`crate::numbering::pending::CompletePending`]) before numbering.

use serde::Serialize;
use serde_json::{json, Value};

use crate::ejson;
use crate::error::SeqError;
use crate::lease::document::{stamp_epoch, Lease, LeaseOutcome, LeaseRequest};
use crate::protocol::command::{Collection, Command, QueryOptions};
use crate::protocol::machine::{launch, resume, Machine, MachinePlan};
use crate::protocol::note::Note;
use crate::protocol::plan::{Plan, Step};
use crate::protocol::reply::Reply;
use crate::sequence::name::validate_name;
use crate::sequence::options::SequenceSpec;
use crate::sequence::scope::counters_of;

/// Outcome of [`AcquireLease`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "status", rename_all = "camelCase")]
pub enum Acquisition {
    /// The caller holds the lease with `epoch`, stamped on every counter of the sequence;
    /// `counterEpoch` is the highest epoch the counters carried before.
    #[serde(rename_all = "camelCase")]
    Held {
        epoch: i64,
        expires_at_ms: i64,
        counter_epoch: i64,
    },
    /// Someone else holds it. `process`: the holder's process facts, when it stored some (see
    /// [`crate::lease::document`]: a caller that proves that process gone acquires with
    /// `holderGone`); `incarnation`: the holder's, when it stored one (another process with the
    /// caller's own owner id, see [`crate::lease::twin`]).
    #[serde(rename_all = "camelCase")]
    Busy {
        owner: String,
        epoch: i64,
        expires_at_ms: i64,
        #[serde(skip_serializing_if = "Option::is_none")]
        process: Option<serde_json::Value>,
        #[serde(skip_serializing_if = "Option::is_none")]
        incarnation: Option<String>,
    },
}

/// Acquires a trigger's lease and fences its counters; see the module docs.
pub type AcquireLease = MachinePlan<AcquireLeaseMachine>;

#[derive(Debug, Clone)]
enum AcquirePhase {
    Idle,
    Lease(Box<Lease>),
    Highest,
    Stamp,
}

/// The state of an [`AcquireLease`].
#[derive(Debug, Clone)]
pub struct AcquireLeaseMachine {
    request: LeaseRequest,
    /// `$or` branches matching the sequence's counters.
    counters: Value,
    epoch: i64,
    expires_at_ms: i64,
    highest: i64,
    raised: bool,
    notes: Vec<Note>,
    phase: AcquirePhase,
}

impl AcquireLease {
    /// `request` without `held` or `release`; `sequence`: the name of the sequence whose
    /// counters (`name`, `name/…`) the lease fences.
    pub fn new(request: &LeaseRequest, sequence: &str) -> Result<Self, SeqError> {
        validate_name(sequence)?;
        Self::fencing(request, counters_of(sequence))
    }

    /// Like [`AcquireLease::new`] for the counters of `spec`, the one the `counterId` option
    /// names included.
    pub fn for_sequence(request: &LeaseRequest, spec: &SequenceSpec) -> Result<Self, SeqError> {
        Self::fencing(request, spec.counters_of())
    }

    fn fencing(request: &LeaseRequest, counters: Value) -> Result<Self, SeqError> {
        if request.held.is_some() || request.release {
            return Err(SeqError::invalid_argument(
                "request",
                "an acquisition holds nothing yet: no `held`, no `release`",
            ));
        }
        let plan = Lease::new(request)?;
        let mut machine = AcquireLeaseMachine {
            request: request.clone(),
            counters,
            epoch: 0,
            expires_at_ms: 0,
            highest: 0,
            raised: false,
            notes: Vec::new(),
            phase: AcquirePhase::Idle,
        };
        let first = machine.run_lease(plan);
        Ok(MachinePlan::begin(machine, first))
    }
}

impl AcquireLeaseMachine {
    fn run_lease(&mut self, plan: Lease) -> Result<Step<Acquisition>, SeqError> {
        launch(plan, &mut self.notes, |plan| {
            self.phase = AcquirePhase::Lease(plan);
        })?
        .and_then(|outcome| self.on_lease(outcome))
    }

    fn on_lease(&mut self, outcome: LeaseOutcome) -> Result<Step<Acquisition>, SeqError> {
        match outcome {
            LeaseOutcome::Held {
                epoch,
                expires_at_ms,
                ..
            } => {
                self.epoch = epoch;
                self.expires_at_ms = expires_at_ms;
                if self.raised {
                    return Ok(self.stamp());
                }
                self.phase = AcquirePhase::Highest;
                Ok(Step::Command(Command::Find {
                    collection: Collection::Counters,
                    filter: json!({ "$or": self.counters }),
                    options: QueryOptions {
                        projection: Some(json!({ "epoch": 1 })),
                        sort: Some(json!({ "epoch": -1 })),
                        limit: Some(1),
                        majority: false,
                    },
                    after_cluster_time: None,
                }))
            }
            LeaseOutcome::Busy {
                owner,
                epoch,
                expires_at_ms,
                process,
                incarnation,
            } => Ok(Step::Done(Acquisition::Busy {
                owner,
                epoch,
                expires_at_ms,
                process,
                incarnation,
            })),
            LeaseOutcome::Released => Err(SeqError::unexpected_reply(
                "the lease plan answered `released` to an acquisition",
            )),
        }
    }

    fn on_highest(&mut self, reply: Reply) -> Result<Step<Acquisition>, SeqError> {
        let documents = reply.into_documents("find")?;
        // A counter without (or with an unreadable) epoch predates leases: 0.
        self.highest = documents
            .first()
            .and_then(|counter| counter.get("epoch"))
            .and_then(|epoch| ejson::read_i64(epoch).ok())
            .unwrap_or(0);
        if self.highest < self.epoch {
            return Ok(self.stamp());
        }
        // Never run with an epoch the counters already passed (e.g. the state collection was
        // dropped): take the lease again above them.
        self.notes.push(Note::EpochRaised {
            epoch: self.epoch,
            highest: self.highest,
        });
        self.raised = true;
        let mut request = self.request.clone();
        request.min_epoch = request.min_epoch.max(self.highest);
        self.run_lease(Lease::new(&request)?)
    }

    fn stamp(&mut self) -> Step<Acquisition> {
        let (filter, update) = stamp_epoch(&self.counters, self.epoch);
        self.phase = AcquirePhase::Stamp;
        Step::Command(Command::UpdateMany {
            collection: Collection::Counters,
            filter,
            update,
        })
    }

    fn on_stamped(&mut self, reply: Reply) -> Result<Step<Acquisition>, SeqError> {
        let result = reply.into_write_result("updateMany")?;
        if let Some(error) = result.write_errors.into_iter().next() {
            return Err(error.into());
        }
        Ok(Step::Done(Acquisition::Held {
            epoch: self.epoch,
            expires_at_ms: self.expires_at_ms,
            counter_epoch: self.highest,
        }))
    }
}

impl Machine for AcquireLeaseMachine {
    type Output = Acquisition;

    fn on_reply(&mut self, reply: Reply) -> Result<Step<Acquisition>, SeqError> {
        match std::mem::replace(&mut self.phase, AcquirePhase::Idle) {
            AcquirePhase::Lease(plan) => resume(plan, reply, &mut self.notes, |plan| {
                self.phase = AcquirePhase::Lease(plan);
            })?
            .and_then(|outcome| self.on_lease(outcome)),
            AcquirePhase::Highest => self.on_highest(reply),
            AcquirePhase::Stamp => self.on_stamped(reply),
            AcquirePhase::Idle => Err(SeqError::unexpected_reply("no command is pending")),
        }
    }

    fn drain_notes(&mut self) -> Vec<Note> {
        std::mem::take(&mut self.notes)
    }
}

/// Outcome of [`RenewLease`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "status", rename_all = "camelCase")]
pub enum Renewal {
    /// Still held, now until `expiresAtMs`.
    #[serde(rename_all = "camelCase")]
    Renewed { expires_at_ms: i64 },
    /// The epoch held is gone (taken over, or moved on): stop acting on it.
    #[serde(rename_all = "camelCase")]
    Lost {
        owner: String,
        epoch: i64,
        expires_at_ms: i64,
    },
}

/// Renews a held lease; see the module docs.
pub type RenewLease = MachinePlan<RenewLeaseMachine>;

/// The state of a [`RenewLease`].
#[derive(Debug, Clone)]
pub struct RenewLeaseMachine {
    owner: String,
    held: i64,
    plan: Box<Lease>,
}

impl RenewLease {
    /// `request` with the epoch `held` and without `release`.
    pub fn new(request: &LeaseRequest) -> Result<Self, SeqError> {
        let (Some(held), false) = (request.held, request.release) else {
            return Err(SeqError::invalid_argument(
                "request",
                "a renewal needs the epoch `held`, and no `release`",
            ));
        };
        let plan = Lease::new(request)?;
        let machine = RenewLeaseMachine {
            owner: request.owner.clone(),
            held,
            plan: Box::new(plan),
        };
        let first = machine
            .plan
            .current_step()
            .and_then(|step| machine.renewal(step));
        Ok(MachinePlan::begin(machine, first))
    }
}

impl RenewLeaseMachine {
    fn renewal(&self, step: Step<LeaseOutcome>) -> Result<Step<Renewal>, SeqError> {
        let outcome = match step {
            Step::Command(command) => return Ok(Step::Command(command)),
            Step::Done(outcome) => outcome,
        };
        let renewal = match outcome {
            LeaseOutcome::Held {
                epoch,
                expires_at_ms,
                ..
            } if epoch == self.held
                || crate::mutants::active(crate::mutants::Mutant::RenewWithoutEpoch) =>
            {
                Renewal::Renewed { expires_at_ms }
            }
            LeaseOutcome::Held {
                epoch,
                expires_at_ms,
                ..
            } => Renewal::Lost {
                owner: self.owner.clone(),
                epoch,
                expires_at_ms,
            },
            LeaseOutcome::Busy {
                owner,
                epoch,
                expires_at_ms,
                ..
            } => Renewal::Lost {
                owner,
                epoch,
                expires_at_ms,
            },
            LeaseOutcome::Released => {
                return Err(SeqError::unexpected_reply(
                    "the lease plan answered `released` to a renewal",
                ))
            }
        };
        Ok(Step::Done(renewal))
    }
}

impl Machine for RenewLeaseMachine {
    type Output = Renewal;

    fn on_reply(&mut self, reply: Reply) -> Result<Step<Renewal>, SeqError> {
        let step = self.plan.feed(reply)?;
        self.renewal(step)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lease::document::tests::doc;
    use crate::protocol::reply::WriteResult;

    fn request(held: Option<i64>) -> LeaseRequest {
        crate::lease::document::tests::request(held, 5000)
    }

    fn done<T: std::fmt::Debug>(step: Result<Step<T>, SeqError>) -> T {
        match step {
            Ok(Step::Done(output)) => output,
            other => panic!("expected done, got {other:?}"),
        }
    }

    #[test]
    fn acquisition_stamps_the_epoch() {
        let mut plan = AcquireLease::new(&request(None), "orders").unwrap();
        plan.feed(Reply::None).unwrap();
        let find = plan.feed(doc("me", 1, 6000)).unwrap();
        assert!(matches!(find, Step::Command(Command::Find { .. })));
        let stamp = plan
            .feed(Reply::Documents {
                documents: vec![json!({"_id": "orders", "epoch": null})],
            })
            .unwrap();
        assert!(matches!(stamp, Step::Command(Command::UpdateMany { .. })));
        let held = done(plan.feed(Reply::WriteResult(WriteResult::default())));
        assert_eq!(
            held,
            Acquisition::Held {
                epoch: 1,
                expires_at_ms: 6000,
                counter_epoch: 0
            }
        );
        assert!(plan.drain_notes().is_empty());
    }

    #[test]
    fn renewal_outcomes() {
        let mut plan = RenewLease::new(&request(Some(3))).unwrap();
        plan.feed(doc("me", 3, 5500)).unwrap();
        let renewed = done(plan.feed(doc("me", 3, 6000)));
        assert_eq!(
            renewed,
            Renewal::Renewed {
                expires_at_ms: 6000
            }
        );
        let mut plan = RenewLease::new(&request(Some(3))).unwrap();
        let lost = done(plan.feed(doc("other", 4, 9000)));
        assert!(matches!(lost, Renewal::Lost { epoch: 4, .. }));
        assert!(RenewLease::new(&request(None)).is_err());
        assert!(AcquireLease::new(&request(Some(1)), "orders").is_err());
    }
}
