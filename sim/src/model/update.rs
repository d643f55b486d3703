//! Update operators the product emits — `$set`, `$setOnInsert`, `$unset`, `$inc`, `$max`, `$min`,
//! `$push` (a value or `$each`), `$pull` (a value or a condition on array elements) — and the document
//! an upsert inserts. Anything else (a replacement document, other operators,
//! positional paths) is `Unsupported`.
//!
//! From the manual (<https://www.mongodb.com/docs/manual/reference/operator/update/>):
//! * `$inc` on a missing field sets it; on a non-numeric value fails (TypeMismatch, 14); int32
//!   overflow widens to int64 (<https://www.mongodb.com/docs/manual/reference/operator/update/inc/>);
//! * `$max`/`$min` set the field when it is missing or the operand is greater/less in the BSON
//!   comparison order (<https://www.mongodb.com/docs/manual/reference/operator/update/max/>);
//! * `$push` appends (each of `$each`'s values) to an array, creating it when missing; a field
//!   that is not an array fails (BadValue, 2)
//!   (<https://www.mongodb.com/docs/manual/reference/operator/update/push/>);
//! * `$pull` removes the array's elements equal to the operand, or, for a condition document,
//!   the elements it matches as a query (a document element) or as a condition on the value;
//!   a missing field is left alone (<https://www.mongodb.com/docs/manual/reference/operator/update/pull/>);
//! * dotted paths create embedded documents; a path through a non-document fails
//!   (PathNotViable, 28); two operators on the same or nested paths fail
//!   (ConflictingUpdateOperators, 40); `_id` cannot change (ImmutableField, 66);
//! * an upsert inserts the equality conditions of the filter (top level and inside `$and`), then
//!   applies the update (<https://www.mongodb.com/docs/manual/reference/method/db.collection.updateOne/#upsert-with-dotted-_id-query>);
//! * `$setOnInsert` sets its fields only when an upsert inserts, and does nothing to a document
//!   that matched (<https://www.mongodb.com/docs/manual/reference/operator/update/setOnInsert/>).

use std::cmp::Ordering;

use bson::{Bson, Document};

use super::error::{code, ModelError};
use super::value::{compare, equal, number, Num};

const OPERATORS: [&str; 8] = [
    "$set",
    "$setOnInsert",
    "$unset",
    "$inc",
    "$max",
    "$min",
    "$push",
    "$pull",
];

/// Applies `update` to `document` (a document that matched) in place.
pub fn apply(document: &mut Document, update: &Document) -> Result<(), ModelError> {
    apply_as(document, update, false)
}

/// Applies `update` to the document an upsert inserts (`$setOnInsert` included).
pub fn apply_inserting(document: &mut Document, update: &Document) -> Result<(), ModelError> {
    apply_as(document, update, true)
}

fn apply_as(document: &mut Document, update: &Document, inserting: bool) -> Result<(), ModelError> {
    if update.is_empty() {
        return Err(ModelError::server(
            code::FAILED_TO_PARSE,
            "FailedToParse",
            "update document is empty",
        ));
    }
    let mut paths: Vec<String> = Vec::new();
    for (operator, fields) in update {
        if !OPERATORS.contains(&operator.as_str()) {
            return Err(if operator.starts_with('$') {
                ModelError::unsupported(format!("update operator {operator}"))
            } else {
                ModelError::unsupported("a replacement document")
            });
        }
        let Bson::Document(fields) = fields else {
            return Err(ModelError::server(
                code::FAILED_TO_PARSE,
                "FailedToParse",
                format!("{operator} needs a document"),
            ));
        };
        for path in fields.keys() {
            if path.split('.').any(|p| p.is_empty() || p.starts_with('$')) {
                return Err(ModelError::unsupported(format!("update path {path:?}")));
            }
            if paths.iter().any(|p| overlaps(p, path)) {
                return Err(ModelError::server(
                    code::CONFLICTING_UPDATE_OPERATORS,
                    "ConflictingUpdateOperators",
                    format!("updating the path '{path}' would create a conflict"),
                ));
            }
            paths.push(path.clone());
        }
    }
    for (operator, fields) in update {
        let Bson::Document(fields) = fields else {
            continue;
        };
        if operator == "$setOnInsert" && !inserting {
            continue;
        }
        for (path, operand) in fields {
            apply_one(document, operator, path, operand)?;
        }
    }
    Ok(())
}

fn overlaps(a: &str, b: &str) -> bool {
    a == b
        || a.strip_prefix(b).is_some_and(|rest| rest.starts_with('.'))
        || b.strip_prefix(a).is_some_and(|rest| rest.starts_with('.'))
}

fn apply_one(
    document: &mut Document,
    operator: &str,
    path: &str,
    operand: &Bson,
) -> Result<(), ModelError> {
    let current = get(document, path)?.cloned();
    let new = match operator {
        "$set" | "$setOnInsert" => Some(operand.clone()),
        "$unset" => {
            if current.is_some() {
                check_id(path, None, current.as_ref())?;
                unset(document, path);
            }
            return Ok(());
        }
        "$inc" => Some(increment(current.as_ref(), operand, path)?),
        "$max" | "$min" => {
            let wanted = if operator == "$max" {
                Ordering::Greater
            } else {
                Ordering::Less
            };
            match &current {
                Some(value) if compare(operand, value) != wanted => None,
                _ => Some(operand.clone()),
            }
        }
        "$push" => Some(push(current.as_ref(), operand, path)?),
        "$pull" => match &current {
            None => None,
            Some(Bson::Array(items)) => {
                let mut kept = Vec::with_capacity(items.len());
                for item in items {
                    if !pulled(item, operand)? {
                        kept.push(item.clone());
                    }
                }
                Some(Bson::Array(kept))
            }
            Some(other) => {
                return Err(ModelError::server(
                    code::BAD_VALUE,
                    "BadValue",
                    format!(
                        "Cannot apply $pull to a non-array value ({})",
                        type_name(other)
                    ),
                ))
            }
        },
        _ => {
            return Err(ModelError::unsupported(format!(
                "update operator {operator}"
            )))
        }
    };
    if let Some(new) = new {
        check_id(path, Some(&new), current.as_ref())?;
        set(document, path, new)?;
    }
    Ok(())
}

/// `$push`: the array with `operand` (or each of its `$each`) appended.
fn push(current: Option<&Bson>, operand: &Bson, path: &str) -> Result<Bson, ModelError> {
    let mut items = match current {
        None => Vec::new(),
        Some(Bson::Array(items)) => items.clone(),
        Some(other) => {
            return Err(ModelError::server(
                code::BAD_VALUE,
                "BadValue",
                format!(
                    "The field '{path}' must be an array but is of type {}",
                    type_name(other)
                ),
            ))
        }
    };
    match operand {
        Bson::Document(modifiers) if modifiers.keys().any(|k| k.starts_with('$')) => {
            if modifiers.len() != 1 {
                return Err(ModelError::unsupported("$push modifiers other than $each"));
            }
            match modifiers.get("$each") {
                Some(Bson::Array(each)) => items.extend(each.iter().cloned()),
                _ => return Err(ModelError::unsupported("$push modifiers other than $each")),
            }
        }
        value => items.push(value.clone()),
    }
    Ok(Bson::Array(items))
}

/// Whether `$pull`'s `operand` removes `item`.
fn pulled(item: &Bson, operand: &Bson) -> Result<bool, ModelError> {
    match operand {
        // A condition on the value (`{$in: […]}`) or a query on a document element.
        Bson::Document(condition) if condition.keys().all(|k| k.starts_with('$')) => {
            super::query::matches_condition(&[item], operand)
        }
        Bson::Document(query) => match item {
            Bson::Document(element) => super::query::matches(element, query),
            _ => Ok(false),
        },
        value => Ok(equal(item, value)),
    }
}

/// `_id` never changes once a document exists.
fn check_id(path: &str, new: Option<&Bson>, current: Option<&Bson>) -> Result<(), ModelError> {
    let is_id = path == "_id" || path.starts_with("_id.");
    let same = matches!((new, current), (Some(n), Some(c)) if equal(n, c) && std::mem::discriminant(n) == std::mem::discriminant(c));
    if is_id && current.is_some() && !same {
        return Err(ModelError::server(
            code::IMMUTABLE_FIELD,
            "ImmutableField",
            "Performing an update on the path '_id' would modify the immutable field '_id'",
        ));
    }
    Ok(())
}

fn increment(current: Option<&Bson>, operand: &Bson, path: &str) -> Result<Bson, ModelError> {
    let Some(by) = number(operand) else {
        return Err(ModelError::type_mismatch(format!(
            "Cannot increment with non-numeric argument: {{{path}: {operand}}}"
        )));
    };
    let Some(current) = current else {
        return Ok(operand.clone());
    };
    let Some(now) = number(current) else {
        return Err(ModelError::type_mismatch(format!(
            "Cannot apply $inc to a value of non-numeric type. {{_id: …}} has the field '{path}' of non-numeric type {}",
            type_name(current)
        )));
    };
    let overflow = || {
        ModelError::bad_value(format!(
            "Failed to apply $inc operations to current value ({current}): overflow"
        ))
    };
    Ok(match (now, by) {
        (Num::Float(a), b) => Bson::Double(a + as_f64(b)),
        (a, Num::Float(b)) => Bson::Double(as_f64(a) + b),
        (Num::Int(a), Num::Int(b)) => {
            let sum = a.checked_add(b).ok_or_else(overflow)?;
            match (current, operand) {
                (Bson::Int32(_), Bson::Int32(_)) => match i32::try_from(sum) {
                    Ok(small) => Bson::Int32(small),
                    Err(_) => Bson::Int64(sum),
                },
                _ => Bson::Int64(sum),
            }
        }
    })
}

#[allow(clippy::cast_precision_loss)]
fn as_f64(n: Num) -> f64 {
    match n {
        Num::Int(i) => i as f64,
        Num::Float(f) => f,
    }
}

fn type_name(value: &Bson) -> &'static str {
    match value {
        Bson::String(_) => "string",
        Bson::Document(_) => "object",
        Bson::Array(_) => "array",
        Bson::Null => "null",
        Bson::Boolean(_) => "bool",
        _ => "other",
    }
}

/// The value at a dotted path through embedded documents (an array on the way is outside the
/// product's updates).
pub fn get<'a>(document: &'a Document, path: &str) -> Result<Option<&'a Bson>, ModelError> {
    let mut parts = path.split('.');
    let Some(first) = parts.next() else {
        return Ok(None);
    };
    let mut current = match document.get(first) {
        Some(value) => value,
        None => return Ok(None),
    };
    for part in parts {
        current = match current {
            Bson::Document(inner) => match inner.get(part) {
                Some(value) => value,
                None => return Ok(None),
            },
            Bson::Array(_) => {
                return Err(ModelError::unsupported(format!(
                    "an update path through an array ({path})"
                )))
            }
            _ => return Ok(None),
        };
    }
    Ok(Some(current))
}

/// Sets a dotted path, creating embedded documents.
pub fn set(document: &mut Document, path: &str, value: Bson) -> Result<(), ModelError> {
    match path.split_once('.') {
        None => {
            document.insert(path, value);
            Ok(())
        }
        Some((head, rest)) => {
            if !document.contains_key(head) {
                document.insert(head, Document::new());
            }
            match document.get_mut(head) {
                Some(Bson::Document(inner)) => set(inner, rest, value),
                Some(Bson::Array(_)) => Err(ModelError::unsupported(format!(
                    "an update path through an array ({path})"
                ))),
                _ => Err(ModelError::server(
                    code::PATH_NOT_VIABLE,
                    "PathNotViable",
                    format!("Cannot create field '{rest}' in element {{{head}: …}}"),
                )),
            }
        }
    }
}

fn unset(document: &mut Document, path: &str) {
    match path.split_once('.') {
        None => {
            document.remove(path);
        }
        Some((head, rest)) => {
            if let Some(Bson::Document(inner)) = document.get_mut(head) {
                unset(inner, rest);
            }
        }
    }
}

/// The document an upsert starts from: the filter's equality conditions.
pub fn upsert_base(filter: &Document) -> Result<Document, ModelError> {
    let mut base = Document::new();
    add_equalities(&mut base, filter)?;
    Ok(base)
}

fn add_equalities(base: &mut Document, filter: &Document) -> Result<(), ModelError> {
    for (key, condition) in filter {
        match key.as_str() {
            "$and" => {
                if let Bson::Array(clauses) = condition {
                    for clause in clauses {
                        if let Bson::Document(clause) = clause {
                            add_equalities(base, clause)?;
                        }
                    }
                }
            }
            k if k.starts_with('$') => {}
            path => {
                let value = match condition {
                    Bson::Document(ops)
                        if ops.keys().next().is_some_and(|k| k.starts_with('$')) =>
                    {
                        ops.get("$eq").cloned()
                    }
                    value => Some(value.clone()),
                };
                if let Some(value) = value {
                    set(base, path, value)?;
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use bson::doc;

    fn updated(mut document: Document, update: Document) -> Result<Document, ModelError> {
        apply(&mut document, &update).map(|()| document)
    }

    #[test]
    fn set_on_insert_sets_only_when_an_upsert_inserts() {
        let update = doc! {"$inc": {"seq": 1_i64}, "$setOnInsert": {"definitionDigest": "d"}};
        assert_eq!(
            updated(doc! {"_id": "c", "seq": 4_i64}, update.clone()).unwrap(),
            doc! {"_id": "c", "seq": 5_i64}
        );
        let mut inserted = upsert_base(&doc! {"_id": "c", "definitionDigest": "d"}).unwrap();
        apply_inserting(&mut inserted, &update).unwrap();
        assert_eq!(
            inserted,
            doc! {"_id": "c", "definitionDigest": "d", "seq": 1_i64}
        );
        // Still one operator per path.
        assert!(updated(
            doc! {"_id": "c"},
            doc! {"$set": {"n": 1}, "$setOnInsert": {"n": 2}}
        )
        .is_err());
    }

    #[test]
    fn inc_widens_and_refuses_non_numbers() {
        assert_eq!(
            updated(doc! {"n": i32::MAX}, doc! {"$inc": {"n": 1}}).unwrap(),
            doc! {"n": i64::from(i32::MAX) + 1}
        );
        assert_eq!(
            updated(doc! {}, doc! {"$inc": {"n": 5_i64}}).unwrap(),
            doc! {"n": 5_i64}
        );
        assert_eq!(
            updated(doc! {"n": "x"}, doc! {"$inc": {"n": 1}})
                .unwrap_err()
                .code(),
            Some(14)
        );
        assert_eq!(
            updated(doc! {"n": i64::MAX}, doc! {"$inc": {"n": 1}})
                .unwrap_err()
                .code(),
            Some(2)
        );
    }

    #[test]
    fn max_min_follow_the_bson_order() {
        assert_eq!(
            updated(doc! {"seq": 5_i64}, doc! {"$max": {"seq": 3_i64}}).unwrap(),
            doc! {"seq": 5_i64}
        );
        assert_eq!(
            updated(doc! {"seq": 5_i64}, doc! {"$max": {"seq": 9_i64}}).unwrap(),
            doc! {"seq": 9_i64}
        );
        assert_eq!(
            updated(doc! {}, doc! {"$min": {"seq": -3_i64}}).unwrap(),
            doc! {"seq": -3_i64}
        );
        // A string sorts above every number: `$max` with a number leaves it.
        assert_eq!(
            updated(doc! {"seq": "a"}, doc! {"$max": {"seq": 9_i64}}).unwrap(),
            doc! {"seq": "a"}
        );
    }

    #[test]
    fn paths_conflicts_and_id() {
        assert_eq!(
            updated(
                doc! {"_id": 1},
                doc! {"$set": {"lease.owner": "a", "lease.epoch": 2}}
            )
            .unwrap(),
            doc! {"_id": 1, "lease": {"owner": "a", "epoch": 2}}
        );
        assert_eq!(
            updated(doc! {"a": 1}, doc! {"$set": {"a.b": 1}})
                .unwrap_err()
                .code(),
            Some(28)
        );
        assert_eq!(
            updated(doc! {}, doc! {"$set": {"a": 1}, "$unset": {"a.b": ""}})
                .unwrap_err()
                .code(),
            Some(40)
        );
        assert_eq!(
            updated(doc! {"_id": 1}, doc! {"$set": {"_id": 2}})
                .unwrap_err()
                .code(),
            Some(66)
        );
        assert_eq!(
            updated(
                doc! {"_id": 1, "intent": {"a": 1}, "seq": 1},
                doc! {"$set": {"seq": 4}, "$unset": {"intent": ""}}
            )
            .unwrap(),
            doc! {"_id": 1, "seq": 4}
        );
        assert!(matches!(
            updated(doc! {}, doc! {"a": 1}),
            Err(ModelError::Unsupported(_))
        ));
        assert!(matches!(
            updated(doc! {}, doc! {"$addToSet": {"a": 1}}),
            Err(ModelError::Unsupported(_))
        ));
    }

    #[test]
    fn push_and_pull() {
        let pushed = updated(
            doc! {},
            doc! {"$push": {"s.r": {"$each": [{"_id": 1}, {"_id": 2}]}}},
        )
        .unwrap();
        assert_eq!(pushed, doc! {"s": {"r": [{"_id": 1}, {"_id": 2}]}});
        let again = updated(pushed, doc! {"$push": {"s.r": {"_id": 3}}}).unwrap();
        assert_eq!(
            again,
            doc! {"s": {"r": [{"_id": 1}, {"_id": 2}, {"_id": 3}]}}
        );
        let pulled = updated(again, doc! {"$pull": {"s.r": {"_id": {"$in": [1, 3]}}}}).unwrap();
        assert_eq!(pulled, doc! {"s": {"r": [{"_id": 2}]}});
        assert_eq!(updated(doc! {}, doc! {"$pull": {"x": 1}}).unwrap(), doc! {});
        assert!(updated(doc! {"x": 1}, doc! {"$push": {"x": 1}}).is_err());
    }

    #[test]
    fn upsert_takes_the_equalities() {
        let base = upsert_base(&doc! {"_id": "c", "seq": {"$type": ["int", "long"], "$lte": 5}, "lease": {"$exists": false}}).unwrap();
        assert_eq!(base, doc! {"_id": "c"});
        let base = upsert_base(&doc! {"$and": [{"_id": "c"}, {"k": {"$eq": 2}}]}).unwrap();
        assert_eq!(base, doc! {"_id": "c", "k": 2});
    }
}
