//! Business document series through the library: sequences that reset (numbers in
//! the period of a date, each period's counter from `start`, the current period kept at hand),
//! and numbered inserts placing each document by its `date_field` (`assign`: `assign.rs`).
//! Bad input is refused with nothing written.

use crate::common;

use common::{all, assert_refused, nothing, setup};
use mongo_seq::{AssignOptions, InsertOptions, Period, Reset, SequenceOptions};
use mongodb::bson::{doc, DateTime, Document};

type TestResult = Result<(), Box<dyn std::error::Error>>;

fn at(rfc3339: &str) -> DateTime {
    DateTime::parse_rfc3339_str(rfc3339).expect("a date")
}

fn period(text: &str) -> Period {
    Period::parse(text).expect("a period")
}

async fn counters(db: &mongodb::Database) -> Vec<Document> {
    all(&db.collection::<Document>("counters"), doc! {}).await
}

#[tokio::test]
async fn a_yearly_sequence_numbers_each_year_from_start_in_its_zone() -> TestResult {
    let s = setup("series_yearly").await;
    let seqs = s.seqs();
    let options = SequenceOptions::new()
        .reset(Reset::Yearly)
        .time_zone("Europe/Paris")
        .format("INV-{yyyy}-{seq:06}");
    let invoices = seqs.sequence("inv", options)?;
    // The last millisecond of 2025 in Paris, the first of 2026 (23:00 UTC), mid-2025.
    assert_eq!(invoices.next_at(at("2025-12-31T22:59:59.999Z")).await?, 1);
    assert_eq!(invoices.next_at(at("2025-12-31T23:00:00Z")).await?, 1);
    assert_eq!(invoices.next_at(at("2025-06-01T12:00:00Z")).await?, 2);
    let issued = invoices
        .next_formatted_at(at("2026-03-01T00:00:00Z"))
        .await?;
    assert_eq!(
        (issued.value, issued.period, issued.formatted.as_deref()),
        (2, Some(period("2026")), Some("INV-2026-000002"))
    );
    assert_eq!(
        invoices.next_many_at(3, at("2024-05-05T05:05:05Z")).await?,
        [1, 2, 3]
    );
    // Each period's counter records the series' definition, its reset and zone too.
    let definition = doc! { "start": 1_i64, "step": 1_i64, "reset": "yearly", "timeZone": "Europe/Paris", "yearStart": 1_i64, "format": "INV-{yyyy}-{seq:06}" };
    assert_eq!(
        counters(&s.db).await,
        [
            doc! { "_id": "inv/2024", "seq": 3_i64, "definition": definition.clone(), "definitionDigest": "c08217eef273278e" },
            doc! { "_id": "inv/2025", "seq": 2_i64, "definition": definition.clone(), "definitionDigest": "c08217eef273278e" },
            doc! { "_id": "inv/2026", "seq": 2_i64, "definition": definition, "definitionDigest": "c08217eef273278e" },
        ]
    );

    // One period's counter: read, moved, formatted in its period.
    let y2026 = invoices.in_period(&period("2026"))?;
    assert_eq!(y2026.counter_id()?, "inv/2026");
    assert_eq!(y2026.current().await?, Some(2));
    y2026.set_next(500).await?;
    assert_eq!(invoices.next_at(at("2026-07-14T10:00:00Z")).await?, 500);
    assert_eq!(y2026.next().await?, 501);
    assert_eq!(y2026.format(501).as_deref(), Some("INV-2026-000501"));
    assert_eq!(
        invoices.format_in(7, Some(&period("2030"))).as_deref(),
        Some("INV-2030-000007")
    );
    // A period handle numbers its period only.
    let other = y2026.next_at(at("2025-07-14T10:00:00Z")).await.unwrap_err();
    assert_eq!(other.code(), Some("INVALID_DATE"), "{other}");
    // Without a period there is no one counter to read or move.
    let no_period = invoices.current().await.unwrap_err();
    assert_eq!(no_period.code(), Some("INVALID_ARGUMENT"), "{no_period}");
    assert_eq!(no_period.details().unwrap()["argument"], "period");

    // Now: the period of this process's clock.
    let now = invoices.next_formatted().await?;
    assert_eq!(
        now.period,
        invoices.period_of(std::time::SystemTime::now())?
    );
    assert_eq!(invoices.next().await?, now.value + 1);
    s.drop_db().await;
    Ok(())
}

#[tokio::test]
async fn scoped_monthly_and_fiscal_series() -> TestResult {
    let s = setup("series_scoped").await;
    let seqs = s.seqs();
    let tickets = seqs.sequence(
        "tickets",
        SequenceOptions::new()
            .reset(Reset::Monthly)
            .time_zone("America/Los_Angeles")
            .scope(["tenant"])
            .format("T{yy}{mm}-{seq:04}"),
    )?;
    let acme = tickets.scoped(&doc! { "tenant": "acme" })?;
    let beta = tickets.scoped(&doc! { "tenant": "beta" })?;
    // 2026-06-01T03:00Z is still May 31 in Los Angeles.
    let issued = acme.next_formatted_at(at("2026-06-01T03:00:00Z")).await?;
    assert_eq!(issued.formatted.as_deref(), Some("T2605-0001"));
    assert_eq!(acme.next_at(at("2026-06-01T08:00:00Z")).await?, 1);
    assert_eq!(beta.next_at(at("2026-05-10T08:00:00Z")).await?, 1);
    assert_eq!(
        acme.in_period(&period("2026-05"))?.counter_id()?,
        "tickets/tenant=acme/2026-05"
    );
    let missing = tickets.next().await.unwrap_err();
    assert_eq!(missing.code(), Some("MISSING_SCOPE_FIELD"), "{missing}");
    let wrong_kind = acme.in_period(&period("2026")).unwrap_err();
    assert_eq!(wrong_kind.code(), Some("INVALID_ARGUMENT"), "{wrong_kind}");

    // A fiscal year from April, named after the year it ends in.
    let fiscal = seqs.sequence(
        "credit",
        SequenceOptions::new()
            .reset(Reset::Yearly)
            .year_start(4)
            .format("FY{yy}/{seq}"),
    )?;
    let may = fiscal.next_formatted_at(at("2026-05-02T00:00:00Z")).await?;
    let march = fiscal.next_formatted_at(at("2026-03-31T23:59:59Z")).await?;
    assert_eq!(may.formatted.as_deref(), Some("FY27/1"));
    assert_eq!(march.formatted.as_deref(), Some("FY26/1"));
    s.drop_db().await;
    Ok(())
}

#[tokio::test]
async fn the_period_at_hand_is_kept_with_its_block() -> TestResult {
    let s = setup("series_warm").await;
    let seqs = s.seqs();
    let invoices = seqs.sequence(
        "inv",
        SequenceOptions::new().reset(Reset::Yearly).block(100),
    )?;
    let before = s.monitor.count("findAndModify");
    assert_eq!(invoices.next_at(at("2025-03-01T00:00:00Z")).await?, 1);
    assert_eq!(invoices.next_at(at("2025-11-01T00:00:00Z")).await?, 2);
    assert_eq!(invoices.next_at(at("2026-01-01T00:00:00Z")).await?, 1);
    // Back to 2025: its block is still held.
    assert_eq!(invoices.next_at(at("2025-12-31T23:59:59.999Z")).await?, 3);
    assert_eq!(invoices.next_at(at("2026-02-01T00:00:00Z")).await?, 2);
    assert_eq!(
        s.monitor.count("findAndModify") - before,
        2,
        "one reservation per period"
    );
    let warm = invoices.next().await?;
    assert_eq!(invoices.next().await?, warm + 1);
    s.drop_db().await;
    Ok(())
}

#[tokio::test]
async fn inserts_place_each_document_in_the_period_of_its_date() -> TestResult {
    let s = setup("series_insert").await;
    let seqs = s.seqs();
    let invoices = s.db.collection::<Document>("invoices");
    let sequence = seqs.sequence(
        "inv",
        SequenceOptions::new()
            .reset(Reset::Yearly)
            .time_zone("Europe/Paris")
            .format("INV-{yyyy}-{seq:04}"),
    )?;
    let options = InsertOptions::new(&sequence)
        .field("number")
        .format_field("code")
        .date_field("issuedAt");
    let late = seqs
        .insert_one(
            &invoices,
            doc! { "_id": "a", "issuedAt": at("2025-12-31T22:00:00Z") },
            options.clone(),
        )
        .await?;
    assert_eq!(
        (
            late.value,
            late.formatted.as_deref(),
            late.period.as_deref()
        ),
        (1, Some("INV-2025-0001"), Some("2025"))
    );
    let batch = [
        doc! { "_id": "b", "issuedAt": at("2025-12-31T23:30:00Z") },
        doc! { "_id": "c", "issuedAt": at("2025-12-01T00:00:00Z") },
        doc! { "_id": "d", "issuedAt": at("2026-01-02T00:00:00Z") },
    ];
    let many = seqs.insert_many(&invoices, &batch, options).await?;
    assert_eq!(many.values, [1, 2, 2]);
    assert_eq!(
        many.periods.as_deref(),
        Some(&["2026".to_owned(), "2025".to_owned(), "2026".to_owned()][..])
    );
    let stored: Vec<(String, i64, String)> = all(&invoices, doc! {})
        .await
        .iter()
        .map(|d| {
            (
                d.get_str("code").unwrap().to_owned(),
                d.get_i64("number").unwrap(),
                d.get_str("numberPeriod").unwrap().to_owned(),
            )
        })
        .collect();
    assert_eq!(
        stored,
        [
            ("INV-2025-0001".to_owned(), 1, "2025".to_owned()),
            ("INV-2026-0001".to_owned(), 1, "2026".to_owned()),
            ("INV-2025-0002".to_owned(), 2, "2025".to_owned()),
            ("INV-2026-0002".to_owned(), 2, "2026".to_owned()),
        ]
    );
    // Without a date field: now's period.
    let now = seqs
        .insert_one(
            &invoices,
            doc! { "_id": "e" },
            InsertOptions::new(&sequence)
                .field("number")
                .format_field("code"),
        )
        .await?;
    let this_year = sequence
        .period_of(std::time::SystemTime::now())?
        .unwrap()
        .text();
    let e = invoices.find_one(doc! { "_id": "e" }).await?.unwrap();
    assert_eq!(e.get_str("numberPeriod")?, this_year);
    assert!(now
        .formatted
        .unwrap()
        .starts_with(&format!("INV-{this_year}-")));
    s.drop_db().await;
    Ok(())
}

#[tokio::test]
async fn bad_series_input_is_refused_with_nothing_written() {
    let yearly = || SequenceOptions::new().reset(Reset::Yearly);
    // An unknown zone: refused when the sequence is defined.
    assert_refused(
        "unknown_zone",
        "INVALID_OPTION",
        |seqs, _| async move {
            seqs.sequence("inv", yearly().time_zone("Europe/Atlantis"))?;
            Ok(())
        },
        nothing,
    )
    .await;
    assert_refused(
        "year_start_13",
        "INVALID_OPTION",
        |seqs, _| async move {
            seqs.sequence("inv", yearly().year_start(13))?;
            Ok(())
        },
        nothing,
    )
    .await;
    assert_refused(
        "period_token_without_reset",
        "INVALID_FORMAT",
        |seqs, _| async move {
            seqs.sequence("inv", SequenceOptions::new().format("INV-{yyyy}-{seq}"))?;
            Ok(())
        },
        nothing,
    )
    .await;
    // A date out of range: nothing reserved.
    assert_refused(
        "date_out_of_range",
        "INVALID_DATE",
        |seqs, _| async move {
            let far = DateTime::from_millis(253_402_128_000_000);
            seqs.sequence("inv", yearly())?.next_at(far).await?;
            Ok(())
        },
        nothing,
    )
    .await;
    // A document whose date field is not a date: nothing reserved, nothing inserted.
    assert_refused(
        "date_field_not_a_date",
        "INVALID_DATE",
        |seqs, db| async move {
            let sequence = seqs.sequence("inv", yearly())?;
            let batch = [
                doc! { "issuedAt": at("2026-01-01T00:00:00Z") },
                doc! { "issuedAt": "2026-01-02" },
            ];
            let options = InsertOptions::new(&sequence)
                .field("number")
                .date_field("issuedAt");
            seqs.insert_many(&db.collection::<Document>("invoices"), &batch, options)
                .await?;
            Ok(())
        },
        nothing,
    )
    .await;
    // A date field for a sequence that never resets.
    assert_refused(
        "date_field_never_resets",
        "INVALID_ARGUMENT",
        |seqs, db| async move {
            let options = InsertOptions::new("plain")
                .field("number")
                .date_field("issuedAt");
            let document = doc! { "issuedAt": at("2026-01-01T00:00:00Z") };
            seqs.insert_one(&db.collection::<Document>("invoices"), document, options)
                .await?;
            Ok(())
        },
        nothing,
    )
    .await;
    // assign: a bad sort, a date field of a sequence that never resets, `_id` as the field.
    for (label, options) in [
        (
            "assign_bad_sort",
            AssignOptions::new("users", "number").sort(doc! { "name": 2 }),
        ),
        (
            "assign_date_field",
            AssignOptions::new("users", "number").date_field("at"),
        ),
        ("assign_id", AssignOptions::new("users", "_id")),
    ] {
        assert_refused(
            label,
            "INVALID_ARGUMENT",
            |seqs, db| async move {
                seqs.assign(&db.collection::<Document>("users"), doc! {}, options)
                    .await?;
                Ok(())
            },
            nothing,
        )
        .await;
    }
}
