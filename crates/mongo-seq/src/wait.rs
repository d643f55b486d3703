//! Reading back a number another process assigns: the `mongo-seq` sidecar numbers inserted
//! documents, and an application that inserted one may wait for its number. Polls the document
//! by `_id` (works on every deployment; change streams need a replica set) with a growing
//! interval, until the field holds an integer or the deadline passes (js/src/wait-for-number.js
//! is the npm package's twin).

use std::time::Duration;

use mongo_seq_core::{check_field_path, ejson, SeqError};
use mongodb::bson::{doc, Bson, Document};
use mongodb::Collection;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::executor::convert;
use crate::sequences::Sequences;

/// The first poll comes this soon (or after `poll`, if shorter); each wait doubles, up to `poll`.
const FIRST_POLL: Duration = Duration::from_millis(10);

/// The options of [`Sequences::wait_for_number`]: the field the sidecar writes (default `seq`;
/// a path such as `meta.seq` too), how long to wait (default 5 s) and the longest pause between
/// two reads (default 200 ms). In a configuration file, `timeout_ms` and `poll_ms`.
///
/// ```
/// use std::time::Duration;
/// use mongo_seq::WaitOptions;
///
/// let options = WaitOptions::new().field("orderNo").timeout(Duration::from_secs(2));
/// let read: WaitOptions = serde_json::from_str(r#"{ "field": "orderNo", "timeout_ms": 2000 }"#)?;
/// assert_eq!(options, read);
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WaitOptions {
    #[serde(default = "default_field")]
    field: String,
    #[serde(
        default = "default_timeout",
        rename = "timeout_ms",
        alias = "timeoutMs",
        with = "milliseconds"
    )]
    timeout: Duration,
    #[serde(
        default = "default_poll",
        rename = "poll_ms",
        alias = "pollMs",
        with = "milliseconds"
    )]
    poll: Duration,
}

fn default_field() -> String {
    "seq".to_owned()
}

fn default_timeout() -> Duration {
    Duration::from_secs(5)
}

fn default_poll() -> Duration {
    Duration::from_millis(200)
}

impl Default for WaitOptions {
    fn default() -> Self {
        Self {
            field: default_field(),
            timeout: default_timeout(),
            poll: default_poll(),
        }
    }
}

impl WaitOptions {
    /// The defaults: `seq`, 5 s, at most 200 ms between reads.
    ///
    /// ```
    /// use mongo_seq::WaitOptions;
    ///
    /// assert_eq!(WaitOptions::new(), serde_json::from_str("{}")?);
    /// # Ok::<(), serde_json::Error>(())
    /// ```
    pub fn new() -> Self {
        Self::default()
    }

    /// The field the number is written to (default `seq`; `meta.seq` for a nested one).
    ///
    /// ```
    /// # use mongo_seq::WaitOptions;
    /// let options = WaitOptions::new().field("meta.seq"); // the sidecar's `field = "meta.seq"`
    /// # let _ = options;
    /// ```
    pub fn field(mut self, field: impl Into<String>) -> Self {
        self.field = field.into();
        self
    }

    /// How long to wait before `WAIT_TIMEOUT` (default 5 s; zero reads once).
    ///
    /// ```
    /// # use std::time::Duration;
    /// # use mongo_seq::WaitOptions;
    /// let once = WaitOptions::new().timeout(Duration::ZERO); // one read, then WAIT_TIMEOUT
    /// # let _ = once;
    /// ```
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// The longest pause between two reads (default 200 ms; at least 1 ms).
    ///
    /// ```
    /// # use std::time::Duration;
    /// # use mongo_seq::WaitOptions;
    /// let options = WaitOptions::new().poll(Duration::from_millis(50));
    /// assert_eq!(options, serde_json::from_str(r#"{ "poll_ms": 50 }"#)?);
    /// # Ok::<(), serde_json::Error>(())
    /// ```
    pub fn poll(mut self, poll: Duration) -> Self {
        self.poll = poll;
        self
    }
}

mod milliseconds {
    use std::time::Duration;

    use serde::{Deserialize, Deserializer, Serializer};

    pub(super) fn serialize<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u64(u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        u64::deserialize(d).map(Duration::from_millis)
    }
}

impl Sequences {
    /// Reads back the number another process (the `mongo-seq` sidecar) assigns to the
    /// document `id` of `collection`: returns it once the options' field holds an integer, or
    /// `WAIT_TIMEOUT` after the timeout (its details say whether the document exists). A field
    /// holding something else than an integer is `MALFORMED_DOCUMENT`. Cancel-safe: it only
    /// reads.
    ///
    /// ```no_run
    /// # async fn example(seqs: mongo_seq::Sequences, db: mongodb::Database) -> mongo_seq::Result<()> {
    /// use mongo_seq::WaitOptions;
    /// use mongodb::bson::{doc, Document};
    ///
    /// let orders = db.collection::<Document>("orders");
    /// let id = orders.insert_one(doc! { "item": "book" }).await?.inserted_id;
    /// // The sidecar numbers it in `seq` a moment later.
    /// let number = seqs.wait_for_number(&orders, id, WaitOptions::new()).await?;
    /// # let _ = number; Ok(()) }
    /// ```
    pub async fn wait_for_number<T: Send + Sync>(
        &self,
        collection: &Collection<T>,
        id: impl Into<Bson>,
        options: impl Into<Option<WaitOptions>>,
    ) -> Result<i64> {
        let WaitOptions {
            field,
            timeout,
            poll,
        } = options.into().unwrap_or_default();
        // The sidecar writes a field path (`seq`, `meta.seq`): the core's rules for it.
        check_field_path("field", &field)?;
        if poll < Duration::from_millis(1) {
            return Err(SeqError::InvalidOption {
                option: "poll".to_owned(),
                reason: format!("must be at least 1 ms, got {poll:?}"),
            }
            .into());
        }
        let id = id.into();
        let documents = collection.clone_with_type::<Document>();
        let deadline = tokio::time::Instant::now() + timeout;
        let mut delay = FIRST_POLL.min(poll);
        loop {
            let found = documents
                .find_one(doc! { "_id": id.clone() })
                .projection(doc! { &field: 1 })
                .await?;
            let value = found.as_ref().and_then(|document| {
                let mut parts = field.split('.');
                let first = document.get(parts.next()?)?;
                parts.try_fold(first, |value, key| value.as_document()?.get(key))
            });
            if let Some(value) = value.filter(|value| !matches!(value, Bson::Null)) {
                // The core reads the integer (any BSON integer type) or says why not.
                return ejson::read_i64(&convert::from_bson(value)).map_err(|reason| {
                    Error::Sequence(SeqError::MalformedDocument {
                        field: field.clone(),
                        reason,
                    })
                });
            }
            let now = tokio::time::Instant::now();
            if now >= deadline {
                return Err(Error::WaitTimeout {
                    field,
                    id: id.into_relaxed_extjson().to_string(),
                    timeout,
                    found: found.is_some(),
                });
            }
            tokio::time::sleep(delay.min(deadline - now)).await;
            delay = (delay * 2).min(poll);
        }
    }
}
