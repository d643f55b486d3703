//! Inserting numbered documents (js/test/insert.test.mjs): insert_one/insert_many over a
//! counter, typed documents, the tutorial's optimistic loop, reading back a number another
//! process assigns, and the concerns every command carries.

use crate::common;

mod optimistic;
use common::{all, setup};
use futures_util::TryStreamExt;
use mongo_seq::{InsertOptions, SequenceOptions};
use mongodb::bson::{doc, Bson, Document};
use mongodb::options::IndexOptions;
use mongodb::IndexModel;
use serde::{Deserialize, Serialize};

type TestResult = Result<(), Box<dyn std::error::Error>>;

#[tokio::test]
async fn insert_one_numbers_id_and_inserts_a_copy() -> TestResult {
    let s = setup("ins_one").await;
    let seqs = s.seqs();
    let users = s.db.collection::<Document>("users");
    let sarah = doc! { "name": "Sarah C." };
    let result = seqs
        .insert_one(&users, &sarah, InsertOptions::new("userid").field("_id"))
        .await?;
    assert_eq!(
        (result.inserted_id.clone(), result.value, result.formatted),
        (Bson::Int64(1), 1, None)
    );
    seqs.insert_one(&users, doc! { "name": "Bob D." }, "userid")
        .await?;
    assert_eq!(
        all(&users, doc! {}).await,
        [
            doc! { "_id": 1_i64, "name": "Sarah C." },
            doc! { "_id": 2_i64, "name": "Bob D." }
        ]
    );
    assert_eq!(
        sarah,
        doc! { "name": "Sarah C." },
        "the caller's document is not modified"
    );
    s.drop_db().await;
    Ok(())
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Order {
    #[serde(rename = "_id", skip_serializing_if = "Option::is_none")]
    id: Option<mongodb::bson::oid::ObjectId>,
    #[serde(rename = "orderNo", skip_serializing_if = "Option::is_none")]
    order_no: Option<i64>,
    item: String,
}

#[tokio::test]
async fn typed_documents_are_numbered_as_they_serialize() -> TestResult {
    let s = setup("ins_typed").await;
    let seqs = s.seqs();
    let orders = s.db.collection::<Order>("orders");
    let book = Order {
        id: None,
        order_no: None,
        item: "book".into(),
    };
    let one = seqs
        .insert_one(
            &orders,
            &book,
            InsertOptions::new("orders").field("orderNo"),
        )
        .await?;
    assert_eq!(one.value, 1);
    assert!(
        matches!(one.inserted_id, Bson::ObjectId(_)),
        "an ObjectId _id, as the driver gives one"
    );
    let batch = vec![
        Order {
            id: None,
            order_no: None,
            item: "pen".into(),
        },
        Order {
            id: None,
            order_no: None,
            item: "ink".into(),
        },
    ];
    let many = seqs
        .insert_many(
            &orders,
            &batch,
            InsertOptions::new("orders").field("orderNo"),
        )
        .await?;
    assert_eq!(many.values, [2, 3]);
    assert_eq!(many.inserted_ids.len(), 2);
    let stored: Vec<Order> = orders
        .find(doc! {})
        .sort(doc! { "orderNo": 1 })
        .await?
        .try_collect()
        .await?;
    let read: Vec<(Option<i64>, &str)> = stored
        .iter()
        .map(|o| (o.order_no, o.item.as_str()))
        .collect();
    assert_eq!(
        read,
        [(Some(1), "book"), (Some(2), "pen"), (Some(3), "ink")]
    );
    assert_eq!(
        Some(Bson::ObjectId(stored[1].id.unwrap())),
        Some(many.inserted_ids[0].clone()),
        "the ids reported are the stored ones"
    );
    s.drop_db().await;
    Ok(())
}

#[tokio::test]
async fn insert_one_skips_numbers_already_taken_and_retries() -> TestResult {
    let s = setup("ins_retry").await;
    let users = s.db.collection::<Document>("users");
    users
        .insert_many([
            doc! { "_id": 1, "name": "imported" },
            doc! { "_id": 2, "name": "imported" },
        ])
        .await?;
    let result = s
        .seqs()
        .insert_one(&users, doc! { "name": "new" }, "userid")
        .await?;
    assert_eq!(result.value, 3);
    assert_eq!(users.count_documents(doc! {}).await?, 3);
    s.drop_db().await;
    Ok(())
}

async fn unique_email(users: &mongodb::Collection<Document>) {
    let index = IndexModel::builder()
        .keys(doc! { "email": 1 })
        .options(IndexOptions::builder().unique(true).build())
        .build();
    users.create_index(index).await.expect("an index");
}

#[tokio::test]
async fn a_duplicate_key_on_another_unique_field_is_the_driver_s_error_at_once() -> TestResult {
    let s = setup("ins_other_dup").await;
    let users = s.db.collection::<Document>("users");
    unique_email(&users).await;
    let seqs = s.seqs();
    seqs.insert_one(&users, doc! { "email": "a@example.com" }, "userid")
        .await?;
    s.monitor.reset();
    let error = seqs
        .insert_one(&users, doc! { "email": "a@example.com" }, "userid")
        .await
        .unwrap_err();
    let mongo_seq::Error::Mongo(driver) = &error else {
        panic!("the driver's error, got {error:?}")
    };
    assert!(driver.to_string().contains("E11000"), "{driver}");
    assert_eq!(error.code(), None, "driver errors have no mongo-seq code");
    assert_eq!(
        s.monitor.count("insert"),
        1,
        "no retry loop on a foreign duplicate"
    );
    assert_eq!(s.monitor.count("findAndModify"), 1);

    // insert_many: the documents before it are in.
    users
        .insert_one(doc! { "_id": "taken", "email": "b@example.com" })
        .await?;
    s.monitor.reset();
    let docs = [
        doc! { "email": "c@example.com" },
        doc! { "email": "b@example.com" },
        doc! { "email": "d@example.com" },
    ];
    let error = seqs
        .insert_many(&users, docs, InsertOptions::new("other").field("n"))
        .await
        .unwrap_err();
    assert!(matches!(error, mongo_seq::Error::Mongo(_)), "{error:?}");
    assert_eq!(
        s.monitor.count("insert"),
        1,
        "no retry loop on a foreign duplicate"
    );
    let numbered: Vec<(String, i64)> = all(&users, doc! { "n": { "$exists": true } })
        .await
        .iter()
        .map(|d| {
            (
                d.get_str("email").unwrap().to_owned(),
                d.get_i64("n").unwrap(),
            )
        })
        .collect();
    assert_eq!(numbered, [("c@example.com".to_owned(), 1)]);
    s.drop_db().await;
    Ok(())
}

#[tokio::test]
async fn insert_many_of_1000_documents_costs_one_counter_command() -> TestResult {
    let s = setup("ins_many").await;
    let orders = s.db.collection::<Document>("orders");
    let docs: Vec<Document> = (0..1000).map(|i| doc! { "item": i }).collect();
    s.monitor.reset();
    let result = s
        .seqs()
        .insert_many(
            &orders,
            &docs,
            InsertOptions::new("orderid").field("number"),
        )
        .await?;
    assert_eq!(
        s.monitor.count("findAndModify"),
        1,
        "{:?}",
        s.monitor.snapshot()
    );
    assert_eq!(s.monitor.count("find"), 0, "no counter reads");
    assert_eq!(result.values, (1..=1000).collect::<Vec<i64>>());
    let stored: Vec<Document> = orders
        .find(doc! {})
        .projection(doc! { "_id": 0 })
        .sort(doc! { "number": 1 })
        .await?
        .try_collect()
        .await?;
    let expected: Vec<Document> = (0..1000)
        .map(|i| doc! { "item": i, "number": i64::from(i) + 1 })
        .collect();
    assert_eq!(stored, expected, "numbered in the given order");
    s.drop_db().await;
    Ok(())
}

#[tokio::test]
async fn insert_many_with_a_scope_takes_one_reservation_per_scope_value() -> TestResult {
    let s = setup("ins_many_scope").await;
    let seqs = s.seqs();
    let invoice = seqs.sequence(
        "invoice",
        SequenceOptions::new()
            .scope(["tenant"])
            .format("INV-{seq:04}"),
    )?;
    let invoices = s.db.collection::<Document>("invoices");
    let docs: Vec<Document> = ["a", "b", "a", "a", "b"]
        .iter()
        .map(|t| doc! { "tenant": t })
        .collect();
    s.monitor.reset();
    let result = seqs
        .insert_many(
            &invoices,
            docs,
            InsertOptions::new(&invoice)
                .field("no")
                .format_field("code"),
        )
        .await?;
    assert_eq!(s.monitor.count("findAndModify"), 2);
    assert_eq!(result.values, [1, 1, 2, 3, 2]);
    assert_eq!(
        result.formatted.unwrap(),
        ["INV-0001", "INV-0001", "INV-0002", "INV-0003", "INV-0002"]
    );
    let stored: Vec<Document> = invoices
        .find(doc! { "tenant": "a" })
        .projection(doc! { "_id": 0 })
        .sort(doc! { "no": 1 })
        .await?
        .try_collect()
        .await?;
    assert_eq!(
        stored,
        [
            doc! { "tenant": "a", "no": 1_i64, "code": "INV-0001" },
            doc! { "tenant": "a", "no": 2_i64, "code": "INV-0002" },
            doc! { "tenant": "a", "no": 3_i64, "code": "INV-0003" },
        ]
    );
    s.drop_db().await;
    Ok(())
}

#[tokio::test]
async fn insert_many_renumbers_after_a_taken_number_and_keeps_the_ones_before() -> TestResult {
    let s = setup("ins_many_retry").await;
    let users = s.db.collection::<Document>("users");
    users
        .insert_one(doc! { "_id": 3, "name": "imported" })
        .await?;
    let docs = ["a", "b", "c", "d"].map(|n| doc! { "n": n });
    let result = s.seqs().insert_many(&users, docs, "userid").await?;
    assert_eq!(
        result.values,
        [1, 2, 5, 6],
        "3 was taken: c and d get the next reservation"
    );
    assert_eq!(result.inserted_ids, [1_i64, 2, 5, 6].map(Bson::Int64));
    let ids: Vec<Bson> = all(&users, doc! {})
        .await
        .iter()
        .map(|d| d.get("_id").unwrap().clone())
        .collect();
    assert_eq!(
        ids,
        [
            Bson::Int64(1),
            Bson::Int64(2),
            Bson::Int32(3),
            Bson::Int64(5),
            Bson::Int64(6)
        ]
    );
    s.drop_db().await;
    Ok(())
}
