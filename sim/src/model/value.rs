//! BSON values as the server compares them.
//!
//! * Sort and `$max`/`$min` order across types ("Comparison/Sort Order",
//!   <https://www.mongodb.com/docs/manual/reference/bson-type-comparison-order/>): MinKey < Null <
//!   Numbers (int, long, double, decimal compared by value) < Symbol, String < Object < Array <
//!   BinData < ObjectId < Boolean < Date < Timestamp < Regular Expression < MaxKey. Objects
//!   compare field by field (type, then name, then value), arrays element by element.
//! * Query operators compare within a type bracket only
//!   (<https://www.mongodb.com/docs/manual/reference/method/db.collection.find/#type-bracketing>):
//!   `{$gte: 5}` never matches a string.
//! * `$type` aliases and numbers (<https://www.mongodb.com/docs/manual/reference/operator/query/type/>).

use std::cmp::Ordering;

use bson::Bson;

use super::error::ModelError;

/// The position of a value's type in the comparison order (numbers share one).
pub fn type_rank(value: &Bson) -> u8 {
    match value {
        Bson::MinKey => 1,
        Bson::Null | Bson::Undefined => 2,
        Bson::Int32(_) | Bson::Int64(_) | Bson::Double(_) | Bson::Decimal128(_) => 3,
        Bson::Symbol(_) | Bson::String(_) => 4,
        Bson::Document(_) => 5,
        Bson::Array(_) => 6,
        Bson::Binary(_) => 7,
        Bson::ObjectId(_) => 8,
        Bson::Boolean(_) => 9,
        Bson::DateTime(_) => 10,
        Bson::Timestamp(_) => 11,
        Bson::RegularExpression(_) => 12,
        Bson::DbPointer(_) => 13,
        Bson::JavaScriptCode(_) => 14,
        Bson::JavaScriptCodeWithScope(_) => 15,
        Bson::MaxKey => 16,
    }
}

/// A number as the server compares it.
#[derive(Debug, Clone, Copy)]
pub enum Num {
    Int(i64),
    Float(f64),
}

/// The numeric value of a number (decimals are outside the model: they fail loudly where used).
pub fn number(value: &Bson) -> Option<Num> {
    match value {
        Bson::Int32(v) => Some(Num::Int(i64::from(*v))),
        Bson::Int64(v) => Some(Num::Int(*v)),
        Bson::Double(v) => Some(Num::Float(*v)),
        _ => None,
    }
}

fn compare_numbers(a: Num, b: Num) -> Ordering {
    match (a, b) {
        (Num::Int(a), Num::Int(b)) => a.cmp(&b),
        (Num::Int(a), Num::Float(b)) => compare_int_float(a, b),
        (Num::Float(a), Num::Int(b)) => compare_int_float(b, a).reverse(),
        // NaN sorts below every other number and equals itself.
        (Num::Float(a), Num::Float(b)) => match (a.is_nan(), b.is_nan()) {
            (true, true) => Ordering::Equal,
            (true, false) => Ordering::Less,
            (false, true) => Ordering::Greater,
            (false, false) => a.partial_cmp(&b).unwrap_or(Ordering::Equal),
        },
    }
}

/// Exact comparison of an int64 with a double (no rounding of large integers).
fn compare_int_float(int: i64, float: f64) -> Ordering {
    if float.is_nan() {
        return Ordering::Greater;
    }
    // 2^63 as a double; every i64 is below it, and at or above -2^63.
    const TWO_63: f64 = 9_223_372_036_854_775_808.0;
    if float >= TWO_63 {
        return Ordering::Less;
    }
    if float < -TWO_63 {
        return Ordering::Greater;
    }
    let truncated = float.trunc();
    // In range: the truncated double is an exact i64.
    #[allow(clippy::cast_possible_truncation)]
    let whole = truncated as i64;
    match int.cmp(&whole) {
        Ordering::Equal => {
            let fraction = float - truncated;
            if fraction > 0.0 {
                Ordering::Less
            } else if fraction < 0.0 {
                Ordering::Greater
            } else {
                Ordering::Equal
            }
        }
        other => other,
    }
}

/// The total order of the server over any two values (sort, `$max`, `$min`, index keys).
pub fn compare(a: &Bson, b: &Bson) -> Ordering {
    let (ra, rb) = (type_rank(a), type_rank(b));
    if ra != rb {
        return ra.cmp(&rb);
    }
    match (a, b) {
        _ if ra == 3 => match (number(a), number(b)) {
            (Some(x), Some(y)) => compare_numbers(x, y),
            // Decimal128: compared by its bytes (the model never produces one).
            _ => format!("{a:?}").cmp(&format!("{b:?}")),
        },
        (Bson::String(x) | Bson::Symbol(x), Bson::String(y) | Bson::Symbol(y)) => x.cmp(y),
        (Bson::Document(x), Bson::Document(y)) => {
            for ((kx, vx), (ky, vy)) in x.iter().zip(y.iter()) {
                let order = type_rank(vx)
                    .cmp(&type_rank(vy))
                    .then_with(|| kx.cmp(ky))
                    .then_with(|| compare(vx, vy));
                if order != Ordering::Equal {
                    return order;
                }
            }
            x.len().cmp(&y.len())
        }
        (Bson::Array(x), Bson::Array(y)) => {
            for (vx, vy) in x.iter().zip(y.iter()) {
                let order = compare(vx, vy);
                if order != Ordering::Equal {
                    return order;
                }
            }
            x.len().cmp(&y.len())
        }
        (Bson::ObjectId(x), Bson::ObjectId(y)) => x.bytes().cmp(&y.bytes()),
        (Bson::Boolean(x), Bson::Boolean(y)) => x.cmp(y),
        (Bson::DateTime(x), Bson::DateTime(y)) => x.cmp(y),
        (Bson::Timestamp(x), Bson::Timestamp(y)) => {
            (x.time, x.increment).cmp(&(y.time, y.increment))
        }
        (Bson::Binary(x), Bson::Binary(y)) => x
            .bytes
            .len()
            .cmp(&y.bytes.len())
            .then_with(|| u8::from(x.subtype).cmp(&u8::from(y.subtype)))
            .then_with(|| x.bytes.cmp(&y.bytes)),
        _ => Ordering::Equal,
    }
}

/// Equality as queries and unique indexes see it (5, 5L and 5.0 are equal).
pub fn equal(a: &Bson, b: &Bson) -> bool {
    compare(a, b) == Ordering::Equal
}

/// Whether the server would compare `a` with `b` in a query (same type bracket).
pub fn same_bracket(a: &Bson, b: &Bson) -> bool {
    type_rank(a) == type_rank(b)
}

/// A canonical text for a value such that equal values (by [`equal`]) have equal keys: the
/// key of a unique index entry, or of an `_id`.
pub fn key(value: &Bson) -> String {
    match value {
        Bson::Null | Bson::Undefined => "n".to_owned(),
        Bson::Int32(_) | Bson::Int64(_) | Bson::Double(_) => match number(value) {
            Some(Num::Int(i)) => format!("#{i}"),
            Some(Num::Float(f)) if f.is_nan() => "#nan".to_owned(),
            Some(Num::Float(f)) if f.fract() == 0.0 && f.abs() < 9.2e18 => {
                #[allow(clippy::cast_possible_truncation)]
                let i = f as i64;
                format!("#{i}")
            }
            Some(Num::Float(f)) => format!("#{f:e}"),
            None => unreachable_key(value),
        },
        Bson::String(s) | Bson::Symbol(s) => format!("s{s:?}"),
        Bson::Document(d) => {
            let parts: Vec<String> = d.iter().map(|(k, v)| format!("{k:?}:{}", key(v))).collect();
            format!("{{{}}}", parts.join(","))
        }
        Bson::Array(items) => {
            let parts: Vec<String> = items.iter().map(key).collect();
            format!("[{}]", parts.join(","))
        }
        Bson::ObjectId(id) => format!("o{id}"),
        Bson::Boolean(b) => format!("b{b}"),
        other => format!("x{other:?}"),
    }
}

fn unreachable_key(value: &Bson) -> String {
    format!("x{value:?}")
}

/// The type numbers a `$type` operand names (`"number"` is four of them).
fn type_numbers(alias: &Bson) -> Result<Vec<i32>, ModelError> {
    let numbers = match alias {
        Bson::String(name) => match name.as_str() {
            "double" => vec![1],
            "string" => vec![2],
            "object" => vec![3],
            "array" => vec![4],
            "binData" => vec![5],
            "undefined" => vec![6],
            "objectId" => vec![7],
            "bool" => vec![8],
            "date" => vec![9],
            "null" => vec![10],
            "regex" => vec![11],
            "int" => vec![16],
            "timestamp" => vec![17],
            "long" => vec![18],
            "decimal" => vec![19],
            "minKey" => vec![-1],
            "maxKey" => vec![127],
            "number" => vec![1, 16, 18, 19],
            other => {
                return Err(ModelError::bad_value(format!(
                    "unknown $type alias {other:?}"
                )))
            }
        },
        Bson::Int32(n) => vec![*n],
        Bson::Int64(n) => {
            vec![i32::try_from(*n).map_err(|_| ModelError::bad_value("$type number"))?]
        }
        Bson::Double(f) if f.fract() == 0.0 => {
            #[allow(clippy::cast_possible_truncation)]
            let n = *f as i32;
            vec![n]
        }
        other => return Err(ModelError::bad_value(format!("$type operand {other:?}"))),
    };
    Ok(numbers)
}

/// The `$type` number of one value.
pub fn type_number(value: &Bson) -> i32 {
    match value {
        Bson::Double(_) => 1,
        Bson::String(_) => 2,
        Bson::Document(_) => 3,
        Bson::Array(_) => 4,
        Bson::Binary(_) => 5,
        Bson::Undefined => 6,
        Bson::ObjectId(_) => 7,
        Bson::Boolean(_) => 8,
        Bson::DateTime(_) => 9,
        Bson::Null => 10,
        Bson::RegularExpression(_) => 11,
        Bson::DbPointer(_) => 12,
        Bson::JavaScriptCode(_) => 13,
        Bson::Symbol(_) => 14,
        Bson::JavaScriptCodeWithScope(_) => 15,
        Bson::Int32(_) => 16,
        Bson::Timestamp(_) => 17,
        Bson::Int64(_) => 18,
        Bson::Decimal128(_) => 19,
        Bson::MinKey => -1,
        Bson::MaxKey => 127,
    }
}

/// The type numbers of a `$type` operand: one alias/number or an array of them.
pub fn type_operand(operand: &Bson) -> Result<Vec<i32>, ModelError> {
    match operand {
        Bson::Array(items) => {
            let mut all = Vec::new();
            for item in items {
                all.extend(type_numbers(item)?);
            }
            Ok(all)
        }
        single => type_numbers(single),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bson::{bson, doc};

    #[test]
    fn numbers_compare_by_value_across_types() {
        assert!(equal(&Bson::Int32(5), &Bson::Int64(5)));
        assert!(equal(&Bson::Int64(5), &Bson::Double(5.0)));
        assert_eq!(
            compare(&Bson::Int64(i64::MAX), &Bson::Double(9.3e18)),
            Ordering::Less
        );
        assert_eq!(
            compare(
                &Bson::Int64(i64::MAX - 1),
                &Bson::Double(9.223_372_036_854_776e18)
            ),
            Ordering::Less
        );
        assert_eq!(
            compare(&Bson::Double(f64::NAN), &Bson::Int64(i64::MIN)),
            Ordering::Less
        );
        assert_eq!(
            compare(&Bson::Double(5.5), &Bson::Int32(5)),
            Ordering::Greater
        );
        assert_eq!(key(&Bson::Double(5.0)), key(&Bson::Int32(5)));
    }

    #[test]
    fn types_order_as_the_manual_lists_them() {
        // Strings sort above numbers: `$max` over a number field holding a string is the string.
        assert_eq!(compare(&bson!("1"), &bson!(99)), Ordering::Greater);
        assert_eq!(compare(&Bson::Null, &bson!(-5)), Ordering::Less);
        assert_eq!(compare(&bson!({"a": 1}), &bson!([1])), Ordering::Less);
        assert_eq!(
            compare(&bson!(true), &Bson::ObjectId(bson::oid::ObjectId::new())),
            Ordering::Greater
        );
        assert_eq!(
            compare(
                &Bson::Document(doc! {"a": 1, "b": 1}),
                &Bson::Document(doc! {"a": 1})
            ),
            Ordering::Greater
        );
    }

    #[test]
    fn type_aliases() {
        assert_eq!(type_operand(&bson!(["int", "long"])).unwrap(), vec![16, 18]);
        assert_eq!(type_operand(&bson!("number")).unwrap(), vec![1, 16, 18, 19]);
        assert!(type_operand(&bson!("integer")).is_err());
    }
}
