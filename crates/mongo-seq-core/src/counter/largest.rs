//! Finding the furthest number already stored in a document collection: the first step of the
//! optimistic insert loop and of seeding a counter from existing documents.
//!
//! `findOne({field: {$gte: i64::MIN, $lte: i64::MAX}, …scope values}, {sort: {field: -1},
//! projection: {field: 1}})` (`sort: 1` when counting down). The range condition keeps only
//! numbers (MongoDB compares within a type bracket), so strings or ObjectIds in the field
//! cannot hide the largest number.

use serde_json::{Map, Value};

use crate::ejson;
use crate::error::SeqError;
use crate::protocol::command::{operator, Collection, Command, FindOptions};
use crate::sequence::field::check_number_field;
use crate::sequence::options::SequenceSpec;
use crate::sequence::scope;

/// The `findOne` of the furthest number in `field` among the documents sharing the scope
/// values of `document` (required when the sequence is scoped). Refused for a sequence that
/// resets: the numbers of a collection carry no period.
pub(crate) fn largest_number_query(
    spec: &SequenceSpec,
    field: &str,
    document: Option<&Value>,
) -> Result<Command, SeqError> {
    if spec.reset().is_periodic() {
        return Err(SeqError::InvalidOption {
            option: "reset".to_owned(),
            reason: format!(
                "the largest number in a collection belongs to no period: sequence `{}` resets {} and numbers through its counters (next, insertOne, insertMany)",
                spec.name(),
                spec.reset().name()
            ),
        });
    }
    check_number_field("field", field)?;
    let mut filter = Map::new();
    for scope_field in spec.scope() {
        let value = match document {
            Some(document) => scope::required_value(document, scope_field)?,
            None => {
                return Err(SeqError::MissingScopeField {
                    field: scope_field.clone(),
                    index: None,
                })
            }
        };
        filter.insert(scope_field.clone(), value.clone());
    }
    let mut numbers = Map::new();
    numbers.insert("$gte".to_owned(), ejson::long(i64::MIN));
    numbers.insert("$lte".to_owned(), ejson::long(i64::MAX));
    filter.insert(field.to_owned(), Value::Object(numbers));
    let direction = if spec.step() > 0 { -1 } else { 1 };
    Ok(Command::FindOne {
        collection: Collection::Documents,
        filter: Value::Object(filter),
        options: Some(FindOptions {
            sort: operator(field, Value::from(direction)),
            projection: operator(field, Value::from(1)),
        }),
    })
}

/// The number in `field` of the document the query found.
pub(crate) fn read_found(document: &Value, field: &str) -> Result<i64, SeqError> {
    let raw = scope::lookup(document, field)
        .ok()
        .flatten()
        .ok_or_else(|| SeqError::MalformedDocument {
            field: field.to_owned(),
            reason: "is missing".to_owned(),
        })?;
    ejson::read_i64(raw).map_err(|reason| SeqError::MalformedDocument {
        field: field.to_owned(),
        reason,
    })
}
