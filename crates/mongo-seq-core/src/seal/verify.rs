//! Verifying one series' chain, as read back: every link re-hashed after the link before it,
//! the links followed from the period before's last hash, and the chain's end compared with the
//! hash its counter keeps. The report names the first link that does not verify and why.
//!
//! ```text
//! anchor ─▶ link whose previous is anchor ─▶ its hash ─▶ link whose previous is that hash ─▶ …
//!   none found while sealed links remain ─▶ LINK_MISSING (a sealed link removed, no record)
//!   two found ─────────────────────────────▶ LINK_INSERTED
//!   hash ≠ sha256(encoding after previous) ─▶ FIELD_CHANGED
//!   an issue not the next number, a void or deletion of a number not issued ─▶ OUT_OF_ORDER
//! then: an issued number within the chain without a seal ─▶ SEAL_REMOVED
//!       the counter's hash not in the chain ─▶ LINK_MISSING (the last links removed)
//! ```

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;
use serde_json::Value;

use crate::error::SeqError;
use crate::seal::link::{Link, LinkKind, Seal};

/// A link read back: what it records and the seal stored with it (none: an issued number not
/// sealed, or its seal removed). As JSON: the link's keys and `seal` (`{hash, previous}`).
#[derive(Debug, Clone, PartialEq)]
pub struct StoredLink {
    pub link: Link,
    pub seal: Option<Seal>,
}

impl StoredLink {
    /// Links given as a JSON array by a shell; a malformed one is `INVALID_ARGUMENT` naming
    /// `argument` and its index.
    pub fn list_from_json(argument: &str, value: &Value) -> Result<Vec<Self>, SeqError> {
        let invalid = |reason: String| SeqError::InvalidArgument {
            argument: argument.to_owned(),
            reason,
        };
        let Value::Array(items) = value else {
            return Err(invalid("must be an array of links".to_owned()));
        };
        items
            .iter()
            .enumerate()
            .map(|(index, item)| {
                // Read by hand (not serde's derive, whose visitors weigh on the Wasm module).
                let mut link = item.clone();
                let seal = link.as_object_mut().and_then(|map| map.remove("seal"));
                let seal = match seal {
                    None | Some(Value::Null) => None,
                    Some(seal) => Some(
                        Seal::read(&seal)
                            .map_err(|reason| invalid(format!("link {index}: `seal` {reason}")))?,
                    ),
                };
                let link = Link::read(&link)
                    .map_err(|reason| invalid(format!("link {index}: {reason}")))?;
                Ok(Self { link, seal })
            })
            .collect()
    }
}

/// Why a link does not verify.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum SealFailureReason {
    /// Its hash is not the hash of its fields after the link before it: a sealed field changed
    /// (or the seal itself was edited).
    FieldChanged,
    /// The link before it is missing: a sealed document deleted without a record, or a seal
    /// removed.
    LinkMissing,
    /// Two links name one link before them: one was inserted.
    LinkInserted,
    /// An issue that is not the next number, or a void or deletion of a number not issued.
    OutOfOrder,
    /// An issued number inside the chain whose document holds no seal.
    SealRemoved,
}

impl SealFailureReason {
    /// Its stable code (`FIELD_CHANGED`, …), as reports write it.
    pub fn code(self) -> &'static str {
        match self {
            Self::FieldChanged => "FIELD_CHANGED",
            Self::LinkMissing => "LINK_MISSING",
            Self::LinkInserted => "LINK_INSERTED",
            Self::OutOfOrder => "OUT_OF_ORDER",
            Self::SealRemoved => "SEAL_REMOVED",
        }
    }
}

/// One link that does not verify.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SealFailure {
    pub number: i64,
    pub kind: LinkKind,
    pub reason: SealFailureReason,
    pub detail: String,
}

/// A link of the report: its number, kind and hash.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LinkSummary {
    pub number: i64,
    pub kind: LinkKind,
    pub hash: String,
}

/// One series' chain: what an auditor reads (Odoo's inalterability report, per series).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SeriesSealReport {
    pub series: String,
    /// Links followed from the anchor.
    pub links: u64,
    pub first: Option<LinkSummary>,
    pub last: Option<LinkSummary>,
    /// Every link verifies, none is missing or inserted, and the chain ends at its counter's hash.
    pub verified: bool,
    /// By number; the first is the first link that does not verify.
    pub failures: Vec<SealFailure>,
    /// Issued numbers above the chain, not sealed yet (their batch not final).
    pub pending: u64,
    /// Issued numbers below the chain's first: numbered before the series was sealed.
    pub before_sealing: u64,
}

/// Verifies `links` (one series', in any order) against `anchor` (the last hash of the period
/// before, none for a first period) and `head` (the hash the series' counter keeps, none when
/// it keeps none).
pub fn verify_series<'a>(
    series: &str,
    links: &'a [StoredLink],
    anchor: Option<&'a str>,
    head: Option<&str>,
) -> SeriesSealReport {
    let mut by_previous: BTreeMap<Option<&str>, Vec<&StoredLink>> = BTreeMap::new();
    for stored in links {
        if let Some(seal) = &stored.seal {
            by_previous
                .entry(seal.previous.as_deref())
                .or_default()
                .push(stored);
        }
    }
    let mut walk = Walk::default();
    walk.run(&by_previous, anchor);
    // Sealed links the walk did not reach start chains of their own where the link before them
    // is gone: each such start is reported, and its chain verified from there.
    let hashes: BTreeSet<&str> = links
        .iter()
        .filter_map(|s| s.seal.as_ref().map(|seal| seal.hash.as_str()))
        .collect();
    let mut roots: Vec<&StoredLink> = links
        .iter()
        .filter(|s| {
            s.seal.as_ref().is_some_and(|seal| {
                !walk.visited.contains(seal.hash.as_str())
                    && seal.previous.as_deref() != anchor
                    && !seal.previous.as_deref().is_some_and(|p| hashes.contains(p))
            })
        })
        .collect();
    by_number(&mut roots);
    for root in roots {
        walk.fail(
            &root.link,
            SealFailureReason::LinkMissing,
            "the link before it is missing: a sealed document deleted without a record, or its seal removed"
                .to_owned(),
        );
        walk.last_issued = None; // the order resumes after the gap the failure names
        let previous = root.seal.as_ref().and_then(|seal| seal.previous.as_deref());
        walk.run(&by_previous, previous);
    }
    walk.unsealed(links);
    if let Some(head) = head {
        if !walk.visited.contains(head) {
            let number = walk.last.as_ref().map_or(0, |last| last.number);
            walk.failures.push(SealFailure {
                number,
                kind: LinkKind::Issue,
                reason: SealFailureReason::LinkMissing,
                detail: format!(
                    "the counter's last sealed hash {head} is not in the chain, which ends at number {number}: the last links were removed"
                ),
            });
        }
    }
    walk.failures
        .sort_unstable_by_key(|f| (f.number, f.kind as u8, f.reason as u8));
    SeriesSealReport {
        series: series.to_owned(),
        links: walk.count,
        verified: walk.failures.is_empty(),
        first: walk.first,
        last: walk.last,
        failures: walk.failures,
        pending: walk.pending,
        before_sealing: walk.before_sealing,
    }
}

/// Links in number order (one sort for every list of them: each instance of a sort weighs on
/// the Wasm module).
fn by_number(links: &mut [&StoredLink]) {
    links.sort_unstable_by_key(|s| (s.link.number, s.link.kind as u8));
}

/// The walk along the chain: what it has seen and found.
#[derive(Default)]
struct Walk<'a> {
    visited: BTreeSet<&'a str>,
    count: u64,
    first: Option<LinkSummary>,
    last: Option<LinkSummary>,
    /// The highest number issued so far along the chain.
    last_issued: Option<i64>,
    issued: BTreeSet<i64>,
    failures: Vec<SealFailure>,
    pending: u64,
    before_sealing: u64,
}

impl<'a> Walk<'a> {
    /// The links naming one link before them, the one that belongs first: its hash verifies, it
    /// is the next number, the chain goes on from it; then the lowest number. The others were
    /// inserted.
    fn ranked(
        &self,
        by_previous: &BTreeMap<Option<&'a str>, Vec<&'a StoredLink>>,
        next: &[&'a StoredLink],
        previous: Option<&str>,
    ) -> Vec<&'a StoredLink> {
        let expected = self.last_issued.map(|n| n.saturating_add(1));
        let mut ranked = next.to_vec();
        ranked.sort_unstable_by_key(|stored| {
            let verifies = stored.seal.as_ref().is_some_and(|seal| {
                stored
                    .link
                    .seal(previous)
                    .is_ok_and(|s| s.hash == seal.hash)
            });
            let in_order = stored.link.kind != LinkKind::Issue
                || expected.map_or(true, |e| e == stored.link.number);
            let continues = stored
                .seal
                .as_ref()
                .is_some_and(|seal| by_previous.contains_key(&Some(seal.hash.as_str())));
            (!verifies, !in_order, !continues, stored.link.number)
        });
        ranked
    }

    /// Follows the chain from the link whose previous hash is `previous`.
    fn run(
        &mut self,
        by_previous: &BTreeMap<Option<&'a str>, Vec<&'a StoredLink>>,
        previous: Option<&'a str>,
    ) {
        let mut current = previous;
        while let Some(next) = by_previous.get(&current) {
            let ranked = self.ranked(by_previous, next, current);
            let Some((stored, others)) = ranked.split_first() else {
                break;
            };
            for inserted in others {
                self.fail(
                    &inserted.link,
                    SealFailureReason::LinkInserted,
                    format!(
                        "names the same link before it as number {} ({})",
                        stored.link.number,
                        stored.link.kind.name()
                    ),
                );
            }
            let Some(seal) = &stored.seal else { break };
            if !self.visited.insert(seal.hash.as_str()) {
                break; // a cycle: only an edited seal makes one, and its link failed to verify
            }
            self.follow(stored, seal, current);
            current = Some(seal.hash.as_str());
        }
    }

    fn fail(&mut self, link: &Link, reason: SealFailureReason, detail: String) {
        self.failures.push(SealFailure {
            number: link.number,
            kind: link.kind,
            reason,
            detail,
        });
    }

    fn follow(&mut self, stored: &'a StoredLink, seal: &'a Seal, previous: Option<&str>) {
        let link = &stored.link;
        match link.seal(previous) {
            Ok(expected) if expected.hash == seal.hash => {}
            Ok(_) => self.fail(
                link,
                SealFailureReason::FieldChanged,
                "its hash is not that of its sealed fields: a sealed field changed".to_owned(),
            ),
            Err(error) => self.fail(link, SealFailureReason::FieldChanged, error.to_string()),
        }
        match link.kind {
            LinkKind::Issue => {
                let expected = self.last_issued.map(|n| n.saturating_add(1));
                if expected.is_some_and(|expected| expected != link.number) {
                    self.fail(
                        link,
                        SealFailureReason::OutOfOrder,
                        format!(
                            "issued after number {}: expected {}",
                            self.last_issued.unwrap_or_default(),
                            expected.unwrap_or_default()
                        ),
                    );
                }
                self.last_issued =
                    Some(self.last_issued.map_or(link.number, |n| n.max(link.number)));
                self.issued.insert(link.number);
            }
            // A void accounts for a number no document held (reserved and lost, skipped):
            // the next issue follows it.
            LinkKind::Void if !self.issued.contains(&link.number) => {
                self.last_issued =
                    Some(self.last_issued.map_or(link.number, |n| n.max(link.number)));
            }
            LinkKind::Void | LinkKind::Deletion => {
                if !self.issued.contains(&link.number) {
                    self.fail(
                        link,
                        SealFailureReason::OutOfOrder,
                        format!(
                            "a {} of a number the chain has not issued before it",
                            link.kind.name()
                        ),
                    );
                }
            }
        }
        let summary = LinkSummary {
            number: link.number,
            kind: link.kind,
            hash: seal.hash.clone(),
        };
        if self.first.is_none() {
            self.first = Some(summary.clone());
        }
        self.last = Some(summary);
        self.count = self.count.saturating_add(1);
    }

    /// Issued numbers without a seal: before the chain, inside it (a seal removed), or above it.
    fn unsealed(&mut self, links: &[StoredLink]) {
        let first_issued = self.issued.first().copied();
        let last_issued = self.last_issued;
        let mut unsealed: Vec<&StoredLink> = links
            .iter()
            .filter(|s| s.seal.is_none() && s.link.kind == LinkKind::Issue)
            .collect();
        by_number(&mut unsealed);
        for link in unsealed.into_iter().map(|s| &s.link) {
            match (first_issued, last_issued) {
                (Some(first), _) if link.number < first => {
                    self.before_sealing = self.before_sealing.saturating_add(1);
                }
                (_, Some(last)) if link.number <= last => self.fail(
                    link,
                    SealFailureReason::SealRemoved,
                    "issued inside the chain, its document holds no seal".to_owned(),
                ),
                _ => self.pending = self.pending.saturating_add(1),
            }
        }
    }
}

#[cfg(test)]
mod tests;
