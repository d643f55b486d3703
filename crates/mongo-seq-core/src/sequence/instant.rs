//! Instants: milliseconds since 1970-01-01T00:00:00Z, as the caller gives them (`next({date})`,
//! a commit time) or as a document holds them (a BSON date: Extended JSON `$date`), before the
//! host turns them into local dates.
//!
//! Accepted instants lie from 0001-01-02T00:00:00Z to 9999-12-29T23:59:59.999Z
//! ([`MIN_INSTANT_MS`]..=[`MAX_INSTANT_MS`]): every host can convert them (JS dates reach
//! ±273,790 years, Rust's `jiff` 9999-12-30T22:00Z), and in every time zone (offsets within
//! ±24 hours) their local date has a year 1..=9999, so a host never has to write another year.

use serde_json::Value;

use crate::ejson;
use crate::error::SeqError;
use crate::sequence::calendar::rfc3339_millis;
use crate::sequence::scope::lookup;

/// The first accepted instant: 0001-01-02T00:00:00Z.
pub const MIN_INSTANT_MS: i64 = -62_135_510_400_000;
/// The last accepted instant: 9999-12-29T23:59:59.999Z.
pub const MAX_INSTANT_MS: i64 = 253_402_127_999_999;

fn window() -> String {
    format!(
        "must be an instant from {MIN_INSTANT_MS} (0001-01-02T00:00:00Z) to {MAX_INSTANT_MS} (9999-12-29T23:59:59.999Z) in milliseconds"
    )
}

/// `ms` when it is an accepted instant, else `INVALID_DATE` naming `argument` (and the
/// document `index`, when the instant is a document's).
pub fn check_instant(argument: &str, index: Option<u64>, ms: i64) -> Result<i64, SeqError> {
    if (MIN_INSTANT_MS..=MAX_INSTANT_MS).contains(&ms) {
        return Ok(ms);
    }
    Err(SeqError::invalid_date(
        argument,
        index,
        format!("{}, got {ms}", window()),
    ))
}

/// The instant of a BSON date in Extended JSON: canonical `{"$date": {"$numberLong": "…"}}`,
/// relaxed `{"$date": "<RFC 3339>"}`, or the legacy `{"$date": <integer>}`. The error is a
/// reason phrase.
pub fn read_date(value: &Value) -> Result<i64, String> {
    let not_a_date = || format!("is not a date, got {}", ejson::describe(value));
    let Value::Object(map) = value else {
        return Err(not_a_date());
    };
    let (Some(inner), 1) = (map.get("$date"), map.len()) else {
        return Err(not_a_date());
    };
    match inner {
        Value::String(text) => rfc3339_millis(text).ok_or_else(|| {
            format!(
                "holds {}, which is not an RFC 3339 date-time",
                ejson::quoted(&ejson::truncate(text))
            )
        }),
        Value::Number(_) => ejson::read_i64(inner).map_err(|reason| format!("$date {reason}")),
        Value::Object(wrapper) if wrapper.len() == 1 && wrapper.contains_key("$numberLong") => {
            ejson::read_i64(inner).map_err(|reason| format!("$date {reason}"))
        }
        _ => Err(not_a_date()),
    }
}

/// The accepted instant in field `field` (a path) of document number `index`: missing, null,
/// not a date or out of range is `INVALID_DATE` naming `dateField` and the index.
pub(crate) fn document_instant(document: &Value, field: &str, index: u64) -> Result<i64, SeqError> {
    let fail = |reason: String| SeqError::invalid_date("dateField", Some(index), reason);
    let value = lookup(document, field)
        .map_err(|_| {
            fail(format!(
                "`{field}` is inside an array; a date field must be a single date"
            ))
        })?
        .ok_or_else(|| fail(format!("`{field}` is missing or null; it must hold a date")))?;
    let ms = read_date(value).map_err(|reason| fail(format!("`{field}` {reason}")))?;
    check_instant("dateField", Some(index), ms)
}

/// The creation instant of an ObjectId `_id` (`{"$oid": "<24 hex digits>"}`): its first four
/// bytes, seconds since the epoch. What places a document that has no date of its own (a
/// backfill without `dateField`) in a period.
pub(crate) fn object_id_instant(id: &Value) -> Option<i64> {
    let Value::Object(map) = id else { return None };
    let hex = map.get("$oid")?.as_str()?;
    if map.len() != 1 || hex.len() != 24 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    let seconds = u32::from_str_radix(hex.get(..8)?, 16).ok()?;
    i64::from(seconds).checked_mul(1000)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_every_form_of_a_date() {
        let ms = 1_767_225_600_000i64;
        assert_eq!(
            read_date(&json!({"$date": {"$numberLong": ms.to_string()}})),
            Ok(ms)
        );
        assert_eq!(read_date(&json!({"$date": "2026-01-01T00:00:00Z"})), Ok(ms));
        assert_eq!(read_date(&json!({"$date": ms})), Ok(ms));
        for bad in [
            json!(ms),
            json!("2026-01-01T00:00:00Z"),
            json!(null),
            json!({"$date": "yesterday"}),
            json!({"$date": 1.5}),
            json!({"$date": {"$numberInt": "5"}}),
            json!({"$date": ms, "x": 1}),
            json!({"$timestamp": {"t": 1, "i": 1}}),
        ] {
            assert!(read_date(&bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn object_ids_carry_their_creation_second() {
        let id = json!({"$oid": "6955b900aaaaaaaaaaaaaaaa"});
        assert_eq!(object_id_instant(&id), Some(1_767_225_600_000));
        for bad in [
            json!("6955b900aaaaaaaaaaaaaaaa"),
            json!({"$oid": "6955b900"}),
            json!({"$oid": "zz55b900aaaaaaaaaaaaaaaa"}),
            json!(5),
        ] {
            assert_eq!(object_id_instant(&bad), None, "{bad}");
        }
    }

    #[test]
    fn documents_name_the_field_and_index() {
        let error = document_instant(&json!({"at": null}), "at", 3).unwrap_err();
        assert_eq!(
            (error.code(), error.option_name(), error.details()),
            (
                "INVALID_DATE",
                Some("dateField"),
                Some(json!({"argument": "dateField", "index": 3}))
            )
        );
        assert!(document_instant(&json!({}), "at", 0).is_err());
        assert!(document_instant(&json!({"at": "2026-01-01"}), "at", 0).is_err());
        assert!(document_instant(&json!({"a": [{"t": 1}]}), "a.t", 0).is_err());
        let far = json!({"at": {"$date": {"$numberLong": (MAX_INSTANT_MS + 1).to_string()}}});
        assert_eq!(
            document_instant(&far, "at", 0).unwrap_err().code(),
            "INVALID_DATE"
        );
        let nested = json!({"m": {"at": {"$date": "1969-12-31T23:59:59.999Z"}}});
        assert_eq!(document_instant(&nested, "m.at", 0), Ok(-1));
        assert_eq!(
            check_instant("date", None, MIN_INSTANT_MS),
            Ok(MIN_INSTANT_MS)
        );
        assert!(check_instant("date", None, MIN_INSTANT_MS - 1).is_err());
    }
}
