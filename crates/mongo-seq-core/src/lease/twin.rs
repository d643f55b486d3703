//! Two live processes started with one owner (instance) id. The lease plan never takes over a
//! lease of the caller's owner id held by another incarnation before it expires (see
//! [`crate::lease::document`]), so the second process stands by; this tells it why, from what
//! its acquisitions find:
//!
//! ```text
//! busy, owner = me, incarnation ≠ mine ──► same epoch and incarnation as last found,
//!                                          expiresAt further on: one renewal by that process
//! TWIN_RENEWALS renewals at one epoch ────► a live twin: the one with the greater incarnation
//!                                          stops (give each instance its own id), the other
//!                                          stands by
//! anything else (another owner, my own incarnation, a new epoch) ──► start counting again
//! ```
//!
//! One renewal is no proof: a process killed just after sending one may still have it applied.
//! A renewal needs the previous one answered first, so a dead process adds at most one; two
//! mean the holder was alive after this process started looking. A holder that crashed (on
//! another host, say) renews nothing more: its lease expires and is taken over as usual. The
//! caller keeps the time (it acquires every renew interval); this is a pure state machine.
//!
//! Which twin stops is decided by the incarnations alone, so that two twins that each hold some
//! of several leases (started together, say) do not both stop: the greater one stops (a lease
//! without incarnation counts as the smallest); with time-ordered nonces (the sidecar's begin
//! with its start time in milliseconds) that is the one started later.

use crate::lease::document::LeaseInfo;

/// Renewals of one lease (owner id = the caller's, another incarnation, one epoch) that prove
/// its holder alive.
pub const TWIN_RENEWALS: u32 = 2;

/// What [`TwinWatch::observe`] concluded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Twin {
    /// No live twin proven (yet).
    Unproven,
    /// A live twin holds the lease, and this process is the one to stop.
    ThisStops,
    /// A live twin holds the lease; it is the one to stop (it does when it stands by for a
    /// lease this process holds): this process keeps standing by.
    ThatStops,
}

/// What a standby has seen of a lease held under its own owner id by another incarnation.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TwinWatch {
    last: Option<LeaseInfo>,
    renewals: u32,
}

impl TwinWatch {
    /// Takes the lease an acquisition found busy; `owner` and `incarnation` are the caller's.
    /// A live twin is proven once another process holds the lease under the caller's owner id
    /// and renewed it [`TWIN_RENEWALS`] times since the caller first saw it at that epoch.
    pub fn observe(&mut self, owner: &str, incarnation: Option<&str>, found: &LeaseInfo) -> Twin {
        if found.owner != owner || found.incarnation.as_deref() == incarnation {
            *self = Self::default();
            return Twin::Unproven;
        }
        match &self.last {
            Some(last) if last.epoch == found.epoch && last.incarnation == found.incarnation => {
                if found.expires_at_ms > last.expires_at_ms {
                    self.renewals = self.renewals.saturating_add(1);
                }
            }
            _ => self.renewals = 0,
        }
        self.last = Some(found.clone());
        if self.renewals < TWIN_RENEWALS {
            Twin::Unproven
        } else if incarnation > found.incarnation.as_deref() {
            Twin::ThisStops
        } else {
            Twin::ThatStops
        }
    }

    /// Forgets what was seen (the caller acquired the lease, or stopped looking).
    pub fn reset(&mut self) {
        *self = Self::default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lease(owner: &str, incarnation: Option<&str>, epoch: i64, expires: i64) -> LeaseInfo {
        LeaseInfo {
            owner: owner.into(),
            epoch,
            expires_at_ms: expires,
            process: None,
            incarnation: incarnation.map(str::to_owned),
        }
    }

    /// Whether each finding proves a twin (the caller is `me`, incarnation `p2`).
    fn watch(found: &[LeaseInfo]) -> Vec<bool> {
        let mut watch = TwinWatch::default();
        found
            .iter()
            .map(|lease| watch.observe("me", Some("p2"), lease) != Twin::Unproven)
            .collect()
    }

    #[test]
    fn two_renewals_by_another_incarnation_of_my_id_prove_a_twin() {
        let twin = |expires| lease("me", Some("p1"), 4, expires);
        assert_eq!(
            watch(&[twin(1000), twin(1500), twin(2000)]),
            [false, false, true]
        );
        // A lease written without an incarnation is another process's too.
        let old = |expires| lease("me", None, 4, expires);
        assert_eq!(
            watch(&[old(1000), old(1500), old(1500), old(2000)]),
            [false, false, false, true]
        );
    }

    #[test]
    fn a_lease_that_is_not_renewed_or_not_a_twin_s_proves_nothing() {
        // A dead predecessor's lease: the same expiry, or one last renewal in flight.
        let dead = |expires| lease("me", Some("p1"), 4, expires);
        assert_eq!(
            watch(&[dead(1000), dead(1000), dead(1500), dead(1500), dead(1500)]),
            [false; 5]
        );
        // Another owner, however often renewed.
        let other = |expires| lease("other", Some("p1"), 4, expires);
        assert_eq!(watch(&[other(1000), other(1500), other(2000)]), [false; 3]);
        // My own incarnation (the plan reclaims it; never a twin).
        let mine = |expires| lease("me", Some("p2"), 4, expires);
        assert_eq!(watch(&[mine(1000), mine(1500), mine(2000)]), [false; 3]);
        // A new epoch or incarnation in between starts the count again; so does `reset`.
        assert_eq!(
            watch(&[
                lease("me", Some("p1"), 4, 1000),
                lease("me", Some("p1"), 4, 1500),
                lease("me", Some("p1"), 5, 2000),
                lease("me", Some("p3"), 5, 2500),
                lease("me", Some("p3"), 5, 3000),
            ]),
            [false; 5]
        );
        let mut watch = TwinWatch::default();
        for expires in [1000, 1500] {
            watch.observe("me", Some("p2"), &lease("me", Some("p1"), 4, expires));
        }
        watch.reset();
        assert_eq!(
            watch.observe("me", Some("p2"), &lease("me", Some("p1"), 4, 2000)),
            Twin::Unproven
        );
    }

    #[test]
    fn the_greater_incarnation_stops_so_two_twins_never_both_stop() {
        let verdict = |mine: Option<&str>, theirs: Option<&str>| {
            let mut watch = TwinWatch::default();
            [1000, 1500, 2000]
                .map(|expires| watch.observe("me", mine, &lease("me", theirs, 4, expires)))[2]
        };
        assert_eq!(verdict(Some("p2"), Some("p1")), Twin::ThisStops);
        assert_eq!(verdict(Some("p1"), Some("p2")), Twin::ThatStops);
        // A holder that stored none (an older version) is the smaller: the caller stops.
        assert_eq!(verdict(Some("p1"), None), Twin::ThisStops);
    }

    #[test]
    fn a_caller_without_incarnation_never_sees_a_twin_in_an_old_lease() {
        let mut watch = TwinWatch::default();
        for expires in [1000, 1500, 2000, 2500] {
            let found = lease("me", None, 4, expires);
            assert_eq!(watch.observe("me", None, &found), Twin::Unproven);
        }
    }
}
