//! `check --seal` through the built binary, against a sealed series written by hand as the
//! writer stores it (docs/sealed-series.md): documents with `<field>Seal`, counters with the
//! head and a pending seal, a void and a deletion (with its `removed` issue link) in the
//! ledger, two periods chained. The intact series verifies (exit 0); each tampering is found
//! with its reason (exit 1); `--seal` without sealed fields is a usage error (exit 2).

use crate::common;

use common::*;
use mongo_seq_core::seal::link::{Link, LinkKind, Seal};
use mongodb::bson::{doc, Bson, DateTime, Document};
use mongodb::Collection;
use serde_json::{json, Map, Value};

use super::{check_yearly_invoices, json as parse};

const FIELDS: [&str; 2] = ["total", "customer.name"];

pub(super) fn fields() -> Vec<String> {
    FIELDS.iter().map(|f| (*f).to_owned()).collect()
}

/// A chain being written: the last hash.
pub(super) struct Chain(pub(super) Option<String>);

impl Chain {
    pub(super) fn append(&mut self, link: &Link) -> Seal {
        let seal = link.seal(self.0.as_deref()).unwrap();
        self.0 = Some(seal.hash.clone());
        seal
    }
}

pub(super) fn seal_bson(seal: &Seal) -> Bson {
    Bson::Document(doc! { "hash": &seal.hash, "previous": seal.previous.as_deref() })
}

/// Invoice `number` of `year` (its `_id`: year * 100 + number), as JSON.
fn invoice(year: i64, number: i64, total: i64) -> Value {
    json!({"_id": year * 100 + number, "number": number, "numberPeriod": year.to_string(),
           "total": total, "customer": {"name": format!("client {number}"), "vat": "ES1"}})
}

fn issue(year: i64, document: &Value) -> Link {
    let number = document["number"].as_i64().unwrap();
    let period = year.to_string();
    Link::issued(
        &format!("inv/{year}"),
        number,
        Some(&period),
        document,
        &fields(),
    )
}

pub(super) fn bson(value: &Value) -> Document {
    mongodb::bson::to_document(value).unwrap()
}

/// What the tests tamper with.
struct Written {
    db: String,
    plain: mongodb::Client,
    /// 2026's invoice 3's issue link, which invoice 4 follows.
    after_three: String,
}

impl Written {
    fn invoices(&self) -> Collection<Document> {
        self.plain.database(&self.db).collection("invoices")
    }
}

/// The sealed series `inv` (yearly) numbered in `number` of `db.invoices`, sealing `total` and
/// `customer.name`: in 2025 numbers 1 and 2; in 2026, chained to 2025's head, numbers 1 to 4 —
/// 3's document deleted (its deletion recorded with the link it held) —, 5 voided (no document
/// held it), 6 numbered, its seal still pending in the counter.
async fn write_series(label: &str) -> Written {
    let (db, plain, _) = test_db(label).await;
    let database = plain.database(&db);
    let invoices: Collection<Document> = database.collection("invoices");
    let counters: Collection<Document> = database.collection("counters");
    let ledger: Collection<Document> = database.collection("mongo_seq_ledger");
    let sealed = |document: &Value, seal: &Seal| {
        let mut document = bson(document);
        document.insert("numberSeal", seal_bson(seal));
        document
    };

    let mut chain = Chain(None);
    for number in 1..=2 {
        let document = invoice(2025, number, number * 100);
        let seal = chain.append(&issue(2025, &document));
        invoices.insert_one(sealed(&document, &seal)).await.unwrap();
    }
    let head_2025 = chain.0.clone().unwrap();
    counters
        .insert_one(doc! { "_id": "inv/2025", "seq": 2_i64, "seal": { "hash": &head_2025 } })
        .await
        .unwrap();

    let mut chain = Chain(Some(head_2025));
    let documents: Vec<Value> = [1, 2, 3, 4, 6].map(|n| invoice(2026, n, n * 10)).to_vec();
    let mut seals = Vec::new();
    for document in &documents[..4] {
        seals.push(chain.append(&issue(2026, document)));
    }
    let after_three = seals[2].hash.clone();
    for (index, document) in documents[..4].iter().enumerate() {
        if index != 2 {
            invoices
                .insert_one(sealed(document, &seals[index]))
                .await
                .unwrap();
        }
    }
    // Invoice 3 deleted: its deletion recorded, with the link the document held.
    let removed_fields = issue(2026, &documents[2]).fields;
    let deletion = Link {
        series: "inv/2026".to_owned(),
        kind: LinkKind::Deletion,
        number: 3,
        period: Some("2026".to_owned()),
        fields: removed_fields.clone(),
    };
    let deletion_seal = chain.append(&deletion);
    let entry = |number: i64, kind: &str, reason: &str| {
        doc! { "_id": { "counter": "inv/2026", "number": number }, "sequence": "inv",
        "kind": kind, "reason": reason, "at": DateTime::from_millis(0), "by": "test" }
    };
    let mut deleted = entry(3, "deleted", "document deleted");
    deleted.insert("document", 202_603_i64);
    deleted.insert("seal", seal_bson(&deletion_seal));
    deleted.insert(
        "removed",
        doc! { "fields": bson(&Value::Object(removed_fields)), "seal": seal_bson(&seals[2]) },
    );
    // A void of a number no document held (reserved and lost).
    let void = Link {
        series: "inv/2026".to_owned(),
        kind: LinkKind::Void,
        number: 5,
        period: Some("2026".to_owned()),
        fields: Map::new(),
    };
    let mut voided = entry(5, "void", "reserved and lost");
    voided.insert("seal", seal_bson(&chain.append(&void)));
    ledger.insert_many([deleted, voided]).await.unwrap();
    // Invoice 6: numbered, its seal recorded in the counter, not on the document yet.
    let six = chain.append(&issue(2026, &documents[4]));
    invoices.insert_one(bson(&documents[4])).await.unwrap();
    counters
        .insert_one(doc! { "_id": "inv/2026", "seq": 6_i64, "seal": {
            "hash": &six.hash,
            "pending": [{ "id": 202_606_i64, "number": 6_i64, "seal": seal_bson(&six) }],
        } })
        .await
        .unwrap();
    Written {
        db,
        plain,
        after_three,
    }
}

/// `check --seal` of the series, with `extra` flags: exit code, stdout, stderr.
fn check_seal(db: &str, extra: &[&str]) -> (i32, String, String) {
    let mut args = vec!["--seal", "--seal-fields", "total,customer.name"];
    args.extend_from_slice(extra);
    check_yearly_invoices(&mongodb_uri(), db, &args)
}

/// The 2026 series' failures as (number, kind, reason), from `check --seal --json`.
fn failures_2026(db: &str) -> Vec<(i64, String, String)> {
    let (code, out, err) = check_seal(db, &["--json"]);
    assert_eq!(code, 1, "{out}{err}");
    let report = parse(&out);
    let series = report["seal"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["series"] == "inv/2026")
        .unwrap_or_else(|| panic!("no 2026 series: {report}"))
        .clone();
    assert_eq!(series["verified"], false, "{series}");
    series["failures"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["number"].as_i64().unwrap(),
                f["kind"].as_str().unwrap().to_owned(),
                f["reason"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

fn failure(number: i64, kind: &str, reason: &str) -> (i64, String, String) {
    (number, kind.to_owned(), reason.to_owned())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_intact_sealed_series_verifies_and_a_pending_seal_counts() {
    let written = write_series("seal_intact").await;
    let (code, out, err) = check_seal(&written.db, &[]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains("field number: sealed chains of 2 series, 9 links: every one verifies"),
        "{out}"
    );
    assert!(
        out.contains("  seal inv/2026: verified: 7 links, first 1 (issue) "),
        "{out}"
    );
    let (code, out, err) = check_seal(&written.db, &["--json"]);
    assert_eq!(code, 0, "{out}{err}");
    let report = parse(&out);
    let series = report["seal"].as_array().unwrap();
    let counts: Vec<(Value, Value, Value)> = series
        .iter()
        .map(|s| {
            (
                s["series"].clone(),
                s["links"].clone(),
                s["pending"].clone(),
            )
        })
        .collect();
    assert_eq!(
        counts,
        [
            (json!("inv/2025"), json!(2), json!(0)),
            (json!("inv/2026"), json!(7), json!(0))
        ]
    );
    // The same series as a config's gapless trigger sealing them: its name in the report.
    let trigger = "name = \"invoices\"\nsequence = \"inv\"\nreset = \"yearly\"\ngapless = true\nseal_fields = [\"total\", \"customer.name\"]";
    let text = config_toml(&written.db, trigger, "")
        .replace("\"orders\"", "\"invoices\"")
        .replace("field = \"seq\"", "field = \"number\"");
    let path = write_config(&format!("{}-seal", written.db), &text);
    let (code, out, err) = run_bin(
        &[
            "check",
            "--seal",
            "--json",
            "--config",
            path.to_str().unwrap(),
        ],
        &[],
    );
    assert_eq!(code, 0, "{out}{err}");
    let config_report = parse(&out);
    assert_eq!(config_report[0]["trigger"], "invoices", "{config_report}");
    assert_eq!(config_report[0]["seal"], report["seal"], "{config_report}");
    // The accounts agree: every number held, voided or recorded deleted.
    let (code, out, err) = check_yearly_invoices(&mongodb_uri(), &written.db, &["--gapless"]);
    assert_eq!(code, 0, "{out}{err}");
    // 2026's first link names 2025's head: the periods are chained.
    assert_eq!(
        series[1]["last"]["number"], 6,
        "the pending seal is invoice 6's: {report}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_changed_sealed_field_is_named_first() {
    let written = write_series("seal_changed").await;
    written
        .invoices()
        .update_one(
            doc! { "_id": 202_602_i64 },
            doc! { "$set": { "customer.name": "someone else" } },
        )
        .await
        .unwrap();
    assert_eq!(
        failures_2026(&written.db),
        [failure(2, "issue", "FIELD_CHANGED")]
    );
    let (code, out, err) = check_seal(&written.db, &[]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        out.contains("  seal inv/2026: DOES NOT VERIFY: 7 links"),
        "{out}"
    );
    assert!(
        out.contains("    first failure: number 2 (issue): FIELD_CHANGED: "),
        "{out}"
    );
    assert!(
        err.contains("inv/2026: the sealed chain breaks at number 2 (issue): FIELD_CHANGED"),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sealed_document_deleted_without_a_record_is_a_missing_link() {
    let written = write_series("seal_deleted").await;
    written
        .invoices()
        .delete_one(doc! { "_id": 202_604_i64 })
        .await
        .unwrap();
    // The link after invoice 4 (3's deletion) misses the link before it.
    assert_eq!(
        failures_2026(&written.db),
        [failure(3, "deletion", "LINK_MISSING")]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_link_inserted_with_a_forged_seal_is_found() {
    let written = write_series("seal_inserted").await;
    // A forger's invoice 4 (the real one holds its number), sealed right after invoice 3.
    let forged = invoice(2026, 4, 1);
    let mut forged = json!({"_id": 999, "number": 4, "numberPeriod": "2026", "total": 1,
        "customer": forged["customer"].clone()});
    let seal = issue(2026, &forged)
        .seal(Some(&written.after_three))
        .unwrap();
    forged["numberSeal"] = json!({"hash": seal.hash, "previous": seal.previous});
    written.invoices().insert_one(bson(&forged)).await.unwrap();
    assert_eq!(
        failures_2026(&written.db),
        [failure(4, "issue", "LINK_INSERTED")]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_removed_seal_and_the_heads_last_link_removed_are_found() {
    let written = write_series("seal_removed").await;
    written
        .invoices()
        .update_one(
            doc! { "_id": 202_602_i64 },
            doc! { "$unset": { "numberSeal": "" } },
        )
        .await
        .unwrap();
    assert_eq!(
        failures_2026(&written.db),
        [
            failure(2, "issue", "SEAL_REMOVED"),
            failure(3, "issue", "LINK_MISSING")
        ]
    );

    let written = write_series("seal_tail").await;
    // Invoice 6 (the head's link, its seal pending in the counter) deleted without a record.
    written
        .invoices()
        .delete_one(doc! { "_id": 202_606_i64 })
        .await
        .unwrap();
    let failures = failures_2026(&written.db);
    assert_eq!(
        failures,
        [failure(5, "issue", "LINK_MISSING")],
        "the chain ends at the void of 5"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn seal_without_sealed_fields_is_a_usage_error_and_hostile_fields_are_refused() {
    let (db, plain, _) = test_db("seal_usage").await;
    plain
        .database(&db)
        .collection::<Document>("invoices")
        .insert_one(doc! { "number": 1 })
        .await
        .unwrap();
    let uri = mongodb_uri();
    let base = [
        "check",
        "--seal",
        "--uri",
        &uri,
        "--db",
        &db,
        "--collection",
        "invoices",
        "--field",
        "number",
    ];
    let (code, out, err) = run_bin(&base, &[]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(err.contains("--seal needs --seal-fields"), "{err}");
    let many: Vec<String> = (0..=64).map(|i| format!("f{i}")).collect();
    let many = many.join(",");
    for hostile in [
        "$where",
        "a..b",
        "total,total",
        "",
        many.as_str(),
        "a\u{1}b",
    ] {
        let mut args = base.to_vec();
        args.extend_from_slice(&["--seal-fields", hostile]);
        let (code, out, err) = run_bin(&args, &[]);
        assert_eq!(code, 2, "{hostile:?}: {out}{err}");
        assert!(err.contains("seal-fields"), "{hostile:?}: {err}");
    }
    // A config whose trigger seals nothing: the key is named.
    let text = config_toml(&db, "sequence = \"inv\"", "").replace("\"orders\"", "\"invoices\"");
    let path = write_config(&format!("{db}-seal"), &text);
    let (code, out, err) = run_bin(
        &["check", "--seal", "--config", path.to_str().unwrap()],
        &[],
    );
    assert_eq!(code, 2, "{out}{err}");
    assert!(err.contains("has `seal_fields`"), "{err}");
    // --seal with the accounts' flags: a usage error.
    let mut args = base.to_vec();
    args.extend_from_slice(&["--seal-fields", "total", "--gapless"]);
    assert_eq!(run_bin(&args, &[]).0, 2);
}
