//! The options of a sequence, typed: a builder for code, serde for configuration files. Every
//! rule about them is the core's (`SequenceSpec::parse`, the npm package's rules and messages):
//! this only gathers the values.

use mongo_seq_core::{Reset, SequenceSpec};
use mongodb::bson::Bson;
use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::error::{Error, Result};
use crate::executor::convert;

/// The options of [`Sequences::sequence`](crate::Sequences::sequence), all optional:
///
/// | option | default | meaning |
/// |---|---|---|
/// | [`start`](Self::start) | 1 | first number issued |
/// | [`step`](Self::step) | 1 | non-zero; negative counts down |
/// | [`min`](Self::min), [`max`](Self::max) | none | every number issued lies in `[min, max]`; reaching the bound is `SEQUENCE_EXHAUSTED`, never a wrap |
/// | [`block`](Self::block) | 1 | numbers reserved per round trip, 1 to 1,000,000 |
/// | [`refill_ahead`](Self::refill_ahead) | `false` | reserve the next block when half of the block in hand is left, in the background (`block` ≥ 2) |
/// | [`max_block`](Self::max_block) | 10 × `block` (1 for `block` 1) | the most one round trip reserves as the block grows under load |
/// | [`scope`](Self::scope) | none | field paths (`"tenantId"`, `"customer.region"`): one counter per combination of values |
/// | [`format`](Self::format) | none | id template: `{seq}`, `{seq:06}` (zero padded), `{{`/`}}` for braces |
/// | [`counter_field`](Self::counter_field) | `"seq"` | the counter document's number field (`"sequence"`, `"seq_value"`: counters other recipes made) |
/// | [`counter_id`](Self::counter_id) | the name | the counter document's `_id` when it is not the name: a string or a document (unscoped sequences that never reset) |
/// | [`reset`](Self::reset) | never | start again every year, month or day: one counter per period (`invoices/2026`) |
/// | [`time_zone`](Self::time_zone) | `UTC` | the IANA zone whose local dates place numbers in periods |
/// | [`year_start`](Self::year_start) | 1 | the month a yearly series' fiscal year starts (named after the year it ends in) |
///
/// Values are checked when the sequence is defined, before any I/O, with errors naming the
/// option (`INVALID_OPTION`, `INVALID_STEP`, `INVALID_BOUNDS`, `INVALID_SCOPE`,
/// `INVALID_FORMAT`).
///
/// ```
/// use mongo_seq::SequenceOptions;
///
/// let invoices = SequenceOptions::new()
///     .start(1000)
///     .block(100)
///     .scope(["tenantId"])
///     .format("INV-{seq:06}");
/// # let _ = invoices;
/// ```
///
/// **In a configuration file**, the same keys, in `snake_case` (or the npm package's
/// `camelCase`); unknown keys and wrong values are refused when the file is read, by the same
/// rules:
///
/// ```
/// use std::collections::BTreeMap;
/// use mongo_seq::SequenceOptions;
///
/// let config: BTreeMap<String, SequenceOptions> = toml::from_str(r#"
///     [orders]
///     block = 100
///     refill_ahead = true
///
///     [invoices]
///     scope = ["tenantId"]
///     format = "INV-{seq:06}"
/// "#)?;
/// assert_eq!(config["orders"], SequenceOptions::new().block(100).refill_ahead(true));
///
/// let refused = toml::from_str::<BTreeMap<String, SequenceOptions>>("[orders]\nblock = 0\n");
/// assert!(refused.unwrap_err().to_string().contains("invalid option `block`"));
/// # Ok::<(), toml::de::Error>(())
/// ```
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "FiniteValue", into = "Value")]
pub struct SequenceOptions {
    /// The options as the core reads them (camelCase keys), as given.
    raw: Map<String, Value>,
}

/// Configuration keys written in Rust's case, and the core's key for each.
const SNAKE_CASE: [(&str, &str); 5] = [
    ("refill_ahead", "refillAhead"),
    ("max_block", "maxBlock"),
    ("counter_field", "counterField"),
    ("time_zone", "timeZone"),
    ("year_start", "yearStart"),
];

impl SequenceOptions {
    /// The default options (numbers 1, 2, 3, … one round trip each).
    ///
    /// ```
    /// use mongo_seq::SequenceOptions;
    ///
    /// assert_eq!(SequenceOptions::new(), SequenceOptions::default());
    /// ```
    pub fn new() -> Self {
        Self::default()
    }

    fn set(mut self, key: &str, value: impl Into<Value>) -> Self {
        self.raw.insert(key.to_owned(), value.into());
        self
    }

    /// The first number issued (default 1).
    ///
    /// ```
    /// # use mongo_seq::SequenceOptions;
    /// let invoices = SequenceOptions::new().start(1000); // 1000, 1001, …
    /// // The same in a configuration file.
    /// assert_eq!(invoices, toml::from_str("start = 1000")?);
    /// # Ok::<(), toml::de::Error>(())
    /// ```
    pub fn start(self, start: i64) -> Self {
        self.set("start", start)
    }

    /// The difference between two numbers (default 1; non-zero, negative counts down).
    ///
    /// ```
    /// # use mongo_seq::SequenceOptions;
    /// let countdown = SequenceOptions::new().start(10).step(-1).min(1); // 10, 9, …, 1
    /// assert_eq!(countdown, toml::from_str("start = 10\nstep = -1\nmin = 1")?);
    /// # Ok::<(), toml::de::Error>(())
    /// ```
    pub fn step(self, step: i64) -> Self {
        self.set("step", step)
    }

    /// The lowest number issued (the bound when counting down).
    ///
    /// ```
    /// # use mongo_seq::SequenceOptions;
    /// let seats = SequenceOptions::new().start(100).step(-1).min(1); // 100 down to 1, then exhausted
    /// assert_eq!(seats, toml::from_str("start = 100\nstep = -1\nmin = 1")?);
    /// # Ok::<(), toml::de::Error>(())
    /// ```
    pub fn min(self, min: i64) -> Self {
        self.set("min", min)
    }

    /// The highest number issued (the bound when counting up).
    ///
    /// ```
    /// # use mongo_seq::SequenceOptions;
    /// let tickets = SequenceOptions::new().max(9999); // then SEQUENCE_EXHAUSTED
    /// assert_eq!(tickets, toml::from_str("max = 9999")?);
    /// # Ok::<(), toml::de::Error>(())
    /// ```
    pub fn max(self, max: i64) -> Self {
        self.set("max", max)
    }

    /// Numbers reserved per round trip (1 to 1,000,000; default 1). The numbers a process has
    /// not handed out when it stops are a gap, never issued again.
    ///
    /// ```
    /// # use mongo_seq::SequenceOptions;
    /// let events = SequenceOptions::new().block(1000); // one round trip per 1000 numbers
    /// assert_eq!(events, toml::from_str("block = 1000")?);
    /// # Ok::<(), toml::de::Error>(())
    /// ```
    pub fn block(self, block: u64) -> Self {
        self.set("block", block)
    }

    /// Reserve the next block when half of the block in hand is left, in the background, so
    /// callers rarely wait for a round trip (needs `block` ≥ 2). A process then holds up to a
    /// block and a half, lost when it stops.
    ///
    /// ```
    /// # use mongo_seq::SequenceOptions;
    /// let events = SequenceOptions::new().block(1000).refill_ahead(true);
    /// assert_eq!(events, toml::from_str("block = 1000\nrefill_ahead = true")?);
    /// # Ok::<(), toml::de::Error>(())
    /// ```
    pub fn refill_ahead(self, refill_ahead: bool) -> Self {
        self.set("refillAhead", refill_ahead)
    }

    /// The most one round trip reserves as the block grows under load (at least `block`, at
    /// most 1,000,000; default 10 × `block`, and 1 for `block` 1). While refills come less than
    /// a second apart the block doubles, up to this; more than two seconds apart it halves, back
    /// to `block`. A process loses at most this many numbers when it stops (one and a half
    /// times with `refill_ahead`); `max_block(block)` keeps every block at `block`.
    ///
    /// ```
    /// # use mongo_seq::SequenceOptions;
    /// let steady = SequenceOptions::new().block(100).max_block(100); // never more than 100 per trip
    /// assert_eq!(steady, toml::from_str("block = 100\nmax_block = 100")?);
    /// # Ok::<(), toml::de::Error>(())
    /// ```
    pub fn max_block(self, max_block: u64) -> Self {
        self.set("maxBlock", max_block)
    }

    /// Field paths of the documents (`"tenantId"`, `"customer.region"`): one counter per
    /// combination of their values (counter `_id` `invoices/tenantId=acme`).
    ///
    /// ```
    /// # use mongo_seq::SequenceOptions;
    /// // One invoice counter per tenant and year: `invoices/tenantId=acme/year=2026`.
    /// let invoices = SequenceOptions::new().scope(["tenantId", "year"]);
    /// assert_eq!(invoices, toml::from_str(r#"scope = ["tenantId", "year"]"#)?);
    /// # Ok::<(), toml::de::Error>(())
    /// ```
    pub fn scope<I, S>(self, fields: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let fields: Vec<Value> = fields
            .into_iter()
            .map(|f| Value::String(f.into()))
            .collect();
        self.set("scope", fields)
    }

    /// The formatted id's template: `{seq}`, `{seq:06}` (zero padded to 6 digits), `{{` and
    /// `}}` for braces (`"INV-{seq:06}"` → `INV-000042`).
    ///
    /// ```
    /// # use mongo_seq::SequenceOptions;
    /// let invoices = SequenceOptions::new().format("INV-{seq:06}"); // INV-000042
    /// assert_eq!(invoices, toml::from_str(r#"format = "INV-{seq:06}""#)?);
    /// # Ok::<(), toml::de::Error>(())
    /// ```
    pub fn format(self, template: impl Into<String>) -> Self {
        self.set("format", template.into())
    }

    /// The counter document's number field (default `seq`, the tutorial's): `sequence` or
    /// `seq_value` keep counters other recipes made where they are.
    ///
    /// ```
    /// # use mongo_seq::SequenceOptions;
    /// // Counters `{ _id: "invoices", sequence: 500 }` made by another recipe keep counting in place.
    /// let invoices = SequenceOptions::new().counter_field("sequence");
    /// assert_eq!(invoices, toml::from_str(r#"counter_field = "sequence""#)?);
    /// # Ok::<(), toml::de::Error>(())
    /// ```
    pub fn counter_field(self, field: impl Into<String>) -> Self {
        self.set("counterField", field.into())
    }

    /// The counter document's `_id` when it is not the sequence's name (an unscoped sequence
    /// only): a string, or a document such as the Atlas trigger recipe's `{ db, coll }`, written
    /// with its fields in the order given (MongoDB compares documents field by field, in order).
    ///
    /// ```
    /// use mongo_seq::SequenceOptions;
    /// use mongodb::bson::doc;
    ///
    /// // The recipe's counter `{ _id: { db: "shop", coll: "students" }, seq_value: … }`.
    /// let students = SequenceOptions::new()
    ///     .counter_id(doc! { "db": "shop", "coll": "students" })
    ///     .counter_field("seq_value");
    /// # let _ = students;
    /// ```
    pub fn counter_id(self, id: impl Into<Bson>) -> Self {
        let id = convert::from_bson(&id.into());
        self.set("counterId", id)
    }

    /// Start again every period: [`Reset::Yearly`], [`Reset::Monthly`] or [`Reset::Daily`]
    /// (default [`Reset::Never`]). Each period has its own counter, the period last in its id
    /// (`invoices/2026`, `invoices/tenantId=acme/2026-05`), starting again at `start`; a number's
    /// period is that of the date it is issued for (default now: see
    /// [`Sequence::next_at`](crate::Sequence::next_at)) in the [`time_zone`](Self::time_zone).
    /// The format may then use `{yyyy}`, `{yy}`, `{mm}` (monthly, daily) and `{dd}` (daily).
    ///
    /// ```
    /// use mongo_seq::{Reset, SequenceOptions};
    ///
    /// let invoices = SequenceOptions::new().reset(Reset::Yearly).format("INV-{yyyy}-{seq:06}");
    /// assert_eq!(invoices, toml::from_str("reset = \"yearly\"\nformat = \"INV-{yyyy}-{seq:06}\"")?);
    /// # Ok::<(), toml::de::Error>(())
    /// ```
    pub fn reset(self, reset: Reset) -> Self {
        self.set("reset", reset.name())
    }

    /// The IANA time zone whose local dates place numbers in periods (default `UTC`; with
    /// [`reset`](Self::reset) only). A zone the compiled-in tz database does not know is
    /// `INVALID_OPTION` naming `timeZone` when the sequence is defined.
    ///
    /// ```
    /// use mongo_seq::{Reset, SequenceOptions};
    ///
    /// // 2025-12-31T23:30:00Z is a number of 2026 in Paris.
    /// let invoices = SequenceOptions::new().reset(Reset::Yearly).time_zone("Europe/Paris");
    /// assert_eq!(invoices, toml::from_str("reset = \"yearly\"\ntime_zone = \"Europe/Paris\"")?);
    /// # Ok::<(), toml::de::Error>(())
    /// ```
    pub fn time_zone(self, zone: impl Into<String>) -> Self {
        self.set("timeZone", zone.into())
    }

    /// The month (1–12) a yearly series' fiscal year starts (default 1; with
    /// `reset(Reset::Yearly)` only). The fiscal year is named after the calendar year it ends in:
    /// with `year_start(4)`, 2026-04-01 … 2027-03-31 is `2027`.
    ///
    /// ```
    /// use mongo_seq::{Reset, SequenceOptions};
    ///
    /// let fiscal = SequenceOptions::new().reset(Reset::Yearly).year_start(4);
    /// assert_eq!(fiscal, toml::from_str("reset = \"yearly\"\nyear_start = 4")?);
    /// # Ok::<(), toml::de::Error>(())
    /// ```
    pub fn year_start(self, month: u8) -> Self {
        self.set("yearStart", month)
    }

    /// The validated options of the sequence `name`: the core's rules, errors naming the option.
    pub(crate) fn spec(&self, name: &str) -> Result<SequenceSpec> {
        let mut raw = self.raw.clone();
        if let Some(given) = raw.get("name") {
            if given.as_str() != Some(name) {
                return Err(mongo_seq_core::SeqError::InvalidOption {
                    option: "name".to_owned(),
                    reason: format!(
                        "is the first argument of sequence() (\"{name}\"); the options say {given}"
                    ),
                }
                .into());
            }
        }
        raw.insert("name".to_owned(), Value::String(name.to_owned()));
        let spec = SequenceSpec::parse(&Value::Object(raw))?;
        // The core checks the zone's syntax; whether it exists is the tz database's to say.
        crate::executor::check_time_zone(&spec)?;
        Ok(spec)
    }
}

/// Options read from JSON (or any serde format, through `Value`): the core's keys
/// (`refillAhead`) or Rust's (`refill_ahead`), checked by the core's rules. `name`, when given,
/// must be the name the sequence is defined with.
///
/// ```
/// use mongo_seq::SequenceOptions;
/// use serde_json::json;
///
/// let options = SequenceOptions::try_from(json!({ "block": 100, "refillAhead": true }))?;
/// assert_eq!(options, SequenceOptions::new().block(100).refill_ahead(true));
///
/// let error = SequenceOptions::try_from(json!({ "colour": "red" })).unwrap_err();
/// assert_eq!(error.code(), Some("UNKNOWN_OPTION"));
/// # Ok::<(), mongo_seq::Error>(())
/// ```
impl TryFrom<Value> for SequenceOptions {
    type Error = Error;

    fn try_from(value: Value) -> Result<Self> {
        let Value::Object(given) = value else {
            // The core's message for options that are not an object.
            SequenceSpec::parse(&value)?;
            return Ok(Self::default());
        };
        let mut raw = Map::new();
        for (key, value) in given {
            let key = SNAKE_CASE
                .iter()
                .find(|(snake, _)| *snake == key)
                .map_or(key, |(_, camel)| (*camel).to_owned());
            if raw.contains_key(&key) {
                return Err(mongo_seq_core::SeqError::InvalidOption {
                    option: key,
                    reason: "is given twice (in snake_case and camelCase)".to_owned(),
                }
                .into());
            }
            raw.insert(key, value);
        }
        let options = Self { raw };
        // Checked now, as the sequence would be: a configuration file is refused when read.
        let name = match options.raw.get("name") {
            Some(Value::String(name)) => name.clone(),
            Some(_) => {
                SequenceSpec::parse(&Value::Object(options.raw.clone()))?;
                String::new()
            }
            None => "options".to_owned(),
        };
        options.spec(&name)?;
        Ok(options)
    }
}

impl TryFrom<FiniteValue> for SequenceOptions {
    type Error = Error;

    fn try_from(value: FiniteValue) -> Result<Self> {
        Self::try_from(value.0)
    }
}

/// A configuration's options as JSON values, refusing what JSON cannot hold: `Value` would read
/// TOML's `nan` and `inf` as `null`, an option left at its default.
pub(crate) struct FiniteValue(Value);

impl<'de> Deserialize<'de> for FiniteValue {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> std::result::Result<Self, D::Error> {
        deserializer.deserialize_any(FiniteVisitor)
    }
}

struct FiniteVisitor;

impl<'de> Visitor<'de> for FiniteVisitor {
    type Value = FiniteValue;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("sequence options")
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> std::result::Result<FiniteValue, E> {
        Ok(FiniteValue(Value::Bool(v)))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> std::result::Result<FiniteValue, E> {
        Ok(FiniteValue(Value::from(v)))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> std::result::Result<FiniteValue, E> {
        Ok(FiniteValue(Value::from(v)))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> std::result::Result<FiniteValue, E> {
        serde_json::Number::from_f64(v)
            .map(|n| FiniteValue(Value::Number(n)))
            .ok_or_else(|| E::custom(format!("must be a finite number, got {v}")))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> std::result::Result<FiniteValue, E> {
        Ok(FiniteValue(Value::String(v.to_owned())))
    }

    fn visit_unit<E: de::Error>(self) -> std::result::Result<FiniteValue, E> {
        Ok(FiniteValue(Value::Null))
    }

    fn visit_none<E: de::Error>(self) -> std::result::Result<FiniteValue, E> {
        Ok(FiniteValue(Value::Null))
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> std::result::Result<FiniteValue, D::Error> {
        FiniteValue::deserialize(d)
    }

    fn visit_seq<A: SeqAccess<'de>>(
        self,
        mut seq: A,
    ) -> std::result::Result<FiniteValue, A::Error> {
        let mut items = Vec::new();
        while let Some(FiniteValue(item)) = seq.next_element()? {
            items.push(item);
        }
        Ok(FiniteValue(Value::Array(items)))
    }

    fn visit_map<A: MapAccess<'de>>(
        self,
        mut map: A,
    ) -> std::result::Result<FiniteValue, A::Error> {
        let mut fields = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            let value = map
                .next_value::<FiniteValue>()
                .map_err(|e| de::Error::custom(format!("invalid option `{key}`: {e}")))?;
            fields.insert(key, value.0);
        }
        Ok(FiniteValue(Value::Object(fields)))
    }
}

impl From<SequenceOptions> for Value {
    fn from(options: SequenceOptions) -> Self {
        Value::Object(options.raw)
    }
}
