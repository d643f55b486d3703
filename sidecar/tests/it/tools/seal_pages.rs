//! `check --seal` of a series longer than a page of documents: every document read once,
//! also two holding one number across a page boundary.

use crate::common;

use common::*;
use mongo_seq_core::seal::link::Link;
use mongodb::bson::{doc, Document};
use serde_json::{json, Value};

use super::json as parse;
use super::seal::{bson, fields, seal_bson, Chain};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_series_longer_than_a_page_is_read_in_pages_each_document_once() {
    let (db, plain, _) = test_db("seal_pages").await;
    let database = plain.database(&db);
    let documents = |n: i64| json!({"_id": n, "number": n, "total": n, "customer": {"name": "c"}});
    let mut chain = Chain(None);
    let mut written = Vec::new();
    let mut before_1000 = None;
    for n in 1..=2_345 {
        let document = documents(n);
        if n == 1_000 {
            before_1000 = chain.0.clone();
        }
        let link = Link::issued("big", n, None, &document, &fields());
        let mut document = bson(&document);
        document.insert("numberSeal", seal_bson(&chain.append(&link)));
        written.push(document);
    }
    // A forged number 1,000 beside the real one: the first page (1,000 documents, by number)
    // ends with one of the two, the next starts with the other.
    let forged = json!({"_id": 1_000_000, "number": 1_000, "total": 1, "customer": {"name": "c"}});
    let link = Link::issued("big", 1_000, None, &forged, &fields());
    let mut forged = bson(&forged);
    forged.insert(
        "numberSeal",
        seal_bson(&link.seal(before_1000.as_deref()).unwrap()),
    );
    written.push(forged);
    database
        .collection::<Document>("invoices")
        .insert_many(written)
        .await
        .unwrap();
    database
        .collection::<Document>("counters")
        .insert_one(doc! { "_id": "big", "seq": 2_345_i64, "seal": { "hash": chain.0.unwrap() } })
        .await
        .unwrap();
    let uri = mongodb_uri();
    let (code, out, err) = run_bin(
        &[
            "check",
            "--seal",
            "--json",
            "--uri",
            &uri,
            "--db",
            &db,
            "--collection",
            "invoices",
            "--field",
            "number",
            "--sequence",
            "big",
            "--seal-fields",
            "total,customer.name",
        ],
        &[],
    );
    assert_eq!(code, 1, "{out}{err}");
    let report = parse(&out);
    let series = &report["seal"][0];
    assert_eq!(series["links"], 2_345, "{series}");
    let failures: Vec<(Value, Value)> = series["failures"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["number"].clone(), f["reason"].clone()))
        .collect();
    assert_eq!(
        failures,
        [(json!(1_000), json!("LINK_INSERTED"))],
        "{series}"
    );
}
