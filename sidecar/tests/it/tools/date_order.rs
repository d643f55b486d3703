//! `check`'s date order: in a series with a date field, a number dated before the number
//! before it is listed and fails the check (on by default; `--no-chronological` turns it off;
//! `--chronological` without a date field is a usage error).

use crate::common;

use common::*;
use mongodb::bson::{doc, DateTime, Document};
use mongodb::Collection;
use serde_json::Value;

use super::check_yearly_invoices;

fn day(d: i64) -> DateTime {
    // 2026-03-01T00:00:00Z plus `d` days.
    DateTime::from_millis(1_772_323_200_000 + d * 86_400_000)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_number_dated_before_its_predecessor_fails_the_check() {
    let (db, plain, _) = test_db("date_order").await;
    let uri = mongodb_uri();
    let database = plain.database(&db);
    let invoices: Collection<Document> = database.collection("invoices");
    let counters: Collection<Document> = database.collection("counters");
    let invoice =
        |n: i64, at: DateTime| doc! { "number": n, "numberPeriod": "2026", "issuedAt": at };
    invoices
        .insert_many([
            invoice(1, day(0)),
            invoice(2, day(2)),
            invoice(3, day(1)),                               // dated before 2
            invoice(4, day(2)),                               // the same day as 2: in order
            doc! { "number": 5_i64, "numberPeriod": "2026" }, // no date: not compared
        ])
        .await
        .unwrap();
    counters
        .insert_one(doc! { "_id": "inv/2026", "seq": 5_i64 })
        .await
        .unwrap();
    let check = |extra: &[&str]| check_yearly_invoices(&uri, &db, extra);

    // A date field: the date order is checked by default.
    let (code, out, err) = check(&["--date-field", "issuedAt"]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        out.contains(", 1 dated before the number before them"),
        "{out}"
    );
    assert!(
        out.contains("inv/2026: 1 numbers dated before the number before them: 3 (2026-03-02T00:00:00Z) after 2 (2026-03-03T00:00:00Z)"),
        "{out}"
    );
    assert!(
        err.contains("inv/2026: 1 numbers dated before the number before them in `issuedAt` (first: 3 after 2)"),
        "{err}"
    );
    let (code, out, err) = check(&["--date-field", "issuedAt", "--json"]);
    assert_eq!(code, 1, "{out}{err}");
    let report: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(report["earlier_dated"], 1, "{report}");
    let order = &report["chronology"]["inv/2026"];
    assert_eq!(
        (order["dated"].as_u64(), order["undated"].as_u64()),
        (Some(4), Some(1)),
        "{report}"
    );
    assert_eq!(order["examples"][0]["number"], 3, "{report}");

    // Turned off: the rest of the series is clean.
    let (code, out, err) = check(&["--date-field", "issuedAt", "--no-chronological"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(!out.contains("dated before"), "{out}");

    // Asked for without a date field: a usage error, nothing read.
    let (code, out, err) = check(&["--chronological"]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(
        err.contains("--chronological needs the date of each document"),
        "{err}"
    );

    // Put in order, the check passes.
    invoices
        .update_one(
            doc! { "number": 3_i64 },
            doc! { "$set": { "issuedAt": day(2) } },
        )
        .await
        .unwrap();
    let (code, out, err) = check(&["--date-field", "issuedAt"]);
    assert_eq!(code, 0, "{out}{err}");
}
