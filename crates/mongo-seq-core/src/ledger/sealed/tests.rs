#![allow(clippy::arithmetic_side_effects)] // small test numbers

use serde_json::{json, Value};

use super::*;
use crate::protocol::plan::Plan;
use crate::seal::verify::SealFailureReason;

fn spec() -> SequenceSpec {
    SequenceSpec::parse(
        &json!({"name": "inv", "reset": "yearly", "sealFields": ["total", "customer.name"]}),
    )
    .unwrap()
}

fn fields() -> Vec<String> {
    vec!["total".to_owned(), "customer.name".to_owned()]
}

fn plan() -> VerifySeal {
    VerifySeal::new(&spec(), "no").unwrap()
}

/// A sealed invoice of `series` after `previous` (updated to its hash).
fn invoice(series: &str, number: i64, previous: &mut Option<String>) -> (Value, Seal) {
    let period = &series[4..];
    let document = json!({"_id": number * 10, "no": number, "noPeriod": period,
        "total": number * 100, "customer": {"name": "Ana", "vat": "x"}});
    let link = Link::issued(series, number, Some(period), &document, &fields());
    let seal = link.seal(previous.as_deref()).unwrap();
    *previous = Some(seal.hash.clone());
    (document, seal)
}

fn with_seal(mut document: Value, seal: &Seal) -> Value {
    document["noSeal"] = json!({"hash": seal.hash, "previous": seal.previous});
    document
}

fn documents(documents: Vec<Value>) -> Reply {
    Reply::Documents { documents }
}

fn command(plan: &VerifySeal) -> Command {
    match plan.current_step().unwrap() {
        Step::Command(command) => command,
        Step::Done(_) => panic!("done early"),
    }
}

fn done(step: Step<Vec<SeriesSealReport>>) -> Vec<SeriesSealReport> {
    match step {
        Step::Done(reports) => reports,
        Step::Command(command) => panic!("not done: {command:?}"),
    }
}

#[test]
fn reads_counters_documents_and_ledger_and_chains_the_periods() {
    let mut plan = plan();
    let Command::Find {
        collection,
        options,
        filter,
        ..
    } = command(&plan)
    else {
        panic!("not a find")
    };
    assert_eq!(collection, Collection::Counters);
    assert_eq!(filter["$or"], spec().counters_of());
    assert_eq!(options.projection, Some(json!({"_id": 1, "seal": 1})));
    assert!(options.majority);

    // 2025: numbers 1 and 2, 2 voided (its entry written), head after the void.
    let mut previous = None;
    let (one, one_seal) = invoice("inv/2025", 1, &mut previous);
    let (_, two_seal) = invoice("inv/2025", 2, &mut previous);
    let void = Link {
        series: "inv/2025".to_owned(),
        kind: LinkKind::Void,
        number: 3,
        period: Some("2025".to_owned()),
        fields: Map::new(),
    };
    let (three, three_seal) = invoice("inv/2025", 3, &mut previous);
    let void_seal = void.seal(previous.as_deref()).unwrap();
    let head_2025 = void_seal.hash.clone();
    // 2026: chained to 2025's head; number 1's seal still pending in the counter, number 2's
    // deletion recorded in the counter only (its entry not written yet).
    let mut previous = Some(head_2025.clone());
    let (four, four_seal) = invoice("inv/2026", 1, &mut previous);
    let (gone, gone_seal) = invoice("inv/2026", 2, &mut previous);
    let deletion = Link {
        series: "inv/2026".to_owned(),
        kind: LinkKind::Deletion,
        number: 2,
        period: Some("2026".to_owned()),
        fields: Link::issued("inv/2026", 2, Some("2026"), &gone, &fields()).fields,
    };
    let deletion_seal = deletion.seal(previous.as_deref()).unwrap();

    let seal = |s: &Seal| json!({"hash": s.hash, "previous": s.previous});
    let step = plan
        .feed(documents(vec![
            json!({"_id": "inv/2025", "seal": {"hash": head_2025}}),
            json!({"_id": "inv/2026", "seal": {"hash": deletion_seal.hash,
                "pending": [{"id": 10, "number": 1, "seal": seal(&four_seal)}],
                "records": [{"_id": {"counter": "inv/2026", "number": 2}, "sequence": "inv",
                    "kind": "deleted", "reason": "document deleted", "seal": seal(&deletion_seal),
                    "removed": {"fields": deletion.fields, "seal": seal(&gone_seal)}}]}}),
            json!({"_id": "inv/t=x"}), // not a counter of this sequence: skipped
        ]))
        .unwrap();
    let Step::Command(Command::Find {
        collection,
        filter,
        options,
        ..
    }) = step
    else {
        panic!("no documents read")
    };
    assert_eq!(collection, Collection::Documents);
    assert_eq!(
        filter,
        json!({"noPeriod": "2025", "no": {"$gte": {"$numberDouble": "-Infinity"}}})
    );
    assert_eq!(
        options.projection,
        Some(
            json!({"_id": 1, "customer.name": 1, "no": 1, "noPeriod": 1, "noSeal": 1, "total": 1})
        )
    );
    assert_eq!(options.sort, Some(json!({"no": 1})));
    let step = plan
        .feed(documents(vec![
            with_seal(one, &one_seal),
            with_seal(three.clone(), &three_seal),
        ]))
        .unwrap();
    let Step::Command(Command::Find {
        collection, filter, ..
    }) = step
    else {
        panic!("no ledger read")
    };
    assert_eq!(collection, Collection::Ledger);
    assert_eq!(
        filter,
        crate::ledger::entry::entries_filed_under("inv/2025")
    );
    // Number 2 deleted with its record's removed link; 3's void.
    let void_entry = json!({"_id": {"counter": "inv/2025", "number": 3}, "kind": "void",
        "reason": "typo", "seal": seal(&void_seal)});
    let removed_two = json!({"_id": {"counter": "inv/2025", "number": 2}, "kind": "deleted",
        "reason": "document deleted", "seal": null,
        "removed": {"fields": {"total": 200, "customer.name": "Ana"}, "seal": seal(&two_seal)}});
    plan.feed(documents(vec![void_entry, removed_two])).unwrap();
    // 2026: the pending seal stands for the document's; the deleted one is gone.
    plan.feed(documents(vec![four])).unwrap();
    let reports = done(plan.feed(documents(vec![])).unwrap());
    assert_eq!(reports.len(), 2, "{reports:?}");
    assert!(reports.iter().all(|r| r.verified), "{reports:?}");
    assert_eq!(
        reports
            .iter()
            .map(|r| (r.series.as_str(), r.links))
            .collect::<Vec<_>>(),
        [("inv/2025", 4), ("inv/2026", 3)]
    );
}

#[test]
fn a_changed_field_and_a_period_chained_elsewhere_are_found() {
    let mut plan = plan();
    let mut previous = Some("not-2025s-head".to_owned());
    let (one, one_seal) = invoice("inv/2026", 1, &mut previous);
    let (mut two, two_seal) = invoice("inv/2026", 2, &mut previous);
    two["total"] = json!(201);
    plan.feed(documents(vec![
        json!({"_id": "inv/2025", "seal": {"hash": "head-2025"}}),
        json!({"_id": "inv/2026", "seal": {"hash": two_seal.hash}}),
    ]))
    .unwrap();
    plan.feed(documents(vec![])).unwrap();
    plan.feed(documents(vec![])).unwrap();
    plan.feed(documents(vec![
        with_seal(one, &one_seal),
        with_seal(two, &two_seal),
    ]))
    .unwrap();
    let reports = done(plan.feed(documents(vec![])).unwrap());
    let failures: Vec<_> = reports[1]
        .failures
        .iter()
        .map(|f| (f.number, f.reason))
        .collect();
    assert_eq!(
        failures,
        [
            (1, SealFailureReason::LinkMissing),
            (2, SealFailureReason::FieldChanged)
        ]
    );
    // 2025: its head names a chain none of its (no) links make.
    assert!(!reports[0].verified);
}

#[test]
fn pages_go_on_from_the_last_number_without_the_documents_read_with_it() {
    let mut plan = plan();
    plan.feed(documents(vec![json!({"_id": "inv/2026"})]))
        .unwrap();
    let page: Vec<Value> = (0..DOCUMENT_PAGE)
        .map(|i| {
            let number = i64::try_from(i / 2).unwrap() + 1; // each number twice
            json!({"_id": i, "no": number, "noPeriod": "2026"})
        })
        .collect();
    let Step::Command(Command::Find { filter, .. }) = plan.feed(documents(page)).unwrap() else {
        panic!("no next page")
    };
    let last = i64::try_from(DOCUMENT_PAGE / 2).unwrap();
    assert_eq!(
        filter,
        json!({"noPeriod": "2026", "no": {"$gte": last}, "_id": {"$nin": [DOCUMENT_PAGE - 2, DOCUMENT_PAGE - 1]}})
    );
}

#[test]
fn full_pages_of_counters_are_followed_by_the_next() {
    let mut plan = plan();
    let counters: Vec<Value> = (0..COUNTER_PAGE)
        .map(|i| json!({"_id": format!("inv/{}", 1900 + i)}))
        .collect();
    plan.feed(documents(counters)).unwrap();
    for _ in 0..COUNTER_PAGE {
        plan.feed(documents(vec![])).unwrap();
        plan.feed(documents(vec![])).unwrap();
    }
    let Command::Find {
        collection, filter, ..
    } = command(&plan)
    else {
        panic!("not a find")
    };
    assert_eq!(collection, Collection::Counters);
    assert_eq!(
        filter["_id"],
        json!({"$gt": format!("inv/{}", 1900 + COUNTER_PAGE - 1)})
    );
    let reports = done(plan.feed(documents(vec![])).unwrap());
    assert_eq!(reports.len(), 100);
    assert!(reports.iter().all(|r| r.verified && r.links == 0));
}

#[test]
fn what_is_not_a_sealed_series_is_refused_by_name() {
    let unsealed = SequenceSpec::parse(&json!({"name": "inv"})).unwrap();
    let error = VerifySeal::new(&unsealed, "no").unwrap_err();
    assert_eq!(error.code(), "INVALID_ARGUMENT");
    assert!(error.to_string().contains("`sealFields`"), "{error}");
    for field in ["$no", "", "a..b"] {
        let error = VerifySeal::new(&spec(), field).unwrap_err();
        assert!(error.to_string().contains("`field`"), "{error}");
    }
}

#[test]
fn a_malformed_counter_seal_fails_naming_the_counter() {
    let mut plan = plan();
    let error = plan
        .feed(documents(vec![
            json!({"_id": "inv/2026", "seal": {"hash": 7}}),
        ]))
        .unwrap_err();
    assert_eq!(error.code(), "MALFORMED_COUNTER");
    assert!(error.to_string().contains("inv/2026"), "{error}");
}

#[test]
fn each_scope_is_anchored_on_its_own_earlier_period() {
    let spec = SequenceSpec::parse(
        &json!({"name": "inv", "reset": "yearly", "scope": ["t"], "sealFields": ["total"]}),
    )
    .unwrap();
    let mut plan = VerifySeal::new(&spec, "no").unwrap();
    let sealed = |series: &str, previous: Option<&str>| {
        let (scope, period) = series[6..].split_once('/').unwrap();
        let document = json!({"_id": series, "no": 1, "noPeriod": period, "t": scope, "total": 1});
        let link = Link::issued(series, 1, Some(period), &document, &["total".to_owned()]);
        let seal = link.seal(previous).unwrap();
        (with_seal(document, &seal), seal.hash)
    };
    let (a_2025, head_a) = sealed("inv/t=a/2025", None);
    let (a_2026, head_a_2026) = sealed("inv/t=a/2026", Some(&head_a));
    // Scope b's first sealed period: its first link names nothing, whatever scope a's head is.
    let (b_2026, head_b) = sealed("inv/t=b/2026", None);
    let counter = |id: &str, head: &str| json!({"_id": id, "seal": {"hash": head}});
    plan.feed(documents(vec![
        counter("inv/t=a/2025", &head_a),
        json!({"_id": "inv/t=a/2025-x"}), // not a counter of the sequence
        counter("inv/t=a/2026", &head_a_2026),
        counter("inv/t=b/2026", &head_b),
    ]))
    .unwrap();
    for document in [a_2025, a_2026, b_2026] {
        plan.feed(documents(vec![document])).unwrap();
        let step = plan.feed(documents(vec![])).unwrap();
        if let Step::Done(reports) = step {
            assert_eq!(reports.len(), 3);
            assert!(reports.iter().all(|r| r.verified), "{reports:?}");
            return;
        }
    }
    panic!("not done");
}

#[test]
fn a_period_begun_before_a_late_link_of_the_earlier_one_verifies() {
    // 2025: 1, 2; 2026's first link names 2025's head then (2's); then a late 2025 document
    // (dated 2025, issued after 2026 began) extends 2025's chain with 3.
    let mut plan = plan();
    let mut previous_2025 = None;
    let (one, one_seal) = invoice("inv/2025", 1, &mut previous_2025);
    let (two, two_seal) = invoice("inv/2025", 2, &mut previous_2025);
    let mut previous_2026 = previous_2025.clone();
    let (three, three_seal) = invoice("inv/2025", 3, &mut previous_2025);
    let (first, first_seal) = invoice("inv/2026", 1, &mut previous_2026);
    plan.feed(documents(vec![
        json!({"_id": "inv/2025", "seal": {"hash": previous_2025}}),
        json!({"_id": "inv/2026", "seal": {"hash": previous_2026}}),
    ]))
    .unwrap();
    plan.feed(documents(vec![
        with_seal(one, &one_seal),
        with_seal(two, &two_seal),
        with_seal(three, &three_seal),
    ]))
    .unwrap();
    plan.feed(documents(vec![])).unwrap();
    plan.feed(documents(vec![with_seal(first, &first_seal)]))
        .unwrap();
    let reports = done(plan.feed(documents(vec![])).unwrap());
    assert!(reports.iter().all(|r| r.verified), "{reports:?}");
    assert_eq!(reports[1].first.as_ref().unwrap().number, 1);
}
