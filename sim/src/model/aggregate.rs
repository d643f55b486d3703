//! Aggregation pipelines the product runs: `$match`, `$group` (with `$max`, `$min`, `$sum`),
//! `$sort`, `$limit`. Any other stage, accumulator or expression is `Unsupported`.
//!
//! * `$group` (<https://www.mongodb.com/docs/manual/reference/operator/aggregation/group/>):
//!   `_id` is a field path (`"$a.b"`), a constant, or a document of them (fields whose
//!   expression is missing are left out of the key). Output order is unspecified by the
//!   manual; the model yields groups in the order first met.
//! * `$max`/`$min` accumulators compare with the BSON order across types and ignore null and
//!   missing values (<https://www.mongodb.com/docs/manual/reference/operator/aggregation/max/>):
//!   a string in a number field sorts above every number.

use bson::{Bson, Document};

use super::error::ModelError;
use super::find::sort;
use super::query::matches;
use super::value::{compare, key, number, Num};

/// Runs `pipeline` over `documents`.
pub fn run(documents: Vec<Document>, pipeline: &[Document]) -> Result<Vec<Document>, ModelError> {
    let mut current = documents;
    for stage in pipeline {
        let (name, spec) = match (stage.len(), stage.iter().next()) {
            (1, Some((name, spec))) => (name.as_str(), spec),
            _ => {
                return Err(ModelError::bad_value(
                    "a pipeline stage has exactly one field",
                ))
            }
        };
        current = match (name, spec) {
            ("$match", Bson::Document(filter)) => {
                let mut kept = Vec::new();
                for document in current {
                    if matches(&document, filter)? {
                        kept.push(document);
                    }
                }
                kept
            }
            ("$group", Bson::Document(spec)) => group(&current, spec)?,
            ("$sort", Bson::Document(spec)) => {
                sort(&mut current, spec)?;
                current
            }
            ("$limit", limit) => {
                let n = match limit {
                    Bson::Int32(n) => i64::from(*n),
                    Bson::Int64(n) => *n,
                    _ => return Err(ModelError::bad_value("$limit needs an integer")),
                };
                let n = usize::try_from(n)
                    .map_err(|_| ModelError::bad_value("$limit must be positive"))?;
                current.truncate(n);
                current
            }
            (other, _) => {
                return Err(ModelError::unsupported(format!(
                    "aggregation stage {other}"
                )))
            }
        };
    }
    Ok(current)
}

/// Evaluates an expression: a `"$path"`, a constant, or a document of expressions.
/// `None` is "missing".
fn evaluate(document: &Document, expression: &Bson) -> Result<Option<Bson>, ModelError> {
    match expression {
        Bson::String(s) if s.starts_with("$$") => {
            Err(ModelError::unsupported(format!("variable {s}")))
        }
        Bson::String(s) if s.starts_with('$') => Ok(field_path(document, &s[1..])),
        Bson::Document(inner) if inner.keys().next().is_some_and(|k| k.starts_with('$')) => Err(
            ModelError::unsupported(format!("expression operator {:?}", inner.keys().next())),
        ),
        Bson::Document(inner) => {
            let mut out = Document::new();
            for (k, v) in inner {
                if let Some(value) = evaluate(document, v)? {
                    out.insert(k, value);
                }
            }
            Ok(Some(Bson::Document(out)))
        }
        constant => Ok(Some(constant.clone())),
    }
}

/// `"$a.b"`: through documents; through an array it yields the array of the elements' values.
fn field_path(document: &Document, path: &str) -> Option<Bson> {
    fn walk(value: &Bson, parts: &[&str]) -> Option<Bson> {
        let Some((part, rest)) = parts.split_first() else {
            return Some(value.clone());
        };
        match value {
            Bson::Document(inner) => inner.get(*part).and_then(|v| walk(v, rest)),
            Bson::Array(items) => Some(Bson::Array(
                items.iter().filter_map(|item| walk(item, parts)).collect(),
            )),
            _ => None,
        }
    }
    let parts: Vec<&str> = path.split('.').collect();
    walk(&Bson::Document(document.clone()), &parts)
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Accumulator {
    Max,
    Min,
    Sum,
}

fn group(documents: &[Document], spec: &Document) -> Result<Vec<Document>, ModelError> {
    let id_expression = spec
        .get("_id")
        .ok_or_else(|| ModelError::bad_value("a group specification must include an _id"))?;
    let mut accumulators = Vec::new();
    for (field, accumulator) in spec {
        if field == "_id" {
            continue;
        }
        let Bson::Document(accumulator) = accumulator else {
            return Err(ModelError::bad_value(format!(
                "the field '{field}' must be an accumulator object"
            )));
        };
        let (name, argument) = match (accumulator.len(), accumulator.iter().next()) {
            (1, Some((name, argument))) => (name.clone(), argument.clone()),
            _ => return Err(ModelError::bad_value("an accumulator has one operator")),
        };
        let make = match name.as_str() {
            "$max" => Accumulator::Max,
            "$min" => Accumulator::Min,
            "$sum" => Accumulator::Sum,
            other => return Err(ModelError::unsupported(format!("accumulator {other}"))),
        };
        accumulators.push((field.clone(), make, argument));
    }
    // Groups in the order first met: (key text, _id value, accumulated values).
    let mut groups: Vec<(String, Bson, Vec<Option<Bson>>)> = Vec::new();
    for document in documents {
        let id = evaluate(document, id_expression)?.unwrap_or(Bson::Null);
        let id_key = key(&id);
        let index = match groups.iter().position(|(k, _, _)| *k == id_key) {
            Some(index) => index,
            None => {
                groups.push((id_key, id, vec![None; accumulators.len()]));
                groups.len() - 1
            }
        };
        for (slot, (_, kind, argument)) in accumulators.iter().enumerate() {
            let value = evaluate(document, argument)?;
            let Some(state) = groups.get_mut(index).and_then(|g| g.2.get_mut(slot)) else {
                continue;
            };
            match kind {
                Accumulator::Max | Accumulator::Min => {
                    let Some(value) = value.filter(|v| !matches!(v, Bson::Null | Bson::Undefined))
                    else {
                        continue;
                    };
                    let better = match state {
                        None => true,
                        Some(best) => {
                            let order = compare(&value, best);
                            if *kind == Accumulator::Max {
                                order == std::cmp::Ordering::Greater
                            } else {
                                order == std::cmp::Ordering::Less
                            }
                        }
                    };
                    if better {
                        *state = Some(value);
                    }
                }
                Accumulator::Sum => {
                    let add = value.as_ref().and_then(number);
                    let total = state.get_or_insert(Bson::Int32(0));
                    if let Some(add) = add {
                        *total = add_numbers(total, add);
                    }
                }
            }
        }
    }
    Ok(groups
        .into_iter()
        .map(|(_, id, values)| {
            let mut out = Document::new();
            out.insert("_id", id);
            for ((field, _, _), value) in accumulators.iter().zip(values) {
                out.insert(field.clone(), value.unwrap_or(Bson::Null));
            }
            out
        })
        .collect())
}

fn add_numbers(total: &Bson, add: Num) -> Bson {
    match (number(total), add) {
        (Some(Num::Int(a)), Num::Int(b)) => match a.checked_add(b) {
            Some(sum) => match (total, i32::try_from(sum)) {
                (Bson::Int32(_), Ok(small)) => Bson::Int32(small),
                _ => Bson::Int64(sum),
            },
            #[allow(clippy::cast_precision_loss)]
            None => Bson::Double(a as f64 + b as f64),
        },
        #[allow(clippy::cast_precision_loss)]
        (Some(Num::Int(a)), Num::Float(b)) => Bson::Double(a as f64 + b),
        #[allow(clippy::cast_precision_loss)]
        (Some(Num::Float(a)), Num::Int(b)) => Bson::Double(a + b as f64),
        (Some(Num::Float(a)), Num::Float(b)) => Bson::Double(a + b),
        (None, _) => total.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bson::doc;

    #[test]
    fn group_max_per_scope_ignores_missing_and_lets_strings_win() {
        let docs = vec![
            doc! {"t": "a", "n": 3},
            doc! {"t": "a", "n": 7_i64},
            doc! {"t": "b", "n": 2},
            doc! {"t": "b", "n": "zz"},
            doc! {"t": "c"},
            doc! {"n": 1},
        ];
        let pipeline = vec![
            doc! {"$match": {"n": {"$exists": true}}},
            doc! {"$group": {"_id": {"s0": "$t"}, "n": {"$max": "$n"}}},
        ];
        let out = run(docs, &pipeline).unwrap();
        assert_eq!(
            out,
            vec![
                doc! {"_id": {"s0": "a"}, "n": 7_i64},
                doc! {"_id": {"s0": "b"}, "n": "zz"},
                doc! {"_id": {}, "n": 1},
            ]
        );
    }

    #[test]
    fn count_duplicates_and_refuse_unknown_stages() {
        let docs = vec![doc! {"n": 1}, doc! {"n": 1}, doc! {"n": 2}];
        let pipeline = vec![
            doc! {"$group": {"_id": {"n": "$n"}, "count": {"$sum": 1}}},
            doc! {"$match": {"count": {"$gt": 1}}},
            doc! {"$limit": 1},
        ];
        assert_eq!(
            run(docs.clone(), &pipeline).unwrap(),
            vec![doc! {"_id": {"n": 1}, "count": 2}]
        );
        assert!(matches!(
            run(docs, &[doc! {"$unwind": "$n"}]),
            Err(ModelError::Unsupported(_))
        ));
    }
}
