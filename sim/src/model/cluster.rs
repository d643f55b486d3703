//! A replica set: members with their own oplog and data, one primary per term, replication
//! in steps the simulation chooses, the majority commit point, elections and rollback.
//!
//! What the model follows, from the manual:
//! * the primary applies writes and records them in its oplog; secondaries copy and apply the
//!   entries in order (<https://www.mongodb.com/docs/manual/replication/>,
//!   <https://www.mongodb.com/docs/manual/core/replica-set-oplog/>);
//! * the **majority commit point** is the newest entry of the current term that a majority of
//!   the voting members hold (with arbiters: every data-bearing member when they are not more
//!   than the voting majority, <https://www.mongodb.com/docs/manual/reference/write-concern/#calculating-majority-for-write-concern>);
//!   everything before it is committed too (Raft's rule, which MongoDB's protocol version 1
//!   follows). The primary computes it; a secondary learns it from its sync source as of its
//!   last fetch (the oplog fetcher's reply metadata and heartbeats carry it), so it lags the
//!   primary's by a replication step ("Each replica set member maintains, in memory, a view of
//!   the data at the majority-commit point; the majority-commit point is calculated by the
//!   primary", <https://www.mongodb.com/docs/manual/reference/read-concern-majority/>). A newly
//!   elected primary may thus serve `majority` reads from a snapshot older than writes the old
//!   primary had reported committed, until it commits an entry of its own term;
//! * an election needs the votes of a majority of the voting members, and a member votes only
//!   for a candidate whose oplog is at least as recent as its own
//!   (<https://www.mongodb.com/docs/manual/core/replica-set-elections/>); the new primary
//!   writes a no-op entry in its term;
//! * a primary cut off from the majority keeps accepting `w:1` writes until it notices and steps
//!   down; when a former primary rejoins, the entries it has that the set does not are
//!   **rolled back** (<https://www.mongodb.com/docs/manual/core/replica-set-rollbacks/>); entries
//!   a majority held are never rolled back;
//! * the oplog is truncated from its oldest end, never past the majority commit point
//!   (<https://www.mongodb.com/docs/manual/core/replica-set-oplog/>: "the oplog can grow past its
//!   configured size limit to avoid deleting the majority commit point"); a member that fell
//!   behind the truncation point resynchronizes from the primary (initial sync).

use super::error::ModelError;
use super::state::{Entry, Op, SessionRecord, State, Ts};

/// A member's role as it sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    Primary { term: u64 },
    Secondary,
    Arbiter,
}

/// One member of the set.
#[derive(Debug, Clone)]
pub struct Node {
    pub up: bool,
    /// Cut off from the other members (clients may still reach it).
    pub isolated: bool,
    pub role: Role,
    /// Retained entries, oldest first.
    pub oplog: Vec<Entry>,
    /// Every entry up to this time has been truncated from the oplog.
    pub truncated_through: Ts,
    /// The truncated entries (not part of the model's behaviour: kept so the checks can read
    /// the whole history of the surviving branch).
    pub archive: Vec<Entry>,
    /// The majority commit point as this member knows it.
    pub commit_ts: Ts,
    /// The data as of `commit_ts` (what `readConcern: "majority"` reads).
    pub committed: State,
    /// The data as of the last entry (what `readConcern: "local"` reads).
    pub data: State,
}

impl Node {
    fn new(role: Role) -> Self {
        Self {
            up: true,
            isolated: false,
            role,
            oplog: Vec::new(),
            truncated_through: 0,
            archive: Vec::new(),
            commit_ts: 0,
            committed: State::default(),
            data: State::default(),
        }
    }

    pub fn is_arbiter(&self) -> bool {
        self.role == Role::Arbiter
    }

    /// `(term, ts)` of the newest entry: how recent the oplog is, for elections.
    pub fn last_optime(&self) -> (u64, Ts) {
        self.oplog
            .last()
            .map_or((0, self.truncated_through), |e| (e.term, e.ts))
    }

    pub fn last_ts(&self) -> Ts {
        self.last_optime().1
    }

    fn holds(&self, ts: Ts) -> bool {
        self.oplog.binary_search_by_key(&ts, |e| e.ts).is_ok()
    }

    pub fn term(&self) -> Option<u64> {
        match self.role {
            Role::Primary { term } => Some(term),
            _ => None,
        }
    }

    /// Moves this member's commit point to `ts` (never back), applying the entries in between
    /// to the committed data.
    fn advance_commit(&mut self, ts: Ts) -> Result<(), ModelError> {
        let ts = ts.min(self.last_ts());
        if ts <= self.commit_ts {
            return Ok(());
        }
        for entry in self
            .oplog
            .iter()
            .filter(|e| e.ts > self.commit_ts && e.ts <= ts)
        {
            self.committed.apply(&entry.op, entry.session.as_ref())?;
        }
        self.commit_ts = ts;
        Ok(())
    }
}

/// What happened to a write waiting for `w: "majority"`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WriteStatus {
    Committed,
    Pending,
    /// The member stepped down or went down while the write waited: the outcome is unknown to
    /// the client (it may still commit, or roll back).
    Interrupted,
}

/// The whole replica set.
#[derive(Debug, Clone)]
pub struct Cluster {
    pub nodes: Vec<Node>,
    /// The newest term any member started.
    pub term: u64,
    clock: Ts,
    /// The simulated wall clock (ms) the next entries are written at (the world sets it).
    pub wall_ms: u64,
    /// Rolled-back entries, for the trace.
    pub rolled_back: Vec<Entry>,
}

impl Cluster {
    /// `data` data-bearing members (the first is primary in term 1) and `arbiters`.
    pub fn new(data: usize, arbiters: usize) -> Self {
        let mut nodes: Vec<Node> = (0..data).map(|_| Node::new(Role::Secondary)).collect();
        nodes.extend((0..arbiters).map(|_| Node::new(Role::Arbiter)));
        let mut cluster = Self {
            nodes,
            term: 0,
            clock: 0,
            wall_ms: 0,
            rolled_back: Vec::new(),
        };
        cluster.elect_node(0);
        // Start fully replicated and committed.
        while cluster.replicate_all() {}
        cluster
    }

    fn voting(&self) -> usize {
        self.nodes.len()
    }

    fn data_members(&self) -> usize {
        self.nodes.iter().filter(|n| !n.is_arbiter()).count()
    }

    /// Data-bearing members that must hold an entry for it to be majority-committed.
    pub fn write_majority(&self) -> usize {
        (self.voting() / 2 + 1).min(self.data_members())
    }

    /// The primary of the newest term that is up (a deposed primary that has not stepped down
    /// yet is not it).
    pub fn primary(&self) -> Option<usize> {
        self.nodes
            .iter()
            .enumerate()
            .filter(|(_, n)| n.up && n.term() == Some(self.term))
            .map(|(i, _)| i)
            .next()
    }

    /// Members that believe they are primary and are up (the true one and stale ones).
    pub fn claimed_primaries(&self) -> Vec<usize> {
        self.nodes
            .iter()
            .enumerate()
            .filter(|(_, n)| n.up && n.term().is_some())
            .map(|(i, _)| i)
            .collect()
    }

    pub fn node(&self, index: usize) -> &Node {
        &self.nodes[index]
    }

    pub fn node_mut(&mut self, index: usize) -> &mut Node {
        &mut self.nodes[index]
    }

    /// Appends the operations a write applied on primary `index` (already applied to its
    /// `data` by the caller) as oplog entries; returns their times.
    pub fn append(&mut self, index: usize, ops: Vec<(Op, Option<SessionRecord>)>) -> Vec<Ts> {
        let Some(term) = self.nodes[index].term() else {
            return Vec::new();
        };
        let mut times = Vec::new();
        for (op, session) in ops {
            self.clock += 1;
            let ts = self.clock;
            self.nodes[index].oplog.push(Entry {
                ts,
                wall_ms: self.wall_ms,
                term,
                op,
                session,
            });
            times.push(ts);
        }
        if !times.is_empty() {
            // A one-member majority (or everyone else already caught up) commits at once.
            let _ = self.update_commit_point();
        }
        times
    }

    /// Every entry of member `index`'s branch, oldest first (truncated ones included).
    pub fn history(&self, index: usize) -> impl Iterator<Item = &Entry> {
        let node = &self.nodes[index];
        node.archive.iter().chain(node.oplog.iter())
    }

    /// Makes `index` primary of a new term, writing its no-op entry.
    fn elect_node(&mut self, index: usize) {
        self.term += 1;
        let term = self.term;
        let node = &mut self.nodes[index];
        node.role = Role::Primary { term };
        self.clock += 1;
        let ts = self.clock;
        node.oplog.push(Entry {
            ts,
            wall_ms: self.wall_ms,
            term,
            op: Op::Noop,
            session: None,
        });
        let _ = node.data.apply(&Op::Noop, None);
    }

    /// Members that can talk to each other and vote: up and not isolated.
    fn connected(&self) -> Vec<usize> {
        (0..self.nodes.len())
            .filter(|i| self.nodes[*i].up && !self.nodes[*i].isolated)
            .collect()
    }

    /// Holds an election among the connected members; the winner (the most recent oplog, as
    /// every voter requires) becomes primary. `None` when no majority can vote.
    pub fn elect(&mut self) -> Option<usize> {
        let connected = self.connected();
        if connected.len() < self.voting() / 2 + 1 {
            return None;
        }
        // A connected primary of an older term steps down when it sees the new term.
        for &i in &connected {
            if self.nodes[i].term().is_some() {
                self.nodes[i].role = Role::Secondary;
            }
        }
        let winner = connected
            .iter()
            .copied()
            .filter(|i| !self.nodes[*i].is_arbiter())
            .max_by(|a, b| {
                self.nodes[*a]
                    .last_optime()
                    .cmp(&self.nodes[*b].last_optime())
                    .then_with(|| b.cmp(a))
            })?;
        self.elect_node(winner);
        Some(winner)
    }

    /// A member notices it lost the majority (or sees a newer term) and steps down.
    pub fn step_down(&mut self, index: usize) {
        if self.nodes[index].term().is_some() {
            self.nodes[index].role = Role::Secondary;
        }
    }

    pub fn crash(&mut self, index: usize) {
        let node = &mut self.nodes[index];
        node.up = false;
        if node.term().is_some() {
            node.role = Role::Secondary;
        }
    }

    /// Restarts a member: its oplog and data survive (journaled), it comes back as secondary.
    pub fn restart(&mut self, index: usize) {
        let node = &mut self.nodes[index];
        if node.up {
            return;
        }
        node.up = true;
        if node.role != Role::Arbiter {
            node.role = Role::Secondary;
        }
    }

    pub fn isolate(&mut self, index: usize) {
        self.nodes[index].isolated = true;
    }

    /// Ends a member's isolation; a stale primary then learns the newer term and steps down.
    pub fn heal(&mut self, index: usize) {
        self.nodes[index].isolated = false;
        if matches!(self.nodes[index].term(), Some(term) if term < self.term) {
            self.nodes[index].role = Role::Secondary;
        }
    }

    /// One replication step: secondary `index` syncs up to `max` entries from the primary
    /// (rolling back first what the primary does not have). Returns whether anything changed.
    pub fn replicate(&mut self, index: usize, max: usize) -> Result<bool, ModelError> {
        let Some(primary) = self.primary() else {
            return Ok(false);
        };
        if index == primary {
            return Ok(false);
        }
        {
            let (p, s) = (&self.nodes[primary], &self.nodes[index]);
            if p.isolated || !s.up || s.isolated || s.is_arbiter() || s.term().is_some() {
                return Ok(false);
            }
        }
        let mut changed = false;
        // The sync source's commit point as of this fetch (learned below, once synced).
        let source_commit = self.nodes[primary].commit_ts;
        // The newest entry both hold: everything after it on the secondary diverged.
        let (common, too_stale) = {
            let (p, s) = (&self.nodes[primary], &self.nodes[index]);
            let common = s.oplog.iter().rposition(|e| p.holds(e.ts));
            let behind = common.map_or(s.truncated_through, |i| s.oplog[i].ts);
            (common, behind < p.truncated_through && !p.holds(behind))
        };
        if too_stale {
            // Initial sync: copy the primary's committed data and its committed history.
            let (oplog, archive, through, commit, committed) = {
                let p = &self.nodes[primary];
                (
                    p.oplog
                        .iter()
                        .filter(|e| e.ts <= p.commit_ts)
                        .cloned()
                        .collect::<Vec<_>>(),
                    p.archive.clone(),
                    p.truncated_through,
                    p.commit_ts,
                    p.committed.clone(),
                )
            };
            let s = &mut self.nodes[index];
            let lost: Vec<Entry> = s.oplog.iter().filter(|e| e.ts > commit).cloned().collect();
            self.rolled_back.extend(lost);
            s.oplog = oplog;
            s.archive = archive;
            s.truncated_through = through;
            s.commit_ts = commit;
            s.data = committed.clone();
            s.committed = committed;
            changed = true;
        } else {
            let s = &mut self.nodes[index];
            let keep = common.map_or(0, |i| i + 1);
            if keep < s.oplog.len() {
                let divergent: Vec<Entry> = s.oplog.drain(keep..).collect();
                if divergent.iter().any(|e| e.ts <= s.commit_ts) {
                    return Err(ModelError::unsupported(
                        "model invariant broken: a committed entry would roll back",
                    ));
                }
                self.rolled_back.extend(divergent);
                let mut data = s.committed.clone();
                for entry in s.oplog.iter().filter(|e| e.ts > s.commit_ts) {
                    data.apply(&entry.op, entry.session.as_ref())?;
                }
                s.data = data;
                changed = true;
            }
        }
        let entries: Vec<Entry> = {
            let from = self.nodes[index].last_ts();
            let p = &self.nodes[primary];
            let start = p.oplog.partition_point(|e| e.ts <= from);
            p.oplog.iter().skip(start).take(max).cloned().collect()
        };
        let s = &mut self.nodes[index];
        for entry in entries {
            s.data.apply(&entry.op, entry.session.as_ref())?;
            s.oplog.push(entry);
            changed = true;
        }
        // On the primary's branch now: it learns the commit point the primary had when it
        // fetched (up to what it holds).
        let before = s.commit_ts;
        s.advance_commit(source_commit)?;
        changed |= s.commit_ts != before;
        self.update_commit_point()?;
        Ok(changed)
    }

    /// Every connected secondary syncs everything; whether anything changed.
    pub fn replicate_all(&mut self) -> bool {
        let mut changed = false;
        for index in 0..self.nodes.len() {
            if let Ok(true) = self.replicate(index, usize::MAX) {
                changed = true;
            }
        }
        changed
    }

    /// Recomputes the primary's commit point (its secondaries learn it when they next fetch,
    /// [`Cluster::replicate`]).
    pub fn update_commit_point(&mut self) -> Result<(), ModelError> {
        let Some(primary) = self.primary() else {
            return Ok(());
        };
        let needed = self.write_majority();
        let term = self.term;
        let p = &self.nodes[primary];
        let newest = p.oplog.iter().rev().filter(|e| e.term == term).find(|e| {
            self.nodes
                .iter()
                .filter(|n| !n.is_arbiter() && n.holds(e.ts))
                .count()
                >= needed
        });
        let Some(commit) = newest.map(|e| e.ts) else {
            return Ok(());
        };
        if commit <= p.commit_ts {
            return Ok(());
        }
        self.nodes[primary].advance_commit(commit)?;
        Ok(())
    }

    /// Truncates member `index`'s oplog up to `ts`, never past its commit point and never its
    /// newest entry (a capped collection drops its oldest documents; the newest entry is how
    /// recent the member is, for elections and sync).
    pub fn truncate_oplog(&mut self, index: usize, ts: Ts) {
        let node = &mut self.nodes[index];
        let upto = ts.min(node.commit_ts);
        if upto <= node.truncated_through {
            return;
        }
        let keep = node
            .oplog
            .partition_point(|e| e.ts <= upto)
            .min(node.oplog.len().saturating_sub(1));
        if keep == 0 {
            return;
        }
        let removed: Vec<Entry> = node.oplog.drain(..keep).collect();
        node.truncated_through = removed.last().map_or(node.truncated_through, |e| e.ts);
        node.archive.extend(removed);
    }

    /// Where a write of primary `index` at `ts` in term `term` stands for `w: "majority"`.
    pub fn write_status(&self, index: usize, term: u64, ts: Ts) -> WriteStatus {
        let node = &self.nodes[index];
        if !node.up || node.term() != Some(term) {
            return WriteStatus::Interrupted;
        }
        if node.commit_ts >= ts {
            WriteStatus::Committed
        } else {
            WriteStatus::Pending
        }
    }

    /// The newest time issued (for streams opened "now").
    pub fn clock(&self) -> Ts {
        self.clock
    }
}
