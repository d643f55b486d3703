//! `mongo-seq report`: the auditor's report of one or more triggers' series, per series and
//! period — the definition, the first and last number with their dates, where every number went
//! (held, voided with reasons, deleted, unexplained), the chain of seals, the date-order
//! exceptions, the dead letters and the numbers issued per day. Every fact is one `check`'s audit
//! computed ([`super::check::audit_collection`], the core's `account`, `chronology`, `issue_days`)
//! or a chain's report (the core's `verify_series`); this module only gathers them into
//! [`AuditReport`], the `--json` output, from which [`html`] renders the page.

pub mod chart;
pub mod escape;
pub mod html;

use mongo_seq_core::seal::verify::SeriesSealReport;
use mongo_seq_core::{
    Account, ChronologyReport, CounterKey, DatedNumber, DayCount, Period, SequenceSpec,
};
use serde::Serialize;
use serde_json::Value;

use super::check::{CheckSummary, CheckTarget, SeriesFacts};

/// The whole report: what was asked, the verdict, each trigger.
#[derive(Debug, Clone, Serialize)]
pub struct AuditReport {
    /// When the report was made (RFC 3339, UTC).
    pub generated_at: String,
    /// The mongo-seq version that made it.
    pub version: String,
    /// The period asked for (`--period`): its series and those of its months and days; none:
    /// every period.
    pub period: Option<String>,
    /// Nothing to report: no problem in any series or trigger, and no chain broken.
    pub clean: bool,
    /// The series whose chain of seals does not verify.
    pub broken_chains: Vec<String>,
    pub triggers: Vec<TriggerReport>,
}

/// One trigger: its sequence's definition, its documents, its dead letters, its series.
#[derive(Debug, Clone, Serialize)]
pub struct TriggerReport {
    pub trigger: String,
    /// `database.collection`.
    pub collection: String,
    pub field: String,
    pub definition: Definition,
    /// Documents of the trigger's series (every period).
    pub documents: u64,
    pub numbered: u64,
    pub unnumbered: u64,
    /// Values in the field that are not integers.
    pub invalid: u64,
    /// Numbers without the period beside them (in no period's series).
    pub without_period: u64,
    /// Documents without a usable number waiting as dead letters.
    pub dead_letters: u64,
    /// Documents without a usable number and no dead letter.
    pub unexplained_unnumbered: u64,
    /// The dead letters waiting (at most 100), as stored.
    pub dead_letter_list: Vec<Value>,
    /// What fails outside any one series (documents without a usable number nothing explains,
    /// numbers without a period).
    pub problems: Vec<String>,
    /// The series of the period asked for, by counter id.
    pub series: Vec<SeriesReport>,
}

/// The sequence's options an auditor needs to read the numbers.
#[derive(Debug, Clone, Serialize)]
pub struct Definition {
    pub sequence: String,
    pub start: i64,
    pub step: i64,
    /// `never`, `yearly`, `monthly` or `daily`.
    pub reset: String,
    /// The time zone of the periods (a sequence that resets).
    pub time_zone: Option<String>,
    /// Fields whose values name a series each.
    pub scope: Vec<String>,
    /// The formatted id's template.
    pub format: Option<String>,
    /// Unexplained gaps are findings.
    pub gapless: bool,
    /// The field holding each document's issue date (else the ObjectId's time is used).
    pub date_field: Option<String>,
    /// The fields each number's seal covers (empty: the series is not sealed).
    pub seal_fields: Vec<String>,
}

/// One series (a counter: a scope's values and a period).
#[derive(Debug, Clone, Serialize)]
pub struct SeriesReport {
    /// The counter id.
    pub series: String,
    pub period: Option<String>,
    /// The counter's value (none: no counter document).
    pub counter: Option<i64>,
    /// The first number held, in issue order, and its issue date.
    pub first: Option<DatedNumber>,
    pub last: Option<DatedNumber>,
    /// Where every number went (the core's account: counts, void reasons, ranges).
    pub account: Account,
    /// Numbers dated before the number before them (with a date field).
    pub chronology: Option<ChronologyReport>,
    /// Numbers issued per day (UTC), days without one left out.
    pub days: Vec<DayCount>,
    /// Numbers without an issue date.
    pub undated: u64,
    /// The chain of seals.
    pub chain: Chain,
    /// This series' findings (the core's verdicts).
    pub problems: Vec<String>,
}

/// A series' chain of seals, as `verify_series` reported it.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum Chain {
    /// No chain report for this series: it is not sealed.
    NotSealed,
    Verified(SeriesSealReport),
    Broken(SeriesSealReport),
}

impl Chain {
    /// The chain of `series` among `seals` (none given: nothing is sealed).
    pub fn of(series: &str, seals: Option<&[SeriesSealReport]>) -> Self {
        match seals.and_then(|all| all.iter().find(|r| r.series == series)) {
            None => Self::NotSealed,
            Some(report) if report.verified => Self::Verified(report.clone()),
            Some(report) => Self::Broken(report.clone()),
        }
    }

    pub fn is_broken(&self) -> bool {
        matches!(self, Self::Broken(_))
    }
}

impl Definition {
    pub fn of(target: &CheckTarget) -> Self {
        let spec: &SequenceSpec = target.trigger.numbering.sequence();
        let periodic = spec.reset().is_periodic();
        Self {
            sequence: spec.name().to_owned(),
            start: spec.start(),
            step: spec.step(),
            reset: spec.reset().name().to_owned(),
            time_zone: periodic.then(|| spec.time_zone().to_owned()),
            scope: spec.scope().to_vec(),
            format: spec
                .format()
                .and_then(|f| serde_json::to_value(f).ok())
                .and_then(|v| v.as_str().map(str::to_owned)),
            gapless: target.gapless(),
            date_field: target.date_field().map(str::to_owned),
            seal_fields: spec.seal_fields().to_vec(),
        }
    }
}

/// Whether the series `counter_id` is one `period` asks for: every series without a period
/// asked; a series of a sequence that never resets (no period in its id), or whose id does not
/// read back (a finding of its own), always.
pub fn in_period(counter_id: &str, period: Option<Period>) -> bool {
    let Some(asked) = period else { return true };
    match CounterKey::parse(counter_id)
        .ok()
        .and_then(|key| key.period)
    {
        Some(own) => own.is_within(asked),
        None => true,
    }
}

/// One trigger's part of the report, from its audit (`summary`) and its chains (`seals`: the
/// chain reports of its series; none when it is not sealed), for the series of `period`.
pub fn trigger_report(
    target: &CheckTarget,
    summary: &CheckSummary,
    seals: Option<&[SeriesSealReport]>,
    period: Option<Period>,
) -> TriggerReport {
    let mut problems = summary.document_problems.clone();
    if summary.without_period > 0 {
        problems.push(format!(
            "{} numbered documents without a period (the period field beside the number)",
            summary.without_period
        ));
    }
    let series = summary
        .series
        .iter()
        .filter(|(id, _)| in_period(id, period))
        .map(|(id, facts)| series_report(id, facts, seals))
        .collect();
    TriggerReport {
        trigger: target.trigger.id.clone(),
        collection: target.trigger.ns.to_string(),
        field: target.field().to_owned(),
        definition: Definition::of(target),
        documents: summary.documents,
        numbered: summary.numbered,
        unnumbered: summary.unnumbered,
        invalid: summary.invalid,
        without_period: summary.without_period,
        dead_letters: summary.dead_letters,
        unexplained_unnumbered: summary.unexplained_unnumbered,
        dead_letter_list: summary.dead_letter_list.clone(),
        problems,
        series,
    }
}

fn series_report(
    counter_id: &str,
    facts: &SeriesFacts,
    seals: Option<&[SeriesSealReport]>,
) -> SeriesReport {
    SeriesReport {
        series: counter_id.to_owned(),
        period: CounterKey::parse(counter_id)
            .ok()
            .and_then(|key| key.period)
            .map(Period::text),
        counter: facts.counter,
        first: facts.issued.first,
        last: facts.issued.last,
        account: facts.account.clone(),
        chronology: facts.chronology.clone(),
        days: facts.issued.days.clone(),
        undated: facts.issued.undated,
        chain: Chain::of(counter_id, seals),
        problems: facts.problems.clone(),
    }
}

impl AuditReport {
    /// The report of `triggers`, made at `generated_at` by mongo-seq `version` for `period`.
    pub fn new(
        triggers: Vec<TriggerReport>,
        period: Option<Period>,
        generated_at: String,
        version: String,
    ) -> Self {
        let broken_chains: Vec<String> = triggers
            .iter()
            .flat_map(|t| &t.series)
            .filter(|s| s.chain.is_broken())
            .map(|s| s.series.clone())
            .collect();
        let clean = broken_chains.is_empty()
            && triggers
                .iter()
                .all(|t| t.problems.is_empty() && t.series.iter().all(|s| s.problems.is_empty()));
        Self {
            generated_at,
            version,
            period: period.map(Period::text),
            clean,
            broken_chains,
            triggers,
        }
    }

    /// Every finding, named by its trigger or series (the chains apart: `broken_chains`).
    pub fn findings(&self) -> Vec<String> {
        let mut findings = Vec::new();
        for trigger in &self.triggers {
            let own = trigger.problems.iter();
            findings.extend(own.map(|p| format!("{}: {p}", trigger.trigger)));
            for series in &trigger.series {
                let of_series = series.problems.iter();
                findings.extend(of_series.map(|p| format!("{}: {p}", series.series)));
            }
        }
        findings
    }

    /// The report as `--json` writes it: every integer beyond 2^53 − 1 a decimal string.
    pub fn to_json(&self) -> Value {
        super::counters::exact_numbers(serde_json::to_value(self).unwrap_or_default())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_period_selects_its_own_series_and_those_within_it() {
        let asked = Period::parse("2026");
        for (id, selected) in [
            ("inv/2026", true),
            ("inv/2026-03", true),
            ("inv/tenant=acme/2026-12-31", true),
            ("inv/2025", false),
            ("inv/2025-12", false),
            // No period: a sequence that never resets, or an id that does not read back.
            ("inv", true),
            ("inv/tenant=acme", true),
            ("(unscoped: MISSING_SCOPE_FIELD)", true),
        ] {
            assert_eq!(in_period(id, asked), selected, "{id}");
            assert!(in_period(id, None), "{id}: every period");
        }
        assert!(!in_period("inv/2026", Period::parse("2026-03")));
    }
}
