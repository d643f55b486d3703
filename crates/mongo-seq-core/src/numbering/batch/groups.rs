//! How a batch numbers its gapless groups: [`GaplessGroups`], [`WithGapless`] (the sidecar's
//! batches, under a lease) or [`Leaseless`] (an assign: none).

use serde_json::Value;

use crate::error::SeqError;
use crate::numbering::gapless::NumberGapless;
use crate::numbering::spec::NumberingSpec;
use crate::protocol::concern::ClusterTime;
use crate::protocol::plan::{Plan, Step};
use crate::protocol::reply::Reply;

/// How a batch numbers a gapless group: with the gapless protocol under a trigger's lease
/// ([`WithGapless`], the sidecar's batches), or not at all ([`Leaseless`], an assign). A type
/// parameter rather than a flag, so the assign of the Wasm module does not carry the gapless
/// protocol's code.
pub trait GaplessGroups: Clone + std::fmt::Debug {
    type Plan: Plan<Output = u64> + Clone + std::fmt::Debug;
    fn start(
        numbering: &NumberingSpec,
        counter_id: &str,
        ids: Vec<Value>,
        documents: Vec<Value>,
        epoch: Option<i64>,
        after: Option<ClusterTime>,
    ) -> Result<Self::Plan, SeqError>;
}

/// Gapless groups numbered by [`NumberGapless`] (a lease epoch required).
#[derive(Debug, Clone)]
pub struct WithGapless;

impl GaplessGroups for WithGapless {
    type Plan = NumberGapless;
    fn start(
        numbering: &NumberingSpec,
        counter_id: &str,
        ids: Vec<Value>,
        documents: Vec<Value>,
        epoch: Option<i64>,
        after: Option<ClusterTime>,
    ) -> Result<NumberGapless, SeqError> {
        let epoch = epoch.ok_or_else(|| {
            SeqError::invalid_argument("gapless", "gapless numbering needs a lease epoch")
        })?;
        NumberGapless::with_documents(numbering, counter_id, ids, documents, epoch, after)
    }
}

/// No gapless groups (refused before a batch starts).
#[derive(Debug, Clone)]
pub struct Leaseless;

/// The plan of a gapless group that cannot exist.
#[derive(Debug, Clone)]
pub enum NoGaplessPlan {}

impl Plan for NoGaplessPlan {
    type Output = u64;
    fn current_step(&self) -> Result<Step<u64>, SeqError> {
        match *self {}
    }
    fn feed(&mut self, _: Reply) -> Result<Step<u64>, SeqError> {
        match *self {}
    }
}

impl GaplessGroups for Leaseless {
    type Plan = NoGaplessPlan;
    fn start(
        _: &NumberingSpec,
        _: &str,
        _: Vec<Value>,
        _: Vec<Value>,
        _: Option<i64>,
        _: Option<ClusterTime>,
    ) -> Result<NoGaplessPlan, SeqError> {
        Err(SeqError::invalid_argument(
            "gapless",
            "gapless numbering runs under a trigger's lease (the sidecar)",
        ))
    }
}

impl<G: GaplessGroups> super::NumberBatchMachine<G> {
    /// A counter's waiting documents: a gapless group, or a reservation.
    pub(super) fn group(&self, counter_id: String, ids: Vec<Value>) -> super::Action {
        if self.numbering.gapless() {
            super::Action::Gapless { counter_id, ids }
        } else {
            super::Action::Reserve { counter_id, ids }
        }
    }

    /// A sealed series' documents of `ids`, as delivered (their values are sealed).
    pub(super) fn take_sealed(&mut self, ids: &[Value]) -> Vec<Value> {
        ids.iter()
            .filter_map(|id| {
                self.sealed_documents
                    .remove(&crate::numbering::spec::id_key(id))
            })
            .collect()
    }

    /// A reservation the counter's epoch condition refused: a later holder stamped it.
    pub(super) fn fenced(&self, error: SeqError) -> SeqError {
        match error {
            SeqError::ConditionNotMet { counter_id } if self.epoch.is_some() => SeqError::Fenced {
                counter_id,
                epoch: self.epoch.unwrap_or_default(),
                counter_epoch: None,
            },
            other => other,
        }
    }
}
