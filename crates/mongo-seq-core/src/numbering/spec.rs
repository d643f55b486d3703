//! A trigger's numbering: which sequence numbers which field of a document collection after
//! the documents are inserted (the sidecar's `[[trigger]]`), and the pieces its plans share —
//! reading the number a document holds, and the idempotent write of a number.
//!
//! The number is written after the insert by a compare-and-set statement of an `update`
//! command: `{q: {_id, field: {$exists: false}}, u: {$set: {field: n, formatField: "INV-…"}}}`
//! (gapless completions move a number with `q: {_id, field: <previous>}`), so a replayed batch
//! never overwrites a number.
//!
//! Numbering on issue: a `condition` (the trigger's `match` when it numbers on match, the
//! filter of an `assign`) goes into every write that gives a first number,
//! `q: {_id, field: {$exists: false}, $and: [condition]}`, and into the reads that decide
//! which documents still need one, so a document seen through a stale lookup (a draft) is
//! never numbered. A document that stops matching after it got its number keeps it.
//!
//! Periodic series: the numbers of a sequence that resets start again each period, so the
//! counter's period is written beside the number, in `<field>Period` (`"2026"`), and the unique
//! index covers it (scope fields, period, number). Each document's period comes from its
//! `dateField` (a BSON date), else from the instant the shell gives (an event's commit time),
//! else from its ObjectId `_id`'s timestamp.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

use crate::counter::shard_key::shown;
use crate::ejson;
use crate::error::SeqError;
use crate::lease::document::epoch_condition;
use crate::protocol::command::{Collection, Command, UpdateStatement};
use crate::sequence::field::{check_field_path, stored_value};
use crate::sequence::options::SequenceSpec;
use crate::sequence::period::{period_field, Period};

/// Validated numbering of a trigger. Construct with [`NumberingSpec::new`] (then
/// [`NumberingSpec::with_condition`], [`NumberingSpec::with_date_field`]) or
/// [`NumberingSpec::from_json`] (`{sequence: <options>, field, formatField?, gapless?,
/// condition?, dateField?}`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", try_from = "Value")]
pub struct NumberingSpec {
    sequence: SequenceSpec,
    field: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    format_field: Option<String>,
    gapless: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    condition: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    date_field: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct RawNumbering {
    sequence: Value,
    field: String,
    #[serde(default)]
    format_field: Option<String>,
    #[serde(default)]
    gapless: bool,
    #[serde(default)]
    condition: Option<Value>,
    #[serde(default)]
    date_field: Option<String>,
}

impl TryFrom<Value> for NumberingSpec {
    type Error = SeqError;
    fn try_from(raw: Value) -> Result<Self, SeqError> {
        Self::from_json(&raw)
    }
}

fn invalid(argument: &str, reason: &str) -> SeqError {
    SeqError::invalid_argument(argument, reason)
}

fn is_id(field: &str) -> bool {
    field == "_id" || field.starts_with("_id.")
}

impl NumberingSpec {
    /// Checks the rules of a trigger's numbering: the number (and the formatted id) cannot be
    /// `_id` (it cannot change after the insert), a formatted id needs both a `format` and a
    /// `formatField` (distinct from `field`), and the numbered field cannot scope its counter.
    pub fn new(
        sequence: SequenceSpec,
        field: &str,
        format_field: Option<&str>,
        gapless: bool,
    ) -> Result<Self, SeqError> {
        Self::build(sequence, field, format_field, gapless, true)
    }

    /// The numbering of a call that numbers documents and returns what it gave them (`assign`,
    /// `createNumberingIndex`): as [`Self::new`], but `formatField` is optional for a sequence
    /// with a format, as for an insert ([`crate::check_insert_fields`]): the call returns the
    /// formatted ids, and stores them only where `formatField` says. (A trigger returns
    /// nothing: its formatted ids need a field.)
    pub fn for_call(
        sequence: SequenceSpec,
        field: &str,
        format_field: Option<&str>,
    ) -> Result<Self, SeqError> {
        Self::build(sequence, field, format_field, false, false)
    }

    fn build(
        sequence: SequenceSpec,
        field: &str,
        format_field: Option<&str>,
        gapless: bool,
        format_field_required: bool,
    ) -> Result<Self, SeqError> {
        let sequence = sequence.with_gapless(gapless);
        sequence.refuse_sealed(if format_field_required {
            "a trigger that is not gapless (set gapless = true)"
        } else {
            "a call that numbers documents"
        })?;
        let not_id =
            "cannot be `_id`: _id cannot change after insert (the number is linked to _id instead)";
        if is_id(field) {
            return Err(invalid("field", not_id));
        }
        check_field_path("field", field)?;
        match (sequence.format(), format_field) {
            (Some(_), None) if format_field_required => {
                return Err(invalid(
                    "formatField",
                    "required when the sequence has a format",
                ))
            }
            (None, Some(_)) => return Err(invalid("format", "required when formatField is set")),
            (Some(_), Some(format_field)) => {
                if is_id(format_field) {
                    return Err(invalid("formatField", not_id));
                }
                check_field_path("formatField", format_field)?;
                if format_field == field {
                    return Err(invalid("formatField", "must differ from field"));
                }
            }
            (Some(_) | None, None) => {}
        }
        if sequence.scope().iter().any(|scope| scope == field) {
            return Err(invalid("scope", "must not contain the numbered field"));
        }
        if sequence.reset().is_periodic() {
            let period = period_field(field);
            if format_field == Some(period.as_str()) {
                return Err(invalid(
                    "formatField",
                    &format!(
                        "must differ from `{period}`: a periodic series writes the period there"
                    ),
                ));
            }
            if sequence.scope().contains(&period) {
                return Err(invalid(
                    "scope",
                    &format!(
                        "must not contain `{period}`: a periodic series writes the period there"
                    ),
                ));
            }
        }
        if gapless {
            let fence = fence_field(field);
            if format_field == Some(fence.as_str()) {
                return Err(invalid(
                    "formatField",
                    &format!("must differ from `{fence}`: gapless numbering fences moves with it"),
                ));
            }
            if sequence.scope().contains(&fence) {
                return Err(invalid(
                    "scope",
                    &format!("must not contain `{fence}`: gapless numbering fences moves with it"),
                ));
            }
        }
        Ok(Self {
            sequence,
            field: field.to_owned(),
            format_field: format_field.map(str::to_owned),
            gapless,
            condition: None,
            date_field: None,
        })
    }

    /// Numbers only the documents matching `condition` (a query filter document; `{}`
    /// matches every document): every first number is written where the document still matches, so a
    /// stale view of a document never numbers it. `INVALID_ARGUMENT` naming `condition`.
    pub fn with_condition(mut self, condition: Value) -> Result<Self, SeqError> {
        match &condition {
            Value::Object(_) => {}
            other => {
                return Err(SeqError::invalid_argument(
                    "condition",
                    format!("must be a filter document, got {}", ejson::describe(other)),
                ))
            }
        }
        self.condition = Some(condition);
        Ok(self)
    }

    /// Places each document in the period of the BSON date in its field `date_field` (a
    /// periodic sequence only). `INVALID_ARGUMENT` naming `dateField`.
    pub fn with_date_field(mut self, date_field: &str) -> Result<Self, SeqError> {
        check_field_path("dateField", date_field)?;
        if !self.sequence.reset().is_periodic() {
            return Err(invalid(
                "dateField",
                "needs a sequence that resets (reset yearly, monthly or daily): a sequence that never resets has no period for a date to choose",
            ));
        }
        let written = [Some(self.field.as_str()), self.format_field.as_deref()];
        if written.contains(&Some(date_field)) || date_field == self.period_field() {
            return Err(invalid(
                "dateField",
                "must differ from the fields numbering writes (field, formatField, its period field)",
            ));
        }
        self.date_field = Some(date_field.to_owned());
        Ok(self)
    }

    /// Parses `{sequence: <options>, field, formatField?, gapless?}` with typed errors.
    pub fn from_json(raw: &Value) -> Result<Self, SeqError> {
        let parsed: RawNumbering = serde_json::from_value(raw.clone()).map_err(|e| {
            SeqError::invalid_argument("numbering", ejson::truncate(&e.to_string()))
        })?;
        let sequence = SequenceSpec::parse(&parsed.sequence)?;
        let mut numbering = Self::new(
            sequence,
            &parsed.field,
            parsed.format_field.as_deref(),
            parsed.gapless,
        )?;
        if let Some(condition) = parsed.condition {
            numbering = numbering.with_condition(condition)?;
        }
        if let Some(date_field) = &parsed.date_field {
            numbering = numbering.with_date_field(date_field)?;
        }
        Ok(numbering)
    }

    pub fn sequence(&self) -> &SequenceSpec {
        &self.sequence
    }
    pub fn field(&self) -> &str {
        &self.field
    }
    pub fn format_field(&self) -> Option<&str> {
        self.format_field.as_deref()
    }
    pub fn gapless(&self) -> bool {
        self.gapless
    }
    /// The filter a document must match to be numbered, if any.
    pub fn condition(&self) -> Option<&Value> {
        self.condition.as_ref()
    }
    /// The field whose date places a document in a period, if any.
    pub fn date_field(&self) -> Option<&str> {
        self.date_field.as_deref()
    }

    /// The field a periodic series writes each number's period in, beside the number:
    /// `<field>Period`. The unique index covers it, so each period's numbers start again.
    pub fn period_field(&self) -> String {
        period_field(&self.field)
    }

    /// The paths of a document that batch numbering reads: `_id`, the scope fields, the
    /// numbered field, the date field, the sealed fields and the seal — sorted, none inside another (a projection refuses overlapping paths).
    /// Projected to these (a backfill page, a change stream's `fullDocument`), a document is
    /// numbered exactly as the whole one would be.
    pub fn document_fields(&self) -> Vec<String> {
        let seal_field = self.sequence.sealed().then(|| self.seal_field());
        let mut paths: Vec<&str> = ["_id", self.field.as_str()]
            .into_iter()
            .chain(self.sequence.scope().iter().map(String::as_str))
            .chain(self.date_field.as_deref())
            // And a deleted document's seal, from its pre-image (its deletion's record keeps it).
            .chain(self.sequence.seal_fields().iter().map(String::as_str))
            .chain(seal_field.as_deref())
            .collect();
        paths.sort_unstable();
        paths.dedup();
        let mut fields: Vec<String> = Vec::new();
        for path in paths {
            // Sorted, so a path's ancestors come before it.
            let inside = fields.iter().any(|outer| {
                path.strip_prefix(outer.as_str())
                    .is_some_and(|rest| rest.starts_with('.'))
            });
            if !inside {
                fields.push(path.to_owned());
            }
        }
        fields
    }

    /// Where a sealed series writes a number's seal (`{hash, previous}`): `<field>Seal`.
    pub fn seal_field(&self) -> String {
        format!("{}Seal", self.field)
    }

    /// The field holding, on a document of a gapless intent that was completed (after a crash,
    /// a takeover or a deletion), the highest epoch of a holder that completed it:
    /// `<field>Epoch`. Moves are conditioned on it, so a holder that lost its lease while it
    /// completed an intent cannot move a number after its successor completed the same intent.
    pub fn fence_field(&self) -> String {
        fence_field(&self.field)
    }

    /// The number field's value in `document` (any value, `null` included), if present.
    pub(crate) fn stored<'a>(&self, document: &'a Value) -> Option<&'a Value> {
        stored_value(document, &self.field)
    }

    /// The statement writing `number` of `period` (and its formatted id) on document `id`:
    /// where it has no number yet, or, with `previous`, where it still holds `previous`.
    pub(crate) fn statement(
        &self,
        id: &Value,
        number: i64,
        previous: Option<i64>,
        period: Option<&Period>,
    ) -> UpdateStatement {
        let mut filter = Map::new();
        filter.insert("_id".to_owned(), id.clone());
        let current = match previous {
            Some(previous) => ejson::long(previous),
            None => json!({ "$exists": false }),
        };
        filter.insert(self.field.clone(), current);
        // A first number only where the document still matches (a move keeps a number the
        // document got while it matched). Mutant (simulator only): numbering on a stale lookup.
        let unconditioned = crate::mutants::active(crate::mutants::Mutant::UnconditionedNumbering);
        if let (Some(condition), None, false) = (&self.condition, previous, unconditioned) {
            filter.insert("$and".to_owned(), json!([condition]));
        }
        let mut set = Map::new();
        set.insert(self.field.clone(), ejson::long(number));
        if let (Some(format_field), Some(formatted)) = (
            &self.format_field,
            self.sequence.format_value(number, period),
        ) {
            set.insert(format_field.clone(), Value::String(formatted));
        }
        if let Some(period) = period {
            set.insert(self.period_field(), Value::String(period.text()));
        }
        UpdateStatement {
            filter: Value::Object(filter),
            update: json!({ "$set": set }),
        }
    }

    /// [`NumberingSpec::statement`] for a holder of `epoch` completing an intent: it applies
    /// only where no later holder has stamped the document (see [`NumberingSpec::fence_field`]).
    pub(crate) fn fenced_statement(
        &self,
        id: &Value,
        number: i64,
        previous: Option<i64>,
        period: Option<&Period>,
        epoch: i64,
    ) -> UpdateStatement {
        let mut statement = self.statement(id, number, previous, period);
        // Mutant (simulator only): the moves of the time before the fence.
        let unfenced = crate::mutants::active(crate::mutants::Mutant::UnfencedCompletion);
        if let (Value::Object(filter), false) = (&mut statement.filter, unfenced) {
            filter.insert(self.fence_field(), epoch_condition(epoch));
        }
        statement
    }

    /// `{field: {$exists: false}}`: the documents without a number (what a backfill numbers).
    pub fn unnumbered(&self) -> Value {
        self.field_exists(false)
    }

    /// `{field: {$exists: true}}`: the documents holding a number (or any value) in the field.
    pub fn numbered(&self) -> Value {
        self.field_exists(true)
    }

    fn field_exists(&self, exists: bool) -> Value {
        let mut filter = Map::new();
        filter.insert(self.field.clone(), json!({ "$exists": exists }));
        Value::Object(filter)
    }

    /// `{_id: {$in: ids}, field: {$exists: false}[, $and: [condition]]}`: the documents of
    /// `ids` still unnumbered (and still matching).
    pub(crate) fn unnumbered_filter(&self, ids: &[Value]) -> Value {
        let mut filter = Map::new();
        filter.insert("_id".to_owned(), json!({ "$in": ids }));
        filter.insert(self.field.clone(), json!({ "$exists": false }));
        if let Some(condition) = &self.condition {
            filter.insert("$and".to_owned(), json!([condition]));
        }
        Value::Object(filter)
    }

    /// `{_id: {$in: ids}[, $or: [{field: {$exists: true}}, condition]]}`: the documents of
    /// `ids` that count for a gapless intent: numbered, or unnumbered and still matching (an
    /// unnumbered document that stopped matching is, like a deleted one, no longer there).
    /// The series' rule: [`crate::numbering::series::members_among`].
    pub(crate) fn present_filter(&self, ids: &[Value]) -> Value {
        crate::numbering::series::members_among(&self.field, self.condition.as_ref(), ids)
    }

    /// The name of the index [`NumberingSpec::unique_index`] creates: `mongo_seq_<field>`.
    pub fn index_name(&self) -> String {
        format!("mongo_seq_{}", self.field)
    }

    /// The unique index that makes the database itself refuse a number held twice in a
    /// counter: on the scope fields, the period field (a periodic series) and the number field, only where the number exists (a
    /// partial index: unnumbered documents do not collide). The batch plans rely on it: a
    /// number a document inserted with it already holds is refused and renumbered.
    pub fn unique_index(&self) -> Command {
        let mut keys = Map::new();
        for scope in self.sequence.scope() {
            keys.insert(scope.clone(), json!(1));
        }
        if self.sequence.reset().is_periodic() {
            keys.insert(self.period_field(), json!(1));
        }
        keys.insert(self.field.clone(), json!(1));
        Command::CreateIndex {
            collection: Collection::Documents,
            name: self.index_name(),
            keys: Value::Object(keys),
            unique: true,
            partial_filter_expression: Some(self.numbered()),
        }
    }

    /// The shard key that refuses [`NumberingSpec::unique_index`] on a documents collection
    /// whose cluster catalog entry (`config.collections`) is `entry`, if one does: a sharded
    /// collection takes a unique index only when its shard key, ranged (`1`), is a prefix of
    /// the index's keys (a hashed shard key takes none). No entry, or one marked `dropped`
    /// (unsharded), or a shard key the index starts with: `None`, the index can exist. The key
    /// as the shell writes it: `{ customerId: "hashed" }`.
    pub fn shard_key_refusing_unique_index(&self, entry: Option<&Value>) -> Option<String> {
        let entry = entry.filter(|e| e.get("dropped") != Some(&Value::Bool(true)))?;
        let key = entry.get("key")?;
        // The index's keys, in order (as `unique_index` writes them).
        let mut index: Vec<String> = self.sequence.scope().to_vec();
        if self.sequence.reset().is_periodic() {
            index.push(self.period_field());
        }
        index.push(self.field.clone());
        match key {
            Value::Object(fields) => {
                let prefix = fields.len() <= index.len()
                    && fields
                        .iter()
                        .zip(&index)
                        .all(|((field, direction), indexed)| {
                            field == indexed && ejson::read_i64(direction) == Ok(1)
                        });
                (!prefix).then(|| shown(fields))
            }
            other => Some(ejson::truncate(&other.to_string())),
        }
    }
}

/// See [`NumberingSpec::fence_field`].
fn fence_field(field: &str) -> String {
    format!("{field}Epoch")
}

/// A key for an `_id` in sets and maps (its JSON text).
pub(crate) fn id_key(id: &Value) -> String {
    id.to_string()
}

/// The keys of the `_id`s of `documents`.
pub(crate) fn id_keys(documents: &[Value]) -> BTreeSet<String> {
    documents
        .iter()
        .filter_map(|d| d.get("_id").map(id_key))
        .collect()
}

#[cfg(test)]
mod tests;
