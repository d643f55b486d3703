//! Runs the example as its users would: the built binary against the test server (or
//! `MONGODB_URI`), orders posted over HTTP from many connections at once, each store numbered
//! 1, 2, 3, … without a gap or a repeat, an order read back, bad input refused with nothing
//! written, and SIGTERM stopping it cleanly.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

use mongo_seq_test_harness::{client, mongodb_uri, unique_db_name};
use mongodb::bson::{doc, Document};
use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// One HTTP/1.1 request on its own connection: the status and the JSON body.
async fn request(addr: &str, method: &str, path: &str, body: Option<Value>) -> (u16, Value) {
    let mut stream = TcpStream::connect(addr).await.expect("connect");
    let body = body.map(|b| b.to_string()).unwrap_or_default();
    let head = format!(
        "{method} {path} HTTP/1.1\r\nhost: {addr}\r\nconnection: close\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).await.expect("write");
    stream.write_all(body.as_bytes()).await.expect("write");
    let mut response = String::new();
    stream.read_to_string(&mut response).await.expect("read");
    let status = response[9..12].parse().expect("a status");
    let (_, body) = response.split_once("\r\n\r\n").expect("a body");
    (
        status,
        serde_json::from_str(body).unwrap_or(Value::String(body.to_owned())),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_service_numbers_orders_per_store_under_concurrent_requests() {
    let db_name = unique_db_name("example_orders");
    let mut service = Command::new(env!("CARGO_BIN_EXE_orders"))
        .env("MONGODB_URI", mongodb_uri())
        .env("EXAMPLE_DB", &db_name)
        .env("BIND", "127.0.0.1:0")
        .stdout(Stdio::piped())
        .spawn()
        .expect("the example starts");
    let mut stdout = BufReader::new(service.stdout.take().unwrap());
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    let addr = line
        .trim()
        .strip_prefix("listening on http://")
        .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
        .to_owned();

    // 40 orders for Paris and 10 for Lyon, all at once, each on its own connection.
    let posts = (0..50).map(|i| {
        let addr = addr.clone();
        let store = if i % 5 == 0 { "lyon" } else { "paris" };
        tokio::spawn(async move {
            let order = json!({ "store": store, "item": format!("item {i}"), "quantity": 1 });
            request(&addr, "POST", "/orders", Some(order)).await
        })
    });
    let mut numbers = std::collections::BTreeMap::<String, Vec<i64>>::new();
    for post in posts.collect::<Vec<_>>() {
        let (status, body) = post.await.unwrap();
        assert_eq!(status, 201, "{body}");
        let number = body["number"].as_i64().unwrap();
        assert_eq!(body["code"], format!("ORD-{number:06}"));
        numbers
            .entry(body["store"].as_str().unwrap().to_owned())
            .or_default()
            .push(number);
    }
    for (store, expected) in [("paris", 40), ("lyon", 10)] {
        let mut got = numbers.remove(store).unwrap();
        got.sort_unstable();
        assert_eq!(got, (1..=expected).collect::<Vec<_>>(), "{store}");
    }

    let (status, first) = request(&addr, "GET", "/orders/lyon/1", None).await;
    assert_eq!((status, &first["code"]), (200, &json!("ORD-000001")));
    assert_eq!(request(&addr, "GET", "/orders/lyon/11", None).await.0, 404);

    // Bad input: refused (axum's own check of the body) and nothing written.
    let db = client().await.database(&db_name);
    let orders = db.collection::<Document>("orders");
    let before = orders.count_documents(doc! {}).await.unwrap();
    let bad = json!({ "store": ["paris"], "item": "x", "quantity": 1 });
    let (status, _) = request(&addr, "POST", "/orders", Some(bad)).await;
    assert_eq!(status, 422);
    assert_eq!(orders.count_documents(doc! {}).await.unwrap(), before);
    assert_eq!(before, 50);

    // SIGTERM: a clean stop.
    let killed = Command::new("kill")
        .args(["-TERM", &service.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let status = service.wait().unwrap();
    assert!(status.success(), "{status}");
    line.clear();
    stdout.read_line(&mut line).unwrap();
    assert_eq!(line.trim(), "stopped");
    db.drop().await.unwrap();
}
