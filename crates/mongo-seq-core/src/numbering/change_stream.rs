//! The change stream a trigger reads: which events count (its inserts; numbering on match, its
//! updates and replaces too, less the trigger's own numbering writes; a gapless trigger's
//! deletes, whose numbers the ledger records) and what each event brings (the fields the
//! numbering reads, however large the documents are). The sidecar opens the aggregate
//! [`ChangeStream::pipeline`] gives; a simulator's model reads [`ChangeStream::filter`].

use serde_json::{json, Map, Value};

use crate::numbering::spec::NumberingSpec;

/// The prefix of the inserted, replacing or looked-up document in a change event.
const FULL_DOCUMENT: &str = "fullDocument";

/// A trigger's change stream, as its numbering and its `match` decide it.
#[derive(Debug, Clone, PartialEq)]
pub struct ChangeStream {
    /// The `$match` stage on change events (`operationType` and the trigger's `match` on
    /// `fullDocument.…`), Extended JSON.
    pub filter: Value,
    /// Update events bring the document as it is when the event is read
    /// (`fullDocument: "updateLookup"`), which the `filter` then sees.
    pub update_lookup: bool,
    /// Update events bring the document as their update left it, the post-image
    /// (`fullDocument: "required"`; MongoDB 6.0+, the collection's `changeStreamPreAndPostImages`
    /// enabled), which the `filter` then sees: documents come to match exactly in the order of
    /// their updates. Instead of [`Self::update_lookup`].
    pub post_images: bool,
    /// The paths of the document the numbering reads (`_id` among them): events bring only
    /// these in `fullDocument`, however large the documents are.
    pub fields: Vec<String>,
    /// When not empty: also `delete` events, with these paths of the document as it was before
    /// (`fullDocumentBeforeChange: "whenAvailable"`).
    pub deleted_fields: Vec<String>,
}

impl ChangeStream {
    /// The stream of a trigger numbering by `numbering` the documents matching `matching`
    /// (`None`: every one): its inserts, or with `on_match` the inserts, updates and replaces
    /// whose document (an update's looked up when the event is read) matches and has no number
    /// yet; with `record_deletions`, its deletes too. A looked-up document may be newer than
    /// its event, even a stale view on a real replica set: it only says which documents to try;
    /// every first number is written where the document still matches.
    pub fn of(
        numbering: &NumberingSpec,
        matching: Option<&Map<String, Value>>,
        on_match: bool,
        record_deletions: bool,
    ) -> Self {
        let operations = if on_match {
            json!({ "operationType": { "$in": ["insert", "update", "replace"] } })
        } else {
            json!({ "operationType": "insert" })
        };
        let mut stages = vec![operations];
        if let Some(m) = matching {
            stages.push(Value::Object(on_change_events(m, FULL_DOCUMENT)));
        }
        if on_match {
            // The trigger's own numbering writes are update events too: dropped here.
            stages.push(Value::Object(on_change_events(
                numbering.unnumbered().as_object().unwrap_or(&Map::new()),
                FULL_DOCUMENT,
            )));
        }
        let mut filter = match stages.len() {
            1 => stages.remove(0),
            _ => json!({ "$and": stages }),
        };
        // A gapless trigger also reads deletions, to record their numbers (the ledger).
        let deleted_fields = if record_deletions {
            let mut fields = numbering.document_fields();
            fields.push(numbering.period_field());
            filter = json!({ "$or": [filter, { "operationType": "delete" }] });
            fields
        } else {
            Vec::new()
        };
        Self {
            filter,
            update_lookup: on_match,
            post_images: false,
            fields: numbering.document_fields(),
            deleted_fields,
        }
    }

    /// The stream reading each update's post-image instead of looking the document up (numbering
    /// on match; a stream of inserts only is left as it is).
    pub fn with_post_images(mut self) -> Self {
        if self.update_lookup {
            self.update_lookup = false;
            self.post_images = true;
        }
        self
    }

    /// The `$changeStream` aggregate's pipeline, resuming after `start_after` (a resume token;
    /// from now without one): the stream's options, [`Self::filter`], and a `$project` keeping
    /// of each event its resume token, its cluster time (the lag), its wall time (a period) and
    /// the fields the numbering reads (a delete's: its `_id` and pre-image's).
    pub fn pipeline(&self, start_after: Option<&Value>) -> Vec<Value> {
        let mut stage = Map::new();
        if self.update_lookup {
            stage.insert("fullDocument".to_owned(), json!("updateLookup"));
        }
        if self.post_images {
            // `required`: a missing post-image (the option off, or expired) fails the stream
            // loudly instead of hiding the update from the `$match`.
            stage.insert("fullDocument".to_owned(), json!("required"));
        }
        if !self.deleted_fields.is_empty() {
            stage.insert(
                "fullDocumentBeforeChange".to_owned(),
                json!("whenAvailable"),
            );
        }
        if let Some(token) = start_after {
            stage.insert("startAfter".to_owned(), token.clone());
        }
        let mut project = Map::new();
        for kept in ["_id", "clusterTime", "wallTime"] {
            project.insert(kept.to_owned(), json!(1));
        }
        for field in &self.fields {
            project.insert(format!("{FULL_DOCUMENT}.{field}"), json!(1));
        }
        if !self.deleted_fields.is_empty() {
            project.insert("operationType".to_owned(), json!(1));
            project.insert("documentKey".to_owned(), json!(1));
            for field in &self.deleted_fields {
                project.insert(format!("fullDocumentBeforeChange.{field}"), json!(1));
            }
        }
        vec![
            json!({ "$changeStream": stage }),
            json!({ "$match": self.filter }),
            json!({ "$project": project }),
        ]
    }
}

/// Rewrites a query on document fields into one on the change event's `prefix` (field names
/// are prefixed; `$and`/`$or`/`$nor` are followed).
pub fn on_change_events(filter: &Map<String, Value>, prefix: &str) -> Map<String, Value> {
    let mut out = Map::new();
    for (key, value) in filter {
        if matches!(key.as_str(), "$and" | "$or" | "$nor") {
            let items = match value {
                Value::Array(items) => items
                    .iter()
                    .map(|item| match item {
                        Value::Object(inner) => Value::Object(on_change_events(inner, prefix)),
                        other => other.clone(),
                    })
                    .collect(),
                other => vec![other.clone()],
            };
            out.insert(key.clone(), Value::Array(items));
        } else if key.starts_with('$') {
            out.insert(key.clone(), value.clone());
        } else {
            out.insert(format!("{prefix}.{key}"), value.clone());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn numbering(options: Value) -> NumberingSpec {
        NumberingSpec::from_json(&options).unwrap()
    }

    fn object(value: Value) -> Map<String, Value> {
        value.as_object().cloned().unwrap()
    }

    #[test]
    fn a_match_is_rewritten_onto_the_events_document() {
        let m = object(json!({ "type": "invoice", "$or": [{ "a": 1 }, { "b.c": { "$gt": 2 } }] }));
        assert_eq!(
            Value::Object(on_change_events(&m, "fullDocument")),
            json!({ "fullDocument.type": "invoice", "$or": [{ "fullDocument.a": 1 }, { "fullDocument.b.c": { "$gt": 2 } }] })
        );
    }

    #[test]
    fn post_images_replace_the_lookup_of_a_stream_numbering_on_match() {
        let plain = numbering(json!({"sequence": {"name": "s"}, "field": "n"}));
        let issued = object(json!({ "status": "issued" }));
        let stream = ChangeStream::of(&plain, Some(&issued), true, false).with_post_images();
        assert!(stream.post_images && !stream.update_lookup);
        assert_eq!(
            stream.pipeline(None)[0],
            json!({ "$changeStream": { "fullDocument": "required" } })
        );
        // A stream of inserts has no update to bring a document for.
        let inserts = ChangeStream::of(&plain, None, false, false).with_post_images();
        assert!(!inserts.post_images && !inserts.update_lookup);
        assert_eq!(inserts.pipeline(None)[0], json!({ "$changeStream": {} }));
    }

    #[test]
    fn inserts_count_and_with_numbering_on_match_updates_less_its_own_writes() {
        let plain = numbering(json!({"sequence": {"name": "s"}, "field": "n"}));
        let stream = ChangeStream::of(&plain, None, false, false);
        assert_eq!(stream.filter, json!({ "operationType": "insert" }));
        assert!(!stream.update_lookup);
        assert_eq!(stream.fields, plain.document_fields());
        assert!(stream.deleted_fields.is_empty());

        let issued = object(json!({ "status": "issued" }));
        let stream = ChangeStream::of(&plain, Some(&issued), true, false);
        assert_eq!(
            stream.filter,
            json!({ "$and": [
                { "operationType": { "$in": ["insert", "update", "replace"] } },
                { "fullDocument.status": "issued" },
                Value::Object(on_change_events(plain.unnumbered().as_object().unwrap(), "fullDocument")),
            ] })
        );
        assert!(stream.update_lookup);
    }

    #[test]
    fn a_gapless_trigger_reads_deletes_with_the_period_field_of_their_pre_image() {
        let gapless = numbering(
            json!({"sequence": {"name": "s", "reset": "yearly"}, "field": "n", "gapless": true}),
        );
        let issued = object(json!({ "status": "issued" }));
        let stream = ChangeStream::of(&gapless, Some(&issued), false, true);
        assert_eq!(
            stream.filter,
            json!({ "$or": [
                { "$and": [{ "operationType": "insert" }, { "fullDocument.status": "issued" }] },
                { "operationType": "delete" },
            ] })
        );
        let mut deleted = gapless.document_fields();
        deleted.push("nPeriod".to_owned());
        assert_eq!(stream.deleted_fields, deleted);
    }

    #[test]
    fn the_pipeline_keeps_of_each_event_what_the_trigger_reads() {
        let plain = numbering(json!({"sequence": {"name": "s"}, "field": "n"}));
        let stream = ChangeStream::of(&plain, None, false, false);
        assert_eq!(
            stream.pipeline(None),
            vec![
                json!({ "$changeStream": {} }),
                json!({ "$match": { "operationType": "insert" } }),
                json!({ "$project": { "_id": 1, "clusterTime": 1, "wallTime": 1, "fullDocument._id": 1, "fullDocument.n": 1 } }),
            ]
        );
        let mut stream = ChangeStream::of(&plain, None, true, true);
        stream.fields = vec!["_id".to_owned()];
        stream.deleted_fields = vec!["n".to_owned()];
        let token = json!({ "_data": "82" });
        let pipeline = stream.pipeline(Some(&token));
        assert_eq!(
            pipeline.first(),
            Some(
                &json!({ "$changeStream": { "fullDocument": "updateLookup", "fullDocumentBeforeChange": "whenAvailable", "startAfter": { "_data": "82" } } })
            )
        );
        assert_eq!(
            pipeline.last(),
            Some(
                &json!({ "$project": { "_id": 1, "clusterTime": 1, "wallTime": 1, "fullDocument._id": 1, "operationType": 1, "documentKey": 1, "fullDocumentBeforeChange.n": 1 } })
            )
        );
    }
}
