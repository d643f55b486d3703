//! One collection of one node: its documents in natural (insertion) order, the unique `_id`
//! index, and the unique secondary indexes with their partial filters.
//!
//! Unique indexes (<https://www.mongodb.com/docs/manual/core/index-unique/>): a document
//! whose key equals another's is refused (DuplicateKey, 11000), keys compared by value (5 and
//! 5.0 collide); a missing field indexes as null; an array field indexes each element
//! (multikey), two array fields in one compound key fail (171). Partial indexes
//! (<https://www.mongodb.com/docs/manual/core/index-partial/>) index only the documents that
//! match their `partialFilterExpression`, so uniqueness holds among those only. Creating a
//! unique index over documents that already collide fails with 11000 and creates nothing.

use std::collections::{BTreeMap, HashMap};

use bson::{Bson, Document};

use super::error::{code, ModelError};
use super::query::{matches, values_at};
use super::value::key;

/// An index as `createIndexes` describes it.
#[derive(Debug, Clone, PartialEq)]
pub struct IndexSpec {
    pub name: String,
    pub keys: Vec<(String, i32)>,
    pub unique: bool,
    pub partial: Option<Document>,
}

#[derive(Debug, Clone)]
struct Index {
    spec: IndexSpec,
    /// Key text → record (unique indexes only).
    entries: HashMap<String, u64>,
}

/// A collection's data on one node.
#[derive(Debug, Clone, Default)]
pub struct Collection {
    docs: BTreeMap<u64, Document>,
    by_id: HashMap<String, u64>,
    indexes: Vec<Index>,
    next_record: u64,
}

/// The key text of a document's `_id`.
pub fn id_key(document: &Document) -> Option<String> {
    document.get("_id").map(key)
}

impl Collection {
    pub fn len(&self) -> usize {
        self.docs.len()
    }

    pub fn is_empty(&self) -> bool {
        self.docs.is_empty()
    }

    /// Documents in natural order.
    pub fn documents(&self) -> impl Iterator<Item = &Document> {
        self.docs.values()
    }

    pub fn indexes(&self) -> impl Iterator<Item = &IndexSpec> {
        self.indexes.iter().map(|i| &i.spec)
    }

    /// Records of the documents matching `filter`, in natural order.
    pub fn matching(&self, filter: &Document) -> Result<Vec<u64>, ModelError> {
        let mut out = Vec::new();
        for (record, document) in &self.docs {
            if matches(document, filter)? {
                out.push(*record);
            }
        }
        Ok(out)
    }

    pub fn get(&self, record: u64) -> Option<&Document> {
        self.docs.get(&record)
    }

    pub fn by_id(&self, id: &Bson) -> Option<&Document> {
        self.by_id.get(&key(id)).and_then(|r| self.docs.get(r))
    }

    pub fn record_of(&self, id: &Bson) -> Option<u64> {
        self.by_id.get(&key(id)).copied()
    }

    /// The unique keys `document` has in index `spec` (none when the partial filter excludes it).
    fn index_keys(spec: &IndexSpec, document: &Document) -> Result<Vec<String>, ModelError> {
        if let Some(partial) = &spec.partial {
            if !matches(document, partial)? {
                return Ok(Vec::new());
            }
        }
        let mut per_field: Vec<Vec<String>> = Vec::new();
        let mut arrays = 0;
        for (path, _) in &spec.keys {
            let values = values_at(document, path);
            let mut keys = Vec::new();
            let mut multikey = values.len() > 1;
            for value in &values {
                match value {
                    Bson::Array(items) => {
                        multikey = true;
                        if items.is_empty() {
                            keys.push(key(&Bson::Undefined));
                        }
                        keys.extend(items.iter().map(key));
                    }
                    other => keys.push(key(other)),
                }
            }
            if values.is_empty() {
                keys.push(key(&Bson::Null));
            }
            if multikey {
                arrays += 1;
            }
            keys.sort();
            keys.dedup();
            per_field.push(keys);
        }
        if arrays > 1 {
            return Err(ModelError::server(
                code::CANNOT_INDEX_PARALLEL_ARRAYS,
                "CannotIndexParallelArrays",
                format!("cannot index parallel arrays ({})", spec.name),
            ));
        }
        let mut combined = vec![String::new()];
        for keys in per_field {
            combined = combined
                .iter()
                .flat_map(|prefix| keys.iter().map(move |k| format!("{prefix}|{k}")))
                .collect();
        }
        Ok(combined)
    }

    fn duplicate(spec: &IndexSpec, document: &Document) -> ModelError {
        let id = document
            .get("_id")
            .map(ToString::to_string)
            .unwrap_or_default();
        ModelError::duplicate_key(
            format!(
                "E11000 duplicate key error index: {} dup key (document _id {id})",
                spec.name
            ),
            spec.keys.iter().map(|(key, _)| key.clone()).collect(),
        )
    }

    /// Checks `document` (as record `record`) against every unique index.
    fn check(&self, record: u64, document: &Document) -> Result<Vec<Vec<String>>, ModelError> {
        let id = document.get("_id").ok_or_else(|| {
            ModelError::unsupported("a document without _id reached the collection")
        })?;
        if matches!(id, Bson::Array(_)) {
            return Err(ModelError::bad_value("can't use an array for _id"));
        }
        if let Some(other) = self.by_id.get(&key(id)) {
            if *other != record {
                return Err(ModelError::duplicate_key(
                    format!("E11000 duplicate key error index: _id_ dup key: {{ _id: {id} }}"),
                    vec!["_id".to_owned()],
                ));
            }
        }
        let mut all = Vec::new();
        for index in &self.indexes {
            let keys = Self::index_keys(&index.spec, document)?;
            if index.spec.unique {
                for k in &keys {
                    if index.entries.get(k).is_some_and(|r| *r != record) {
                        return Err(Self::duplicate(&index.spec, document));
                    }
                }
            }
            all.push(keys);
        }
        Ok(all)
    }

    fn unindex(&mut self, record: u64) {
        let Some(document) = self.docs.get(&record).cloned() else {
            return;
        };
        if let Some(id) = id_key(&document) {
            self.by_id.remove(&id);
        }
        for index in &mut self.indexes {
            index.entries.retain(|_, r| *r != record);
        }
    }

    fn store(&mut self, record: u64, document: Document, keys: Vec<Vec<String>>) {
        if let Some(id) = id_key(&document) {
            self.by_id.insert(id, record);
        }
        for (index, keys) in self.indexes.iter_mut().zip(keys) {
            if index.spec.unique {
                for k in keys {
                    index.entries.insert(k, record);
                }
            }
        }
        self.docs.insert(record, document);
    }

    /// Inserts a new document (it must have an `_id`).
    pub fn insert(&mut self, document: Document) -> Result<u64, ModelError> {
        let record = self.next_record;
        let keys = self.check(record, &document)?;
        self.next_record += 1;
        self.store(record, document, keys);
        Ok(record)
    }

    /// Replaces the document of `record` (its `_id` is unchanged by the caller).
    pub fn replace(&mut self, record: u64, document: Document) -> Result<(), ModelError> {
        let keys = self.check(record, &document)?;
        self.unindex(record);
        self.store(record, document, keys);
        Ok(())
    }

    pub fn remove(&mut self, record: u64) -> Option<Document> {
        self.unindex(record);
        self.docs.remove(&record)
    }

    /// Puts a document as the oplog says it is now (insert or replace by `_id`).
    pub fn put(&mut self, document: Document) -> Result<(), ModelError> {
        let record = document.get("_id").and_then(|id| self.record_of(id));
        match record {
            Some(record) => self.replace(record, document),
            None => self.insert(document).map(|_| ()),
        }
    }

    /// Creates an index; `Ok(false)` when the same index exists already.
    pub fn create_index(&mut self, spec: IndexSpec) -> Result<bool, ModelError> {
        if let Some(existing) = self.indexes.iter().find(|i| i.spec.name == spec.name) {
            if existing.spec == spec {
                return Ok(false);
            }
            return Err(ModelError::server(
                86,
                "IndexKeySpecsConflict",
                format!("an index named {} exists with different options", spec.name),
            ));
        }
        let mut entries = HashMap::new();
        for (record, document) in &self.docs {
            for k in Self::index_keys(&spec, document)? {
                if spec.unique && entries.insert(k, *record).is_some() {
                    return Err(Self::duplicate(&spec, document));
                }
            }
        }
        self.indexes.push(Index { spec, entries });
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bson::doc;

    fn numbered_index() -> IndexSpec {
        IndexSpec {
            name: "mongo_seq_n".into(),
            keys: vec![("t".into(), 1), ("n".into(), 1)],
            unique: true,
            partial: Some(doc! {"n": {"$exists": true}}),
        }
    }

    #[test]
    fn unique_partial_index_ignores_documents_without_the_field() {
        let mut c = Collection::default();
        c.create_index(numbered_index()).unwrap();
        c.insert(doc! {"_id": 1, "t": "a"}).unwrap();
        c.insert(doc! {"_id": 2, "t": "a"}).unwrap();
        c.insert(doc! {"_id": 3, "t": "a", "n": 5}).unwrap();
        c.insert(doc! {"_id": 4, "t": "b", "n": 5}).unwrap();
        let e = c.insert(doc! {"_id": 5, "t": "a", "n": 5.0}).unwrap_err();
        assert_eq!(e.code(), Some(11000));
        let record = c.record_of(&Bson::Int32(1)).unwrap();
        assert_eq!(
            c.replace(record, doc! {"_id": 1, "t": "a", "n": 5_i64})
                .unwrap_err()
                .code(),
            Some(11000)
        );
        c.replace(record, doc! {"_id": 1, "t": "a", "n": 6_i64})
            .unwrap();
        assert_eq!(c.insert(doc! {"_id": 1}).unwrap_err().code(), Some(11000));
    }

    #[test]
    fn building_an_index_over_duplicates_fails() {
        let mut c = Collection::default();
        c.insert(doc! {"_id": 1, "t": "a", "n": 5}).unwrap();
        c.insert(doc! {"_id": 2, "t": "a", "n": 5}).unwrap();
        assert_eq!(
            c.create_index(numbered_index()).unwrap_err().code(),
            Some(11000)
        );
        assert_eq!(c.indexes().count(), 0);
    }
}
