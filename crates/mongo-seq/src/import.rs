//! Adopting the counters of other mongoose plugins (mongoose-sequence, mongoose-auto-increment,
//! @typegoose/auto-increment): the core's import plan decides everything (which documents are
//! counters, the sequence and counter id of each, what to write: never backwards); this runs it
//! against the plugin's collection and the counters collection of these `Sequences`.

use std::collections::BTreeMap;

use mongo_seq_core::sequence::name::check_collection_name;
use mongo_seq_core::{CounterSource, ImportCounters, ImportReport, ImportRequest};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::error::Result;
use crate::executor::Executor;
use crate::plan_runner::PlanRunner;
use crate::run::run_plan;
use crate::sequences::Sequences;

/// The options of [`Sequences::import_counters`]: the plugin whose counters are read (`from`),
/// whether to write (`apply`; a dry run by default), its collection (`source`, the plugin's
/// default), sequence names by source key (`names`: mongoose-sequence's `id`, or
/// `<model>.<field>`), and the field of mongo-seq's counters (`counter_field`).
///
/// ```
/// use mongo_seq::{CounterSource, ImportOptions};
///
/// let options = ImportOptions::new(CounterSource::AutoIncrement)
///     .apply(true)
///     .name("User._id", "users");
/// # let _ = options;
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ImportOptions {
    from: CounterSource,
    #[serde(default)]
    apply: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    source: Option<String>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    names: BTreeMap<String, String>,
    #[serde(
        default,
        alias = "counterField",
        skip_serializing_if = "Option::is_none"
    )]
    counter_field: Option<String>,
}

impl ImportOptions {
    /// A dry run of the import from `from`'s default collection.
    ///
    /// ```
    /// use mongo_seq::{CounterSource, ImportOptions};
    ///
    /// let dry_run = ImportOptions::new(CounterSource::MongooseSequence);
    /// let same: ImportOptions = serde_json::from_str(r#"{ "from": "mongoose-sequence" }"#)?;
    /// assert_eq!(dry_run, same);
    /// # Ok::<(), serde_json::Error>(())
    /// ```
    pub fn new(from: CounterSource) -> Self {
        Self {
            from,
            apply: false,
            source: None,
            names: BTreeMap::new(),
            counter_field: None,
        }
    }

    /// Write (`true`), or only read and report (`false`, the default).
    ///
    /// ```
    /// # use mongo_seq::{CounterSource, ImportOptions};
    /// let options = ImportOptions::new(CounterSource::AutoIncrement).apply(true);
    /// let same: ImportOptions = serde_json::from_str(r#"{ "from": "auto-increment", "apply": true }"#)?;
    /// assert_eq!(options, same);
    /// # Ok::<(), serde_json::Error>(())
    /// ```
    pub fn apply(mut self, apply: bool) -> Self {
        self.apply = apply;
        self
    }

    /// The plugin's collection (default: `counters` for mongoose-sequence, `identitycounters`
    /// for the auto-increment plugins).
    ///
    /// ```
    /// # use mongo_seq::{CounterSource, ImportOptions};
    /// // mongoose-sequence's counters kept in `legacy_counters`.
    /// let options = ImportOptions::new(CounterSource::MongooseSequence).source("legacy_counters");
    /// # let _ = options;
    /// ```
    pub fn source(mut self, collection: impl Into<String>) -> Self {
        self.source = Some(collection.into());
        self
    }

    /// The sequence name of the source counter `key` (mongoose-sequence's `id`, or
    /// `<model>.<field>`; by default the name is the key).
    ///
    /// ```
    /// # use mongo_seq::{CounterSource, ImportOptions};
    /// // The auto-increment plugin's counter of `Invoice.number` becomes the sequence `invoices`.
    /// let options = ImportOptions::new(CounterSource::AutoIncrement).name("Invoice.number", "invoices");
    /// # let _ = options;
    /// ```
    pub fn name(mut self, key: impl Into<String>, sequence: impl Into<String>) -> Self {
        self.names.insert(key.into(), sequence.into());
        self
    }

    /// The number field of mongo-seq's counters (default `seq`).
    ///
    /// ```
    /// # use mongo_seq::{CounterSource, ImportOptions};
    /// // mongo-seq's counters here were made with `SequenceOptions::counter_field("sequence")`.
    /// let options = ImportOptions::new(CounterSource::MongooseSequence).counter_field("sequence");
    /// # let _ = options;
    /// ```
    pub fn counter_field(mut self, field: impl Into<String>) -> Self {
        self.counter_field = Some(field.into());
        self
    }
}

impl Sequences {
    /// Reads the plugin's counters and these `Sequences`' counters, and with `apply` moves
    /// each counter behind its source past it with `$max` — never backwards, safe while the old
    /// plugin still runs. Returns the report of every counter (source value, before, after,
    /// action) and of the documents left alone. mongoose-sequence's collection may be these
    /// `Sequences`' own (an import in place: its unique index is replaced first, see the
    /// report's `index`); the auto-increment plugins' may not.
    ///
    /// ```no_run
    /// # async fn example(seqs: mongo_seq::Sequences) -> mongo_seq::Result<()> {
    /// use mongo_seq::{CounterSource, ImportOptions};
    ///
    /// let report = seqs
    ///     .import_counters(ImportOptions::new(CounterSource::AutoIncrement).apply(true))
    ///     .await?;
    /// for counter in &report.counters {
    ///     println!("{}: {} → {:?}", counter.sequence, counter.source_last, counter.after);
    /// }
    /// # Ok(()) }
    /// ```
    pub async fn import_counters(&self, options: ImportOptions) -> Result<ImportReport> {
        let database = self.database();
        let mut raw = Map::new();
        raw.insert(
            "from".to_owned(),
            serde_json::to_value(options.from).unwrap_or_default(),
        );
        raw.insert("apply".to_owned(), Value::Bool(options.apply));
        raw.insert("counters".to_owned(), Value::from(self.counters().name()));
        if let Some(source) = &options.source {
            raw.insert("source".to_owned(), Value::from(source.as_str()));
        }
        if !options.names.is_empty() {
            let names = options
                .names
                .iter()
                .map(|(k, v)| (k.clone(), Value::from(v.as_str())));
            raw.insert("names".to_owned(), Value::Object(names.collect()));
        }
        if let Some(field) = &options.counter_field {
            raw.insert("counterField".to_owned(), Value::from(field.as_str()));
        }
        // Invalid options are refused here, before any I/O.
        let request = ImportRequest::from_json(&Value::Object(raw))?;
        check_collection_name("source", &request.source, Some(database.name()))?;
        let executor = Executor::new(self.counters().clone())
            .with_documents(database.collection(&request.source));
        let mut plan = ImportCounters::new(&request);
        run_plan(&mut plan, &mut PlanRunner::counters(&executor)).await
    }
}
