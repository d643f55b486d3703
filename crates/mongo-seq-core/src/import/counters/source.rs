//! Reading a plugin's counter document: its key, the fields that identify it, the scope it
//! becomes, its last number, or why it cannot be adopted.

use super::*;

/// A source document as a counter to adopt: (source key, identifying fields, scope document,
/// last number), or why it cannot be.
pub(super) type SourceCounter = (String, Value, Option<Map<String, Value>>, i64);

pub(super) fn read_source(from: CounterSource, document: &Value) -> Result<SourceCounter, String> {
    let text = |key: &str| match document.get(key) {
        Some(Value::String(text)) => Ok(text.clone()),
        other => Err(format!(
            "`{key}` must be a string, got {}",
            other.map_or_else(|| "nothing".to_owned(), ejson::describe)
        )),
    };
    let number = |key: &str| match document.get(key) {
        Some(value) => ejson::read_i64(value).map_err(|reason| format!("`{key}` {reason}")),
        None => Err(format!("has no `{key}`")),
    };
    match from {
        CounterSource::MongooseSequence => {
            let id = text("id")?;
            let last = number("seq")?;
            let (reference, scope) = match document.get("reference_value") {
                None | Some(Value::Null) => (Value::Null, None),
                Some(Value::Object(values)) if !ejson::is_unrepresentable(&Value::Object(values.clone())) && !values.keys().any(|k| k.starts_with('$')) => {
                    (Value::Object(values.clone()), Some(values.clone()))
                }
                Some(other) => return Err(format!(
                    "`reference_value` must be null or a document {{ <field>: <value> }}, got {} (older mongoose-sequence versions stored other shapes: move such a counter with setNext)",
                    ejson::describe(other)
                )),
            };
            Ok((
                id.clone(),
                ejson::object([
                    ("id", id.clone().into()),
                    ("referenceValue", reference.clone()),
                ]),
                scope,
                last,
            ))
        }
        CounterSource::AutoIncrement => {
            // mongoose-auto-increment and @typegoose/auto-increment write `model`.
            let model = text("model")?;
            let field = text("field")?;
            let last = number("count")?;
            Ok((
                format!("{model}.{field}"),
                ejson::object([
                    ("model", model.clone().into()),
                    ("field", field.clone().into()),
                ]),
                None,
                last,
            ))
        }
    }
}

/// The key `names` uses for a source document (`id`, or `model.field`), when it has one.
pub(super) fn source_key(from: CounterSource, document: &Value) -> Option<String> {
    let text = |key: &str| document.get(key).and_then(Value::as_str);
    match from {
        CounterSource::MongooseSequence => text("id").map(str::to_owned),
        CounterSource::AutoIncrement => Some(format!("{}.{}", text("model")?, text("field")?)),
    }
}

/// A scope document from `reference_value`'s keys, which may be dotted paths.
pub(super) fn scope_document(values: &Map<String, Value>) -> Value {
    let mut document = Map::new();
    for (path, value) in values {
        let mut parent = &mut document;
        let mut keys = path.split('.').peekable();
        while let Some(key) = keys.next() {
            if keys.peek().is_none() {
                parent.insert(key.to_owned(), value.clone());
                break;
            }
            let child = parent
                .entry(key.to_owned())
                .or_insert_with(|| Value::Object(Map::new()));
            if !child.is_object() {
                *child = Value::Object(Map::new());
            }
            let Value::Object(child) = child else { break };
            parent = child;
        }
    }
    Value::Object(document)
}
