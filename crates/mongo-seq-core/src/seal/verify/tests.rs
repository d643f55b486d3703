#![allow(clippy::arithmetic_side_effects)] // small test numbers

use serde_json::{json, Map, Value};

use super::*;

const SERIES: &str = "invoices/2026";

fn link(kind: LinkKind, number: i64, total: Value) -> Link {
    let mut fields = Map::new();
    fields.insert("total".to_owned(), total);
    Link {
        series: SERIES.to_owned(),
        kind,
        number,
        period: Some("2026".to_owned()),
        fields,
    }
}

/// Issues `1..=n` sealed in order after `anchor`, as a sealer writes them.
fn chain(n: i64, anchor: Option<&str>) -> Vec<StoredLink> {
    let mut previous = anchor.map(str::to_owned);
    let mut links = Vec::new();
    for number in 1..=n {
        links.push(append(
            &mut previous,
            link(LinkKind::Issue, number, json!(number * 100)),
        ));
    }
    links
}

fn append(previous: &mut Option<String>, link: Link) -> StoredLink {
    let seal = link.seal(previous.as_deref()).unwrap();
    *previous = Some(seal.hash.clone());
    StoredLink {
        link,
        seal: Some(seal),
    }
}

fn head(links: &[StoredLink]) -> Option<String> {
    links
        .last()
        .and_then(|s| s.seal.as_ref())
        .map(|s| s.hash.clone())
}

fn reasons(report: &SeriesSealReport) -> Vec<(i64, SealFailureReason)> {
    report
        .failures
        .iter()
        .map(|f| (f.number, f.reason))
        .collect()
}

#[test]
fn an_intact_chain_verifies_from_its_anchor_to_its_counters_hash() {
    let links = chain(5, Some("ab"));
    let report = verify_series(SERIES, &links, Some("ab"), head(&links).as_deref());
    assert!(report.verified, "{report:?}");
    assert_eq!(
        (
            report.links,
            report.first.as_ref().unwrap().number,
            report.last.as_ref().unwrap().number
        ),
        (5, 1, 5)
    );
    // The same links, read in another order, verify alike.
    let mut shuffled = links.clone();
    shuffled.reverse();
    assert_eq!(
        verify_series(SERIES, &shuffled, Some("ab"), head(&links).as_deref()),
        report
    );
}

#[test]
fn a_changed_field_fails_its_own_link_only() {
    let mut links = chain(5, None);
    links[2].link.fields.insert("total".to_owned(), json!(301));
    let report = verify_series(SERIES, &links, None, head(&links).as_deref());
    assert_eq!(reasons(&report), [(3, SealFailureReason::FieldChanged)]);
    assert_eq!(report.links, 5);
}

#[test]
fn a_number_stored_as_another_type_is_the_same_value() {
    let mut links = chain(3, None);
    links[1]
        .link
        .fields
        .insert("total".to_owned(), json!({"$numberDouble": "200.0"}));
    assert!(verify_series(SERIES, &links, None, head(&links).as_deref()).verified);
}

#[test]
fn a_sealed_document_deleted_without_a_record_is_a_missing_link() {
    let mut links = chain(5, None);
    links.remove(2);
    let report = verify_series(SERIES, &links, None, head(&links).as_deref());
    assert_eq!(reasons(&report), [(4, SealFailureReason::LinkMissing)]);
    assert_eq!(report.links, 4, "the chain is verified on from number 4");
}

#[test]
fn a_deletion_recorded_in_the_chain_with_the_link_it_removed_verifies() {
    let mut links = chain(3, None);
    let mut previous = head(&links);
    links.push(append(
        &mut previous,
        link(LinkKind::Deletion, 2, json!(200)),
    ));
    links.push(append(&mut previous, link(LinkKind::Issue, 4, json!(400))));
    // The document of number 2 is gone; its issue link is read from the deletion's record, which
    // keeps the sealed fields and the seal: the chain is walked through it as before.
    let report = verify_series(SERIES, &links, None, previous.as_deref());
    assert!(report.verified, "{report:?}");
    assert_eq!(report.last.unwrap().number, 4);
}

#[test]
fn a_link_inserted_beside_another_is_found_whichever_is_read_first() {
    let links = chain(4, None);
    let mut forged = links.clone();
    let mut previous = links[1].seal.as_ref().map(|s| s.hash.clone());
    forged.insert(0, append(&mut previous, link(LinkKind::Issue, 3, json!(1))));
    for candidate in [forged.clone(), forged.into_iter().rev().collect()] {
        let report = verify_series(SERIES, &candidate, None, head(&links).as_deref());
        assert_eq!(
            reasons(&report),
            [(3, SealFailureReason::LinkInserted)],
            "{report:?}"
        );
        assert_eq!(report.last.as_ref().unwrap().hash, head(&links).unwrap());
    }
}

#[test]
fn an_issue_out_of_order_and_a_deletion_of_a_number_not_issued_are_refused() {
    let mut links = chain(3, None);
    let mut previous = head(&links);
    links.push(append(&mut previous, link(LinkKind::Issue, 5, json!(500))));
    links.push(append(
        &mut previous,
        link(LinkKind::Deletion, 9, Value::Null),
    ));
    let report = verify_series(SERIES, &links, None, previous.as_deref());
    assert_eq!(
        reasons(&report),
        [
            (5, SealFailureReason::OutOfOrder),
            (9, SealFailureReason::OutOfOrder)
        ]
    );
}

#[test]
fn a_void_of_a_number_no_document_held_accounts_for_it() {
    // 4 was reserved and lost (or skipped): its void is the link before 5.
    let mut links = chain(3, None);
    let mut previous = head(&links);
    links.push(append(&mut previous, link(LinkKind::Void, 4, Value::Null)));
    links.push(append(&mut previous, link(LinkKind::Issue, 5, json!(500))));
    let report = verify_series(SERIES, &links, None, previous.as_deref());
    assert!(report.verified, "{report:?}");
    assert_eq!(report.links, 5);
}

#[test]
fn a_removed_seal_is_found_and_the_link_after_it_misses_its_predecessor() {
    let mut links = chain(5, None);
    links[2].seal = None;
    let report = verify_series(SERIES, &links, None, head(&links).as_deref());
    assert_eq!(
        reasons(&report),
        [
            (3, SealFailureReason::SealRemoved),
            (4, SealFailureReason::LinkMissing)
        ]
    );
}

#[test]
fn the_last_links_removed_leave_the_counters_hash_outside_the_chain() {
    let mut links = chain(5, None);
    let counter = head(&links);
    links.truncate(3);
    let report = verify_series(SERIES, &links, None, counter.as_deref());
    assert_eq!(reasons(&report), [(3, SealFailureReason::LinkMissing)]);
    assert!(
        report.failures[0].detail.contains("ends at number 3"),
        "{report:?}"
    );
}

#[test]
fn numbers_before_sealing_and_not_sealed_yet_are_counted_not_failed() {
    let mut links = chain(3, None);
    for number in [0, 4, 5] {
        links.push(StoredLink {
            link: link(LinkKind::Issue, number, json!(1)),
            seal: None,
        });
    }
    let report = verify_series(SERIES, &links[..], None, head(&links[..3]).as_deref());
    assert!(report.verified, "{report:?}");
    assert_eq!((report.before_sealing, report.pending), (1, 2));
}

#[test]
fn a_period_chained_to_another_anchor_misses_its_first_link() {
    let links = chain(2, Some("last-of-2025"));
    let report = verify_series(SERIES, &links, Some("another"), head(&links).as_deref());
    assert_eq!(reasons(&report), [(1, SealFailureReason::LinkMissing)]);
}

#[test]
fn a_reasons_code_is_its_name_in_reports() {
    for reason in [
        SealFailureReason::FieldChanged,
        SealFailureReason::LinkMissing,
        SealFailureReason::LinkInserted,
        SealFailureReason::OutOfOrder,
        SealFailureReason::SealRemoved,
    ] {
        assert_eq!(serde_json::to_value(reason).unwrap(), reason.code());
    }
}
