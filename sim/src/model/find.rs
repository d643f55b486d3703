//! Projection and sort of `find`/`findOne`/`findAndModify` results.
//!
//! * Projection (<https://www.mongodb.com/docs/manual/tutorial/project-fields-from-query-results/>):
//!   inclusion (`{a: 1}`, `_id` kept unless `_id: 0`) or exclusion (`{a: 0}`), dotted paths
//!   into embedded documents; mixing both (other than `_id`) fails; expressions are outside the model.
//! * Sort (<https://www.mongodb.com/docs/manual/reference/method/cursor.sort/>): by the BSON
//!   comparison order; a missing field sorts as null; an array sorts by its smallest element
//!   ascending and its largest descending; ties keep the natural order.

use std::cmp::Ordering;

use bson::{Bson, Document};

use super::error::ModelError;
use super::query::values_at;
use super::value::compare;

/// Applies an inclusion or exclusion projection.
pub fn project(document: &Document, projection: &Document) -> Result<Document, ModelError> {
    let mut include = None;
    let mut keep_id = true;
    for (path, flag) in projection {
        let on = match flag {
            Bson::Int32(n) => *n != 0,
            Bson::Int64(n) => *n != 0,
            Bson::Double(f) => *f != 0.0,
            Bson::Boolean(b) => *b,
            _ => {
                return Err(ModelError::unsupported(format!(
                    "projection expression for {path}"
                )))
            }
        };
        if path == "_id" {
            keep_id = on;
            continue;
        }
        match include {
            None => include = Some(on),
            Some(mode) if mode != on => {
                return Err(ModelError::server(
                    31254,
                    "Location31254",
                    "Cannot do exclusion on field in inclusion projection",
                ))
            }
            Some(_) => {}
        }
    }
    let mut out = Document::new();
    match include {
        Some(true) => {
            for (key, value) in document {
                if key == "_id" {
                    if keep_id {
                        out.insert(key, value.clone());
                    }
                    continue;
                }
                let wanted: Vec<&str> = projection
                    .keys()
                    .filter(|p| p.as_str() != "_id")
                    .filter_map(|p| {
                        if p == key {
                            Some("")
                        } else {
                            p.strip_prefix(key.as_str())
                                .and_then(|r| r.strip_prefix('.'))
                        }
                    })
                    .collect();
                if wanted.contains(&"") {
                    out.insert(key, value.clone());
                } else if !wanted.is_empty() {
                    if let Bson::Document(inner) = value {
                        let mut sub = Document::new();
                        for rest in wanted {
                            sub.insert(rest, 1);
                        }
                        sub.insert("_id", 0);
                        let projected = project(inner, &sub)?;
                        out.insert(key, projected);
                    }
                }
            }
        }
        _ => {
            // Exclusion (or only `_id` named).
            for (key, value) in document {
                if key == "_id" && !keep_id {
                    continue;
                }
                if projection.get(key).is_some() && key != "_id" {
                    continue;
                }
                out.insert(key, value.clone());
            }
        }
    }
    Ok(out)
}

/// The key a document sorts by for one field.
fn sort_key(document: &Document, path: &str, ascending: bool) -> Bson {
    let values = values_at(document, path);
    let mut candidates: Vec<&Bson> = Vec::new();
    for value in &values {
        match value {
            Bson::Array(items) if !items.is_empty() => candidates.extend(items.iter()),
            other => candidates.push(other),
        }
    }
    let best = candidates.into_iter().reduce(|a, b| {
        let order = compare(a, b);
        if (order == Ordering::Greater) == ascending {
            b
        } else {
            a
        }
    });
    best.cloned().unwrap_or(Bson::Null)
}

/// Sorts documents (stable: ties keep their order).
pub fn sort(documents: &mut [Document], spec: &Document) -> Result<(), ModelError> {
    let mut keys = Vec::new();
    for (path, direction) in spec {
        let ascending = match direction {
            Bson::Int32(1) | Bson::Int64(1) => true,
            Bson::Int32(-1) | Bson::Int64(-1) => false,
            Bson::Double(f) if *f == 1.0 => true,
            Bson::Double(f) if *f == -1.0 => false,
            other => return Err(ModelError::unsupported(format!("sort direction {other}"))),
        };
        keys.push((path.clone(), ascending));
    }
    documents.sort_by(|a, b| {
        for (path, ascending) in &keys {
            let order = compare(
                &sort_key(a, path, *ascending),
                &sort_key(b, path, *ascending),
            );
            let order = if *ascending { order } else { order.reverse() };
            if order != Ordering::Equal {
                return order;
            }
        }
        Ordering::Equal
    });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use bson::doc;

    #[test]
    fn inclusion_keeps_id_and_dotted_paths() {
        let d = doc! {"_id": 1, "seq": 5, "t": {"a": 1, "b": 2}, "x": 3};
        assert_eq!(
            project(&d, &doc! {"seq": 1}).unwrap(),
            doc! {"_id": 1, "seq": 5}
        );
        assert_eq!(
            project(&d, &doc! {"_id": 1, "t.b": 1}).unwrap(),
            doc! {"_id": 1, "t": {"b": 2}}
        );
        assert_eq!(
            project(&d, &doc! {"_id": 0, "x": 1}).unwrap(),
            doc! {"x": 3}
        );
        assert_eq!(
            project(&d, &doc! {"t": 0, "x": 0}).unwrap(),
            doc! {"_id": 1, "seq": 5}
        );
        assert!(project(&d, &doc! {"t": 0, "x": 1}).is_err());
    }

    #[test]
    fn sort_puts_missing_first_ascending_and_last_descending() {
        let mut docs = vec![
            doc! {"_id": 1, "e": 3},
            doc! {"_id": 2},
            doc! {"_id": 3, "e": 7},
        ];
        sort(&mut docs, &doc! {"e": -1}).unwrap();
        let ids: Vec<i32> = docs.iter().map(|d| d.get_i32("_id").unwrap()).collect();
        assert_eq!(ids, vec![3, 1, 2]);
        sort(&mut docs, &doc! {"e": 1}).unwrap();
        let ids: Vec<i32> = docs.iter().map(|d| d.get_i32("_id").unwrap()).collect();
        assert_eq!(ids, vec![2, 1, 3]);
    }
}
