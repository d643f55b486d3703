//! Dead letters and `mongo-seq retry`, through the built binary: a document the sidecar cannot
//! number waits as a dead letter (recorded, in `/metrics` and `/healthz`, listed by `check`)
//! until an update repairs it or `retry` numbers it; a gapless trigger's dead letters are
//! numbered only by its lease's holder, so `retry` lists them while a running sidecar holds the
//! lease and numbers them as the holder once nobody does (then releases it: the next sidecar
//! takes over at once, the series goes on without a gap); without a config, `retry` works on the
//! trigger its flags describe.

use crate::common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use common::*;
use mongodb::bson::{doc, Bson, Document};
use mongodb::Collection;

use super::json;

const WAIT: Duration = Duration::from_secs(90);

/// `GET path` on the sidecar's HTTP port: the body.
fn get(port: u16, path: &str) -> String {
    let Ok(mut stream) = TcpStream::connect(("127.0.0.1", port)) else {
        return String::new();
    };
    let _ = write!(stream, "GET {path} HTTP/1.0\r\nHost: localhost\r\n\r\n");
    let mut reply = String::new();
    let _ = stream.read_to_string(&mut reply);
    reply
        .split_once("\r\n\r\n")
        .map(|(_, body)| body.to_owned())
        .unwrap_or_default()
}

/// Polls until `ready` says yes.
async fn until<F: std::future::Future<Output = bool>>(what: &str, mut ready: impl FnMut() -> F) {
    let deadline = Instant::now() + WAIT;
    while !ready().await {
        if Instant::now() >= deadline {
            let logs: Vec<String> = std::fs::read_dir(std::env::temp_dir())
                .into_iter()
                .flatten()
                .flatten()
                .map(|e| e.path())
                .filter(|p| {
                    let name = p.to_string_lossy();
                    name.contains(&format!("mongo-seq-test-{}-", std::process::id()))
                        && name.ends_with("-dead_letters.log")
                })
                .map(|p| std::fs::read_to_string(p).unwrap_or_default())
                .collect();
            panic!("never: {what}; log: {}", logs.join("\n"));
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_document_that_cannot_be_numbered_waits_as_a_dead_letter_until_repaired() {
    let (db, plain, orders) = test_db("dead_letters").await;
    let state: Collection<Document> = plain.database(&db).collection("mongo_seq_state");
    let port = free_port();
    let text = config_toml(&db, "scope = [\"tenant\"]", "dead_letter_retry_ms = 300").replace(
        "[http]\nenabled = false",
        &format!("[http]\nbind = \"127.0.0.1\"\nport = {port}"),
    );
    let path = write_config("dead_letters", &text);
    let config = path.to_str().expect("utf-8 path").to_owned();
    let trigger = format!("{db}.orders.seq");
    let mut sidecar = spawn_sidecar(&path, &[]);
    let waiting = || {
        let state = state.clone();
        let trigger = trigger.clone();
        async move {
            state
                .count_documents(doc! { "_id.trigger": &trigger, "kind": "deadLetter", "resolvedAt": { "$exists": false } })
                .await
                .unwrap()
        }
    };

    orders.insert_one(doc! { "tenant": "a" }).await.unwrap();
    wait_numbered(&orders, "seq", 1, WAIT).await;
    // No tenant: it cannot be numbered; the others go on.
    let lost = orders
        .insert_one(doc! { "i": 1 })
        .await
        .unwrap()
        .inserted_id;
    orders.insert_one(doc! { "tenant": "a" }).await.unwrap();
    wait_numbered(&orders, "seq", 2, WAIT).await;
    until("a dead letter recorded", || async { waiting().await == 1 }).await;
    let letter = state
        .find_one(doc! { "_id.document": &lost })
        .await
        .unwrap()
        .expect("the dead letter");
    assert!(letter.get_datetime("since").is_ok(), "{letter}");
    assert_eq!(letter.get_str("kind").unwrap(), "deadLetter");
    assert!(!letter.get_str("reason").unwrap().is_empty(), "{letter}");
    until("/metrics shows it", || async {
        let metrics = get(port, "/metrics");
        metrics.contains(&format!(
            "mongo_seq_dead_letters{{trigger=\"{trigger}\"}} 1"
        )) && metrics.contains(&format!(
            "mongo_seq_dead_letters_recorded_total{{trigger=\"{trigger}\"}} 1"
        ))
    })
    .await;
    let addr = format!("127.0.0.1:{port}");
    let (code, out, err) = run_bin(&["health", "--addr", &addr, "--json"], &[]);
    assert_eq!(code, 0, "degraded is not down: {out}{err}");
    let health = json(&out);
    assert_eq!(health["status"], "degraded", "{health}");
    assert_eq!(health["triggers"][&trigger]["dead_letters"], 1, "{health}");
    let uri = mongodb_uri();
    let env = [("MONGO_SEQ_URI", uri.as_str())];
    let (code, out, err) = run_bin(&["check", "--config", &config], &env);
    assert_eq!(code, 0, "a dead letter explains its document: {out}{err}");
    assert!(
        out.contains("1 unnumbered") && out.contains("1 dead letters waiting"),
        "{out}"
    );

    // Repaired by an update: numbered at the next retry, the dead letter resolved.
    orders
        .update_one(doc! { "_id": &lost }, doc! { "$set": { "tenant": "b" } })
        .await
        .unwrap();
    until("the repaired document numbered", || async {
        waiting().await == 0
    })
    .await;
    let repaired = orders
        .find_one(doc! { "_id": &lost })
        .await
        .unwrap()
        .unwrap();
    assert_eq!(repaired.get("seq"), Some(&Bson::Int64(1)), "{repaired}");
    let resolved = state
        .find_one(doc! { "_id.document": &lost })
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        resolved.get_str("resolution").unwrap(),
        "numbered",
        "{resolved}"
    );
    until("/healthz ok", || async {
        json(&get(port, "/healthz"))["status"] == "ok"
    })
    .await;
    assert!(get(port, "/metrics").contains(&format!(
        "mongo_seq_dead_letters{{trigger=\"{trigger}\"}} 0"
    )));

    // Number fields holding a string: dead letters too; then the sidecar stops.
    let mut strings = Vec::new();
    for text in ["abc", "def"] {
        let id = orders
            .insert_one(doc! { "tenant": "a", "seq": text })
            .await
            .unwrap()
            .inserted_id;
        strings.push(id);
    }
    until("NOT_A_NUMBER recorded", || async { waiting().await == 2 }).await;
    sigterm(&sidecar);
    assert_eq!(sidecar.wait().unwrap().code(), Some(0));

    // `retry` while they are still wrong: still waiting (exit 1); one repaired: numbered.
    let retry = ["retry", "--config", config.as_str()];
    let (code, out, err) = run_bin(&retry, &env);
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        out.contains("2 dead letters: 0 numbered, 0 gone, 2 still waiting")
            && out.contains("NOT_A_NUMBER"),
        "{out}"
    );
    orders
        .update_one(
            doc! { "_id": &strings[0] },
            doc! { "$unset": { "seq": "" } },
        )
        .await
        .unwrap();
    let (code, out, err) = run_bin(&retry, &env);
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        out.contains("2 dead letters: 1 numbered, 0 gone, 1 still waiting"),
        "{out}"
    );
    let seq_of = |id: Bson| {
        let orders = orders.clone();
        async move {
            orders
                .find_one(doc! { "_id": id })
                .await
                .unwrap()
                .unwrap()
                .get("seq")
                .cloned()
        }
    };
    assert_eq!(
        seq_of(strings[0].clone()).await,
        Some(Bson::Int64(3)),
        "tenant a's third"
    );

    // The other repaired while no sidecar runs: the next one finds it with its state at start.
    orders
        .update_one(
            doc! { "_id": &strings[1] },
            doc! { "$set": { "seq": 7_i64 } },
        )
        .await
        .unwrap();
    // And one inserted meanwhile with a string there: its event, replayed after the restart,
    // comes in a batch that first drops the documents holding a value in the field.
    let replayed = orders
        .insert_one(doc! { "tenant": "a", "seq": "ghi" })
        .await
        .unwrap()
        .inserted_id;
    let mut sidecar = spawn_sidecar(&path, &[]);
    let is_waiting = |id: Bson| {
        let state = state.clone();
        async move {
            state
                .count_documents(doc! { "_id.document": id, "resolvedAt": { "$exists": false } })
                .await
                .unwrap()
        }
    };
    until(
        "the restarted sidecar resolves the repaired one",
        || async { is_waiting(strings[1].clone()).await == 0 },
    )
    .await;
    until("the replayed one recorded", || async {
        is_waiting(replayed.clone()).await == 1
    })
    .await;
    sigterm(&sidecar);
    assert_eq!(sidecar.wait().unwrap().code(), Some(0));
    orders.delete_one(doc! { "_id": &replayed }).await.unwrap();
    let (code, out, err) = run_bin(&retry, &env);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains("1 dead letters: 0 numbered, 1 gone, 0 still waiting"),
        "{out}"
    );
    let resolved = state
        .find_one(doc! { "_id.document": &strings[1] })
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        resolved.get_str("resolution").unwrap(),
        "numbered",
        "{resolved}"
    );
    assert!(resolved.get_i64("attempts").unwrap() >= 3, "{resolved}");
    let (code, out, _) = run_bin(&retry, &env);
    assert_eq!(
        (code, out.trim()),
        (0, format!("{trigger}: no dead letters").as_str())
    );
    let (code, out, err) = run_bin(&["check", "--config", &config], &env);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains("5 documents, 5 numbered, 0 unnumbered"),
        "{out}"
    );
    // Tenant a: 1, 2, 3 and the 7 set by hand (4..6 unexplained, not failing a plain series);
    // the counter moved past 7: nothing collides.
    assert!(out.contains("4..6"), "{out}");
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn retry_without_a_config_numbers_the_dead_letters_of_the_trigger_the_flags_describe() {
    let (db, plain, coll) = test_db("retry_flags").await;
    // A document a trigger could not number (no tenant then), repaired since.
    let id = coll
        .insert_one(doc! { "tenant": "a" })
        .await
        .unwrap()
        .inserted_id;
    let trigger = format!("{db}.orders.seq");
    plain
        .database(&db)
        .collection("mongo_seq_state")
        .insert_one(doc! {
            "_id": { "trigger": &trigger, "document": &id },
            "kind": "deadLetter",
            "code": "MISSING_SCOPE_FIELD",
            "reason": "document has no value for scope field `tenant`",
            "since": mongodb::bson::DateTime::now(),
            "attempts": 1_i64,
        })
        .await
        .unwrap();
    let uri = mongodb_uri();
    let line = [
        "retry",
        "--uri",
        &uri,
        "--db",
        &db,
        "--collection",
        "orders",
        "--scope",
        "tenant",
        "--start",
        "100",
    ];
    let (code, out, err) = run_bin(&line, &[]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains(&format!(
            "{trigger}: 1 dead letters: 1 numbered, 0 gone, 0 still waiting"
        )),
        "{out}"
    );
    let numbered = coll.find_one(doc! { "_id": &id }).await.unwrap().unwrap();
    assert_eq!(numbered.get_i64("seq").ok(), Some(100), "{numbered}");
    // Named otherwise, the trigger has none.
    let (code, out, err) = run_bin(&[&line[..], &["--trigger", "other"]].concat(), &[]);
    assert_eq!((code, out.trim()), (0, "other: no dead letters"), "{err}");
    plain.database(&db).drop().await.ok();
}
