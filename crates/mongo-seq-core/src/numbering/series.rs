//! Which documents belong to a series, and which counter's number each one holds: the one rule
//! the trigger (the documents a gapless intent counts), `check` (what the audit reads), `void`
//! and the deletion records (a number still held) and `retry` (a dead letter's document) share.
//!
//! A document belongs to the series a trigger numbers in `field` when it holds a value there,
//! whether or not it matches the trigger's `match` now (an issued invoice taken back to draft
//! or cancelled keeps its number, and the number stays held), or when it holds none and matches
//! `match` (it waits for one); an audit reads them so ([`read_members`]). A number is *held* in
//! the counter its document's scope values and, for a series that resets, its period written
//! beside it (`<field>Period`) name.

use serde_json::{json, Map, Value};

use crate::ejson;
use crate::error::SeqError;
use crate::protocol::command::{Collection, Command, QueryOptions};
use crate::sequence::counter_id::CounterKey;
use crate::sequence::field::stored_value;
use crate::sequence::options::SequenceSpec;
use crate::sequence::period::{period_field, Period};

/// The filter of the documents of the series numbered in `field` whose unnumbered documents
/// are those matching `matching` (`None`: every document): `{}`, or `{$or: [{field: {$exists:
/// true}}, matching]}`.
pub fn members(field: &str, matching: Option<&Value>) -> Value {
    let mut filter = Map::new();
    if let Some(matching) = matching {
        let mut numbered = Map::new();
        numbered.insert(field.to_owned(), json!({ "$exists": true }));
        filter.insert("$or".to_owned(), json!([numbered, matching]));
    }
    Value::Object(filter)
}

/// [`members`] among the documents whose `_id` is one of `ids`.
pub fn members_among(field: &str, matching: Option<&Value>, ids: &[Value]) -> Value {
    let mut filter = Map::new();
    filter.insert("_id".to_owned(), json!({ "$in": ids }));
    if let Value::Object(members) = members(field, matching) {
        filter.extend(members);
    }
    Value::Object(filter)
}

/// The filter of the documents holding `number` (a value or an operator such as `{$in: […]}`)
/// in `field` in the counter `key` names: its scope values, its period beside the number.
/// Whether they match the trigger does not matter: a number a document holds is held.
pub fn holders(field: &str, key: &CounterKey, number: Value) -> Value {
    let mut filter = Map::new();
    for (scope, value) in &key.scope {
        filter.insert(scope.clone(), value.to_json());
    }
    if let Some(period) = &key.period {
        filter.insert(period_field(field), Value::String(period.text()));
    }
    filter.insert(field.to_owned(), number);
    Value::Object(filter)
}

/// The read of the series' documents an audit makes ([`members`]), each with what [`holding`]
/// reads of it: its `_id`, the number, the period beside it (a series that resets) and the
/// scope values; and its date in `date_field`, when given (the audit's date order).
pub fn read_members(
    spec: &SequenceSpec,
    field: &str,
    matching: Option<&Value>,
    date_field: Option<&str>,
) -> Command {
    let mut projection = Map::new();
    projection.insert("_id".to_owned(), json!(1));
    projection.insert(field.to_owned(), json!(1));
    if let Some(date_field) = date_field {
        projection.insert(date_field.to_owned(), json!(1));
    }
    if spec.reset().is_periodic() {
        projection.insert(period_field(field), json!(1));
    }
    for scope in spec.scope() {
        projection.insert(scope.clone(), json!(1));
    }
    Command::Find {
        collection: Collection::Documents,
        filter: members(field, matching),
        options: QueryOptions::projection(Value::Object(projection)),
        after_cluster_time: None,
    }
}

/// What a document holds in a series' field.
#[derive(Debug, Clone, PartialEq)]
pub enum Holding<'a> {
    /// An integer (`value` as stored), held in the counter `counter` names; `Err` when the
    /// document's scope values name no counter (missing, or not a usable value).
    Number {
        number: i64,
        value: &'a Value,
        counter: Result<String, SeqError>,
    },
    /// An integer of a series that resets, without a period of its kind beside it
    /// (`<field>Period` missing, or not `YYYY`/`YYYY-MM`/`YYYY-MM-DD` as the series resets):
    /// in no period's series.
    WithoutPeriod,
    /// Something else than an integer (a string, a fraction, `null`).
    NotANumber(&'a Value),
    /// Nothing: the document is unnumbered.
    Nothing,
}

/// What `document` holds in `field`, numbered by `spec`: the number and its counter.
pub fn holding<'a>(spec: &SequenceSpec, field: &str, document: &'a Value) -> Holding<'a> {
    let Some(value) = stored_value(document, field) else {
        return Holding::Nothing;
    };
    let Ok(number) = ejson::read_i64(value) else {
        return Holding::NotANumber(value);
    };
    let period = if spec.reset().is_periodic() {
        match stored_value(document, &period_field(field))
            .and_then(Value::as_str)
            .and_then(Period::parse)
            .filter(|period| spec.check_period(Some(period)).is_ok())
        {
            Some(period) => Some(period),
            None => return Holding::WithoutPeriod,
        }
    } else {
        None
    };
    Holding::Number {
        number,
        value,
        counter: spec.counter_id_in(Some(document), period.as_ref()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(options: Value) -> SequenceSpec {
        SequenceSpec::parse(&options).unwrap()
    }

    #[test]
    fn a_numbered_document_belongs_whether_or_not_it_matches() {
        let issued = json!({"status": "issued"});
        assert_eq!(
            members("no", Some(&issued)),
            json!({"$or": [{"no": {"$exists": true}}, {"status": "issued"}]})
        );
        assert_eq!(members("no", None), json!({}));
        assert_eq!(
            members_among("no", Some(&issued), &[json!(1)]),
            json!({"_id": {"$in": [1]}, "$or": [{"no": {"$exists": true}}, {"status": "issued"}]})
        );
        assert_eq!(members_among("no", None, &[]), json!({"_id": {"$in": []}}));
    }

    #[test]
    fn an_audit_reads_the_members_with_what_their_holding_needs() {
        let yearly = spec(json!({"name": "inv", "reset": "yearly", "scope": ["t"]}));
        let issued = json!({"status": "issued"});
        let Command::Find {
            collection,
            filter,
            options,
            ..
        } = read_members(&yearly, "no", Some(&issued), Some("issuedAt"))
        else {
            panic!("not a find");
        };
        assert_eq!(collection, Collection::Documents);
        assert_eq!(filter, members("no", Some(&issued)));
        assert_eq!(
            options.projection,
            Some(json!({"_id": 1, "no": 1, "issuedAt": 1, "noPeriod": 1, "t": 1}))
        );
        let Command::Find { options, .. } =
            read_members(&spec(json!({"name": "p"})), "no", None, None)
        else {
            panic!("not a find");
        };
        assert_eq!(options.projection, Some(json!({"_id": 1, "no": 1})));
    }

    #[test]
    fn a_held_number_is_found_by_its_scope_and_period_never_by_match() {
        let key = CounterKey::parse("invoices/tenant=acme/2026").unwrap();
        assert_eq!(
            holders("no", &key, json!({"$in": [2]})),
            json!({"tenant": "acme", "noPeriod": "2026", "no": {"$in": [2]}})
        );
    }

    #[test]
    fn a_document_holds_a_number_of_its_scope_and_period() {
        let yearly = spec(json!({"name": "inv", "reset": "yearly", "scope": ["t"]}));
        let cancelled = json!({"no": 2, "noPeriod": "2026", "t": "a", "status": "cancelled"});
        assert_eq!(
            holding(&yearly, "no", &cancelled),
            Holding::Number {
                number: 2,
                value: &json!(2),
                counter: Ok("inv/t=a/2026".to_owned())
            }
        );
        for without in [
            json!({"no": 2, "t": "a"}),
            json!({"no": 2, "noPeriod": "2026-05", "t": "a"}),
        ] {
            assert_eq!(holding(&yearly, "no", &without), Holding::WithoutPeriod);
        }
        let unscoped = json!({"no": 2, "noPeriod": "2026"});
        assert!(matches!(
            holding(&yearly, "no", &unscoped),
            Holding::Number {
                counter: Err(_),
                ..
            }
        ));
        assert_eq!(
            holding(&yearly, "no", &json!({"no": "x"})),
            Holding::NotANumber(&json!("x"))
        );
        assert_eq!(holding(&yearly, "no", &json!({"t": "a"})), Holding::Nothing);
        let plain = spec(json!({"name": "p"}));
        assert!(matches!(
            holding(&plain, "a.no", &json!({"a": {"no": {"$numberLong": "7"}}})),
            Holding::Number { number: 7, counter: Ok(ref id), .. } if id == "p"
        ));
    }
}
