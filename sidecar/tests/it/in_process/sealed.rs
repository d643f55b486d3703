//! A sealed series written by a gapless trigger: every numbered document gets its seal beside
//! its number, chained in number order; a new period's first link names the last seal of the
//! period before; the counter holds the head; a value changed by hand no longer verifies; seals
//! a crashed holder recorded but did not write are written by the next holder, as recorded.
//! In-process, against the embedded server or `MONGODB_URI`.

use crate::common;

use std::time::Duration;

use common::*;
use futures_util::TryStreamExt;
use mongo_seq_core::seal::link::{Link, Seal};
use mongo_seq_core::seal::verify::{
    verify_series, SealFailureReason, SeriesSealReport, StoredLink,
};
use mongodb::bson::{doc, Bson, DateTime, Document};
use mongodb::Collection;
use serde_json::Value;

const WAIT: Duration = Duration::from_secs(60);
const TRIGGER: &str = "gapless = true\nreset = \"yearly\"\ndate_field = \"issuedAt\"\nseal_fields = [\"customer\", \"total\"]";

fn json(document: &Document) -> Value {
    Bson::Document(document.clone()).into_canonical_extjson()
}

fn date(y: i32, m: u8, d: u8) -> DateTime {
    DateTime::builder().year(y).month(m).day(d).build().unwrap()
}

async fn all(coll: &Collection<Document>) -> Vec<Document> {
    coll.find(doc! {})
        .sort(doc! { "seq": 1 })
        .await
        .unwrap()
        .try_collect()
        .await
        .unwrap()
}

/// Waits until `n` documents hold a number and a seal.
async fn sealed(coll: &Collection<Document>, n: u64) {
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        let done = coll
            .count_documents(doc! { "seq": { "$exists": true }, "seqSeal": { "$exists": true } })
            .await
            .unwrap();
        if done == n {
            return;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "{done} of {n} sealed: {:?}",
            all(coll).await
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The issue links of `period`'s documents, as stored.
fn links(documents: &[Document], period: &str) -> Vec<StoredLink> {
    let fields = ["customer".to_owned(), "total".to_owned()];
    documents
        .iter()
        .filter(|d| d.get_str("seqPeriod").ok() == Some(period))
        .map(|d| {
            let value = json(d);
            StoredLink {
                link: Link::issued(
                    &format!("{}/{period}", "SEQUENCE"),
                    d.get_i64("seq").unwrap(),
                    Some(period),
                    &value,
                    &fields,
                ),
                seal: value.get("seqSeal").map(|s| Seal::read(s).unwrap()),
            }
        })
        .collect()
}

/// A report's failures as (number, reason).
fn failures(report: &SeriesSealReport) -> Vec<(i64, SealFailureReason)> {
    report
        .failures
        .iter()
        .map(|f| (f.number, f.reason))
        .collect()
}

fn with_series(mut links: Vec<StoredLink>, series: &str) -> Vec<StoredLink> {
    for stored in &mut links {
        stored.link.series = series.to_owned();
    }
    links
}

async fn head(db: &str, counter_id: &str) -> Option<String> {
    let counters: Collection<Document> = client().await.database(db).collection("counters");
    let counter = counters
        .find_one(doc! { "_id": counter_id })
        .await
        .unwrap()
        .unwrap();
    counter
        .get_document("seal")
        .ok()
        .and_then(|s| s.get_str("hash").ok())
        .map(str::to_owned)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sealed_series_chains_every_number_and_every_period() {
    let (db, plain, coll) = test_db("sealed").await;
    let sequence = format!("{db}.orders");
    let run = start(config(&db, TRIGGER, ""), options().await, false);
    wait_running(&run).await;
    // Two periods, several batches: 2025's numbers first, then 2026's.
    for i in 0..5 {
        coll.insert_one(doc! { "customer": format!("c{i}"), "total": 100 + i, "issuedAt": date(2025, 12, 1 + i as u8) })
            .await
            .unwrap();
    }
    sealed(&coll, 5).await;
    coll.insert_many((0..7).map(|i| {
        doc! { "customer": format!("d{i}"), "total": 10.5 + f64::from(i), "issuedAt": date(2026, 1, 1 + i as u8) }
    }))
    .await
    .unwrap();
    sealed(&coll, 12).await;
    run.stop().await;

    let documents = all(&coll).await;
    let series_2025 = format!("{sequence}/2025");
    let series_2026 = format!("{sequence}/2026");
    let links_2025 = with_series(links(&documents, "2025"), &series_2025);
    let links_2026 = with_series(links(&documents, "2026"), &series_2026);
    assert_eq!((links_2025.len(), links_2026.len()), (5, 7));
    let head_2025 = head(&db, &series_2025).await;
    let head_2026 = head(&db, &series_2026).await;
    let report_2025 = verify_series(&series_2025, &links_2025, None, head_2025.as_deref());
    assert!(report_2025.verified, "{report_2025:?}");
    assert_eq!(report_2025.links, 5);
    // 2026's chain starts where 2025's ends.
    let report_2026 = verify_series(
        &series_2026,
        &links_2026,
        head_2025.as_deref(),
        head_2026.as_deref(),
    );
    assert!(report_2026.verified, "{report_2026:?}");
    assert_eq!(report_2026.links, 7);
    let first_2026 = links_2026
        .iter()
        .find(|l| l.link.number == 1)
        .and_then(|l| l.seal.clone())
        .unwrap();
    assert_eq!(first_2026.previous, head_2025);
    assert_eq!(
        report_2026.last.as_ref().map(|l| l.hash.clone()),
        head_2026,
        "the counter's head is the last link"
    );

    // A sealed value changed by hand: that link no longer verifies.
    coll.update_one(
        doc! { "seqPeriod": "2026", "seq": 3_i64 },
        doc! { "$set": { "total": 99 } },
    )
    .await
    .unwrap();
    let documents = all(&coll).await;
    let tampered = with_series(links(&documents, "2026"), &series_2026);
    let report = verify_series(
        &series_2026,
        &tampered,
        head_2025.as_deref(),
        head_2026.as_deref(),
    );
    assert!(!report.verified);
    assert_eq!(
        failures(&report),
        [(3, SealFailureReason::FieldChanged)],
        "{report:?}"
    );
    plain.database(&db).drop().await.ok();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn seals_recorded_but_not_written_are_written_by_the_next_holder_as_recorded() {
    let (db, plain, coll) = test_db("sealed_pending").await;
    let sequence = format!("{db}.orders");
    let trigger = "gapless = true\nseal_fields = [\"total\"]";
    let run = start(config(&db, trigger, ""), options().await, false);
    wait_running(&run).await;
    coll.insert_many((1..=3).map(|i| doc! { "_id": i, "total": i * 10 }))
        .await
        .unwrap();
    sealed(&coll, 3).await;
    run.stop().await;
    // As a holder that crashed after its finish and before the seals' write leaves it: the
    // seals in the counter's `pending`, the documents without them. One value was edited in
    // between: the seal written is the one recorded, which no longer verifies (as it should).
    let counters: Collection<Document> = plain.database(&db).collection("counters");
    let counter = counters
        .find_one(doc! { "_id": &sequence })
        .await
        .unwrap()
        .unwrap();
    let documents = all(&coll).await;
    let pending: Vec<Document> = documents
        .iter()
        .map(|d| {
            doc! { "id": d.get("_id").unwrap().clone(), "number": d.get_i64("seq").unwrap(), "seal": d.get_document("seqSeal").unwrap().clone() }
        })
        .collect();
    counters
        .update_one(
            doc! { "_id": &sequence },
            doc! { "$set": { "seal.pending": pending } },
        )
        .await
        .unwrap();
    coll.update_many(doc! {}, doc! { "$unset": { "seqSeal": "" } })
        .await
        .unwrap();
    coll.update_one(doc! { "_id": 2 }, doc! { "$set": { "total": 21 } })
        .await
        .unwrap();
    let run = start(config(&db, trigger, ""), options().await, false);
    wait_running(&run).await;
    sealed(&coll, 3).await;
    // A later batch chains on the head, after the pending seals were written.
    coll.insert_one(doc! { "_id": 4, "total": 40 })
        .await
        .unwrap();
    sealed(&coll, 4).await;
    run.stop().await;
    let documents = all(&coll).await;
    let links: Vec<StoredLink> = documents
        .iter()
        .map(|d| {
            let value = json(d);
            StoredLink {
                link: Link::issued(
                    &sequence,
                    d.get_i64("seq").unwrap(),
                    None,
                    &value,
                    &["total".to_owned()],
                ),
                seal: value.get("seqSeal").map(|s| Seal::read(s).unwrap()),
            }
        })
        .collect();
    let head = counter
        .get_document("seal")
        .ok()
        .and_then(|s| s.get_str("hash").ok())
        .map(str::to_owned);
    assert!(head.is_some());
    let report = verify_series(&sequence, &links, None, None);
    assert_eq!(
        failures(&report),
        [(2, SealFailureReason::FieldChanged)],
        "{report:?}"
    );
    assert_eq!(report.links, 4, "{report:?}");
    plain.database(&db).drop().await.ok();
}

/// The ledger's entries of `counter_id` as links: a void's, a deletion's and the issue link a
/// deletion removed.
async fn ledger_links(db: &str, counter_id: &str, fields: &[String]) -> Vec<StoredLink> {
    let ledger: Collection<Document> = client().await.database(db).collection("mongo_seq_ledger");
    let entries: Vec<Document> = ledger
        .find(doc! { "_id.counter": counter_id })
        .await
        .unwrap()
        .try_collect()
        .await
        .unwrap();
    let mut links = Vec::new();
    for entry in entries {
        let value = json(&entry);
        let number = entry
            .get_document("_id")
            .unwrap()
            .get_i64("number")
            .unwrap();
        let seal = value.get("seal").map(|s| Seal::read(s).unwrap());
        let kind = entry.get_str("kind").unwrap();
        let removed = value.get("removed");
        let sealed_fields = removed
            .and_then(|r| r.get("fields"))
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        let link = Link::from_json(
            "link",
            &serde_json::json!({
                "series": counter_id,
                "kind": if kind == "void" { "void" } else { "deletion" },
                "number": number,
                "fields": sealed_fields,
            }),
        )
        .unwrap();
        links.push(StoredLink { link, seal });
        if let Some(removed) = removed {
            let mut issue = Link::issued(counter_id, number, None, &Value::Null, fields);
            issue.fields = sealed_fields;
            links.push(StoredLink {
                link: issue,
                seal: removed.get("seal").map(|s| Seal::read(s).unwrap()),
            });
        }
    }
    links
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn voids_and_deletions_are_links_of_the_chain() {
    let (db, plain, coll) = test_db("sealed_ledger").await;
    let sequence = format!("{db}.orders");
    let database = plain.database(&db);
    create_with_images(&plain, &db, "orders").await;
    let trigger = "gapless = true\nseal_fields = [\"total\"]";
    let text = config_toml(&db, trigger, "");
    let path = write_config(&format!("{db}-sealed-void"), &text);
    let run = start(config(&db, trigger, ""), options().await, false);
    wait_running(&run).await;
    coll.insert_many((1..=3).map(|i| doc! { "_id": i, "total": i * 10 }))
        .await
        .unwrap();
    sealed(&coll, 3).await;
    // A sealed document deleted: its deletion is recorded as a link.
    coll.delete_one(doc! { "_id": 2 }).await.unwrap();
    let ledger: Collection<Document> = database.collection("mongo_seq_ledger");
    let deadline = tokio::time::Instant::now() + WAIT;
    while ledger.count_documents(doc! {}).await.unwrap() < 1 {
        assert!(
            tokio::time::Instant::now() < deadline,
            "deletion not recorded"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // A number lost (taken by hand from the counter) and voided by a clerk.
    let counters: Collection<Document> = database.collection("counters");
    counters
        .update_one(doc! { "_id": &sequence }, doc! { "$inc": { "seq": 1_i64 } })
        .await
        .unwrap();
    let (code, out, err) = run_bin(
        &[
            "void",
            &sequence,
            "4",
            "--reason",
            "lost in a crash",
            "--config",
            path.to_str().unwrap(),
        ],
        &[],
    );
    assert_eq!(code, 0, "{out}{err}");
    // The next documents chain after the void.
    coll.insert_one(doc! { "_id": 5, "total": 50 })
        .await
        .unwrap();
    sealed(&coll, 3).await;
    let deadline = tokio::time::Instant::now() + WAIT;
    while coll
        .count_documents(doc! { "_id": 5, "seqSeal": { "$exists": true } })
        .await
        .unwrap()
        < 1
    {
        assert!(tokio::time::Instant::now() < deadline, "5 not sealed");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    run.stop().await;
    let fields = ["total".to_owned()];
    let mut links: Vec<StoredLink> = all(&coll)
        .await
        .iter()
        .map(|d| {
            let value = json(d);
            StoredLink {
                link: Link::issued(&sequence, d.get_i64("seq").unwrap(), None, &value, &fields),
                seal: value.get("seqSeal").map(|s| Seal::read(s).unwrap()),
            }
        })
        .collect();
    links.extend(ledger_links(&db, &sequence, &fields).await);
    let counter = counters
        .find_one(doc! { "_id": &sequence })
        .await
        .unwrap()
        .unwrap();
    let seal = counter.get_document("seal").unwrap();
    assert!(
        seal.get_array("records").map_or(true, Vec::is_empty),
        "records left: {seal:?}"
    );
    let head = seal.get_str("hash").ok();
    let report = verify_series(&sequence, &links, None, head);
    assert!(report.verified, "{report:?}");
    // Issued 1 to 3, the deletion of 2, the void of 4, 5 issued after it.
    assert_eq!(report.links, 6, "{report:?}");
    // A void left out of the chain would be a link the chain does not hold.
    let outside: Vec<StoredLink> = links
        .iter()
        .filter(|l| l.link.kind != mongo_seq_core::seal::link::LinkKind::Void)
        .cloned()
        .collect();
    assert!(!verify_series(&sequence, &outside, None, head).verified);
    plain.database(&db).drop().await.ok();
}
