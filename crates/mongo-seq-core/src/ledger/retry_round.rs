//! A retry round of a trigger's dead letters, as the core decides it: which documents are tried
//! (those still of the series: numbered, or unnumbered and matching; [`crate::numbering::series`]),
//! which are gone (deleted, or unnumbered and no longer matching), and, once the batch over the
//! others ran ([`RetryBatch`](super::dead_letter::RetryBatch)), which are numbered (read back:
//! their document holds an integer now) and which wait on (recorded again, with the reason the
//! batch gave, or the one they had).
//!
//! The shell runs it: [`RetryRound::documents`] (one `find`), [`RetryRound::found`], the batch,
//! [`RetryRound::read_back`] (one `find`, when the batch left some unreported),
//! [`RetryRound::settled`]; then it records the waiting ones and resolves the others.

use std::collections::BTreeSet;

use serde_json::{json, Map, Value};

use crate::ejson;
use crate::ledger::dead_letter::{dead_letter_document, DeadLetter};
use crate::numbering::series::members_among;
use crate::numbering::spec::NumberingSpec;
use crate::protocol::command::{Collection, Command, QueryOptions};
use crate::sequence::field::stored_value;

/// One round over the dead letters waiting, as stored.
#[derive(Debug, Clone)]
pub struct RetryRound<'a> {
    stored: &'a [Value],
    /// The documents the dead letters are for.
    ids: Vec<Value>,
    /// Those found still of the series (`_id` as JSON text).
    found: BTreeSet<String>,
}

/// What became of the dead letters the batch did not record again.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Settled {
    /// Their document holds an integer now.
    pub numbered: Vec<Value>,
    /// Their document holds something else (a gapless batch drops it as already numbered):
    /// they wait on, with the reason they had.
    pub waiting: Vec<DeadLetter>,
}

impl<'a> RetryRound<'a> {
    /// The round over `stored` (the waiting dead letters, as read).
    pub fn new(stored: &'a [Value]) -> Self {
        Self {
            stored,
            ids: stored
                .iter()
                .filter_map(dead_letter_document)
                .cloned()
                .collect(),
            found: BTreeSet::new(),
        }
    }

    /// No dead letter names a document: nothing to do.
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// The documents of the dead letters still of the series numbered by `numbering` whose
    /// unnumbered documents match `matching`, with the fields the numbering reads.
    pub fn documents(&self, numbering: &NumberingSpec, matching: Option<&Value>) -> Command {
        let projection: Map<String, Value> = numbering
            .document_fields()
            .into_iter()
            .map(|field| (field, json!(1)))
            .collect();
        Command::Find {
            collection: Collection::Documents,
            filter: members_among(numbering.field(), matching, &self.ids),
            options: QueryOptions::projection(Value::Object(projection)),
            after_cluster_time: None,
        }
    }

    /// The documents [`Self::documents`] found: the dead letters of the others are gone.
    pub fn found(&mut self, found: &[Value]) -> Vec<Value> {
        self.found = found
            .iter()
            .filter_map(|d| d.get("_id").map(Value::to_string))
            .collect();
        self.ids
            .iter()
            .filter(|id| !self.found.contains(&id.to_string()))
            .cloned()
            .collect()
    }

    /// The documents found that the batch did not record again (`waiting`: its dead letters),
    /// read back for their number, when there are any: a document a gapless batch drops as
    /// already numbered may hold something else than a number.
    pub fn read_back(&self, numbering: &NumberingSpec, waiting: &[DeadLetter]) -> Option<Command> {
        let candidates = self.candidates(waiting);
        (!candidates.is_empty()).then(|| Command::Find {
            collection: Collection::Documents,
            filter: json!({ "_id": { "$in": candidates } }),
            options: QueryOptions::projection(json!({ "_id": 1, numbering.field(): 1 })),
            after_cluster_time: None,
        })
    }

    /// The dead letters of the documents [`Self::read_back`] read (`read`): numbered when
    /// their document holds an integer, else waiting on as they were.
    pub fn settled(
        &self,
        numbering: &NumberingSpec,
        waiting: &[DeadLetter],
        read: &[Value],
    ) -> Settled {
        let numbered: BTreeSet<String> = read
            .iter()
            .filter(|d| {
                stored_value(d, numbering.field()).is_some_and(|v| ejson::read_i64(v).is_ok())
            })
            .filter_map(|d| d.get("_id").map(Value::to_string))
            .collect();
        let mut settled = Settled::default();
        for id in self.candidates(waiting) {
            if numbered.contains(&id.to_string()) {
                settled.numbered.push(id);
            } else if let Some(letter) = self.stored.iter().find_map(|s| as_letter(s, &id)) {
                settled.waiting.push(letter);
            }
        }
        settled
    }

    /// The documents found whose dead letters the batch did not record again.
    fn candidates(&self, waiting: &[DeadLetter]) -> Vec<Value> {
        let still: BTreeSet<String> = waiting.iter().map(|l| l.id.to_string()).collect();
        self.ids
            .iter()
            .filter(|id| self.found.contains(&id.to_string()) && !still.contains(&id.to_string()))
            .cloned()
            .collect()
    }
}

/// The dead letter stored in `stored` when it is the one of the document `id`.
fn as_letter(stored: &Value, id: &Value) -> Option<DeadLetter> {
    (dead_letter_document(stored)? == id).then(|| DeadLetter {
        id: id.clone(),
        code: text(stored, "code"),
        reason: text(stored, "reason"),
    })
}

fn text(stored: &Value, key: &str) -> String {
    stored
        .get(key)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn numbering() -> NumberingSpec {
        NumberingSpec::from_json(&json!({"sequence": {"name": "s"}, "field": "n"})).unwrap()
    }

    fn stored(id: i64, code: &str) -> Value {
        json!({"_id": {"trigger": "t", "document": id}, "code": code, "reason": "why"})
    }

    #[test]
    fn a_round_reads_the_documents_still_of_the_series_and_the_others_are_gone() {
        let letters = [stored(1, "A"), stored(2, "B"), json!({"_id": "t"})];
        let mut round = RetryRound::new(&letters);
        assert!(!round.is_empty());
        let matching = json!({"status": "issued"});
        let Command::Find {
            collection,
            filter,
            options,
            ..
        } = round.documents(&numbering(), Some(&matching))
        else {
            panic!("not a find");
        };
        assert_eq!(collection, Collection::Documents);
        assert_eq!(
            filter,
            members_among("n", Some(&matching), &[json!(1), json!(2)])
        );
        assert_eq!(options.projection, Some(json!({"_id": 1, "n": 1})));
        assert_eq!(round.found(&[json!({"_id": 2})]), vec![json!(1)]);
        assert!(RetryRound::new(&[json!({"_id": "t"})]).is_empty());
    }

    #[test]
    fn a_document_not_recorded_again_is_numbered_when_it_holds_an_integer() {
        let letters = [stored(1, "A"), stored(2, "B"), stored(3, "C")];
        let mut round = RetryRound::new(&letters);
        round.found(&[json!({"_id": 1}), json!({"_id": 2}), json!({"_id": 3})]);
        let again = [DeadLetter {
            id: json!(3),
            code: "X".into(),
            reason: "still".into(),
        }];
        let Some(Command::Find { filter, .. }) = round.read_back(&numbering(), &again) else {
            panic!("no read-back");
        };
        assert_eq!(filter, json!({"_id": {"$in": [1, 2]}}));
        let read = [json!({"_id": 1, "n": 7}), json!({"_id": 2, "n": "x"})];
        assert_eq!(
            round.settled(&numbering(), &again, &read),
            Settled {
                numbered: vec![json!(1)],
                waiting: vec![DeadLetter {
                    id: json!(2),
                    code: "B".into(),
                    reason: "why".into(),
                }],
            }
        );
        let all_again: Vec<DeadLetter> = [1, 2, 3]
            .map(|id| DeadLetter {
                id: json!(id),
                code: "X".into(),
                reason: "r".into(),
            })
            .into();
        assert!(round.read_back(&numbering(), &all_again).is_none());
    }
}
