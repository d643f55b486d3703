//! A trigger's `match`: the query the change stream's `$match` applies to each inserted document
//! (`fullDocument`), and `check` to the collection. Checked whole, at start (and by
//! `--check-config`), against what that `$match` accepts, so an operator the server would refuse
//! at run time — for every batch, as a retried error — is refused now, named with where it is.
//!
//! The `$match` stage takes the query language except `$where`, `$near` and `$nearSphere` (use
//! `$geoNear`) and `$text` (first stage only; a change stream's first stage is `$changeStream`);
//! `$expr` and `$jsonSchema` name fields the trigger cannot prefix with `fullDocument.` (only
//! field paths are rewritten), and `$comment` is not a condition: all refused. What is left are
//! field conditions joined by `$and`, `$or`, `$nor`, with these operators on a field:
//! [`FIELD_OPERATORS`]. Operands are checked where the server checks their shape.

use mongodb::bson::{Bson, Document};
use serde_json::{Map, Value};

use super::error::{invalid, ConfigError, Key};
use mongo_seq::executor::convert;

/// Operators a field condition may use in a change stream's `$match`.
pub const FIELD_OPERATORS: [&str; 23] = [
    "$eq",
    "$ne",
    "$gt",
    "$gte",
    "$lt",
    "$lte",
    "$in",
    "$nin",
    "$exists",
    "$type",
    "$mod",
    "$regex",
    "$options",
    "$all",
    "$elemMatch",
    "$size",
    "$not",
    "$bitsAllSet",
    "$bitsAllClear",
    "$bitsAnySet",
    "$bitsAnyClear",
    "$geoWithin",
    "$geoIntersects",
];

/// Operators joining conditions (a query's top level, `$elemMatch` on documents).
const LOGICAL: [&str; 3] = ["$and", "$or", "$nor"];

/// `$type`'s aliases (and `number`).
const TYPE_ALIASES: [&str; 22] = [
    "double",
    "string",
    "object",
    "array",
    "binData",
    "undefined",
    "objectId",
    "bool",
    "date",
    "null",
    "regex",
    "dbPointer",
    "javascript",
    "symbol",
    "javascriptWithScope",
    "int",
    "timestamp",
    "long",
    "decimal",
    "minKey",
    "maxKey",
    "number",
];

/// A `match` as written → its canonical Extended JSON, once every operator in it is one a
/// change stream's `$match` accepts (errors name `key` and where the operator is).
pub(super) fn validate_match(
    filter: Map<String, Value>,
    key: Key,
) -> Result<Map<String, Value>, ConfigError> {
    let doc = convert::to_doc(Value::Object(filter)).map_err(|e| invalid(key.clone(), e))?;
    if doc.is_empty() {
        return Err(invalid(
            key,
            "must not be empty (leave it out to take every document)",
        ));
    }
    check_expression(&doc, None).map_err(|reason| invalid(key.clone(), reason))?;
    match convert::from_doc(doc) {
        Value::Object(filter) => Ok(filter),
        _ => Err(invalid(key, "must be a table")),
    }
}

/// Where a condition is, for messages: `at top level`, `in $or`, `at amount`.
fn place(within: Option<&str>) -> String {
    within.map_or_else(|| "top-level".to_owned(), |w| format!("`{w}`: "))
}

/// A query expression: field conditions and `$and`/`$or`/`$nor` (`within`: the path of the
/// operator or field it is under, `None` at the top).
fn check_expression(doc: &Document, within: Option<&str>) -> Result<(), String> {
    for (name, value) in doc {
        if LOGICAL.contains(&name.as_str()) {
            let Bson::Array(items) = value else {
                return Err(format!(
                    "{}`{name}` must be an array of conditions",
                    place(within)
                ));
            };
            if items.is_empty() {
                return Err(format!("{}`{name}` must not be empty", place(within)));
            }
            for item in items {
                let Bson::Document(item) = item else {
                    return Err(format!(
                        "{}`{name}` entries must be documents of conditions",
                        place(within)
                    ));
                };
                check_expression(item, Some(name))?;
            }
        } else if name.starts_with('$') {
            return Err(match within {
                None => format!(
                    "top-level `{name}` is not supported (use field conditions, $and, $or, $nor)"
                ),
                Some(w) => format!(
                    "`{name}` inside `{w}` is not supported (use field conditions, $and, $or, $nor)"
                ),
            });
        } else {
            check_condition(name, value)?;
        }
    }
    Ok(())
}

/// The condition on field `field`: a value (equality), or a document of operators.
fn check_condition(field: &str, value: &Bson) -> Result<(), String> {
    match value {
        Bson::Document(ops) if ops.keys().next().is_some_and(|k| k.starts_with('$')) => {
            check_operators(field, ops)
        }
        _ => Ok(()),
    }
}

/// A document of operators on `field` (`{$gt: 1, $lt: 9}`).
fn check_operators(field: &str, ops: &Document) -> Result<(), String> {
    let at = |op: &str, what: &str| format!("`{op}` at `{field}` {what}");
    for (op, operand) in ops {
        let op = op.as_str();
        if !FIELD_OPERATORS.contains(&op) {
            return Err(match op {
                "$near" | "$nearSphere" => at(op, "is not allowed in a change stream's $match (use $geoWithin)"),
                "$where" | "$expr" | "$text" | "$jsonSchema" | "$comment" | "$and" | "$or" | "$nor" => {
                    at(op, "cannot be applied to a field (and $where, $expr, $text, $jsonSchema are not supported in a trigger's match)")
                }
                _ if !op.starts_with('$') => format!(
                    "`{field}`: `{op}` mixed with operators (a condition is either a value or a document of operators only)"
                ),
                _ => format!(
                    "unknown operator `{op}` at `{field}` (a change stream's $match accepts {})",
                    FIELD_OPERATORS.join(", ")
                ),
            });
        }
        check_operand(field, op, operand, ops).map_err(|what| at(op, &what))?;
    }
    Ok(())
}

/// The shape of one operator's operand, as the server checks it.
fn check_operand(field: &str, op: &str, operand: &Bson, ops: &Document) -> Result<(), String> {
    match op {
        "$in" | "$nin" | "$all" => {
            let Bson::Array(items) = operand else {
                return Err("needs an array".to_owned());
            };
            for item in items {
                if let Bson::Document(d) = item {
                    match d.keys().next() {
                        Some(k) if op == "$all" && k == "$elemMatch" => check_operators(field, d)?,
                        Some(k) if k.starts_with('$') => {
                            return Err(format!("cannot hold an operator (`{k}`)"))
                        }
                        _ => {}
                    }
                }
            }
            Ok(())
        }
        "$size" => match whole(operand) {
            Some(n) if n >= 0.0 => Ok(()),
            Some(_) => Err("may not be negative".to_owned()),
            None => Err("needs a whole number".to_owned()),
        },
        "$mod" => match operand {
            Bson::Array(items) if items.len() == 2 && items.iter().all(|i| number(i).is_some()) => {
                if number(&items[0]).is_some_and(|d| d.trunc() == 0.0) {
                    Err("divisor cannot be 0".to_owned())
                } else {
                    Ok(())
                }
            }
            _ => Err("needs an array of two numbers, [divisor, remainder]".to_owned()),
        },
        "$type" => {
            let one = |t: &Bson| match t {
                Bson::String(alias) => TYPE_ALIASES.contains(&alias.as_str()),
                other => whole(other)
                    .is_some_and(|n| (1.0..=19.0).contains(&n) || n == -1.0 || n == 127.0),
            };
            let ok = match operand {
                Bson::Array(types) => !types.is_empty() && types.iter().all(one),
                other => one(other),
            };
            if ok {
                Ok(())
            } else {
                Err(format!(
                    "needs a type alias ({}) or a type number",
                    TYPE_ALIASES.join(", ")
                ))
            }
        }
        "$regex" => match operand {
            Bson::String(_) | Bson::RegularExpression(_) => Ok(()),
            _ => Err("needs a string or a regular expression".to_owned()),
        },
        "$options" => match operand {
            Bson::String(_) if ops.contains_key("$regex") => Ok(()),
            Bson::String(_) => Err("needs a `$regex` beside it".to_owned()),
            _ => Err("needs a string".to_owned()),
        },
        "$not" => match operand {
            Bson::RegularExpression(_) => Ok(()),
            Bson::Document(inner) if inner.is_empty() => Err("cannot be empty".to_owned()),
            Bson::Document(inner) if inner.keys().all(|k| k.starts_with('$')) => {
                check_operators(field, inner)
            }
            _ => Err("needs a regular expression or a document of operators".to_owned()),
        },
        "$elemMatch" => match operand {
            Bson::Document(inner) => match inner.keys().next() {
                Some(k) if k.starts_with('$') && !LOGICAL.contains(&k.as_str()) => {
                    check_operators(field, inner)
                }
                _ => check_expression(inner, Some(&format!("{field}.$elemMatch"))),
            },
            _ => Err("needs a document".to_owned()),
        },
        "$bitsAllSet" | "$bitsAllClear" | "$bitsAnySet" | "$bitsAnyClear" => match operand {
            Bson::Binary(_) => Ok(()),
            Bson::Array(positions)
                if positions.iter().all(|p| whole(p).is_some_and(|n| n >= 0.0)) =>
            {
                Ok(())
            }
            other if whole(other).is_some_and(|n| n >= 0.0) => Ok(()),
            _ => Err(
                "needs a non-negative whole number, BinData, or an array of bit positions"
                    .to_owned(),
            ),
        },
        "$geoWithin" | "$geoIntersects" => match operand {
            Bson::Document(_) => Ok(()),
            _ => Err(
                "needs a document (a $geometry, $box, $polygon, $center or $centerSphere)"
                    .to_owned(),
            ),
        },
        _ => Ok(()),
    }
}

/// A BSON number's value.
fn number(value: &Bson) -> Option<f64> {
    #[allow(clippy::cast_precision_loss)] // the operands checked are small
    match value {
        Bson::Int32(n) => Some(f64::from(*n)),
        Bson::Int64(n) => Some(*n as f64),
        Bson::Double(n) if n.is_finite() => Some(*n),
        _ => None,
    }
}

/// A BSON number holding a whole value.
fn whole(value: &Bson) -> Option<f64> {
    number(value).filter(|n| n.fract() == 0.0)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn check(filter: Value) -> Result<(), String> {
        let Value::Object(filter) = filter else {
            unreachable!()
        };
        validate_match(filter, Key::flag("--match"))
            .map(|_| ())
            .map_err(|e| e.to_string())
    }

    #[test]
    fn what_a_change_streams_match_accepts_passes() {
        for ok in [
            json!({ "type": "order" }),
            json!({ "amount": { "$gt": 5, "$lte": { "$numberLong": "9" } } }),
            json!({ "$or": [{ "a": 1 }, { "b.c": { "$in": [1, 2] } }], "d": { "$exists": false } }),
            json!({ "tags": { "$all": ["a", { "$elemMatch": { "$gt": 1 } }], "$size": 2 } }),
            json!({ "name": { "$regex": "^a", "$options": "i" }, "x": { "$not": { "$gt": 1 } } }),
            json!({ "items": { "$elemMatch": { "sku": "a", "$or": [{ "q": 1 }, { "q": 2 }] } } }),
            json!({ "n": { "$mod": [4, 0] }, "t": { "$type": ["int", "long", 1] } }),
            json!({ "flags": { "$bitsAnySet": [0, 3] }, "at": { "$geoWithin": { "$box": [[0, 0], [1, 1]] } } }),
            json!({ "$nor": [{ "deleted": true }], "literal": { "a": 1 } }),
            json!({ "created": { "$gte": { "$date": "2024-01-01T00:00:00Z" } } }),
        ] {
            assert_eq!(check(ok.clone()), Ok(()), "{ok}");
        }
    }

    #[test]
    fn what_the_server_would_refuse_is_refused_naming_the_operator() {
        for (bad, says) in [
            (
                json!({ "$where": "1" }),
                "top-level `$where` is not supported",
            ),
            (
                json!({ "$and": [{ "$expr": { "$gt": ["$a", 1] } }] }),
                "`$expr` inside `$and` is not supported",
            ),
            (
                json!({ "amount": { "$gtt": 5 } }),
                "unknown operator `$gtt` at `amount`",
            ),
            (
                json!({ "$or": [{ "a": { "$near": [0, 0] } }] }),
                "`$near` at `a` is not allowed",
            ),
            (json!({ "a": { "$in": 5 } }), "`$in` at `a` needs an array"),
            (
                json!({ "a": { "$size": -1 } }),
                "`$size` at `a` may not be negative",
            ),
            (
                json!({ "a": { "$mod": [0, 1] } }),
                "`$mod` at `a` divisor cannot be 0",
            ),
            (
                json!({ "a": { "$type": "integer" } }),
                "`$type` at `a` needs a type alias",
            ),
            (
                json!({ "a": { "$options": "i" } }),
                "`$options` at `a` needs a `$regex` beside it",
            ),
            (
                json!({ "a": { "$not": 5 } }),
                "`$not` at `a` needs a regular expression",
            ),
            (
                json!({ "a": { "$gt": 1, "b": 2 } }),
                "`a`: `b` mixed with operators",
            ),
            (json!({ "$or": [] }), "`$or` must not be empty"),
            (json!({ "$and": [1] }), "`$and` entries must be documents"),
            (
                json!({ "a": { "$elemMatch": { "b": { "$foo": 1 } } } }),
                "unknown operator `$foo` at `b`",
            ),
            (
                json!({ "a": { "$elemMatch": { "$where": "1" } } }),
                "`$where` at `a` cannot be applied to a field",
            ),
            (
                json!({ "a": { "$in": [{ "$regex": "x" }] } }),
                "`$in` at `a` cannot hold an operator (`$regex`)",
            ),
            (
                json!({ "a": { "$not": { "$regexx": "x" } } }),
                "unknown operator `$regexx` at `a`",
            ),
            (json!({}), "must not be empty"),
        ] {
            let err = check(bad.clone()).expect_err(&bad.to_string());
            assert!(err.contains(says), "{bad}: {err} should say {says}");
            assert!(err.starts_with("--match: "), "{err}");
        }
    }
}
