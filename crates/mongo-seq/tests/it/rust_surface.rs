//! The library reads like Rust: errors name options as the builder methods do, match one level
//! deep (`kind()`), give typed fields; the handles are `Send + Sync` and their futures `Send`;
//! the documented error table lists every code; one `format_field` rule for inserts, `assign`
//! and `create_numbering_index`; `insert_many` names the document whose scope value is missing.

use crate::common;

use common::{setup, snapshot};
use mongo_seq::{
    AssignOptions, Error, ErrorKind, InsertOptions, InsertedOne, Reset, SequenceOptions, Sequences,
};
use mongodb::bson::{doc, Document};

type TestResult = Result<(), Box<dyn std::error::Error>>;

#[tokio::test]
async fn messages_and_options_are_spelled_as_in_rust() -> TestResult {
    let s = setup("rust_spelling").await;
    let seqs = Sequences::new(&s.db);
    let error = seqs
        .sequence("a", SequenceOptions::new().block(10).max_block(5))
        .unwrap_err();
    assert_eq!(error.kind(), ErrorKind::InvalidOption);
    assert_eq!(error.option(), Some("max_block"));
    assert!(error.to_string().contains("`max_block`"), "{error}");
    assert!(!error.to_string().contains("maxBlock"), "{error}");
    assert_eq!(
        error.details().unwrap()["option"],
        "maxBlock",
        "the npm package's details, as they are"
    );
    let error = seqs
        .sequence(
            "b",
            SequenceOptions::new()
                .reset(Reset::Yearly)
                .time_zone("Mars/Olympus_Mons"),
        )
        .unwrap_err();
    assert_eq!(error.option(), Some("time_zone"));
    assert!(
        error.to_string().contains("time_zone") && !error.to_string().contains("timeZone"),
        "{error}"
    );
    Ok(())
}

#[tokio::test]
async fn kinds_and_typed_fields() -> TestResult {
    let s = setup("rust_kinds").await;
    let ids = s.seqs().sequence("ids", SequenceOptions::new().max(2))?;
    ids.next_many(2).await?;
    let error = ids.next().await.unwrap_err();
    assert!(matches!(error.kind(), ErrorKind::SequenceExhausted));
    assert_eq!(error.code(), error.kind().code());
    assert_eq!(
        (error.counter_id(), error.requested(), error.available()),
        (Some("ids"), Some(1), Some(0))
    );
    assert_eq!((error.bound(), error.last()), (Some(2), Some(2)));
    let driver = Error::from(mongodb::error::Error::custom("down"));
    assert_eq!((driver.kind(), driver.code()), (ErrorKind::Mongo, None));
    Ok(())
}

#[test]
fn every_code_has_one_kind() {
    let codes: Vec<&str> = Error::codes().collect();
    let kinds: Vec<&str> = ErrorKind::ALL.iter().filter_map(|k| k.code()).collect();
    assert_eq!(kinds, codes);
}

/// The crate documentation's error table (its first column) lists exactly [`Error::codes`].
#[test]
fn the_documented_error_table_lists_every_code() {
    let lib = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/src/lib.rs")).unwrap();
    // From the heading to the next one (`//! # Configuration files`; not a doc example's
    // hidden lines, `//! # async fn …`, `//! # Ok(()) }`).
    let section: Vec<&str> = lib
        .lines()
        .skip_while(|line| *line != "//! # Errors")
        .skip(1)
        .take_while(|line| {
            !line
                .strip_prefix("//! # ")
                .is_some_and(|title| title.chars().all(|c| c.is_alphanumeric() || c == ' '))
        })
        .collect();
    let mut documented: Vec<String> = section
        .iter()
        .filter_map(|line| line.strip_prefix("//! | `"))
        .flat_map(|row| {
            let first = row.split(" |").next().unwrap_or("");
            format!("`{first}")
                .split('`')
                .filter(|code| code.chars().all(|c| c.is_ascii_uppercase() || c == '_'))
                .filter(|code| !code.is_empty())
                .map(str::to_owned)
                .collect::<Vec<_>>()
        })
        .collect();
    documented.sort();
    let mut codes: Vec<String> = Error::codes().map(str::to_owned).collect();
    codes.sort();
    assert_eq!(
        documented, codes,
        "src/lib.rs's error table and Error::codes() differ"
    );
}

#[tokio::test]
async fn insert_many_names_the_document_without_a_scope_value() -> TestResult {
    let s = setup("rust_scope_index").await;
    let seqs = s.seqs();
    seqs.sequence("inv", SequenceOptions::new().scope(["tenant"]))?;
    let invoices = s.db.collection::<Document>("invoices");
    let before = snapshot(&s.db).await;
    let batch = [
        doc! { "tenant": "a" },
        doc! { "tenant": "b" },
        doc! { "tenant": "a" },
        doc! { "amount": 1 },
    ];
    let error = seqs
        .insert_many(&invoices, &batch, InsertOptions::new("inv"))
        .await
        .unwrap_err();
    assert_eq!(error.kind(), ErrorKind::MissingScopeField);
    assert_eq!((error.field(), error.index()), (Some("tenant"), Some(3)));
    assert!(
        error.to_string().contains("document 3 of the batch"),
        "{error}"
    );
    let bad = [doc! { "tenant": "a" }, doc! { "tenant": [1] }];
    let error = seqs
        .insert_many(&invoices, &bad, InsertOptions::new("inv"))
        .await
        .unwrap_err();
    assert_eq!(error.kind(), ErrorKind::InvalidScopeValue);
    assert_eq!(error.index(), Some(1), "{error}");
    assert_eq!(snapshot(&s.db).await, before, "nothing written");
    Ok(())
}

#[tokio::test]
async fn format_field_is_optional_for_inserts_assign_and_the_numbering_index() -> TestResult {
    let s = setup("rust_format_field").await;
    let seqs = s.seqs();
    seqs.sequence("inv", SequenceOptions::new().format("INV-{seq:04}"))?;
    let invoices = s.db.collection::<Document>("invoices");
    let inserted: InsertedOne = seqs
        .insert_one(
            &invoices,
            doc! { "status": "issued" },
            InsertOptions::new("inv").field("n"),
        )
        .await?;
    assert_eq!(inserted.value, 1);
    let options = AssignOptions::new("inv", "n");
    seqs.create_numbering_index(&invoices, options.clone())
        .await?;
    invoices
        .insert_one(doc! { "_id": 7, "status": "issued" })
        .await?;
    let result = seqs
        .assign(&invoices, doc! { "status": "issued" }, options)
        .await?;
    let assigned: Vec<(i64, Option<&str>)> = result
        .assigned
        .iter()
        .map(|a| (a.value, a.formatted.as_deref()))
        .collect();
    assert_eq!(assigned, [(2, Some("INV-0002"))]);
    let stored = invoices.find_one(doc! { "_id": 7 }).await?.unwrap();
    assert_eq!(stored, doc! { "_id": 7, "status": "issued", "n": 2_i64 });
    Ok(())
}

/// The handles are `Send + Sync + 'static` and every future is `Send`, so they go into any
/// task (a compile-time check: this test fails by not compiling).
#[test]
fn handles_and_futures_are_send_and_sync() {
    fn handle<T: Send + Sync + Clone + 'static>() {}
    fn future<F: std::future::Future + Send>(_: F) {}
    handle::<mongo_seq::Sequences>();
    handle::<mongo_seq::Sequence>();
    handle::<mongo_seq::executor::Executor>();
    fn futures(seqs: mongo_seq::Sequences, sequence: mongo_seq::Sequence) {
        let orders = seqs.counters().clone();
        future(sequence.next());
        future(sequence.next_many(3));
        future(sequence.set_next(5));
        future(seqs.insert_one(&orders, mongodb::bson::doc! {}, "orders"));
        future(seqs.insert_many(&orders, [mongodb::bson::doc! {}], "orders"));
        future(seqs.insert_optimistic(&orders, mongodb::bson::doc! {}, None));
        future(seqs.wait_for_number(&orders, 1, None));
    }
    let _ = futures;
}
