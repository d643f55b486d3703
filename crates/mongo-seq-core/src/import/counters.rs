//! `import`: adopting the counters other mongoose plugins keep, so mongo-seq numbers on past
//! every number they issued (`mongo-seq import`, the package's `importCounters`).
//!
//! | from                | collection (default) | counter document                         | sequence      |
//! |---------------------|----------------------|------------------------------------------|---------------|
//! | `mongoose-sequence` | `counters`           | `{ id, reference_value, seq }`           | `id`          |
//! | `auto-increment`    | `identitycounters`   | `{ model, field, count }` (mongoose-auto-increment, @typegoose/auto-increment) | `<model>.<field>` |
//!
//! Both plugins keep the last number issued (`seq`, `count`). A mongoose-sequence counter with
//! `reference_value: { <field>: <value>, … }` becomes the counter of a sequence scoped by those
//! fields (in that order, which mongoose-sequence sorts). `names` renames sequences
//! (`{ "<id or model.field>": "<name>" }`); a name may end with a period (`invoices/2026`,
//! `tickets/2026-05`): the source counter is then that period's counter of a series that resets
//! (yearly, monthly or daily, as the period reads; a per-year counter kept by hand becomes the
//! year's series), its id the period last (`invoices/tenant=acme/2026`).
//!
//! The plan: one `find` on the source collection (the plan's `documents` collection), one
//! `find` of mongo-seq's counters it maps to (to report where they stand), then — only with
//! `apply` — one [`SeedFromMax`] per counter behind its source (`$max`: never backwards, safe
//! beside running writers). Documents it cannot read are reported as skipped, with the reason,
//! and left alone; so are mongo-seq counters that are malformed. The output reports every
//! counter: source value, mongo-seq's value before and after, and the action.
//!
//! mongoose-sequence keeps a unique index on `{ id, reference_value }` in its collection, the
//! auto-increment plugins one on `{ field, model }`: each admits a single document without those
//! fields, so mongo-seq's counters cannot live there as it is. Importing mongoose-sequence's
//! counters **in place** (`counters` = `source`, both `counters` by default: replacing the plugin
//! where it stands) makes the collection usable by mongo-seq: with `apply`, before any counter is
//! written, a unique index on the same fields over mongoose-sequence's documents only
//! (`{ id: 1, reference_value: -1 }` where `id` exists; another key pattern, so both coexist and
//! uniqueness never lapses) is created, then `id_1_reference_value_1` dropped. A mongoose-sequence
//! still running there keeps its guarantee (its documents all have `id`); mongoose recreating its
//! index at start-up then fails on mongo-seq's counters (an `index` error event), harmlessly.
//! The auto-increment plugins' collection is never mongo-seq's (`counters` is refused there).
//!
//! ```text
//! find source ─► find mongo-seq's counters ─► [in place, apply: createIndex partial ─► dropIndex]
//!             ─► [apply: SeedFromMax per counter behind its source] ─► report
//! ```

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::counter::current::CounterState;
use crate::counter::document::read_counter;
use crate::counter::seed::SeedFromMax;
use crate::ejson;
use crate::error::SeqError;
use crate::import::request::{CounterSource, ImportRequest};
use crate::protocol::command::{Collection, Command, QueryOptions};
use crate::protocol::machine::{launch, resume, Machine, MachinePlan};
use crate::protocol::note::Note;
use crate::protocol::plan::Step;
use crate::protocol::reply::{unexpected, Reply};
use crate::sequence::options::SequenceSpec;
use crate::sequence::period::Period;

mod report;
mod source;
pub use report::{
    ImportAction, ImportReport, ImportedCounter, IndexChange, SkippedCounter,
    MONGOOSE_SEQUENCE_INDEX, PARTIAL_INDEX,
};
use source::{read_source, scope_document, source_key};

#[derive(Debug, Clone)]
enum Phase {
    ReadSource,
    ReadCounters,
    CreateIndex,
    DropIndex,
    Seed(usize, Box<SeedFromMax>),
}

/// The import plan; see the module docs.
pub type ImportCounters = MachinePlan<ImportMachine>;

/// The state of an [`ImportCounters`].
#[derive(Debug, Clone)]
pub struct ImportMachine {
    request: ImportRequest,
    entries: Vec<Entry>,
    report: ImportReport,
    phase: Phase,
    notes: Vec<Note>,
}

impl ImportCounters {
    pub fn new(request: &ImportRequest) -> Self {
        let filter = match request.from {
            // The collection may hold other documents (mongo-seq's own counters among them).
            CounterSource::MongooseSequence => {
                ejson::object([("id", ejson::object([("$exists", true.into())]))])
            }
            CounterSource::AutoIncrement => ejson::object([]),
        };
        let machine = ImportMachine {
            request: request.clone(),
            entries: Vec::new(),
            report: ImportReport {
                from: request.from,
                applied: request.apply,
                counters: Vec::new(),
                skipped: Vec::new(),
                index: (request.source == request.counters).then(|| IndexChange {
                    dropped: MONGOOSE_SEQUENCE_INDEX.to_owned(),
                    created: PARTIAL_INDEX.to_owned(),
                    applied: false,
                }),
            },
            phase: Phase::ReadSource,
            notes: Vec::new(),
        };
        let command = Command::Find {
            collection: Collection::Documents,
            filter,
            options: QueryOptions {
                sort: Some(ejson::object([("_id", 1.into())])),
                ..QueryOptions::default()
            },
            after_cluster_time: None,
        };
        MachinePlan::begin(machine, Ok(Step::Command(command)))
    }
}

/// A counter to adopt: its sequence, and its line of the report.
#[derive(Debug, Clone)]
struct Entry {
    spec: SequenceSpec,
    counter: ImportedCounter,
}

impl ImportMachine {
    fn skip(&mut self, source: Value, reason: String) {
        self.report.skipped.push(SkippedCounter { source, reason });
    }

    /// The sequence and counter id of a source counter, or what to report instead.
    fn adopt(&self, document: &Value) -> Result<Entry, (Value, String)> {
        let fallback =
            || ejson::object([("_id", document.get("_id").cloned().unwrap_or(Value::Null))]);
        let (key, source, scope, last) =
            read_source(self.request.from, document).map_err(|reason| (fallback(), reason))?;
        let named = match self.request.names.get(&key) {
            Some(Value::String(name)) => name.clone(),
            _ => key,
        };
        // `invoices/2026`: the counter of period 2026 of `invoices`, which resets yearly.
        let (name, period) = match named.rsplit_once('/') {
            Some((name, last)) => match Period::parse(last) {
                Some(period) => (name.to_owned(), Some(period)),
                None => (named, None),
            },
            None => (named, None),
        };
        let mut options = Map::new();
        options.insert("name".to_owned(), Value::String(name.clone()));
        if let Some(period) = &period {
            options.insert("reset".to_owned(), period.reset().name().into());
        }
        let scope_fields: Vec<String> = scope.iter().flat_map(|s| s.keys().cloned()).collect();
        if !scope_fields.is_empty() {
            options.insert("scope".to_owned(), scope_fields.clone().into());
        }
        if let Some(field) = &self.request.counter_field {
            options.insert("counterField".to_owned(), Value::String(field.clone()));
        }
        let adopted = SequenceSpec::parse(&Value::Object(options)).and_then(|spec| {
            let scope = scope.as_ref().map(scope_document);
            let counter_id = spec.counter_id_in(scope.as_ref(), period.as_ref())?;
            Ok((spec, counter_id))
        });
        let (spec, counter_id) = adopted.map_err(|error| {
            (
                source.clone(),
                format!("{error} (name the sequence with `names`)"),
            )
        })?;
        Ok(Entry {
            spec,
            counter: ImportedCounter {
                source,
                sequence: name,
                scope: scope_fields,
                counter_id,
                source_last: last,
                before: None,
                action: ImportAction::Create,
                after: None,
            },
        })
    }

    fn done(&mut self) -> Step<ImportReport> {
        self.report.counters = self.entries.iter().map(|e| e.counter.clone()).collect();
        Step::Done(self.report.clone())
    }

    fn on_source(&mut self, documents: &[Value]) -> Result<Step<ImportReport>, SeqError> {
        self.check_names(documents)?;
        for document in documents {
            let entry = match self.adopt(document) {
                Ok(entry) => entry,
                Err((source, reason)) => {
                    self.skip(source, reason);
                    continue;
                }
            };
            // Two sources on one mongo-seq counter: the one further along counts.
            let reason = format!(
                "counter `{}` is also the import of a source further along",
                entry.counter.counter_id
            );
            let same = self
                .entries
                .iter_mut()
                .find(|other| other.counter.counter_id == entry.counter.counter_id);
            match same {
                Some(other) if other.counter.source_last >= entry.counter.source_last => {
                    self.skip(entry.counter.source, reason);
                }
                Some(other) => {
                    let replaced = std::mem::replace(other, entry);
                    self.skip(replaced.counter.source, reason);
                }
                None => self.entries.push(entry),
            }
        }
        if self.entries.is_empty() {
            // In place, the index is replaced all the same: it is what keeps mongo-seq out.
            return self.prepare();
        }
        let ids: Vec<Value> = self
            .entries
            .iter()
            .map(|entry| Value::String(entry.counter.counter_id.clone()))
            .collect();
        self.phase = Phase::ReadCounters;
        Ok(Step::Command(Command::Find {
            collection: Collection::Counters,
            filter: ejson::object([("_id", ejson::object([("$in", ids.into())]))]),
            options: QueryOptions::default(),
            after_cluster_time: None,
        }))
    }

    /// Refuses a name whose key matches no source counter (a typo would import under the
    /// default name and leave the intended sequence behind the numbers the plugin issued).
    fn check_names(&self, documents: &[Value]) -> Result<(), SeqError> {
        // The keys sorted and distinct, in the map type behind `serde_json::Map` used as a set
        // (see `ImportRequest::names`; a set of strings would be one more B-tree in the Wasm
        // module, and collecting one sorts first: a stable sort for this message alone).
        let mut keys = BTreeMap::new();
        for key in documents
            .iter()
            .filter_map(|document| source_key(self.request.from, document))
        {
            keys.insert(key, Value::Null);
        }
        let Some(unknown) = self
            .request
            .names
            .keys()
            .find(|key| !keys.contains_key(*key))
        else {
            return Ok(());
        };
        let listed: Vec<String> = keys.keys().take(10).map(|k| ejson::truncate(k)).collect();
        let more = if keys.len() > listed.len() {
            ", …"
        } else {
            ""
        };
        Err(SeqError::InvalidOption {
            option: "names".to_owned(),
            reason: format!(
                "`{}` is the key of no counter in `{}` (keys found: {}{more})",
                ejson::truncate(unknown),
                self.request.source,
                if listed.is_empty() {
                    "none".to_owned()
                } else {
                    listed.join(", ")
                }
            ),
        })
    }

    fn on_counters(&mut self, documents: &[Value]) -> Result<Step<ImportReport>, SeqError> {
        let mut malformed = Vec::new();
        for document in documents {
            let Some(Value::String(id)) = document.get("_id") else {
                continue;
            };
            let Some(entry) = self
                .entries
                .iter_mut()
                .find(|e| &e.counter.counter_id == id)
            else {
                continue;
            };
            match read_counter(document, id, entry.spec.counter_field())
                .and_then(|last| entry.spec.check_counter(id, last))
            {
                Ok(last) => entry.counter.before = Some(last),
                Err(error) => malformed.push((id.clone(), error.to_string())),
            }
        }
        // Malformed mongo-seq counters are reported and never written.
        for (id, reason) in malformed {
            if let Some(at) = self.entries.iter().position(|e| e.counter.counter_id == id) {
                let entry = self.entries.remove(at);
                self.skip(entry.counter.source, reason);
            }
        }
        let apply = self.request.apply;
        for Entry { counter, .. } in &mut self.entries {
            counter.action = match counter.before {
                None => ImportAction::Create,
                Some(before) if before >= counter.source_last => ImportAction::Keep,
                Some(_) => ImportAction::Advance,
            };
            if counter.action == ImportAction::Keep && apply {
                counter.after = counter.before;
            }
        }
        self.prepare()
    }

    /// In place, with `apply`: the index replaced before any counter is written.
    fn prepare(&mut self) -> Result<Step<ImportReport>, SeqError> {
        if !self.request.apply || self.report.index.is_none() {
            return self.seed_from(0);
        }
        self.phase = Phase::CreateIndex;
        Ok(Step::Command(Command::CreateIndex {
            collection: Collection::Counters,
            name: PARTIAL_INDEX.to_owned(),
            keys: ejson::object([("id", 1.into()), ("reference_value", (-1).into())]),
            unique: true,
            partial_filter_expression: Some(ejson::object([(
                "id",
                ejson::object([("$exists", true.into())]),
            )])),
        }))
    }

    /// Seeds the first counter from `start` on that needs it, or finishes.
    fn seed_from(&mut self, start: usize) -> Result<Step<ImportReport>, SeqError> {
        if !self.request.apply {
            return Ok(self.done());
        }
        let next = self
            .entries
            .iter()
            .enumerate()
            .skip(start)
            .find(|(_, e)| e.counter.action != ImportAction::Keep);
        let Some((index, entry)) = next else {
            return Ok(self.done());
        };
        let plan = SeedFromMax::new(
            &entry.spec,
            &entry.counter.counter_id,
            entry.counter.source_last,
        )?;
        let mut parked = None;
        match launch(plan, &mut self.notes, |plan| parked = Some(plan))? {
            Step::Command(command) => {
                if let Some(plan) = parked {
                    self.phase = Phase::Seed(index, plan);
                }
                Ok(Step::Command(command))
            }
            Step::Done(state) => self.seeded(index, state),
        }
    }

    fn seeded(
        &mut self,
        index: usize,
        state: CounterState,
    ) -> Result<Step<ImportReport>, SeqError> {
        if let Some(entry) = self.entries.get_mut(index) {
            entry.counter.after = state.last;
        }
        self.seed_from(index.saturating_add(1))
    }
}

impl Machine for ImportMachine {
    type Output = ImportReport;

    fn on_reply(&mut self, reply: Reply) -> Result<Step<ImportReport>, SeqError> {
        match std::mem::replace(&mut self.phase, Phase::ReadSource) {
            Phase::ReadSource => match reply {
                Reply::Documents { documents } => self.on_source(&documents),
                other => Err(unexpected(&other, "find")),
            },
            Phase::ReadCounters => match reply {
                Reply::Documents { documents } => self.on_counters(&documents),
                other => Err(unexpected(&other, "find")),
            },
            Phase::CreateIndex => match reply {
                Reply::None => {
                    self.phase = Phase::DropIndex;
                    Ok(Step::Command(Command::DropIndex {
                        collection: Collection::Counters,
                        name: MONGOOSE_SEQUENCE_INDEX.to_owned(),
                    }))
                }
                Reply::DuplicateKey => Err(SeqError::InvalidOption {
                    option: "source".to_owned(),
                    reason: format!(
                        "mongoose-sequence's counters in `{}` are not unique by {{ id, reference_value }} (its own index is missing): repair them, or import with `counters` of its own; nothing was written",
                        self.request.source
                    ),
                }),
                other => Err(unexpected(&other, "createIndex")),
            },
            Phase::DropIndex => match reply {
                Reply::None => {
                    if let Some(index) = &mut self.report.index {
                        index.applied = true;
                    }
                    self.seed_from(0)
                }
                other => Err(unexpected(&other, "dropIndex")),
            },
            Phase::Seed(index, plan) => {
                let mut parked = None;
                match resume(plan, reply, &mut self.notes, |plan| parked = Some(plan))? {
                    Step::Command(command) => {
                        if let Some(plan) = parked {
                            self.phase = Phase::Seed(index, plan);
                        }
                        Ok(Step::Command(command))
                    }
                    Step::Done(state) => self.seeded(index, state),
                }
            }
        }
    }

    fn drain_notes(&mut self) -> Vec<Note> {
        std::mem::take(&mut self.notes)
    }
}
