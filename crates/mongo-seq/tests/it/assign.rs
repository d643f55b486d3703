//! Numbering on issue through the library: `assign` numbers the documents that match
//! a filter and have no number, each once, in its period's series, also with several processes
//! assigning at once.

use crate::common;

use common::{all, setup};
use mongo_seq::{AssignOptions, Reset, SequenceOptions};
use mongodb::bson::{doc, Bson, DateTime, Document};

type TestResult = Result<(), Box<dyn std::error::Error>>;

fn at(rfc3339: &str) -> DateTime {
    DateTime::parse_rfc3339_str(rfc3339).expect("a date")
}

#[tokio::test]
async fn assign_numbers_issued_documents_once_in_their_period() -> TestResult {
    let s = setup("series_assign").await;
    let seqs = s.seqs();
    let invoices = s.db.collection::<Document>("invoices");
    seqs.sequence(
        "inv",
        SequenceOptions::new()
            .reset(Reset::Yearly)
            .time_zone("Europe/Paris")
            .format("INV-{yyyy}-{seq:06}"),
    )?;
    let invoice = |id: i32, status: &str, issued: &str| {
        doc! { "_id": id, "status": status, "issuedAt": at(issued) }
    };
    invoices
        .insert_many([
            invoice(1, "issued", "2025-12-31T22:30:00Z"),
            invoice(2, "draft", "2025-12-31T22:40:00Z"),
            invoice(3, "issued", "2025-12-31T23:10:00Z"),
            invoice(4, "issued", "2025-12-30T10:00:00Z"),
        ])
        .await?;
    let options = AssignOptions::new("inv", "number")
        .format_field("code")
        .sort(doc! { "issuedAt": 1 })
        .date_field("issuedAt");
    seqs.create_numbering_index(&invoices, options.clone())
        .await?;
    let result = seqs
        .assign(&invoices, doc! { "status": "issued" }, options.clone())
        .await?;
    let assigned: Vec<(Bson, i64, Option<String>, Option<String>)> = result
        .assigned
        .iter()
        .map(|a| {
            (
                a.id.clone(),
                a.value,
                a.formatted.clone(),
                a.period.map(|p| p.text()),
            )
        })
        .collect();
    assert_eq!(
        assigned,
        [
            (
                Bson::Int32(4),
                1,
                Some("INV-2025-000001".to_owned()),
                Some("2025".to_owned())
            ),
            (
                Bson::Int32(1),
                2,
                Some("INV-2025-000002".to_owned()),
                Some("2025".to_owned())
            ),
            (
                Bson::Int32(3),
                1,
                Some("INV-2026-000001".to_owned()),
                Some("2026".to_owned())
            ),
        ]
    );
    assert!(result.skipped.is_empty());
    let draft = invoices.find_one(doc! { "_id": 2 }).await?.unwrap();
    assert!(
        !draft.contains_key("number"),
        "a draft is not numbered: {draft}"
    );

    // Again: nothing left to number. Issued later, the draft gets the next number of its year.
    let again = seqs
        .assign(&invoices, doc! { "status": "issued" }, options.clone())
        .await?;
    assert!(again.assigned.is_empty());
    invoices
        .update_one(doc! { "_id": 2 }, doc! { "$set": { "status": "issued" } })
        .await?;
    let issued = seqs
        .assign(&invoices, doc! { "status": "issued" }, options)
        .await?;
    assert_eq!(issued.assigned.len(), 1);
    assert_eq!(
        issued.assigned[0].formatted.as_deref(),
        Some("INV-2025-000003")
    );
    let stored = invoices.find_one(doc! { "_id": 2 }).await?.unwrap();
    assert_eq!(stored.get_str("numberPeriod")?, "2025");
    s.drop_db().await;
    Ok(())
}

/// Two processes' worth of `Sequences` assigning at once: every issued document is numbered
/// exactly once, by one of them, and no number is held twice within a period.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_assigns_number_each_document_once() -> TestResult {
    let s = setup("series_assign_race").await;
    let invoices = s.db.collection::<Document>("invoices");
    let options = || {
        SequenceOptions::new()
            .reset(Reset::Monthly)
            .format("{yyyy}{mm}-{seq}")
    };
    let documents: Vec<Document> = (0..120)
        .map(|i| {
            let day = if i % 2 == 0 { "2026-04-30T12:00:00Z" } else { "2026-05-01T12:00:00Z" };
            doc! { "_id": i, "status": if i % 5 == 0 { "draft" } else { "issued" }, "issuedAt": at(day) }
        })
        .collect();
    invoices.insert_many(&documents).await?;
    let assign = AssignOptions::new("inv", "number")
        .format_field("code")
        .date_field("issuedAt");
    let (a, b) = (
        mongo_seq::Sequences::new(&s.db),
        mongo_seq::Sequences::new(&s.db),
    );
    a.sequence("inv", options())?;
    b.sequence("inv", options())?;
    a.create_numbering_index(&invoices, assign.clone()).await?;
    let (first, second) = tokio::join!(
        a.assign(&invoices, doc! { "status": "issued" }, assign.clone()),
        b.assign(&invoices, doc! { "status": "issued" }, assign.clone()),
    );
    let (first, second) = (first?, second?);
    let mut ids: Vec<Bson> = first
        .assigned
        .iter()
        .chain(&second.assigned)
        .map(|n| n.id.clone())
        .collect();
    assert_eq!(
        ids.len(),
        96,
        "each issued document numbered by one of them"
    );
    ids.sort_by_key(|id| id.as_i32());
    ids.dedup();
    assert_eq!(ids.len(), 96, "none twice");
    let stored = all(&invoices, doc! { "status": "issued" }).await;
    let mut numbers: Vec<(String, i64)> = stored
        .iter()
        .map(|d| {
            (
                d.get_str("numberPeriod").unwrap().to_owned(),
                d.get_i64("number").unwrap(),
            )
        })
        .collect();
    numbers.sort();
    numbers.dedup();
    assert_eq!(numbers.len(), 96, "no number held twice within a period");
    let drafts = all(
        &invoices,
        doc! { "status": "draft", "number": { "$exists": true } },
    )
    .await;
    assert!(drafts.is_empty());
    s.drop_db().await;
    Ok(())
}
