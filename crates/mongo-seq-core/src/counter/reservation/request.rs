//! [`ReserveRequest`]: what a [`Reservation`] takes, checked (counter id, count, `minCount`).

use super::*;

/// What to reserve. `minCount` (default `count`) allows a shorter range near the bound.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", try_from = "Value")]
pub struct ReserveRequest {
    pub counter_id: String,
    pub count: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_count: Option<u64>,
    /// Extra conditions ANDed into the update filter (not `_id`/`seq`).
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub extra_filter: Map<String, Value>,
    /// Extra top-level fields `$set` by the update and written into a newly created counter.
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub extra_set: Map<String, Value>,
    /// Record the sequence's definition on the counter and refuse a counter with another
    /// (`SEQUENCE_CONFLICT`): on unless a caller says `false` (nothing in mongo-seq does; a
    /// tool writing counters it does not own could).
    #[serde(skip_serializing_if = "is_true")]
    pub check_definition: bool,
}

fn is_true(value: &bool) -> bool {
    *value
}

impl TryFrom<Value> for ReserveRequest {
    type Error = SeqError;
    fn try_from(raw: Value) -> Result<Self, SeqError> {
        Self::from_json(&raw)
    }
}

impl ReserveRequest {
    /// A plain request for `count` numbers.
    pub fn new(counter_id: &str, count: u64) -> Self {
        Self {
            counter_id: counter_id.to_owned(),
            count,
            min_count: None,
            extra_filter: Map::new(),
            extra_set: Map::new(),
            check_definition: true,
        }
    }

    /// Parses a raw request (`{counterId, count, minCount?, extraFilter?, extraSet?,
    /// checkDefinition?}`) with typed errors (`INVALID_ARGUMENT`) naming the key.
    pub fn from_json(raw: &Value) -> Result<Self, SeqError> {
        const KEYS: [&str; 6] = [
            "counterId",
            "count",
            "minCount",
            "extraFilter",
            "extraSet",
            "checkDefinition",
        ];
        let bad = |reason: String| SeqError::invalid_argument("request", reason);
        let Value::Object(map) = raw else {
            return Err(bad(format!(
                "must be an object {{ counterId, count, … }}, got {}",
                ejson::describe(raw)
            )));
        };
        if let Some(key) = map.keys().find(|key| !KEYS.contains(&key.as_str())) {
            return Err(bad(format!(
                "has an unknown key `{}` (known: {})",
                ejson::truncate(key),
                KEYS.join(", ")
            )));
        }
        let counter_id = match map.get("counterId") {
            Some(Value::String(id)) => id.clone(),
            other => {
                return Err(bad(format!(
                    "`counterId` must be a string, got {}",
                    other.map_or_else(|| "nothing".to_owned(), ejson::describe)
                )))
            }
        };
        let count = |key: &str| -> Result<Option<u64>, SeqError> {
            match map.get(key) {
                None | Some(Value::Null) => Ok(None),
                Some(value) => ejson::read_i64(value)
                    .ok()
                    .and_then(|count| u64::try_from(count).ok())
                    .map(Some)
                    .ok_or_else(|| {
                        bad(format!(
                            "`{key}` must be a non-negative integer, got {}",
                            ejson::describe(value)
                        ))
                    }),
            }
        };
        let document = |key: &str| -> Result<Map<String, Value>, SeqError> {
            match map.get(key) {
                None | Some(Value::Null) => Ok(Map::new()),
                Some(Value::Object(document)) => Ok(document.clone()),
                Some(other) => Err(bad(format!(
                    "`{key}` must be a document, got {}",
                    ejson::describe(other)
                ))),
            }
        };
        let check_definition = match map.get("checkDefinition") {
            None | Some(Value::Null) => true,
            Some(Value::Bool(check)) => *check,
            Some(other) => {
                return Err(bad(format!(
                    "`checkDefinition` must be a boolean, got {}",
                    ejson::describe(other)
                )))
            }
        };
        Ok(Self {
            counter_id,
            count: count("count")?.ok_or_else(|| bad("has no `count`".to_owned()))?,
            min_count: count("minCount")?,
            extra_filter: document("extraFilter")?,
            extra_set: document("extraSet")?,
            check_definition,
        })
    }

    pub(super) fn validate(&self, counter_field: &str) -> Result<u64, SeqError> {
        if self.count == 0 || self.count > MAX_COUNT {
            return Err(SeqError::invalid_argument(
                "count",
                format!("must be from 1 to {MAX_COUNT}, got {}", self.count),
            ));
        }
        let min_count = self.min_count.unwrap_or(self.count);
        if min_count == 0 || min_count > self.count {
            return Err(SeqError::invalid_argument(
                "minCount",
                format!("must be 1..={}, got {min_count}", self.count),
            ));
        }
        for key in self.extra_filter.keys() {
            if is_counter_field(key, counter_field) || key.is_empty() {
                return Err(SeqError::invalid_argument(
                    "extraFilter",
                    format!("key {} is reserved or empty", ejson::quoted(key)),
                ));
            }
        }
        for key in self.extra_set.keys() {
            if is_counter_field(key, counter_field)
                || key.is_empty()
                || key.starts_with('$')
                || key.contains('.')
            {
                return Err(SeqError::invalid_argument(
                    "extraSet",
                    format!(
                        "key {} must be a plain top-level field other than _id and the counter field",
                        ejson::quoted(key)
                    ),
                ));
            }
        }
        if self.check_definition {
            // The definition's own condition and field: an extra `$or` would replace it.
            let taken = |key: &str| {
                key == "$or"
                    || key == definition::DIGEST_FIELD
                    || key == definition::FIELD
                    || key.starts_with("definition.")
            };
            if let Some(key) = self.extra_filter.keys().find(|key| taken(key)) {
                return Err(SeqError::invalid_argument(
                    "extraFilter",
                    format!("key {} is reserved by checkDefinition", ejson::quoted(key)),
                ));
            }
            if let Some(key) = [definition::FIELD, definition::DIGEST_FIELD]
                .into_iter()
                .find(|key| self.extra_set.contains_key(*key))
            {
                return Err(SeqError::invalid_argument(
                    "extraSet",
                    format!("key {} is reserved by checkDefinition", ejson::quoted(key)),
                ));
            }
        }
        Ok(min_count)
    }
}
