//! Every number accounted for, through the built binary against the server: `check` reads the
//! ledger (voids and deletions, inserted here by hand as the ledger's writers store them) and
//! the dead letters, and fails only for what nothing explains; a document the sidecar cannot
//! number waits as a dead letter (recorded, in `/metrics` and `/healthz`, listed by `check`)
//! until an update repairs it or `mongo-seq retry` numbers it.

use crate::common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use common::*;
use mongodb::bson::{doc, Bson, DateTime, Document};
use mongodb::Collection;
use serde_json::Value;

const WAIT: Duration = Duration::from_secs(90);

fn json(out: &str) -> Value {
    serde_json::from_str(out).unwrap_or_else(|e| panic!("not JSON ({e}): {out}"))
}

/// A ledger entry as the ledger's writers store it.
fn entry(counter: &str, number: i64, kind: &str, reason: &str) -> Document {
    doc! {
        "_id": { "counter": counter, "number": number },
        "sequence": counter,
        "kind": kind,
        "reason": reason,
        "at": DateTime::now(),
        "by": "test",
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn check_accounts_for_voided_and_deleted_numbers_and_fails_on_what_nothing_explains() {
    let (db, plain, orders) = test_db("accounted").await;
    let uri = mongodb_uri();
    let database = plain.database(&db);
    let ledger: Collection<Document> = database.collection("mongo_seq_ledger");
    let counter_id = format!("{db}.orders");
    orders
        .insert_many([1_i64, 2, 4, 6].map(|n| doc! { "seq": n }))
        .await
        .unwrap();
    database
        .collection::<Document>("counters")
        .insert_one(doc! { "_id": &counter_id, "seq": 6_i64 })
        .await
        .unwrap();
    let args = [
        "check",
        "--uri",
        &uri,
        "--db",
        &db,
        "--collection",
        "orders",
        "--gapless",
    ];
    let check = |extra: &[&str]| run_bin(&[&args[..], extra].concat(), &[]);

    // 3 and 5 unexplained: a gapless check fails, naming them.
    let (code, out, err) = check(&[]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(out.contains("0 duplicates, 2 gaps, largest 6"), "{out}");
    assert!(
        out.contains(&format!(
            "  {counter_id}: 1..6: 4 held, 0 voided, 0 deleted, 2 unexplained gaps (3, 5)"
        )),
        "{out}"
    );
    assert!(
        err.contains("2 numbers unaccounted for (unexplained gaps)"),
        "{err}"
    );
    let (code, _, _) = run_bin(&args[..7], &[]);
    assert_eq!(code, 0, "without --gapless, gaps alone pass");

    // 3 voided and 5 deleted: every number accounted for.
    ledger
        .insert_many([
            entry(&counter_id, 3, "void", "printer jam"),
            entry(&counter_id, 5, "deleted", "document deleted"),
        ])
        .await
        .unwrap();
    let (code, out, err) = check(&[]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains("0 duplicates, 0 gaps, 1 voided, 1 deleted, largest 6"),
        "{out}"
    );
    assert!(
        out.contains(&format!("  {counter_id}: 1..6: 4 held, 1 voided (1 \"printer jam\"), 1 deleted, 0 unexplained gaps")),
        "{out}"
    );

    // A voided number a document holds: a duplicate.
    orders.insert_one(doc! { "seq": 3_i64 }).await.unwrap();
    let (code, out, err) = check(&[]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(out.contains("1 duplicates"), "{out}");
    assert!(err.contains("numbers held twice"), "{err}");
    orders.delete_one(doc! { "seq": 3_i64 }).await.unwrap();

    // An unnumbered document and no dead letter: left silently, a failure; a dead letter
    // saying why: waiting, not a failure.
    let id = orders
        .insert_one(doc! { "note": "no number" })
        .await
        .unwrap()
        .inserted_id;
    let (code, out, err) = check(&[]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        err.contains("1 unnumbered documents and no dead letter saying why"),
        "{err}"
    );
    database
        .collection::<Document>("mongo_seq_state")
        .insert_one(doc! {
            "_id": { "trigger": format!("{db}.orders.seq"), "document": id.clone() },
            "kind": "deadLetter", "code": "MISSING_SCOPE_FIELD", "reason": "no tenant",
            "since": DateTime::now(), "lastAttempt": DateTime::now(), "attempts": 1_i64,
        })
        .await
        .unwrap();
    let (code, out, err) = check(&[]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains(
            "1 unnumbered, 0 duplicates, 0 gaps, 1 voided, 1 deleted, 1 dead letters waiting"
        ),
        "{out}"
    );
    assert!(
        out.contains("no tenant (MISSING_SCOPE_FIELD; 1 attempts)"),
        "{out}"
    );

    // Up past 2^53: a void there and a number after it; the gap between is one range, and every
    // integer beyond 2^53 − 1 in --json is a string.
    let big = (1_i64 << 53) + 2;
    orders.insert_one(doc! { "seq": big }).await.unwrap();
    ledger
        .insert_one(entry(&counter_id, big - 1, "void", "lost block"))
        .await
        .unwrap();
    database
        .collection::<Document>("counters")
        .update_one(doc! { "_id": &counter_id }, doc! { "$set": { "seq": big } })
        .await
        .unwrap();
    let (code, out, err) = check(&["--json"]);
    assert_eq!(code, 1, "unexplained 7..2^53: {out}{err}");
    let report = json(&out);
    let account = &report["accounts"][&counter_id];
    assert_eq!(account["voided"], 2, "{account}");
    assert_eq!(account["end"], Value::from(big.to_string()), "{account}");
    // 7..=2^53: 2^53 − 6 numbers (a JSON number: below 2^53 − 1).
    assert_eq!(account["gaps"], Value::from(big - 8), "{account}");
    assert_eq!(account["gapRuns"][0]["first"], 7, "{account}");
    assert_eq!(
        account["gapRuns"][0]["last"],
        Value::from((big - 2).to_string()),
        "{account}"
    );
    assert_eq!(
        account["reasons"],
        serde_json::json!([{"reason": "lost block", "count": 1}, {"reason": "printer jam", "count": 1}])
    );
    assert_eq!(report["dead_letters"], 1);
    assert_eq!(report["dead_letter_list"][0]["reason"], "no tenant");
    assert_eq!(report["unexplained_unnumbered"], 0);
}

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
                    p.to_string_lossy().contains(&format!(
                        "mongo-seq-test-{}-dead_letters",
                        std::process::id()
                    ))
                })
                .filter(|p| p.extension().is_some_and(|e| e == "log"))
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
