//! `mongo-seq retry` and a gapless trigger, through the built binary against the server: only
//! the trigger's lease holder numbers a gapless series, so `retry` lists the dead letters while
//! a running sidecar holds the lease, and numbers them as the lease's holder once nobody does
//! (then releases it: the next sidecar takes over at once and the series goes on without a gap).

use crate::common;

use std::time::{Duration, Instant};

use common::*;
use mongodb::bson::{doc, Bson, Document};
use mongodb::Collection;

const WAIT: Duration = Duration::from_secs(90);

async fn until<F, Fut>(what: &str, mut done: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let deadline = Instant::now() + WAIT;
    while !done().await {
        assert!(Instant::now() < deadline, "never: {what}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn retry_numbers_a_gapless_trigger_s_dead_letters_only_while_nobody_holds_its_lease() {
    let (db, plain, orders) = test_db("retry_gapless").await;
    let state: Collection<Document> = plain.database(&db).collection("mongo_seq_state");
    // The running sidecar retries only at a session's start here: what numbers the repaired
    // document below is `retry`.
    let text = config_toml(
        &db,
        "scope = [\"tenant\"]\ngapless = true",
        "dead_letter_retry_ms = 600000",
    );
    let path = write_config("retry_gapless", &text);
    let config = path.to_str().expect("utf-8 path").to_owned();
    let uri = mongodb_uri();
    let env = [("MONGO_SEQ_URI", uri.as_str())];
    let retry = ["retry", "--config", config.as_str()];
    let waiting = || {
        let state = state.clone();
        async move {
            state
                .count_documents(doc! { "kind": "deadLetter", "resolvedAt": { "$exists": false } })
                .await
                .unwrap()
        }
    };
    let seq_of = |id: Bson| {
        let orders = orders.clone();
        async move {
            let found = orders.find_one(doc! { "_id": id }).await.unwrap().unwrap();
            found.get("seq").cloned()
        }
    };

    let mut sidecar = spawn_sidecar(&path, &[]);
    orders.insert_one(doc! { "tenant": "a" }).await.unwrap();
    wait_numbered(&orders, "seq", 1, WAIT).await;
    // No tenant: a dead letter; repaired while the sidecar runs.
    let lost = orders
        .insert_one(doc! { "i": 1 })
        .await
        .unwrap()
        .inserted_id;
    until("a dead letter recorded", || async { waiting().await == 1 }).await;
    orders
        .update_one(doc! { "_id": &lost }, doc! { "$set": { "tenant": "b" } })
        .await
        .unwrap();

    // The sidecar holds the lease: listed, not numbered.
    let (code, out, err) = run_bin(&retry, &env);
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        out.contains("1 dead letters wait; gapless") && out.contains("holds the lease"),
        "{out}"
    );
    assert_eq!(seq_of(lost.clone()).await, None);

    // Nobody holds it: `retry` numbers it as the lease's holder, and releases the lease.
    sigterm(&sidecar);
    assert_eq!(sidecar.wait().unwrap().code(), Some(0));
    let (code, out, err) = run_bin(&retry, &env);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains("1 dead letters: 1 numbered, 0 gone, 0 still waiting"),
        "{out}"
    );
    assert_eq!(
        seq_of(lost.clone()).await,
        Some(Bson::Int64(1)),
        "tenant b's first"
    );
    assert_eq!(waiting().await, 0);

    // The next sidecar takes the released lease and goes on from there, gaplessly.
    let started = Instant::now();
    sidecar = spawn_sidecar(&path, &[]);
    let next = orders
        .insert_one(doc! { "tenant": "b" })
        .await
        .unwrap()
        .inserted_id;
    until("tenant b's second numbered", || async {
        seq_of(next.clone()).await.is_some()
    })
    .await;
    assert_eq!(seq_of(next).await, Some(Bson::Int64(2)));
    sigterm(&sidecar);
    assert_eq!(sidecar.wait().unwrap().code(), Some(0));
    eprintln!("taken over and numbered in {:?}", started.elapsed());
    let (code, out, err) = run_bin(&["check", "--config", &config], &env);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains("3 documents, 3 numbered, 0 unnumbered"),
        "{out}"
    );
}
