//! `check --seal` of a series the sidecar itself sealed (a gapless trigger with `seal_fields`,
//! two periods, a deletion it recorded, a number voided with `mongo-seq void`): the reader finds
//! the writer's chain intact, the audit agrees, and a sealed value changed by hand afterwards is
//! named. A sealed series voided by flags (`--seal-fields`): the void is a link after the head.

use crate::common;

use std::time::Duration;

use common::*;
use mongodb::bson::{doc, DateTime, Document};
use mongodb::Collection;
use serde_json::{json, Value};

use super::json as parse;

const TRIGGER: &str = "gapless = true\nreset = \"yearly\"\ndate_field = \"issuedAt\"\nseal_fields = [\"customer\", \"total\"]";

fn date(y: i32, m: u8, d: u8) -> DateTime {
    DateTime::builder().year(y).month(m).day(d).build().unwrap()
}

/// Waits until `n` documents hold a number and its seal.
async fn sealed(coll: &Collection<Document>, n: u64) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    while coll
        .count_documents(doc! { "seq": { "$exists": true }, "seqSeal": { "$exists": true } })
        .await
        .unwrap()
        < n
    {
        assert!(tokio::time::Instant::now() < deadline, "not sealed in 60 s");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_sidecars_own_seals_verify_and_a_later_edit_is_named() {
    let (db, plain, coll) = test_db("seal_written").await;
    let database = plain.database(&db);
    // Pre-images: a deletion's record keeps the link the document held.
    create_with_images(&plain, &db, "orders").await;
    let path = write_config(&format!("{db}-written"), &config_toml(&db, TRIGGER, ""));
    let path = path.to_str().unwrap();
    let sequence = format!("{db}.orders");
    let run = start(config(&db, TRIGGER, ""), options().await, false);
    wait_running(&run).await;
    for i in 0..3 {
        coll.insert_one(doc! { "customer": { "name": format!("c{i}") }, "total": 100 + i, "issuedAt": date(2025, 12, 1 + i as u8) })
            .await
            .unwrap();
    }
    sealed(&coll, 3).await;
    coll.insert_many((0..4).map(|i| {
        doc! { "customer": { "name": format!("d{i}") }, "total": 10.5 + f64::from(i), "issuedAt": date(2026, 1, 1 + i as u8) }
    }))
    .await
    .unwrap();
    sealed(&coll, 7).await;
    // 2026's number 2 deleted: the trigger records it, a link of the chain.
    coll.delete_one(doc! { "seqPeriod": "2026", "seq": 2_i64 })
        .await
        .unwrap();
    let ledger: Collection<Document> = database.collection("mongo_seq_ledger");
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    while ledger.count_documents(doc! {}).await.unwrap() < 1 {
        assert!(
            tokio::time::Instant::now() < deadline,
            "deletion not recorded"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // A number lost (taken by hand from the counter) and voided by a clerk.
    database
        .collection::<Document>("counters")
        .update_one(
            doc! { "_id": format!("{sequence}/2026") },
            doc! { "$inc": { "seq": 1_i64 } },
        )
        .await
        .unwrap();
    let voided = [
        "void", &sequence, "5", "--period", "2026", "--reason", "lost", "--config", path,
    ];
    let (code, out, err) = run_bin(&voided, &[]);
    assert_eq!(code, 0, "{out}{err}");
    coll.insert_one(doc! { "customer": { "name": "e" }, "total": 1, "issuedAt": date(2026, 2, 1) })
        .await
        .unwrap();
    sealed(&coll, 7).await; // 6 of the 7 left, and the new one
    run.stop().await;

    let (code, out, err) = run_bin(&["check", "--seal", "--json", "--config", path], &[]);
    assert_eq!(code, 0, "{out}{err}");
    let report = parse(&out);
    let summary: Vec<(Value, Value, Value)> = report[0]["seal"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["series"].clone(),
                s["links"].clone(),
                s["verified"].clone(),
            )
        })
        .collect();
    assert_eq!(
        summary,
        [
            (json!(format!("{sequence}/2025")), json!(3), json!(true)),
            // Numbers 1 to 4 issued (2's link from its deletion's record), 2's deletion, 5's void, 6.
            (json!(format!("{sequence}/2026")), json!(7), json!(true)),
        ],
        "{report}"
    );
    // The accounts of the same series are clean too.
    let (code, out, err) = run_bin(&["check", "--config", path], &[]);
    assert_eq!(code, 0, "{out}{err}");

    // A sealed value changed by hand (a nested field of a sealed document): named, exit 1.
    coll.update_one(
        doc! { "seqPeriod": "2026", "seq": 3_i64 },
        doc! { "$set": { "customer.name": "someone else" } },
    )
    .await
    .unwrap();
    let (code, out, err) = run_bin(&["check", "--seal", "--config", path], &[]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        err.contains(&format!(
            "{sequence}/2026: the sealed chain breaks at number 3 (issue): FIELD_CHANGED"
        )),
        "{err}"
    );
    plain.database(&db).drop().await.ok();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sealed_series_is_voided_by_flags_as_a_link_after_its_head() {
    let (db, plain) = super::series_2026("void_sealed_flags", "no", &[1, 3]).await;
    let head = "a".repeat(64);
    let counters = plain.database(&db).collection::<Document>("counters");
    counters
        .update_one(
            doc! { "_id": "inv/2026" },
            doc! { "$set": { "seal.hash": &head } },
        )
        .await
        .unwrap();
    let uri = mongodb_uri();
    let (code, out, err) = run_bin(
        &[
            "void",
            "inv",
            "2",
            "--period",
            "2026",
            "--reason",
            "lost",
            "--uri",
            &uri,
            "--db",
            &db,
            "--collection",
            "orders",
            "--field",
            "no",
            "--reset",
            "yearly",
            "--seal-fields",
            "total",
        ],
        &[],
    );
    assert_eq!(code, 0, "{out}{err}");
    let entry = plain
        .database(&db)
        .collection::<Document>("mongo_seq_ledger")
        .find_one(doc! {})
        .await
        .unwrap()
        .expect("the void's entry");
    let seal = entry.get_document("seal").expect("the void is a link");
    assert_eq!(seal.get_str("previous"), Ok(head.as_str()));
    let counter = counters
        .find_one(doc! { "_id": "inv/2026" })
        .await
        .unwrap()
        .unwrap();
    let moved = counter.get_document("seal").unwrap();
    assert_eq!(
        moved.get_str("hash").ok(),
        seal.get_str("hash").ok(),
        "the head moved over it"
    );
    assert!(moved.get_array("records").map_or(true, Vec::is_empty));
    plain.database(&db).drop().await.ok();
}
