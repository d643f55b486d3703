//! `mongo-seq report`, the auditor's report: its JSON through the built binary over a series
//! prepared in the database (numbers held, a void with a reason, a recorded deletion, an
//! unexplained gap, a number dated before the one before it, a dead letter, another period);
//! its HTML page rendered in a headless Chromium (a screenshot kept under
//! `target/test-artifacts/report/`, the rendered text checked, a broken chain's red checked
//! through the browser's computed style), with chain reports `verify_series` made over links
//! sealed by hand (a verified chain and a broken one).

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common;

use common::*;
use mongo_seq_core::seal::link::{Link, LinkKind};
use mongo_seq_core::seal::verify::{verify_series, StoredLink};
use mongo_seq_core::{account, chronology, issue_days, Period};
use mongo_seq_sidecar::tools::report::{
    html, AuditReport, Chain, Definition, SeriesReport, TriggerReport,
};
use mongodb::bson::{doc, DateTime, Document};
use mongodb::Collection;
use serde_json::{json, Map, Value};

use super::json;

/// A void reason that would run as a script if it were not escaped.
const HOSTILE: &str = "<script>document.title='pwned'</script>";

/// 2026-03-01T00:00:00Z plus `d` days, in milliseconds.
fn day_ms(d: i64) -> i64 {
    1_772_323_200_000 + d * 86_400_000
}

/// Where the test keeps what it rendered: `target/test-artifacts/report/`.
fn artifacts() -> PathBuf {
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
        let mut args = vec![
            "report",
            "--uri",
            &uri,
            "--db",
            &db,
            "--collection",
            "invoices",
            "--field",
            "number",
            "--sequence",
            "inv",
            "--reset",
            "yearly",
            "--date-field",
            "issuedAt",
        ];
        args.extend_from_slice(extra);
        run_bin(&args, &[])
    };

    // Refused before anything is read or written, naming the flag (exit 2).
    for (extra, says) in [
        (vec!["--period", "2026-13", "--json", "-"], "--period"),
        (vec!["--period", "26", "--html", &page_arg], "--period"),
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

/// Issues `numbers` of `series` sealed in order after `anchor` (each link's field `total`).
fn sealed_chain(series: &str, numbers: &[i64]) -> Vec<StoredLink> {
    let mut previous: Option<String> = None;
    numbers
        .iter()
        .map(|&number| {
            let mut fields = Map::new();
            fields.insert("total".to_owned(), json!(number * 100));
            let link = Link {
                series: series.to_owned(),
                kind: LinkKind::Issue,
                number,
                period: Some(series.rsplit('/').next().unwrap().to_owned()),
                fields,
            };
            let seal = link.seal(previous.as_deref()).unwrap();
            previous = Some(seal.hash.clone());
            StoredLink {
                link,
                seal: Some(seal),
            }
        })
        .collect()
}

/// A series' part of the report, from the core's functions over `held` numbers dated by day.
fn series(id: &str, held: &[(i64, i64)], voided: &[(i64, &str)], chain: Chain) -> SeriesReport {
    let numbers: Vec<Value> = held.iter().map(|(n, _)| json!(n)).collect();
    let ledger: Vec<Value> = voided
        .iter()
        .map(|(n, reason)| {
            json!({"_id": {"counter": id, "number": n}, "sequence": "inv", "kind": "void", "reason": reason})
        })
        .collect();
    let last = held.iter().map(|(n, _)| *n).max().unwrap_or(0);
    let dated: Vec<(i64, Option<i64>)> = held.iter().map(|&(n, d)| (n, Some(day_ms(d)))).collect();
    let issued = issue_days(&dated, 1);
    SeriesReport {
        series: id.to_owned(),
        period: Some(id.rsplit('/').next().unwrap().to_owned()),
        counter: Some(last),
        first: issued.first,
        last: issued.last,
        account: account(1, 1, Some(last), &numbers, &ledger).unwrap(),
        chronology: Some(chronology(&dated, 1)),
        days: issued.days,
        undated: issued.undated,
        chain,
        problems: Vec::new(),
    }
}

/// The report of two sealed series, 2026's chain intact or broken (a sealed total changed).
fn two_series(broken: bool) -> AuditReport {
    let links_2026 = sealed_chain("inv/2026", &[1, 2, 3, 4, 5]);
    let head_2026 = links_2026
        .last()
        .and_then(|l| l.seal.clone())
        .map(|s| s.hash);
    let mut read_back = links_2026.clone();
    if broken {
        read_back[2]
            .link
            .fields
            .insert("total".to_owned(), json!(1));
    }
    let report_2026 = verify_series("inv/2026", &read_back, None, head_2026.as_deref());
    assert_eq!(report_2026.verified, !broken, "{report_2026:?}");
    let links_2025 = sealed_chain("inv/2025", &[1, 2]);
    let head_2025 = links_2025
        .last()
        .and_then(|l| l.seal.clone())
        .map(|s| s.hash);
    let report_2025 = verify_series("inv/2025", &links_2025, None, head_2025.as_deref());
    let seals = vec![report_2025, report_2026];
    let chain = |id: &str| Chain::of(id, Some(&seals));
    let trigger = TriggerReport {
        trigger: "shop.invoices.number".to_owned(),
        collection: "shop.invoices".to_owned(),
        field: "number".to_owned(),
        definition: Definition {
            sequence: "inv".to_owned(),
            start: 1,
            step: 1,
            reset: "yearly".to_owned(),
            time_zone: Some("Europe/Paris".to_owned()),
            scope: Vec::new(),
            format: Some("INV-{yyyy}-{seq:06}".to_owned()),
            gapless: true,
            date_field: Some("issuedAt".to_owned()),
            seal_fields: vec!["total".to_owned(), "customer.vatId".to_owned()],
        },
        documents: 10,
        numbered: 9,
        unnumbered: 1,
        invalid: 0,
        without_period: 0,
        dead_letters: 1,
        unexplained_unnumbered: 0,
        dead_letter_list: vec![json!({
            "_id": {"trigger": "shop.invoices.number", "document": {"$oid": "69a3818000000000000000aa"}},
            "code": "MISSING_SCOPE_FIELD", "reason": "no tenant", "attempts": 2,
            "since": {"$date": {"$numberLong": day_ms(4).to_string()}},
        })],
        problems: Vec::new(),
        series: vec![
            series("inv/2025", &[(1, -90), (2, -80)], &[], chain("inv/2025")),
            series(
                "inv/2026",
                &[(1, 0), (2, 0), (3, 1), (5, 3)],
                &[(4, HOSTILE)],
                chain("inv/2026"),
            ),
            series("inv/2024", &[(1, -400)], &[], Chain::of("inv/2024", None)),
        ],
    };
    AuditReport::new(
        vec![trigger],
        Period::parse("2026"),
        "2026-03-05T00:00:00Z".to_owned(),
        "test".to_owned(),
    )
}

/// The headless Chromium `scripts/setup` installs (Debian's `chromium-headless-shell`, or
/// `chromium`).
fn browser() -> PathBuf {
    for name in ["chromium-headless-shell", "chromium"] {
        if let Ok(out) = Command::new("sh")
            .args(["-c", &format!("command -v {name}")])
            .output()
        {
            let path = String::from_utf8_lossy(&out.stdout).trim().to_owned();
            if out.status.success() && !path.is_empty() {
                return PathBuf::from(path);
            }
        }
    }
    panic!("no headless Chromium (chromium-headless-shell or chromium): run scripts/setup");
}

/// Runs the browser headless on `page` with `args`: its standard output.
fn chromium(page: &Path, args: &[&str]) -> String {
    let out = Command::new(browser())
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
        ])
        .args([
            "--no-first-run",
            "--disable-extensions",
            "--allow-file-access-from-files",
        ])
        .args(args)
        .arg(format!("file://{}", page.display()))
        .output()
        .expect("run the headless Chromium");
    assert!(
        out.status.success(),
        "chromium {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The page as the browser rendered it: its DOM, with each element of a class the probe asks
/// about given `data-color` = its computed colour. The probe is added to a copy: the page
/// itself has no script.
fn rendered(name: &str, page: &str) -> String {
    let dir = artifacts();
    let path = dir.join(format!("{name}.html"));
    std::fs::write(&path, page).unwrap();
    let screenshot = dir.join(format!("{name}.png"));
    chromium(
        &path,
        &[
            "--window-size=794,1400",
            &format!("--screenshot={}", screenshot.display()),
        ],
    );
    assert!(
        std::fs::metadata(&screenshot).map(|m| m.len()).unwrap_or(0) > 1000,
        "a screenshot of {name}"
    );
    let probe = "<script>for (const el of document.querySelectorAll('.verdict, .chain, td[class^=status]')) el.setAttribute('data-color', getComputedStyle(el).color);</script></body>";
    let probed = dir.join(format!("{name}.probed.html"));
    std::fs::write(&probed, page.replace("</body>", probe)).unwrap();
    chromium(&probed, &["--dump-dom"])
}

/// The `data-color` the probe gave the first element whose opening tag starts with `start`.
fn color_of(dom: &str, start: &str) -> String {
    let at = dom
        .find(start)
        .unwrap_or_else(|| panic!("no {start} in the page: {dom}"));
    let tag = &dom[at..at + dom[at..].find('>').unwrap()];
    let color = tag.split("data-color=\"").nth(1).unwrap_or_default();
    color.split('"').next().unwrap_or_default().to_owned()
}

const RED: &str = "rgb(176, 0, 32)";

#[test]
fn the_page_renders_in_a_browser_and_a_broken_chain_is_red_at_the_top() {
    let broken = html::render(&two_series(true));
    let intact = html::render(&two_series(false));
    for page in [&broken, &intact] {
        // Self-contained: nothing to fetch, no script.
        for outside in [
            "<script", "src=", "href=", "url(", "@import", "http:", "https:",
        ] {
            assert!(!page.contains(outside), "{outside} in the page");
        }
        assert!(page.contains("@page { size: A4"), "printable on A4");
    }

    let dom = rendered("broken-chain", &broken);
    // The verdict first: the broken series named, in red, before any series' section.
    let verdict = dom
        .find("class=\"verdict verdict-broken\"")
        .expect("the verdict");
    assert!(
        verdict < dom.find("<section").unwrap(),
        "the verdict is at the top"
    );
    assert!(
        dom.contains("Chain of seals BROKEN in 1 series: inv/2026."),
        "{dom}"
    );
    assert_eq!(color_of(&dom, "<p class=\"verdict verdict-broken\""), RED);
    // In its series: the chain's status first, in red, with its first failure.
    let section = dom
        .find("<section class=\"series series-broken\">")
        .expect("the series");
    let status = dom[section..]
        .find("<p class=\"chain chain-broken\"")
        .unwrap()
        + section;
    assert!(
        dom[section..status].find("<table").is_none(),
        "the status comes first"
    );
    assert_eq!(
        color_of(&dom[section..], "<p class=\"chain chain-broken\""),
        RED
    );
    assert!(
        dom.contains("1 link does not verify: first at number 3 (issue, FIELD_CHANGED)"),
        "{dom}"
    );
    assert_eq!(color_of(&dom, "<td class=\"status-broken\""), RED);
    // The other series: verified and not sealed, not red.
    assert!(dom.contains("Chain of seals verified: 2 links"), "{dom}");
    assert!(dom.contains("Chain of seals: not sealed."), "{dom}");
    assert_ne!(color_of(&dom, "<p class=\"chain chain-verified\""), RED);
    // The facts: series, counts, reasons (as text), date order, dead letters, the chart.
    for text in [
        "Series <code>inv/2026</code> · period 2026",
        "<tr><th>Held</th><td>4</td></tr>",
        "<tr><th>Voided</th><td>1 (1 “&lt;script&gt;document.title='pwned'&lt;/script&gt;”)</td></tr>",
        "<tr><th>Unexplained gaps</th><td>0</td></tr>",
        "INV-{yyyy}-{seq:06}",
        "<tr><th>Sealed fields</th><td>total, customer.vatId</td></tr>",
        "no tenant",
        "2026-03-05T00:00:00Z",
        "Numbers issued per day (UTC): 4 numbers on 3 days, the most on 2026-03-01 (2).",
        "<title>2026-03-04: 1</title>",
    ] {
        assert!(dom.contains(text), "{text} not in the rendered page: {dom}");
    }
    // The hostile reason did not run.
    assert!(!dom.contains("<title>pwned</title>"), "{dom}");
    assert_eq!(dom.matches("<script").count(), 1, "the probe's alone");

    // Intact: the top says so, nothing red.
    let dom = rendered("verified-chains", &intact);
    assert!(!dom.contains("BROKEN"), "{dom}");
    assert!(
        dom.contains("Every number is accounted for; no finding."),
        "{dom}"
    );
    assert_ne!(color_of(&dom, "<td class=\"status-verified\""), RED);
}
