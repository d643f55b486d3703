//! Replies: what the caller feeds back to a plan after running its command — the server's
//! answer as data, server errors a plan handles included (a duplicate key, a write result's
//! `writeErrors` and `writeConcernError`).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::ejson;
use crate::error::SeqError;
use crate::protocol::cluster_time::ClusterTime;

/// The outcome of a command, as fed back to a plan. Serialized with a `kind` tag:
/// `{"kind":"document","document":{…}}`, `{"kind":"none"}`, `{"kind":"inserted"}`,
/// `{"kind":"duplicateKey","errmsg"?:…,"keyPattern"?:{…}}`, `{"kind":"documents","documents":[…]}`,
/// `{"kind":"writeResult","n":…,"nModified":…,"writeErrors"?:[{index, code, errmsg}],
/// "writeConcernError"?:{code, errmsg},"operationTime"?:{"$timestamp":…}}` (see
/// [`WriteResult`]), `{"kind":"waited"}`, `{"kind":"numbers","values":[…]}`,
/// `{"kind":"localDates","dates":["2026-05-17", …]}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "camelCase", try_from = "Value")]
pub enum Reply {
    /// A find returned this document (Extended JSON, canonical or relaxed).
    Document { document: Value },
    /// A find returned null (or an index was created: nothing to say).
    None,
    /// An insert succeeded.
    Inserted,
    /// The server answered with a duplicate-key error (code 11000) on `_id`'s index, or one
    /// that does not say which index.
    DuplicateKey,
    /// A duplicate-key error on a unique index other than `_id` (`index`: its name, or its key
    /// pattern). Sent as `duplicateKey` with what the server said (`errmsg`, `keyPattern`; or
    /// the `index` name, as this variant serializes);
    /// [`Reply::duplicate_key`] tells the two apart. Plans never see it: where a command's
    /// duplicate key can only mean `_id` (`findOneAndUpdate`, `insertOne`) it ends the plan with
    /// `UNIQUE_INDEX_CONFLICT`, elsewhere it is a `DuplicateKey` (see
    /// [`crate::protocol::duplicate_key`]).
    #[serde(rename = "duplicateKey")]
    DuplicateKeyOn { index: String },
    /// A `find` or `aggregate` returned these documents (every batch, in order).
    Documents { documents: Vec<Value> },
    /// What an `update`/`updateMany` did.
    WriteResult(WriteResult),
    /// A `wait` is over.
    Waited,
    /// The numbers a `take` got, in order.
    Numbers { values: Vec<i64> },
    /// The local dates of a `localDates` command's instants (`YYYY-MM-DD`), in order; the plan
    /// reads them.
    LocalDates { dates: Vec<String> },
}

/// The reply to a write command, as the server gives it: `n` statements matched, `nModified`
/// documents changed, the statements that failed, a write concern failure, and the command's
/// `operationTime`. Integers may be in any Extended JSON form; keys of the server's error
/// documents other than `index`, `code` and `errmsg` (`errInfo`, `keyPattern`, …) are ignored.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WriteResult {
    pub n: u64,
    pub n_modified: u64,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub write_errors: Vec<WriteError>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_concern_error: Option<WriteConcernError>,
    /// The logical time of the write (the server's `operationTime`: its newest oplog entry, or
    /// the member's newest when it wrote nothing). A replica set or sharded cluster reports it
    /// in every reply, a standalone server never (its reads are causally after its writes
    /// anyway); a read that must see this write waits for it with `afterClusterTime`
    /// ([`crate::protocol::concern`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub operation_time: Option<ClusterTime>,
}

/// One failed statement of a write command (`index` into its statements).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WriteError {
    pub index: u64,
    pub code: i64,
    pub errmsg: String,
}

/// The write concern could not be satisfied (the writes may or may not persist).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WriteConcernError {
    pub code: i64,
    pub errmsg: String,
}

/// Server error code of a duplicate key (unique index) violation.
pub const DUPLICATE_KEY: i64 = 11000;

impl Reply {
    /// Parses a raw reply with a typed error (`UNEXPECTED_REPLY`) instead of a serde error.
    pub fn from_json(raw: &Value) -> Result<Self, SeqError> {
        let Value::Object(map) = raw else {
            return Err(SeqError::unexpected_reply(format!(
                "a reply must be an object, got {}",
                ejson::describe(raw)
            )));
        };
        let kind = match map.get("kind") {
            Some(Value::String(kind)) => kind.as_str(),
            _ => return Err(SeqError::unexpected_reply("a reply needs a string `kind`")),
        };
        let expect_keys = |keys: &[&str]| -> Result<(), SeqError> {
            match map
                .keys()
                .find(|k| k.as_str() != "kind" && !keys.contains(&k.as_str()))
            {
                Some(extra) => Err(SeqError::unexpected_reply(format!(
                    "unknown key `{extra}` in a `{kind}` reply"
                ))),
                None => Ok(()),
            }
        };
        match kind {
            "document" => {
                expect_keys(&["document"])?;
                match map.get("document") {
                    Some(document @ Value::Object(_)) => Ok(Self::Document {
                        document: document.clone(),
                    }),
                    Some(other) => Err(SeqError::unexpected_reply(format!(
                        "`document` must be an object, got {}",
                        ejson::describe(other)
                    ))),
                    None => Err(SeqError::unexpected_reply(
                        "a `document` reply needs `document`",
                    )),
                }
            }
            "none" => expect_keys(&[]).map(|()| Self::None),
            "inserted" => expect_keys(&[]).map(|()| Self::Inserted),
            "duplicateKey" => {
                expect_keys(&["errmsg", "keyPattern", "index"])?;
                let text = |key: &str| match map.get(key) {
                    None | Some(Value::Null) => Ok(None),
                    Some(Value::String(text)) => Ok(Some(text.as_str())),
                    Some(other) => Err(SeqError::unexpected_reply(format!(
                        "`{key}` must be a string, got {}",
                        ejson::describe(other)
                    ))),
                };
                let key_pattern = map.get("keyPattern").filter(|pattern| !pattern.is_null());
                // `index`: the name, as this reply serializes (an executor sends `errmsg`).
                Ok(match text("index")? {
                    Some(index) => Self::duplicate_key_on(Some(index), key_pattern),
                    None => Self::duplicate_key(text("errmsg")?, key_pattern),
                })
            }
            "waited" => expect_keys(&[]).map(|()| Self::Waited),
            "documents" => {
                expect_keys(&["documents"])?;
                match map.get("documents") {
                    Some(Value::Array(items)) => {
                        if let Some(bad) = items.iter().find(|item| !item.is_object()) {
                            return Err(SeqError::unexpected_reply(format!(
                                "`documents` must hold objects, got {}",
                                ejson::describe(bad)
                            )));
                        }
                        Ok(Self::Documents {
                            documents: items.clone(),
                        })
                    }
                    Some(other) => Err(SeqError::unexpected_reply(format!(
                        "`documents` must be an array, got {}",
                        ejson::describe(other)
                    ))),
                    None => Err(SeqError::unexpected_reply(
                        "a `documents` reply needs `documents`",
                    )),
                }
            }
            "writeResult" => {
                expect_keys(&[
                    "n",
                    "nModified",
                    "writeErrors",
                    "writeConcernError",
                    "operationTime",
                ])?;
                WriteResult::from_json(map).map(Self::WriteResult)
            }
            "numbers" => {
                expect_keys(&["values"])?;
                let Some(Value::Array(items)) = map.get("values") else {
                    return Err(SeqError::unexpected_reply(
                        "a `numbers` reply needs an array `values`",
                    ));
                };
                // A loop rather than collecting into a `Result`: the adapter for that is one
                // more generic instance in the Wasm module.
                let mut values = Vec::with_capacity(items.len());
                for item in items {
                    values.push(ejson::read_i64(item).map_err(|reason| {
                        SeqError::unexpected_reply(format!("`values` {reason}"))
                    })?);
                }
                Ok(Self::Numbers { values })
            }
            "localDates" => {
                expect_keys(&["dates"])?;
                let Some(Value::Array(items)) = map.get("dates") else {
                    return Err(SeqError::unexpected_reply(
                        "a `localDates` reply needs an array `dates`",
                    ));
                };
                let mut dates = Vec::with_capacity(items.len());
                for item in items {
                    let Value::String(date) = item else {
                        return Err(SeqError::unexpected_reply(format!(
                            "`dates` must hold strings (YYYY-MM-DD), got {}",
                            ejson::describe(item)
                        )));
                    };
                    dates.push(date.clone());
                }
                Ok(Self::LocalDates { dates })
            }
            other => Err(SeqError::unexpected_reply(format!(
                "unknown reply kind {} (expected document, none, inserted, duplicateKey, documents, writeResult, waited, numbers, localDates)",
                ejson::quoted(&ejson::truncate(other))
            ))),
        }
    }

    pub(crate) fn name(&self) -> &'static str {
        match self {
            Self::Document { .. } => "document",
            Self::None => "none",
            Self::Inserted => "inserted",
            Self::DuplicateKey | Self::DuplicateKeyOn { .. } => "duplicateKey",
            Self::Documents { .. } => "documents",
            Self::WriteResult(_) => "writeResult",
            Self::Waited => "waited",
            Self::Numbers { .. } => "numbers",
            Self::LocalDates { .. } => "localDates",
        }
    }
}

impl Reply {
    /// When the write this replies to happened (a write result's `operationTime`).
    pub(crate) fn operation_time(&self) -> Option<ClusterTime> {
        match self {
            Self::WriteResult(result) => result.operation_time,
            _ => None,
        }
    }

    /// The documents of the reply to a `find` or `aggregate` (`command` names it in the error).
    pub(crate) fn into_documents(self, command: &str) -> Result<Vec<Value>, SeqError> {
        match self {
            Self::Documents { documents } => Ok(documents),
            other => Err(unexpected(&other, command)),
        }
    }

    /// The result of an `update` or `updateMany`; a write concern error fails it
    /// (`WRITE_CONCERN_FAILED`).
    pub(crate) fn into_write_result(self, command: &str) -> Result<WriteResult, SeqError> {
        let result = match self {
            Self::WriteResult(result) => result,
            other => return Err(unexpected(&other, command)),
        };
        match result.write_concern_error {
            Some(error) => Err(SeqError::WriteConcernFailed {
                code: error.code,
                message: error.errmsg,
            }),
            None => Ok(result),
        }
    }
}

impl From<WriteError> for SeqError {
    fn from(error: WriteError) -> Self {
        Self::WriteFailed {
            index: error.index,
            code: error.code,
            message: error.errmsg,
        }
    }
}

impl WriteResult {
    fn from_json(map: &Map<String, Value>) -> Result<Self, SeqError> {
        let count = |key: &str| -> Result<u64, SeqError> {
            match map.get(key) {
                None | Some(Value::Null) => Ok(0),
                Some(value) => unsigned(value, key),
            }
        };
        let write_errors = match map.get("writeErrors") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(items)) => {
                let mut errors = Vec::with_capacity(items.len());
                for item in items {
                    errors.push(WriteError::from_json(item)?);
                }
                errors
            }
            Some(other) => {
                return Err(SeqError::unexpected_reply(format!(
                    "`writeErrors` must be an array, got {}",
                    ejson::describe(other)
                )))
            }
        };
        let write_concern_error = match map.get("writeConcernError") {
            None | Some(Value::Null) => None,
            Some(Value::Object(error)) => Some(WriteConcernError {
                code: code_of(error, "writeConcernError")?,
                errmsg: errmsg_of(error),
            }),
            Some(other) => {
                return Err(SeqError::unexpected_reply(format!(
                    "`writeConcernError` must be an object, got {}",
                    ejson::describe(other)
                )))
            }
        };
        let operation_time = match map.get("operationTime") {
            None | Some(Value::Null) => None,
            Some(time) => {
                let time: ClusterTime = serde_json::from_value(time.clone()).map_err(|_| {
                    SeqError::unexpected_reply(format!(
                        "`operationTime` must be a timestamp ({{\"$timestamp\": {{\"t\", \"i\"}}}}), got {}",
                        ejson::describe(time)
                    ))
                })?;
                ClusterTime::new(time.t, time.i)
            }
        };
        Ok(Self {
            n: count("n")?,
            n_modified: count("nModified")?,
            write_errors,
            write_concern_error,
            operation_time,
        })
    }
}

impl WriteError {
    fn from_json(raw: &Value) -> Result<Self, SeqError> {
        let Value::Object(error) = raw else {
            return Err(SeqError::unexpected_reply(format!(
                "`writeErrors` entries must be objects, got {}",
                ejson::describe(raw)
            )));
        };
        let index = error
            .get("index")
            .ok_or_else(|| SeqError::unexpected_reply("a write error needs `index`"))?;
        Ok(Self {
            index: unsigned(index, "writeErrors.index")?,
            code: code_of(error, "writeErrors")?,
            errmsg: errmsg_of(error),
        })
    }
}

fn unsigned(value: &Value, key: &str) -> Result<u64, SeqError> {
    ejson::read_i64(value)
        .ok()
        .and_then(|int| u64::try_from(int).ok())
        .ok_or_else(|| {
            SeqError::unexpected_reply(format!(
                "`{key}` must be a non-negative integer, got {}",
                ejson::describe(value)
            ))
        })
}

fn code_of(error: &Map<String, Value>, what: &str) -> Result<i64, SeqError> {
    let code = error
        .get("code")
        .ok_or_else(|| SeqError::unexpected_reply(format!("a `{what}` entry needs `code`")))?;
    ejson::read_i64(code).map_err(|reason| {
        SeqError::unexpected_reply(format!("`{what}` code {}", ejson::truncate(&reason)))
    })
}

fn errmsg_of(error: &Map<String, Value>) -> String {
    match error.get("errmsg") {
        Some(Value::String(message)) => ejson::truncate_to(message, 1000),
        _ => String::new(),
    }
}

/// The error for a reply that is not one `command` can get.
pub(crate) fn unexpected(reply: &Reply, command: &str) -> SeqError {
    SeqError::unexpected_reply(format!(
        "`{}` is not a valid reply to {command}",
        reply.name()
    ))
}

impl TryFrom<Value> for Reply {
    type Error = SeqError;
    fn try_from(raw: Value) -> Result<Self, SeqError> {
        Self::from_json(&raw)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{Reply, WriteResult};
    use crate::protocol::cluster_time::ClusterTime;

    #[test]
    fn a_write_result_keeps_the_server_s_operation_time() {
        let time = json!({"$timestamp": {"t": 1_700_000_000u32, "i": 3}});
        let reply = Reply::from_json(
            &json!({"kind": "writeResult", "n": 1, "nModified": 1, "operationTime": time}),
        )
        .unwrap();
        assert_eq!(reply.operation_time(), ClusterTime::new(1_700_000_000, 3));
        let text = serde_json::to_value(&reply).unwrap();
        assert_eq!(text["operationTime"], time, "it serializes as it came");
        // A standalone server reports none; other replies have none.
        let plain = Reply::from_json(&json!({"kind": "writeResult", "n": 1})).unwrap();
        assert_eq!(
            plain,
            Reply::WriteResult(WriteResult {
                n: 1,
                ..WriteResult::default()
            })
        );
        assert_eq!(plain.operation_time(), None);
        assert_eq!(Reply::None.operation_time(), None);
    }

    #[test]
    fn an_operation_time_that_is_not_a_timestamp_is_an_unexpected_reply() {
        for bad in [
            json!(5),
            json!("t"),
            json!({"$timestamp": {"t": -1, "i": 0}}),
            json!({"t": 1}),
        ] {
            let error = Reply::from_json(&json!({"kind": "writeResult", "operationTime": bad}))
                .unwrap_err();
            assert_eq!(error.code(), "UNEXPECTED_REPLY", "{bad}");
            assert!(error.to_string().contains("operationTime"), "{error}");
        }
    }
}
