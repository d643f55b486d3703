//! Query filters: exactly the operators the product emits (and the sidecar's trigger filters
//! in the simulated configurations use). Anything else is `Unsupported`.
//!
//! Semantics from the manual's query operator pages
//! (<https://www.mongodb.com/docs/manual/reference/operator/query/>):
//! * a field path follows embedded documents, and arrays element by element
//!   (<https://www.mongodb.com/docs/manual/tutorial/query-arrays/>); a condition on a field
//!   holding an array matches when the array or one of its elements matches;
//! * `{f: v}` / `$eq`: equal values (numbers by value); `{f: null}` also matches a missing `f`;
//! * `$gt/$gte/$lt/$lte` compare within a type bracket; `$lte: null` matches missing;
//! * `$in`: equal to one of the values; `$exists`; `$type` (aliases, numbers, an array of them;
//!   an array field matches `"array"` and the types of its elements);
//! * `$not`: the negation of the operator expression, so it also matches documents without the
//!   field; `$and`, `$or`, `$nor` at the top level.

use std::cmp::Ordering;

use bson::{Bson, Document};

use super::error::ModelError;
use super::value::{compare, equal, same_bracket, type_number, type_operand};

/// The values at a dotted path (empty when missing), following documents and arrays.
pub fn values_at<'a>(document: &'a Document, path: &str) -> Vec<&'a Bson> {
    let parts: Vec<&str> = path.split('.').collect();
    let mut out = Vec::new();
    for (key, value) in document {
        if Some(&key.as_str()) == parts.first() {
            collect(value, parts.get(1..).unwrap_or(&[]), &mut out);
        }
    }
    out
}

fn collect<'a>(value: &'a Bson, rest: &[&str], out: &mut Vec<&'a Bson>) {
    let Some((part, tail)) = rest.split_first() else {
        out.push(value);
        return;
    };
    match value {
        Bson::Document(inner) => {
            if let Some(next) = inner.get(*part) {
                collect(next, tail, out);
            }
        }
        Bson::Array(items) => {
            if let Ok(index) = part.parse::<usize>() {
                if let Some(item) = items.get(index) {
                    collect(item, tail, out);
                }
            }
            for item in items {
                if let Bson::Document(_) = item {
                    collect(item, rest, out);
                }
            }
        }
        _ => {}
    }
}

/// Whether `document` matches `filter`.
pub fn matches(document: &Document, filter: &Document) -> Result<bool, ModelError> {
    for (key, condition) in filter {
        let ok = match key.as_str() {
            "$and" => all_of(document, condition, |results| results.iter().all(|r| *r))?,
            "$or" => all_of(document, condition, |results| results.iter().any(|r| *r))?,
            "$nor" => all_of(document, condition, |results| !results.iter().any(|r| *r))?,
            other if other.starts_with('$') => {
                return Err(ModelError::unsupported(format!(
                    "top-level query operator {other}"
                )))
            }
            path => matches_condition(&values_at(document, path), condition)?,
        };
        if !ok {
            return Ok(false);
        }
    }
    Ok(true)
}

fn all_of(
    document: &Document,
    clauses: &Bson,
    combine: impl Fn(&[bool]) -> bool,
) -> Result<bool, ModelError> {
    let Bson::Array(clauses) = clauses else {
        return Err(ModelError::bad_value("$and/$or/$nor needs an array"));
    };
    if clauses.is_empty() {
        return Err(ModelError::bad_value(
            "$and/$or/$nor needs a nonempty array",
        ));
    }
    let mut results = Vec::with_capacity(clauses.len());
    for clause in clauses {
        let Bson::Document(clause) = clause else {
            return Err(ModelError::bad_value(
                "$and/$or/$nor entries must be objects",
            ));
        };
        results.push(matches(document, clause)?);
    }
    Ok(combine(&results))
}

/// An operator expression (`{$gt: 1, …}`) or a value to be equal to.
fn is_operator_expression(condition: &Bson) -> bool {
    matches!(condition, Bson::Document(d) if d.keys().next().is_some_and(|k| k.starts_with('$')))
}

/// The condition of one field against the values found at its path.
pub fn matches_condition(values: &[&Bson], condition: &Bson) -> Result<bool, ModelError> {
    match condition {
        Bson::Document(operators) if is_operator_expression(condition) => {
            for (operator, operand) in operators {
                if !matches_operator(values, operator, operand)? {
                    return Ok(false);
                }
            }
            Ok(true)
        }
        value => literal(values, value),
    }
}

/// Whether `test` holds for a value found (or its elements, when it is an array), or for
/// "missing" (`None`) when nothing is found.
fn any_value(values: &[&Bson], test: impl Fn(Option<&Bson>) -> bool) -> bool {
    if values.is_empty() {
        return test(None);
    }
    values.iter().any(|value| {
        test(Some(value))
            || match value {
                Bson::Array(items) => items.iter().any(|item| test(Some(item))),
                _ => false,
            }
    })
}

fn comparison(values: &[&Bson], operand: &Bson, accept: fn(Ordering) -> bool) -> bool {
    any_value(values, |value| match value {
        // A missing field compares as null: `$lte: null` and `$gte: null` match it.
        None => matches!(operand, Bson::Null) && accept(Ordering::Equal),
        Some(value) => {
            let value = if matches!(value, Bson::Undefined) {
                &Bson::Null
            } else {
                value
            };
            same_bracket(value, operand)
                && !is_nan_pair(value, operand)
                && accept(compare(value, operand))
        }
    })
}

/// NaN is only equal to NaN; it is neither greater nor less than any number in a query.
fn is_nan_pair(a: &Bson, b: &Bson) -> bool {
    let nan = |v: &Bson| matches!(v, Bson::Double(f) if f.is_nan());
    nan(a) != nan(b) && (nan(a) || nan(b))
}

fn matches_operator(values: &[&Bson], operator: &str, operand: &Bson) -> Result<bool, ModelError> {
    Ok(match operator {
        "$eq" => literal(values, operand)?,
        "$gt" => comparison(values, operand, |o| o == Ordering::Greater),
        "$gte" => comparison(values, operand, |o| o != Ordering::Less),
        "$lt" => comparison(values, operand, |o| o == Ordering::Less),
        "$lte" => comparison(values, operand, |o| o != Ordering::Greater),
        "$in" => {
            let Bson::Array(options) = operand else {
                return Err(ModelError::bad_value("$in needs an array"));
            };
            let mut found = false;
            for option in options {
                if is_operator_expression(option) || matches!(option, Bson::RegularExpression(_)) {
                    return Err(ModelError::unsupported("$in with an operator or regex"));
                }
                if literal(values, option)? {
                    found = true;
                    break;
                }
            }
            found
        }
        "$exists" => {
            let wanted = match operand {
                Bson::Boolean(b) => *b,
                Bson::Int32(n) => *n != 0,
                Bson::Int64(n) => *n != 0,
                Bson::Double(f) => *f != 0.0,
                _ => {
                    return Err(ModelError::unsupported(
                        "$exists with a non-boolean operand",
                    ))
                }
            };
            values.is_empty() != wanted
        }
        "$type" => {
            let wanted = type_operand(operand)?;
            !values.is_empty()
                && values.iter().any(|value| {
                    wanted.contains(&type_number(value))
                        || matches!(value, Bson::Array(items) if items.iter().any(|i| wanted.contains(&type_number(i))))
                })
        }
        "$not" => match operand {
            Bson::Document(inner) if is_operator_expression(operand) => {
                let mut all = true;
                for (op, arg) in inner {
                    if !matches_operator(values, op, arg)? {
                        all = false;
                        break;
                    }
                }
                !all
            }
            _ => return Err(ModelError::bad_value("$not needs an operator expression")),
        },
        other => return Err(ModelError::unsupported(format!("query operator {other}"))),
    })
}

/// `{f: value}`: equal to the value (or an element equal to it); null also matches missing.
fn literal(values: &[&Bson], value: &Bson) -> Result<bool, ModelError> {
    if matches!(value, Bson::RegularExpression(_)) {
        return Err(ModelError::unsupported("regular expression query"));
    }
    Ok(any_value(values, |v| match v {
        Some(v) => equal(v, value),
        None => matches!(value, Bson::Null),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use bson::doc;

    fn m(document: Document, filter: Document) -> bool {
        matches(&document, &filter).unwrap()
    }

    #[test]
    fn a_counter_definition_condition_admits_none_or_exactly_ours() {
        // The reservation filter's `$or`: MongoDB compares embedded documents field
        // by field, in order, numbers by value.
        let ours = doc! {"start": 1_i64, "step": 1_i64};
        let filter = doc! {"_id": "c", "$or": [{"definition": {"$exists": false}}, {"definition": ours.clone()}]};
        assert!(m(doc! {"_id": "c", "seq": 5}, filter.clone()));
        assert!(m(doc! {"_id": "c", "definition": ours}, filter.clone()));
        assert!(m(
            doc! {"_id": "c", "definition": {"start": 1, "step": 1}},
            filter.clone()
        ));
        assert!(!m(
            doc! {"_id": "c", "definition": {"step": 1_i64, "start": 1_i64}},
            filter.clone()
        ));
        assert!(!m(
            doc! {"_id": "c", "definition": {"start": 1_i64, "step": 2_i64}},
            filter.clone()
        ));
        assert!(!m(
            doc! {"_id": "c", "definition": {"start": 1_i64, "step": 1_i64, "max": 9_i64}},
            filter.clone()
        ));
        // rewindAll's form: the condition inside `$and`, beside the counters' own `$or`.
        let nested = doc! {"$or": [{"_id": "c"}], "$and": [{"$or": [{"definition": {"$exists": false}}, {"definition": {"start": 1_i64, "step": 1_i64}}]}]};
        assert!(m(doc! {"_id": "c"}, nested.clone()));
        assert!(!m(
            doc! {"_id": "c", "definition": {"start": 2_i64, "step": 1_i64}},
            nested
        ));
    }

    #[test]
    fn equality_is_by_value_and_null_matches_missing() {
        assert!(m(doc! {"a": 5_i64}, doc! {"a": 5.0}));
        assert!(m(doc! {"b": 1}, doc! {"a": Bson::Null}));
        assert!(!m(doc! {"a": 1}, doc! {"a": Bson::Null}));
        assert!(m(doc! {"a": [1, 2]}, doc! {"a": 2}));
        assert!(m(doc! {"a": {"b": 3}}, doc! {"a.b": 3}));
    }

    #[test]
    fn comparisons_stay_in_their_type_bracket() {
        assert!(!m(doc! {"seq": "9"}, doc! {"seq": {"$gte": 1}}));
        assert!(m(
            doc! {"seq": 9},
            doc! {"seq": {"$gte": i64::MIN, "$lte": i64::MAX}}
        ));
        assert!(!m(doc! {"seq": f64::NAN}, doc! {"seq": {"$gte": i64::MIN}}));
        assert!(m(doc! {}, doc! {"seq": {"$lte": Bson::Null}}));
        assert!(!m(doc! {}, doc! {"seq": {"$lt": 5}}));
    }

    #[test]
    fn type_matches_arrays_holding_the_type_and_not_negates() {
        // The reservation filter: `$type: [int, long]` alone matches [5], so it adds
        // `$not: {$type: "array"}` (reservation.rs).
        let filter = doc! {"seq": {"$type": ["int", "long"]}};
        assert!(m(doc! {"seq": [5]}, filter.clone()));
        let guarded = doc! {"seq": {"$type": ["int", "long"], "$not": {"$type": "array"}}};
        assert!(!m(doc! {"seq": [5]}, guarded.clone()));
        assert!(m(doc! {"seq": 5_i64}, guarded.clone()));
        assert!(!m(doc! {"seq": 5.0}, guarded));
        // `$not` matches documents without the field: `epoch: {$not: {$gt: E}}`.
        assert!(m(doc! {}, doc! {"epoch": {"$not": {"$gt": 3}}}));
        assert!(!m(doc! {"epoch": 4}, doc! {"epoch": {"$not": {"$gt": 3}}}));
    }

    #[test]
    fn logical_operators_and_in() {
        let counters = doc! {"$or": [{"_id": "o"}, {"_id": {"$gte": "o/", "$lt": "o0"}}]};
        assert!(m(doc! {"_id": "o/t=1"}, counters.clone()));
        assert!(!m(doc! {"_id": "oz"}, counters));
        assert!(m(
            doc! {"_id": 2},
            doc! {"_id": {"$in": [1, 2]}, "n": {"$exists": false}}
        ));
        assert!(m(doc! {"a": 1}, doc! {"$nor": [{"a": 2}]}));
    }

    #[test]
    fn unknown_operators_fail_loudly() {
        assert!(matches!(
            matches(&doc! {"a": 1}, &doc! {"a": {"$ne": 1}}),
            Err(ModelError::Unsupported(_))
        ));
        assert!(matches!(
            matches(&doc! {"a": 1}, &doc! {"$where": "1"}),
            Err(ModelError::Unsupported(_))
        ));
    }
}
