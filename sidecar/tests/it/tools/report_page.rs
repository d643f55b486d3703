//! The auditor's report's HTML page in a headless Chromium: a screenshot and a print to PDF
//! kept under `target/test-artifacts/report/`, the rendered text checked, a broken chain's red
//! checked through the browser's computed style. The chain reports are `verify_series`'s over links
//! sealed by hand (a verified chain and a broken one); the rest of the report comes from the
//! core's functions (`account`, `chronology`, `issue_days`), as `report` makes it.

use std::path::{Path, PathBuf};
use std::process::Command;

use mongo_seq_core::seal::link::{Link, LinkKind};
use mongo_seq_core::seal::verify::{verify_series, StoredLink};
use mongo_seq_core::{account, chronology, issue_days, Period};
use mongo_seq_sidecar::tools::report::{
    html, AuditReport, Chain, Definition, SeriesReport, TriggerReport,
};
use serde_json::{json, Map, Value};

use super::report::{artifacts, day_ms, HOSTILE};

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
    // Bounded: a browser that hangs fails the test after two minutes.
    let out = Command::new("timeout")
        .arg("120")
        .arg(browser())
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
    let pdf = dir.join(format!("{name}.pdf"));
    chromium(
        &path,
        &[
            "--no-pdf-header-footer",
            &format!("--print-to-pdf={}", pdf.display()),
        ],
    );
    let printed = std::fs::read(&pdf).unwrap_or_default();
    assert!(
        printed.starts_with(b"%PDF") && printed.len() > 1000,
        "{name} printed"
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
    // A broken chain is a finding (exit 1), named in the JSON.
    let (broken, intact) = (two_series(true), two_series(false));
    assert_eq!((broken.clean, intact.clean), (false, true));
    assert_eq!(broken.broken_chains, ["inv/2026"]);
    let json = broken.to_json();
    let statuses: Vec<&str> = json["triggers"][0]["series"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|s| s["chain"]["status"].as_str())
        .collect();
    assert_eq!(statuses, ["verified", "broken", "not_sealed"]);
    assert_eq!(
        json["triggers"][0]["series"][1]["chain"]["failures"][0]["reason"],
        "FIELD_CHANGED"
    );
    let broken = html::render(&broken);
    let intact = html::render(&intact);
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
