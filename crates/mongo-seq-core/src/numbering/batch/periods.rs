//! The periods of a batch of a sequence that resets: each document's instant, the
//! `localDates` step, each document's counter in its period (see the parent's docs).

use std::collections::BTreeMap;

use serde_json::Value;

use super::{BatchReport, GaplessGroups, NumberBatchMachine, Phase};
use crate::counter::dated;
use crate::error::SeqError;
use crate::numbering::spec::{id_key, NumberingSpec};
use crate::protocol::plan::Step;
use crate::protocol::reply::Reply;
use crate::sequence::instant::{check_instant, document_instant, object_id_instant};

/// The instant of each document of a periodic batch, by `_id` key (see the module docs).
pub(super) fn instants_of(
    numbering: &NumberingSpec,
    documents: &[Value],
    times: &[Option<i64>],
) -> BTreeMap<String, Result<i64, SeqError>> {
    let mut instants = BTreeMap::new();
    for (index, document) in documents.iter().enumerate() {
        let Some(id) = document.get("_id") else {
            continue;
        };
        let position = u64::try_from(index).unwrap_or(u64::MAX);
        let instant = match (numbering.date_field(), times.get(index).copied().flatten()) {
            (Some(field), _) => document_instant(document, field, position),
            (None, Some(time)) => check_instant("time", Some(position), time),
            (None, None) => object_id_instant(id)
                .ok_or_else(|| {
                    SeqError::invalid_date(
                        "date",
                        Some(position),
                        "the document has no date to place it in a period: no dateField, no event time and no ObjectId _id",
                    )
                })
                .and_then(|ms| check_instant("_id", Some(position), ms)),
        };
        instants.insert(id_key(id), instant);
    }
    instants
}

impl<G: GaplessGroups> NumberBatchMachine<G> {
    /// Asks for the local dates of the documents to walk (a sequence that resets), else walks.
    pub(super) fn date(&mut self) -> Result<Step<BatchReport>, SeqError> {
        if self.instants.is_empty() {
            return self.advance();
        }
        let mut asked = Vec::new();
        self.dating.clear();
        for document in &self.documents {
            let Some(key) = document.get("_id").map(id_key) else {
                continue;
            };
            if let Some(Ok(ms)) = self.instants.get(&key) {
                if !self.dating.contains(&key) {
                    asked.push(*ms);
                    self.dating.push(key);
                }
            }
        }
        if asked.is_empty() {
            return self.advance();
        }
        self.phase = Phase::Dates;
        Ok(Step::Command(dated::local_dates(
            self.numbering.sequence(),
            asked,
        )))
    }

    pub(super) fn on_dates(&mut self, reply: Reply) -> Result<Step<BatchReport>, SeqError> {
        let dating = std::mem::take(&mut self.dating);
        let periods = dated::periods_of(
            self.numbering.sequence(),
            reply,
            dating.len(),
            "date",
            |_| None,
        )?;
        for (key, period) in dating.into_iter().zip(periods) {
            match period {
                Ok(period) => {
                    self.periods.insert(key, period);
                }
                Err(error) => {
                    self.instants.insert(key, Err(error));
                }
            }
        }
        self.advance()
    }

    /// The counter of `document` (`_id` `id`): its scope's, in its period when the sequence
    /// resets.
    pub(super) fn counter_id_of(&self, document: &Value, id: &Value) -> Result<String, SeqError> {
        let sequence = self.numbering.sequence();
        if !sequence.reset().is_periodic() {
            return sequence.counter_id(Some(document));
        }
        let key = id_key(id);
        match (self.periods.get(&key), self.instants.get(&key)) {
            (Some(period), _) => sequence.counter_id_in(Some(document), Some(period)),
            (None, Some(Err(error))) => Err(error.clone()),
            (None, _) => Err(SeqError::unexpected_reply(
                "no local date was given for a document",
            )),
        }
    }
}
