//! Assign: number, once, every document that matches a filter and has no number yet (the
//! package's `assign(collection, filter, { sequence, field, formatField?, sort?, dateField? })`:
//! invoices numbered when they are issued, not when they are drafted).
//!
//! ```text
//! Assign(numbering whose condition is the filter, sort, nowMs):
//!   page: find {field: {$exists: false}, $and: [filter][, _id: {$nin: skipped}]}
//!              sort {<sort>, _id: 1} limit ASSIGN_PAGE projection {_id, scope, field, dateField}
//!     └─ no document ─▶ done {assigned, skipped}
//!   NumberBatch(page) without a lease: [localDates (a sequence that resets: each document's
//!     dateField, else nowMs)] → one reservation per counter (scope, period) → update, unordered,
//!     q {_id, field: {$exists: false}, $and: [filter]}, u {$set: {field, formatField, fieldPeriod}}
//!     (a number another document holds: renumbered, as a batch does)
//!   read back: find {_id: {$in: written}} projection {_id, field, fieldPeriod}
//!     └─ a document holding the number written for it was numbered by this call: assigned
//!   a full page ─▶ next page; else done
//! ```
//!
//! Several processes may assign at once: every write is conditioned on the document still
//! matching and still unnumbered, so no document gets two numbers; a number a losing writer
//! reserved is a gap (as with blocks). A document that cannot be placed in a counter (a scope
//! field missing, a `dateField` that is not a date) is skipped, reported with its error, and
//! left out of the later pages.

use serde::Serialize;
use serde_json::{json, Map, Value};

use crate::ejson;
use crate::error::SeqError;
use crate::numbering::batch::{BatchReport, Leaseless, NumberBatchMachine};
use crate::numbering::spec::{id_key, NumberingSpec};
use crate::protocol::command::{Collection, Command, QueryOptions};
use crate::protocol::machine::{launch, resume, Machine, MachinePlan};
use crate::protocol::note::Note;
use crate::protocol::plan::Step;
use crate::protocol::reply::Reply;
use crate::sequence::field::check_field_path;
use crate::sequence::field::stored_value;
use crate::sequence::instant::check_instant;
use crate::sequence::options::SequenceSpec;
use crate::sequence::period::Period;

/// Documents read (and numbered) per page.
pub const ASSIGN_PAGE: u64 = 1000;

/// One number an [`Assign`] gave.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Assigned {
    #[serde(rename = "_id")]
    pub id: Value,
    pub value: i64,
    /// The formatted id, when the sequence has a `format`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub formatted: Option<String>,
    /// The number's period, when the sequence resets.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub period: Option<Period>,
}

/// A document an [`Assign`] could not number.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Skipped {
    #[serde(rename = "_id")]
    pub id: Value,
    pub code: &'static str,
    pub message: String,
}

/// What an [`Assign`] did: the numbers it gave, in the order of the sort, and the documents it
/// passed over.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct AssignOutcome {
    pub assigned: Vec<Assigned>,
    pub skipped: Vec<Skipped>,
}

/// The assign plan; see the module docs.
pub type Assign = MachinePlan<AssignMachine>;

#[derive(Debug, Clone)]
enum AssignPhase {
    Page,
    Batch(Box<MachinePlan<NumberBatchMachine<Leaseless>>>),
    ReadBack(Vec<(Value, i64, Option<Period>)>),
    Finished,
}

/// The state of an [`Assign`].
#[derive(Debug, Clone)]
pub struct AssignMachine {
    numbering: NumberingSpec,
    sort: Value,
    now_ms: Option<i64>,
    /// The `_id`s of the page being numbered, in sort order.
    page: Vec<Value>,
    /// Whether the page was full (more may follow).
    full: bool,
    outcome: AssignOutcome,
    notes: Vec<Note>,
    phase: AssignPhase,
}

impl Assign {
    /// Numbers the documents matching `numbering`'s condition (required: the filter) that have
    /// no number, in the order of `sort` (a sort document of field paths and 1 / -1; `_id`
    /// breaks ties), placing each in the period of its `dateField` or, without one, of `now_ms`
    /// (the caller's clock, needed when the sequence resets).
    pub fn new(
        numbering: &NumberingSpec,
        sort: Option<&Value>,
        now_ms: Option<i64>,
    ) -> Result<Self, SeqError> {
        if numbering.condition().is_none() {
            return Err(SeqError::invalid_argument(
                "filter",
                "required: the documents to number (e.g. { status: \"issued\" })",
            ));
        }
        if numbering.gapless() {
            return Err(SeqError::invalid_argument(
                "gapless",
                "gapless numbering runs under a trigger's lease (the sidecar), not in an assign",
            ));
        }
        let sort = sort_document(sort)?;
        let sequence = numbering.sequence();
        let now_ms = match now_ms {
            Some(ms) if sequence.reset().is_periodic() => Some(check_instant("date", None, ms)?),
            _ => None,
        };
        if sequence.reset().is_periodic() && numbering.date_field().is_none() && now_ms.is_none() {
            return Err(SeqError::invalid_argument(
                "now",
                format!(
                    "sequence `{}` resets {}: an assign needs the time now, or a dateField",
                    sequence.name(),
                    sequence.reset().name()
                ),
            ));
        }
        let machine = AssignMachine {
            numbering: numbering.clone(),
            sort,
            now_ms,
            page: Vec::new(),
            full: false,
            outcome: AssignOutcome::default(),
            notes: Vec::new(),
            phase: AssignPhase::Page,
        };
        let first = Ok(Step::Command(machine.page_query()));
        Ok(MachinePlan::begin(machine, first))
    }
}

/// The package's `assign(collection, filter, { sequence, field, formatField?, sort?,
/// dateField? })`: the numbering of `spec` into `field` (and `format_field`) of the documents
/// matching `filter` (`{}`: every document), see [`Assign::new`].
pub fn assign_matching(
    spec: &SequenceSpec,
    field: &str,
    format_field: Option<&str>,
    filter: Value,
    sort: Option<&Value>,
    date_field: Option<&str>,
    now_ms: Option<i64>,
) -> Result<Assign, SeqError> {
    if !filter.is_object() {
        return Err(SeqError::invalid_argument(
            "filter",
            format!(
                "must be a filter document (`{{}}` for every document), got {}",
                ejson::describe(&filter)
            ),
        ));
    }
    let mut numbering =
        NumberingSpec::for_call(spec.clone(), field, format_field)?.with_condition(filter)?;
    if let Some(date_field) = date_field {
        numbering = numbering.with_date_field(date_field)?;
    }
    Assign::new(&numbering, sort, now_ms)
}

/// The sort of the pages: the caller's keys (field paths, 1 or -1) then `_id` ascending.
fn sort_document(sort: Option<&Value>) -> Result<Value, SeqError> {
    let mut keys = Map::new();
    match sort {
        None | Some(Value::Null) => {}
        Some(Value::Object(map)) => {
            for (field, direction) in map {
                check_field_path("sort", field)?;
                match ejson::read_i64(direction) {
                    Ok(1 | -1) => {
                        keys.insert(field.clone(), direction.clone());
                    }
                    _ => {
                        return Err(SeqError::invalid_argument(
                            "sort",
                            format!(
                                "`{field}` must be 1 or -1, got {}",
                                ejson::describe(direction)
                            ),
                        ))
                    }
                }
            }
        }
        Some(other) => {
            return Err(SeqError::invalid_argument(
                "sort",
                format!(
                    "must be a sort document such as {{ issuedAt: 1 }}, got {}",
                    ejson::describe(other)
                ),
            ))
        }
    }
    keys.entry("_id").or_insert(json!(1));
    Ok(Value::Object(keys))
}

impl AssignMachine {
    /// The next page: unnumbered, matching, not skipped before.
    fn page_query(&self) -> Command {
        let mut filter = Map::new();
        filter.insert(
            self.numbering.field().to_owned(),
            json!({ "$exists": false }),
        );
        if let Some(condition) = self.numbering.condition() {
            filter.insert("$and".to_owned(), json!([condition]));
        }
        if !self.outcome.skipped.is_empty() {
            let skipped: Vec<&Value> = self.outcome.skipped.iter().map(|s| &s.id).collect();
            filter.insert("_id".to_owned(), json!({ "$nin": skipped }));
        }
        let mut projection = Map::new();
        for field in self.numbering.document_fields() {
            projection.insert(field, json!(1));
        }
        Command::Find {
            collection: Collection::Documents,
            filter: Value::Object(filter),
            options: QueryOptions {
                projection: Some(Value::Object(projection)),
                sort: Some(self.sort.clone()),
                limit: Some(ASSIGN_PAGE),
                majority: false,
            },
            after_cluster_time: None,
        }
    }

    fn on_page(&mut self, reply: Reply) -> Result<Step<AssignOutcome>, SeqError> {
        let documents = reply.into_documents("find")?;
        if documents.is_empty() {
            return self.finish();
        }
        self.full = u64::try_from(documents.len()).unwrap_or(u64::MAX) >= ASSIGN_PAGE;
        self.page = documents
            .iter()
            .filter_map(|d| d.get("_id").cloned())
            .collect();
        if self.page.is_empty() {
            return Err(SeqError::unexpected_reply(
                "the documents of a page have no `_id`",
            ));
        }
        let times = vec![self.now_ms; documents.len()];
        let plan = MachinePlan::<NumberBatchMachine<Leaseless>>::build(
            &self.numbering,
            documents,
            &times,
            None,
            false,
            None,
        )?;
        launch(plan, &mut self.notes, |plan| {
            self.phase = AssignPhase::Batch(plan);
        })?
        .and_then(|report| self.on_batch(report))
    }

    /// The page's numbers are written: note the skipped documents, read the written back.
    fn on_batch(&mut self, report: BatchReport) -> Result<Step<AssignOutcome>, SeqError> {
        for (id, error) in &report.passed {
            self.outcome.skipped.push(Skipped {
                id: id.clone(),
                code: error.code(),
                message: error.to_string(),
            });
        }
        if report.written.is_empty() {
            return self.next_page();
        }
        let ids: Vec<Value> = report.written.iter().map(|(id, _, _)| id.clone()).collect();
        let mut projection = Map::new();
        projection.insert("_id".to_owned(), json!(1));
        projection.insert(self.numbering.field().to_owned(), json!(1));
        projection.insert(self.numbering.period_field(), json!(1));
        self.phase = AssignPhase::ReadBack(report.written);
        Ok(Step::Command(Command::Find {
            collection: Collection::Documents,
            filter: json!({ "_id": { "$in": ids } }),
            options: QueryOptions::projection(Value::Object(projection)),
            after_cluster_time: None,
        }))
    }

    /// Keeps the numbers the documents hold as written by this call, in the page's order.
    fn on_read_back(
        &mut self,
        reply: Reply,
        written: &[(Value, i64, Option<Period>)],
    ) -> Result<Step<AssignOutcome>, SeqError> {
        let documents = reply.into_documents("find")?;
        let period_field = self.numbering.period_field();
        let holds = |id: &Value, number: i64, period: Option<&Period>| {
            documents.iter().any(|d| {
                d.get("_id") == Some(id)
                    && self
                        .numbering
                        .stored(d)
                        .and_then(|v| ejson::read_i64(v).ok())
                        == Some(number)
                    && period.map_or(true, |p| {
                        stored_value(d, &period_field).and_then(Value::as_str)
                            == Some(p.text().as_str())
                    })
            })
        };
        let order = |id: &Value| {
            let key = id_key(id);
            self.page
                .iter()
                .position(|p| id_key(p) == key)
                .unwrap_or(usize::MAX)
        };
        let mut mine: Vec<&(Value, i64, Option<Period>)> = written
            .iter()
            .filter(|(id, number, period)| holds(id, *number, period.as_ref()))
            .collect();
        mine.sort_by_key(|(id, _, _)| order(id));
        for (id, number, period) in mine {
            self.outcome.assigned.push(Assigned {
                id: id.clone(),
                value: *number,
                formatted: self
                    .numbering
                    .sequence()
                    .format_value(*number, period.as_ref()),
                period: *period,
            });
        }
        self.next_page()
    }

    fn next_page(&mut self) -> Result<Step<AssignOutcome>, SeqError> {
        if !self.full {
            return self.finish();
        }
        self.phase = AssignPhase::Page;
        Ok(Step::Command(self.page_query()))
    }

    fn finish(&mut self) -> Result<Step<AssignOutcome>, SeqError> {
        self.phase = AssignPhase::Finished;
        Ok(Step::Done(self.outcome.clone()))
    }
}

impl Machine for AssignMachine {
    type Output = AssignOutcome;

    fn on_reply(&mut self, reply: Reply) -> Result<Step<AssignOutcome>, SeqError> {
        match std::mem::replace(&mut self.phase, AssignPhase::Finished) {
            AssignPhase::Page => self.on_page(reply),
            AssignPhase::Batch(plan) => resume(plan, reply, &mut self.notes, |plan| {
                self.phase = AssignPhase::Batch(plan);
            })?
            .and_then(|report| self.on_batch(report)),
            AssignPhase::ReadBack(written) => self.on_read_back(reply, &written),
            AssignPhase::Finished => Err(SeqError::unexpected_reply("no command is pending")),
        }
    }

    fn drain_notes(&mut self) -> Vec<Note> {
        std::mem::take(&mut self.notes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::plan::Plan;

    #[test]
    fn gapless_numbering_and_a_missing_filter_are_refused() {
        let spec = SequenceSpec::parse(&json!({"name": "inv"})).unwrap();
        let gapless = NumberingSpec::new(spec.clone(), "no", None, true)
            .unwrap()
            .with_condition(json!({"s": 1}))
            .unwrap();
        let error = Assign::new(&gapless, None, None).unwrap_err();
        assert_eq!(error.option_name(), Some("gapless"));
        let plain = NumberingSpec::new(spec.clone(), "no", None, false).unwrap();
        let error = Assign::new(&plain, None, None).unwrap_err();
        assert_eq!(error.option_name(), Some("filter"));
        let error = assign_matching(&spec, "no", None, json!("x"), None, None, None).unwrap_err();
        assert_eq!(error.option_name(), Some("filter"));
        // `{}` numbers every unnumbered document.
        let every = assign_matching(&spec, "no", None, json!({}), None, None, None).unwrap();
        let Ok(Step::Command(Command::Find { filter, .. })) = every.current_step() else {
            panic!("a page")
        };
        assert_eq!(filter, json!({"no": {"$exists": false}, "$and": [{}]}));
    }
}
