//! A backfill's reads: the documents a trigger has not numbered (that match its `match`), how
//! many (for its progress), and its pages, in `_id` order or in a sort field's then `_id`'s.
//! In `_id` order a page starts after the last `_id` of the one before; in a sort field's order
//! every page is the first of what is still unnumbered (a numbered document leaves the filter),
//! less the documents the batch passed (no scope value, no date). The sidecar runs the pages
//! and numbers each with the core's batch.

use serde_json::{json, Map, Value};

use crate::numbering::spec::NumberingSpec;
use crate::protocol::command::{Collection, Command, QueryOptions};

/// The reads of one backfill.
#[derive(Debug, Clone, PartialEq)]
pub struct BackfillReads {
    /// The unnumbered documents that match.
    filter: Value,
    /// What the numbering reads of each document.
    projection: Value,
    sort: Value,
    /// Pages are sorted by a field of the trigger's, then `_id` (not by `_id` alone).
    by_field: bool,
    page_size: u64,
}

impl BackfillReads {
    /// The backfill of the trigger numbering by `numbering` the documents matching `matching`
    /// (`None`: every one), in `sort_field` order then `_id` (`None`: `_id` alone), in pages of
    /// `page_size` documents.
    pub fn new(
        numbering: &NumberingSpec,
        matching: Option<&Map<String, Value>>,
        sort_field: Option<&str>,
        page_size: u64,
    ) -> Self {
        let filter = match matching {
            Some(m) => json!({ "$and": [numbering.unnumbered(), m] }),
            None => numbering.unnumbered(),
        };
        let projection: Map<String, Value> = numbering
            .document_fields()
            .into_iter()
            .map(|field| (field, json!(1)))
            .collect();
        let sort = match sort_field {
            Some(field) => {
                let mut sort = Map::new();
                sort.insert(field.to_owned(), json!(1));
                sort.insert("_id".to_owned(), json!(1));
                Value::Object(sort)
            }
            None => json!({ "_id": 1 }),
        };
        Self {
            filter,
            projection: Value::Object(projection),
            sort,
            by_field: sort_field.is_some(),
            page_size,
        }
    }

    /// How many documents are to be numbered (one `aggregate`, like the drivers'
    /// `countDocuments`): one document `{n}`, none when there are none.
    pub fn count(&self) -> Command {
        Command::Aggregate {
            collection: Collection::Documents,
            pipeline: vec![
                json!({ "$match": self.filter }),
                json!({ "$group": { "_id": 1, "n": { "$sum": 1 } } }),
            ],
        }
    }

    /// The next page: after `last_id` (the last `_id` of the page before, in `_id` order), or
    /// without the documents `passed` (in a sort field's order).
    pub fn page(&self, last_id: Option<&Value>, passed: &[Value]) -> Command {
        let filter = match (last_id, self.by_field) {
            (Some(id), false) => json!({ "$and": [self.filter, { "_id": { "$gt": id } }] }),
            (_, true) if !passed.is_empty() => {
                json!({ "$and": [self.filter, { "_id": { "$nin": passed } }] })
            }
            _ => self.filter.clone(),
        };
        Command::Find {
            collection: Collection::Documents,
            filter,
            options: QueryOptions {
                projection: Some(self.projection.clone()),
                sort: Some(self.sort.clone()),
                limit: Some(self.page_size),
                majority: false,
            },
            after_cluster_time: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn numbering() -> NumberingSpec {
        NumberingSpec::from_json(&json!({"sequence": {"name": "s"}, "field": "n"})).unwrap()
    }

    fn filter_and_sort(command: Command) -> (Value, Option<Value>) {
        let Command::Find {
            filter, options, ..
        } = command
        else {
            panic!("not a find");
        };
        (filter, options.sort)
    }

    #[test]
    fn pages_in_id_order_start_after_the_last_id() {
        let issued = json!({"status": "issued"});
        let reads = BackfillReads::new(&numbering(), issued.as_object(), None, 10);
        let unnumbered = json!({ "$and": [numbering().unnumbered(), issued] });
        assert_eq!(
            filter_and_sort(reads.page(None, &[json!(9)])),
            (unnumbered.clone(), Some(json!({"_id": 1})))
        );
        assert_eq!(
            filter_and_sort(reads.page(Some(&json!(4)), &[])).0,
            json!({ "$and": [unnumbered, { "_id": { "$gt": 4 } }] })
        );
        let Command::Aggregate { pipeline, .. } = reads.count() else {
            panic!("not an aggregate");
        };
        assert_eq!(pipeline.len(), 2);
    }

    #[test]
    fn pages_in_a_fields_order_leave_out_the_documents_passed() {
        let reads = BackfillReads::new(&numbering(), None, Some("issuedAt"), 10);
        let unnumbered = numbering().unnumbered();
        assert_eq!(
            filter_and_sort(reads.page(Some(&json!(4)), &[])),
            (unnumbered.clone(), Some(json!({"issuedAt": 1, "_id": 1})))
        );
        assert_eq!(
            filter_and_sort(reads.page(Some(&json!(4)), &[json!(2)])).0,
            json!({ "$and": [unnumbered, { "_id": { "$nin": [2] } }] })
        );
    }
}
