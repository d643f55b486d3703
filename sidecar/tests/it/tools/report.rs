//! `mongo-seq report`, the auditor's report, through the built binary: its JSON over a series
//! prepared in the database (numbers held, a void with a reason, a recorded deletion, an
//! unexplained gap, a number dated before the one before it, a dead letter, another period),
//! its refusals, its page's escaping. The page in a browser: `report_page.rs`.

use std::path::{Path, PathBuf};

use crate::common;

use common::*;
use mongodb::bson::{doc, DateTime, Document};
use mongodb::Collection;
use serde_json::{json, Value};

use super::{json, on_yearly_invoices};

/// A void reason that would run as a script if it were not escaped.
pub(super) const HOSTILE: &str = "<script>document.title='pwned'</script>";

/// 2026-03-01T00:00:00Z plus `d` days, in milliseconds.
pub(super) fn day_ms(d: i64) -> i64 {
    1_772_323_200_000 + d * 86_400_000
}

/// Where the tests keep what they rendered: `target/test-artifacts/report/`.
pub(super) fn artifacts() -> PathBuf {
    let target = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .expect("the target directory")
        .to_path_buf();
    let dir = target.join("test-artifacts").join("report");
    std::fs::create_dir_all(&dir).expect("artifacts directory");
    dir
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn report_accounts_for_every_number_of_the_period_asked_for() {
    let (db, plain, _) = test_db("report").await;
    let uri = mongodb_uri();
    let database = plain.database(&db);
    let invoices: Collection<Document> = database.collection("invoices");
    let invoice = |n: i64, period: &str, d: i64| {
        doc! { "number": n, "numberPeriod": period, "issuedAt": DateTime::from_millis(day_ms(d)) }
    };
    // 2026: 1..9 — held 1 2 3 5 6 8, 4 voided, 7 deleted (recorded), 9 an unexplained gap; 5 is
    // dated before 3. 2025: one number, another period.
    invoices
        .insert_many([
            invoice(1, "2026", 0),
            invoice(2, "2026", 0),
            invoice(3, "2026", 2),
            invoice(5, "2026", 1),
            invoice(6, "2026", 3),
            invoice(8, "2026", 3),
            invoice(1, "2025", -100),
        ])
        .await
        .unwrap();
    database
        .collection::<Document>("counters")
        .insert_many([
            doc! { "_id": "inv/2026", "seq": 9_i64 },
            doc! { "_id": "inv/2025", "seq": 1_i64 },
        ])
        .await
        .unwrap();
    let entry = |number: i64, kind: &str, reason: &str| {
        doc! {
            "_id": { "counter": "inv/2026", "number": number }, "sequence": "inv", "kind": kind,
            "reason": reason, "at": DateTime::now(), "by": "test",
        }
    };
    database
        .collection::<Document>("mongo_seq_ledger")
        .insert_many([
            entry(4, "void", HOSTILE),
            entry(7, "deleted", "document deleted"),
        ])
        .await
        .unwrap();
    let unnumbered = invoices
        .insert_one(doc! { "note": "no number yet" })
        .await
        .unwrap()
        .inserted_id;
    database
        .collection::<Document>("mongo_seq_state")
        .insert_one(doc! {
            "_id": { "trigger": format!("{db}.invoices.number"), "document": unnumbered },
            "kind": "deadLetter", "code": "MISSING_SCOPE_FIELD", "reason": "no tenant",
            "since": DateTime::now(), "lastAttempt": DateTime::now(), "attempts": 2_i64,
        })
        .await
        .unwrap();
    let page = artifacts().join(format!("{db}.html"));
    let page_arg = page.to_str().unwrap().to_owned();
    let report = |extra: &[&str]| {
        let dated = [&["--date-field", "issuedAt"], extra].concat();
        on_yearly_invoices("report", &uri, &db, &dated)
    };

    let (code, out, _) = run_bin(&["report", "--help"], &[]);
    assert_eq!(code, 0);
    for says in [
        "--period",
        "--html",
        "--json",
        "chain of seals",
        "Exit status",
    ] {
        assert!(out.contains(says), "--help says {says}: {out}");
    }

    // Refused before anything is read or written, naming the flag (exit 2).
    for (extra, says) in [
        (vec!["--period", "2026-13", "--json", "-"], "--period"),
        (vec!["--period", "26", "--html", &page_arg], "--period"),
        (vec!["--period", "NaN", "--json", "-"], "--period"),
        (
            vec!["--period", "9223372036854775808", "--json", "-"],
            "--period",
        ),
        (vec!["--period", "", "--json", "-"], "--period"),
        (vec!["--period", "0000", "--json", "-"], "--period"),
        (vec!["--period", "2026"], "--html"),
        (vec!["--html", "-"], "--html"),
        (vec!["--json", "/nonexistent/dir/report.json"], "--json"),
        (vec!["--html", &page_arg, "--json", &page_arg], "same file"),
    ] {
        let (code, out, err) = report(&extra);
        assert_eq!(code, 2, "{extra:?}: {out}{err}");
        assert!(err.contains(says), "{extra:?}: {err}");
        assert!(!page.exists(), "{extra:?} wrote the page");
    }

    // The period 2026: its one series, every number accounted for; the date order and the
    // unexplained gap are findings (exit 1), the files written all the same.
    let (code, out, err) = report(&["--period", "2026", "--json", "-", "--html", &page_arg]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        err.contains("inv/2026: 1 numbers dated before the number before them"),
        "{err}"
    );
    let report_json = json(&out);
    assert_eq!(report_json["period"], "2026", "{report_json}");
    assert_eq!(report_json["clean"], false);
    let trigger = &report_json["triggers"][0];
    assert_eq!(trigger["definition"]["sequence"], "inv", "{trigger}");
    assert_eq!(trigger["definition"]["reset"], "yearly", "{trigger}");
    assert_eq!(trigger["definition"]["date_field"], "issuedAt", "{trigger}");
    assert_eq!(trigger["definition"]["seal_fields"], json!([]), "{trigger}");
    assert_eq!(
        (
            trigger["dead_letters"].as_u64(),
            trigger["unnumbered"].as_u64()
        ),
        (Some(1), Some(1)),
        "{trigger}"
    );
    assert_eq!(trigger["dead_letter_list"][0]["reason"], "no tenant");
    let series = trigger["series"].as_array().unwrap();
    assert_eq!(series.len(), 1, "only 2026's series: {trigger}");
    let s = &series[0];
    assert_eq!(
        (s["series"].as_str(), s["period"].as_str()),
        (Some("inv/2026"), Some("2026"))
    );
    let a = &s["account"];
    let counts: Vec<u64> = ["held", "voided", "deleted", "gaps", "duplicates"]
        .iter()
        .map(|k| a[k].as_u64().unwrap())
        .collect();
    assert_eq!(counts, [6, 1, 1, 1, 0], "{a}");
    assert_eq!(a["reasons"], json!([{ "reason": HOSTILE, "count": 1 }]));
    assert_eq!(a["gapRuns"][0]["first"], 9, "{a}");
    assert_eq!(s["first"], json!({ "number": 1, "dateMs": day_ms(0) }));
    assert_eq!(s["last"], json!({ "number": 8, "dateMs": day_ms(3) }));
    assert_eq!(s["counter"], 9);
    assert_eq!(s["chronology"]["earlier"], 1, "{s}");
    assert_eq!(s["chronology"]["examples"][0]["number"], 5, "{s}");
    assert_eq!(
        s["days"],
        json!([
            { "day": "2026-03-01", "count": 2 },
            { "day": "2026-03-02", "count": 1 },
            { "day": "2026-03-03", "count": 1 },
            { "day": "2026-03-04", "count": 2 },
        ])
    );
    assert_eq!(s["chain"], json!({ "status": "not_sealed" }));
    // The page: written, the hostile reason as text.
    let written = std::fs::read_to_string(&page).unwrap();
    assert!(written.contains("&lt;script&gt;document.title="), "escaped");
    assert!(
        written.contains("<div class=\"verdict verdict-findings\">1 finding:<ul class=\"problems\"><li>inv/2026: 1 numbers dated before"),
        "the finding at the top: {written}"
    );
    assert!(!written.contains("<script"), "no script in the page");

    // Without --period: every period's series; as a file.
    let file = artifacts().join(format!("{db}.json"));
    let (code, out, err) = report(&["--json", file.to_str().unwrap()]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(out.contains("report: 2 series: FINDINGS"), "{out}");
    let all = json(&std::fs::read_to_string(&file).unwrap());
    let ids: Vec<&str> = all["triggers"][0]["series"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|s| s["series"].as_str())
        .collect();
    assert_eq!(ids, ["inv/2025", "inv/2026"]);
    assert_eq!(all["period"], Value::Null);

    // 2025 alone is clean (a dead letter waiting is no finding): exit 0. A month of 2025: no
    // series of a yearly sequence is within it.
    let (code, out, err) = report(&["--period", "2025", "--json", "-"]);
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(json(&out)["clean"], true, "{out}");
    let (code, out, err) = report(&["--period", "2025-02", "--json", "-"]);
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(json(&out)["triggers"][0]["series"], json!([]), "{out}");
    plain.database(&db).drop().await.ok();
}
