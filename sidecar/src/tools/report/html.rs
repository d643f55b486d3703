//! The auditor's report as one self-contained HTML page, rendered from [`AuditReport`] alone:
//! inline CSS (A4 when printed), inline SVG charts, no script, nothing fetched. Every value from
//! the database is escaped ([`escape`]). A broken chain is the first thing on the page (the
//! verdict at the top, in red) and the first thing of its series.

use std::fmt::Write as _;

use mongo_seq_core::seal::verify::SeriesSealReport;
use mongo_seq_core::{read_date, Class, DatedNumber};
use serde_json::Value;

use super::escape::escape;
use super::{chart, AuditReport, Chain, SeriesReport, TriggerReport};

/// The page's style: sober, printable on A4 (colours kept when printed).
const STYLE: &str = include_str!("style.css");

/// An instant (milliseconds since the epoch) in RFC 3339; none: "no date".
fn date(ms: Option<i64>) -> String {
    ms.and_then(|ms| bson::DateTime::from_millis(ms).try_to_rfc3339_string().ok())
        .unwrap_or_else(|| "no date".to_owned())
}

fn dated(number: Option<&DatedNumber>) -> String {
    number.map_or_else(
        || "none".to_owned(),
        |n| {
            format!(
                "{} <span class=\"meta\">({})</span>",
                n.number,
                escape(&date(n.date_ms))
            )
        },
    )
}

/// A stored JSON value as text: a string as itself, an Extended JSON date in RFC 3339, an
/// ObjectId as `ObjectId(hex)`, an Extended JSON integer as its digits, anything else as JSON.
fn value_text(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        Value::Object(map) if map.contains_key("$date") => {
            read_date(value).map_or_else(|_| value.to_string(), |ms| date(Some(ms)))
        }
        Value::Object(map) if map.contains_key("$oid") => match map.get("$oid") {
            Some(Value::String(hex)) => format!("ObjectId({hex})"),
            _ => value.to_string(),
        },
        Value::Object(map) => match map.get("$numberLong").or_else(|| map.get("$numberInt")) {
            Some(Value::String(digits)) => digits.clone(),
            _ => value.to_string(),
        },
        other => other.to_string(),
    }
}

fn class_name(class: Class) -> &'static str {
    match class {
        Class::Held => "held",
        Class::Voided => "voided",
        Class::Deleted => "deleted",
        Class::Gap => "unexplained gap",
        Class::Duplicate => "duplicate",
    }
}

/// `first..last`, or one number.
fn range(first: i64, last: i64) -> String {
    if first == last {
        first.to_string()
    } else {
        format!("{first}..{last}")
    }
}

/// The chain's status in a few words (the overview's cell, and its class).
fn chain_status(chain: &Chain) -> (&'static str, &'static str) {
    match chain {
        Chain::NotSealed => ("not sealed", "status-not-sealed"),
        Chain::Verified(_) => ("verified", "status-verified"),
        Chain::Broken(_) => ("BROKEN", "status-broken"),
    }
}

/// The whole page.
pub fn render(report: &AuditReport) -> String {
    let mut out = String::with_capacity(16 * 1024);
    let period = report
        .period
        .as_deref()
        .map_or_else(|| "every period".to_owned(), |p| format!("period {p}"));
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>Numbering audit report, {title}</title><style>{STYLE}</style></head><body>\n<header><h1>Numbering audit report</h1><p class=\"meta\">{title} · made {made} by mongo-seq {version}</p>\n",
        title = escape(&period),
        made = escape(&report.generated_at),
        version = escape(&report.version),
    );
    verdict(&mut out, report);
    overview(&mut out, report);
    out.push_str("</header>\n");
    for trigger in &report.triggers {
        trigger_section(&mut out, trigger);
    }
    out.push_str("</body></html>\n");
    out
}

/// The verdict at the top of the page: broken chains first, in red.
fn verdict(out: &mut String, report: &AuditReport) {
    if !report.broken_chains.is_empty() {
        let names: Vec<String> = report.broken_chains.iter().map(|s| escape(s)).collect();
        let _ = writeln!(
            out,
            "<p class=\"verdict verdict-broken\" id=\"verdict\">Chain of seals BROKEN in {} series: {}. The numbers or sealed fields of these series were changed, removed or inserted after they were sealed.</p>",
            names.len(),
            names.join(", ")
        );
    }
    let findings = report.findings();
    if !findings.is_empty() {
        let _ = write!(
            out,
            "<div class=\"verdict verdict-findings\">{} {}:",
            findings.len(),
            if findings.len() == 1 {
                "finding"
            } else {
                "findings"
            }
        );
        problems(out, &findings);
        out.push_str("</div>\n");
    } else if report.clean {
        out.push_str(
            "<p class=\"verdict verdict-clean\">Every number is accounted for; no finding.</p>\n",
        );
    }
}

/// One line per series: where to look.
fn overview(out: &mut String, report: &AuditReport) {
    out.push_str("<table class=\"overview\"><tr><th>Series</th><th>First</th><th>Last</th><th>Held</th><th>Voided</th><th>Deleted</th><th>Unexplained</th><th>Chain of seals</th></tr>\n");
    let mut any = false;
    for series in report.triggers.iter().flat_map(|t| &t.series) {
        any = true;
        let (status, class) = chain_status(&series.chain);
        let a = &series.account;
        let _ = writeln!(
            out,
            "<tr><td><code>{}</code></td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"{class}\">{status}</td></tr>",
            escape(&series.series),
            series.first.map_or_else(String::new, |n| n.number.to_string()),
            series.last.map_or_else(String::new, |n| n.number.to_string()),
            a.held,
            a.voided,
            a.deleted,
            a.gaps,
        );
    }
    if !any {
        out.push_str("<tr><td colspan=\"8\">No series in this period.</td></tr>\n");
    }
    out.push_str("</table>\n");
}

fn problems(out: &mut String, problems: &[String]) {
    if problems.is_empty() {
        return;
    }
    out.push_str("<ul class=\"problems\">");
    for problem in problems {
        let _ = write!(out, "<li>{}</li>", escape(problem));
    }
    out.push_str("</ul>\n");
}

fn trigger_section(out: &mut String, trigger: &TriggerReport) {
    let d = &trigger.definition;
    let _ = write!(
        out,
        "<section class=\"trigger\"><h2>{} · field <code>{}</code></h2><p class=\"meta\">trigger <code>{}</code></p>\n<table class=\"definition\">",
        escape(&trigger.collection),
        escape(&trigger.field),
        escape(&trigger.trigger),
    );
    let reset = match &d.time_zone {
        Some(zone) => format!("{} (periods in {})", d.reset, zone),
        None => d.reset.clone(),
    };
    let scope = if d.scope.is_empty() {
        "none (one series per period)".to_owned()
    } else {
        d.scope.join(", ")
    };
    let date_field = d.date_field.clone().unwrap_or_else(|| {
        "none (a document's issue date is its ObjectId's creation time)".to_owned()
    });
    let sealed = if d.seal_fields.is_empty() {
        "none (not sealed)".to_owned()
    } else {
        d.seal_fields.join(", ")
    };
    for (name, value) in [
        ("Sequence", d.sequence.clone()),
        ("Start, step", format!("{}, {}", d.start, d.step)),
        ("Starts again", reset),
        ("Scope", scope),
        (
            "Format",
            d.format.clone().unwrap_or_else(|| "none".to_owned()),
        ),
        (
            "Gapless",
            if d.gapless {
                "yes: every gap is a finding"
            } else {
                "no"
            }
            .to_owned(),
        ),
        ("Date field", date_field),
        ("Sealed fields", sealed),
    ] {
        let _ = write!(out, "<tr><th>{name}</th><td>{}</td></tr>", escape(&value));
    }
    let _ = writeln!(
        out,
        "</table>\n<p>Documents: {} · numbered {} · unnumbered {} ({} waiting as dead letters, {} unexplained) · not integers {} · without a period {}</p>",
        trigger.documents,
        trigger.numbered,
        trigger.unnumbered,
        trigger.dead_letters,
        trigger.unexplained_unnumbered,
        trigger.invalid,
        trigger.without_period,
    );
    problems(out, &trigger.problems);
    for series in &trigger.series {
        series_section(out, series);
    }
    dead_letters(out, &trigger.dead_letter_list, trigger.dead_letters);
    out.push_str("</section>\n");
}

fn series_section(out: &mut String, series: &SeriesReport) {
    let broken = if series.chain.is_broken() {
        " series-broken"
    } else {
        ""
    };
    let _ = writeln!(
        out,
        "<section class=\"series{broken}\"><h3>Series <code>{}</code>{}</h3>",
        escape(&series.series),
        series
            .period
            .as_deref()
            .map_or_else(String::new, |p| format!(" · period {}", escape(p))),
    );
    chain_line(out, &series.chain);
    problems(out, &series.problems);
    let a = &series.account;
    let reasons: Vec<String> = a
        .reasons
        .iter()
        .map(|r| format!("{} “{}”", r.count, escape(&r.reason)))
        .collect();
    let gaps: Vec<String> = a.gap_runs.iter().map(|r| range(r.first, r.last)).collect();
    let duplicates: Vec<String> = a
        .duplicate_numbers
        .iter()
        .map(|d| d.number.to_string())
        .collect();
    let with = |count: u64, list: &[String]| {
        if list.is_empty() {
            count.to_string()
        } else {
            format!("{count} ({})", list.join(", "))
        }
    };
    let numbers = match a.end {
        Some(end) => format!("{} ({} numbers)", range(a.start, end), a.numbers),
        None => "nothing issued".to_owned(),
    };
    out.push_str("<table class=\"facts\">");
    for (name, value) in [
        ("First number", dated(series.first.as_ref())),
        ("Last number", dated(series.last.as_ref())),
        (
            "Counter",
            series
                .counter
                .map_or_else(|| "no counter".to_owned(), |c| c.to_string()),
        ),
        ("Numbers of the series", numbers),
        ("Held", a.held.to_string()),
        ("Voided", with(a.voided, &reasons)),
        ("Deleted (recorded)", a.deleted.to_string()),
        ("Unexplained gaps", with(a.gaps, &gaps)),
        ("Held twice", with(a.duplicates, &duplicates)),
    ] {
        let _ = write!(out, "<tr><th>{name}</th><td>{value}</td></tr>");
    }
    out.push_str("</table>\n");
    if !a.runs.is_empty() {
        out.push_str("<h4>The numbers, in order</h4><table class=\"runs\"><tr><th>Numbers</th><th>Count</th><th>What</th></tr>");
        for run in &a.runs {
            let _ = write!(
                out,
                "<tr><td>{}</td><td class=\"n\">{}</td><td>{}</td></tr>",
                range(run.first, run.last),
                run.count,
                class_name(run.class)
            );
        }
        out.push_str("</table>\n");
        if a.runs_truncated {
            out.push_str(
                "<p class=\"meta\">The first ranges only; the counts above are complete.</p>\n",
            );
        }
    }
    if let Chain::Verified(seals) | Chain::Broken(seals) = &series.chain {
        chain_details(out, seals);
    }
    date_order(out, series);
    issued_per_day(out, series);
    out.push_str("</section>\n");
}

/// The chain's status, first in its series.
fn chain_line(out: &mut String, chain: &Chain) {
    match chain {
        Chain::NotSealed => {
            out.push_str("<p class=\"chain chain-not-sealed\">Chain of seals: not sealed.</p>\n")
        }
        Chain::Verified(seals) => {
            let _ = writeln!(
                out,
                "<p class=\"chain chain-verified\">Chain of seals verified: {} links, none changed, removed or inserted.</p>",
                seals.links
            );
        }
        Chain::Broken(seals) => {
            let first = seals.failures.first().map_or_else(String::new, |f| {
                format!(
                    ": first at number {} ({}, {}): {}",
                    f.number,
                    f.kind.name(),
                    reason_name(f.reason),
                    escape(&f.detail)
                )
            });
            let _ = writeln!(
                out,
                "<p class=\"chain chain-broken\"><strong>Chain of seals BROKEN</strong>: {} {} not verify{first}.</p>",
                seals.failures.len(),
                if seals.failures.len() == 1 { "link does" } else { "links do" }
            );
        }
    }
}

fn reason_name(reason: mongo_seq_core::seal::verify::SealFailureReason) -> String {
    serde_json::to_value(reason)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default()
}

fn chain_details(out: &mut String, seals: &SeriesSealReport) {
    out.push_str("<h4>Chain of seals</h4><table class=\"seals\">");
    for (name, link) in [("First seal", &seals.first), ("Last seal", &seals.last)] {
        let value = link.as_ref().map_or_else(
            || "none".to_owned(),
            |l| {
                format!(
                    "{} ({}) <span class=\"hash\">{}</span>",
                    l.number,
                    l.kind.name(),
                    escape(&l.hash)
                )
            },
        );
        let _ = write!(out, "<tr><th>{name}</th><td>{value}</td></tr>");
    }
    let _ = writeln!(
        out,
        "<tr><th>Links</th><td>{}</td></tr><tr><th>Not sealed yet (pending)</th><td>{}</td></tr><tr><th>Numbered before sealing</th><td>{}</td></tr></table>",
        seals.links, seals.pending, seals.before_sealing
    );
    if !seals.failures.is_empty() {
        out.push_str("<table class=\"failures\"><tr><th>Number</th><th>Link</th><th>Why</th><th>Detail</th></tr>");
        for f in &seals.failures {
            let _ = write!(
                out,
                "<tr><td class=\"n\">{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                f.number,
                f.kind.name(),
                reason_name(f.reason),
                escape(&f.detail)
            );
        }
        out.push_str("</table>\n");
    }
}

fn date_order(out: &mut String, series: &SeriesReport) {
    let Some(order) = &series.chronology else {
        return;
    };
    if order.earlier == 0 {
        let _ = writeln!(
            out,
            "<p>Date order: every number dated on or after the number before it ({} dated, {} without a date).</p>",
            order.dated, order.undated
        );
        return;
    }
    let _ = write!(
        out,
        "<h4>Date order: {} numbers dated before the number before them</h4><table class=\"date-order\"><tr><th>Number</th><th>Its date</th><th>After</th><th>Dated</th></tr>",
        order.earlier
    );
    for e in &order.examples {
        let _ = write!(
            out,
            "<tr><td class=\"n\">{}</td><td>{}</td><td class=\"n\">{}</td><td>{}</td></tr>",
            e.number,
            escape(&date(Some(e.date_ms))),
            e.previous,
            escape(&date(Some(e.previous_date_ms)))
        );
    }
    out.push_str("</table>\n");
}

fn issued_per_day(out: &mut String, series: &SeriesReport) {
    let Some(svg) = chart::per_day(&series.days) else {
        return;
    };
    let total: u64 = series.days.iter().map(|d| d.count).sum();
    // The first of the busiest days.
    let busiest = series
        .days
        .iter()
        .reduce(|best, day| if day.count > best.count { day } else { best });
    let _ = writeln!(
        out,
        "<figure>{svg}<figcaption>Numbers issued per day (UTC): {total} numbers on {} days{}{}.</figcaption></figure>",
        series.days.len(),
        busiest.map_or_else(String::new, |d| format!(
            ", the most on {} ({})",
            escape(&d.day),
            d.count
        )),
        if series.undated > 0 {
            format!("; {} without a date", series.undated)
        } else {
            String::new()
        },
    );
}

fn dead_letters(out: &mut String, list: &[Value], waiting: u64) {
    if list.is_empty() {
        return;
    }
    let _ = write!(
        out,
        "<h3>Dead letters ({waiting} waiting)</h3><table class=\"dead-letters\"><tr><th>Document</th><th>Code</th><th>Reason</th><th>Since</th><th>Attempts</th></tr>"
    );
    for letter in list {
        let field = |key: &str| letter.get(key).map(value_text).unwrap_or_default();
        let document = letter
            .get("_id")
            .and_then(|id| id.get("document"))
            .map(value_text)
            .unwrap_or_default();
        let _ = write!(
            out,
            "<tr><td><code>{}</code></td><td>{}</td><td>{}</td><td>{}</td><td class=\"n\">{}</td></tr>",
            escape(&document),
            escape(&field("code")),
            escape(&field("reason")),
            escape(&field("since")),
            escape(&field("attempts")),
        );
    }
    out.push_str("</table>\n");
    if u64::try_from(list.len()).unwrap_or(u64::MAX) < waiting {
        out.push_str("<p class=\"meta\">The first dead letters only; the count is complete.</p>\n");
    }
}
