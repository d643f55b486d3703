//! The substrate under the sidecar: a change stream whose connection is cut after a few empty
//! getMores resumes (inside the driver, silently) without losing the events inserted meanwhile.
//! The embedded server needed a patch for this (postBatchResumeToken, FAKE-SERVER.md #13); the
//! chaos test found the loss.

use crate::common;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::*;
use mongodb::bson::{doc, Document};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cut_connection_after_empty_getmores_loses_no_event() {
    if std::env::var("MONGODB_URI").is_ok_and(|u| !u.trim().is_empty()) {
        println!("skipped: cuts connections through a proxy to the embedded server");
        return;
    }
    let uri = mongodb_uri();
    let port: u16 = uri
        .trim_end_matches('/')
        .rsplit(':')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    // A TCP proxy whose connections can all be cut.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let proxy_port = listener.local_addr().unwrap().port();
    let connections: Arc<Mutex<Vec<tokio::task::JoinHandle<()>>>> = Arc::default();
    let tracked = connections.clone();
    tokio::spawn(async move {
        while let Ok((mut client, _)) = listener.accept().await {
            tracked.lock().unwrap().push(tokio::spawn(async move {
                if let Ok(mut server) = tokio::net::TcpStream::connect(("127.0.0.1", port)).await {
                    let _ = tokio::io::copy_bidirectional(&mut client, &mut server).await;
                }
            }));
        }
    });
    let (db, plain, coll) = test_db("streamcut").await;
    coll.insert_one(doc! { "warm": 1 }).await.unwrap();
    let via = mongodb::Client::with_uri_str(format!(
        "mongodb://127.0.0.1:{proxy_port}/?directConnection=true&heartbeatFrequencyMS=500"
    ))
    .await
    .unwrap();
    let mut stream = via
        .database(&db)
        .collection::<Document>("orders")
        .watch()
        .max_await_time(Duration::from_millis(100)) // quiet reads below wait this long
        .await
        .unwrap();
    coll.insert_many((0..5).map(|i| doc! { "a": i }))
        .await
        .unwrap();
    let mut seen = 0;
    let deadline = Instant::now() + Duration::from_secs(30);
    while seen < 5 {
        assert!(Instant::now() < deadline, "first events not delivered");
        if stream.next_if_any().await.unwrap().is_some() {
            seen += 1;
        }
    }
    for _ in 0..3 {
        assert!(
            stream.next_if_any().await.unwrap().is_none(),
            "quiet stream"
        );
    }
    assert!(
        stream.resume_token().is_some(),
        "the driver keeps a resume token on a quiet stream"
    );

    for connection in connections.lock().unwrap().drain(..) {
        connection.abort();
    }
    coll.insert_many((0..7).map(|i| doc! { "b": i }))
        .await
        .unwrap();
    let mut after = 0;
    let deadline = Instant::now() + Duration::from_secs(30);
    while after < 7 && Instant::now() < deadline {
        match stream.next_if_any().await {
            Ok(Some(_)) => after += 1,
            Ok(None) => tokio::time::sleep(Duration::from_millis(20)).await,
            Err(e) => panic!("the driver surfaced the cut instead of resuming: {e}"),
        }
    }
    assert_eq!(after, 7, "events inserted while the connection was cut");
    plain.database(&db).drop().await.ok();
}
