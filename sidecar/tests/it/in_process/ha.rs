//! Gapless mode, leases and fencing, and bad counter/intent/lease documents, in-process.

use crate::common;

use std::time::{Duration, Instant};

use common::*;
use futures_util::TryStreamExt;
use mongo_seq_sidecar::config::Config;
use mongo_seq_sidecar::connection::Connection;
use mongo_seq_sidecar::fence::Fence;
use mongo_seq_sidecar::health::{Health, TriggerHealth};
use mongo_seq_sidecar::metrics::Metrics;
use mongo_seq_sidecar::trigger::{Shared, Trigger};
use mongodb::bson::{doc, Document};
use mongodb::{Client, Collection};

const WAIT: Duration = Duration::from_secs(60);

fn gapless_config(db: &str, extra: &str) -> Config {
    config(db, &format!("gapless = true\n{extra}"), "batch_size = 100")
}

async fn counters(client: &Client, db: &str) -> Collection<Document> {
    client.database(db).collection("counters")
}

/// Waits until `trigger` reports an error and returns its health.
async fn wait_error(health: &Health, trigger: &str) -> TriggerHealth {
    let deadline = Instant::now() + WAIT;
    loop {
        if let Some(h) = health.snapshot().1.get(trigger) {
            if h.last_error_code.is_some() {
                return h.clone();
            }
        }
        assert!(
            Instant::now() < deadline,
            "no error reported: {:?}",
            health.snapshot()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// A trigger built like the daemon builds it (`Trigger::new`), without its lease loop, to call
/// its numbering with a chosen fence; and the metrics it reports to.
fn trigger(cfg: &Config, client: &Client) -> (Trigger<Connection>, Metrics) {
    let spec = cfg.triggers[0].clone();
    let mongo = Connection::for_trigger(client, &spec.ns, &cfg.counters, &cfg.state);
    let shared = Shared::default();
    let trigger = Trigger::new(spec, cfg.settings.clone(), mongo, &shared);
    (trigger, shared.metrics)
}

fn fence(epoch: i64) -> Fence {
    Fence::new(
        "test-instance",
        epoch,
        tokio::time::Instant::now() + Duration::from_secs(600),
    )
}

/// Documents as the change stream hands them to a batch (canonical Extended JSON).
fn as_events(docs: &[Document]) -> Vec<serde_json::Value> {
    docs.iter()
        .cloned()
        .map(mongo_seq::executor::convert::from_doc)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gapless_numbers_are_contiguous_and_counter_ends_at_the_last() {
    let (db, plain, coll) = test_db("gapless").await;
    let run = start(
        gapless_config(&db, "format = \"G-{seq:04}\"\nformat_field = \"code\""),
        options().await,
        false,
    );
    wait_running(&run).await;
    for burst in 0..10 {
        coll.insert_many((0..30).map(|i| doc! { "burst": burst, "i": i }))
            .await
            .unwrap();
    }
    wait_numbered(&coll, "seq", 300, WAIT).await;
    run.stop().await;
    assert_eq!(numbers(&coll, "seq").await, (1..=300).collect::<Vec<i64>>());
    let c = counters(&plain, &db)
        .await
        .find_one(doc! { "_id": format!("{db}.orders") })
        .await
        .unwrap()
        .unwrap();
    assert_eq!(c.get_i64("seq").unwrap(), 300);
    assert!(c.get("intent").is_none(), "no intent left pending: {c}");
    assert!(
        c.get_i64("epoch").unwrap() >= 1,
        "the counter carries the holder's epoch: {c}"
    );
    assert!(coll
        .find_one(doc! { "seq": 42_i64, "code": "G-0042" })
        .await
        .unwrap()
        .is_some());
    plain.database(&db).drop().await.ok();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_interrupted_intent_is_completed_skipping_deleted_documents() {
    let (db, plain, coll) = test_db("intent").await;
    // A holder died after reserving 1..=5 for a..e and writing some of them: a = 1, and d = 4
    // (written by an apply that did not see c's deletion); c was deleted before its number was
    // final, b and e have none yet.
    let ids: Vec<String> = ["a", "b", "c", "d", "e"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    coll.insert_one(doc! { "_id": "a", "seq": 1_i64 })
        .await
        .unwrap();
    coll.insert_one(doc! { "_id": "d", "seq": 4_i64 })
        .await
        .unwrap();
    for id in ["b", "e"] {
        coll.insert_one(doc! { "_id": id }).await.unwrap();
    }
    let name = format!("{db}.orders");
    counters(&plain, &db)
        .await
        .insert_one(doc! { "_id": &name, "seq": 5_i64, "epoch": 1_i64, "intent": { "first": 1_i64, "count": 5_i64, "ids": ids, "epoch": 1_i64 } })
        .await
        .unwrap();
    // A lease no stall loses: one lost and retaken (a renewal held up 1.2 s on a loaded machine,
    // with the tests' usual 1.5 s lease) has a new epoch, the counter's then not the completer's.
    let held = "batch_size = 100\n[lease]\nttl_ms = 600000";
    let run = start(config(&db, "gapless = true", held), options().await, false);
    wait_running(&run).await;
    assert_eq!(
        run.metrics
            .intents_completed
            .with_label_values(&[&format!("{name}.seq")])
            .get(),
        1
    );
    let got: Vec<Document> = coll
        .find(doc! {})
        .sort(doc! { "_id": 1 })
        .await
        .unwrap()
        .try_collect()
        .await
        .unwrap();
    let pairs: Vec<(String, i64)> = got
        .iter()
        .map(|d| {
            (
                d.get_str("_id").unwrap().to_owned(),
                d.get_i64("seq").unwrap(),
            )
        })
        .collect();
    assert_eq!(
        pairs,
        vec![
            ("a".into(), 1),
            ("b".into(), 2),
            ("d".into(), 3),
            ("e".into(), 4)
        ],
        "deleted c took no number; d moved down"
    );
    // The completer stamped the intent's documents with its epoch (the fence of the moves).
    let epoch = counters(&plain, &db)
        .await
        .find_one(doc! { "_id": &name })
        .await
        .unwrap()
        .and_then(|c| c.get_i64("epoch").ok())
        .expect("the counter's epoch");
    assert!(epoch > 1, "the new holder's epoch is above the dead one's");
    for d in &got {
        assert_eq!(d.get_i64("seqEpoch").ok(), Some(epoch), "{d}");
    }
    assert_eq!(
        run.metrics
            .gapless_renumbered
            .with_label_values(&[&format!("{name}.seq")])
            .get(),
        1
    );
    assert_eq!(
        counter(&plain, &db, &name).await,
        Some(4),
        "counter set to the last number used"
    );
    // Numbering goes on right after.
    coll.insert_many((0..3).map(|i| doc! { "i": i }))
        .await
        .unwrap();
    wait_numbered(&coll, "seq", 7, WAIT).await;
    run.stop().await;
    assert_eq!(numbers(&coll, "seq").await, (1..=7).collect::<Vec<i64>>());
    plain.database(&db).drop().await.ok();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_holder_whose_epoch_was_passed_is_fenced_and_numbers_nothing() {
    for gapless in [true, false] {
        let (db, plain, coll) = test_db(if gapless {
            "fence_gapless"
        } else {
            "fence_plain"
        })
        .await;
        let cfg = config(&db, if gapless { "gapless = true" } else { "" }, "");
        let (t, metrics) = trigger(&cfg, &client().await);
        let id = t.spec().id.clone();
        let state: Collection<Document> = plain.database(&db).collection("mongo_seq_state");
        let name = format!("{db}.orders");
        coll.insert_many((0..3).map(|i| doc! { "_id": i }))
            .await
            .unwrap();
        state.insert_one(doc! { "_id": &id, "lease": { "owner": "test-instance", "epoch": 1_i64, "expiresAt": i64::MAX } }).await.unwrap();
        let docs: Vec<Document> = coll
            .find(doc! {})
            .await
            .unwrap()
            .try_collect()
            .await
            .unwrap();
        let old = fence(1);
        let outcome = t
            .number(as_events(&docs[..1]), false, &old, None)
            .await
            .expect("epoch 1 numbers");
        assert_eq!(outcome.numbered, 1);

        // Another instance takes over (epoch 2) and stamps the counters.
        state
            .update_one(
                doc! { "_id": &id },
                doc! { "$set": { "lease.owner": "other", "lease.epoch": 2_i64 } },
            )
            .await
            .unwrap();
        counters(&plain, &db)
            .await
            .update_many(doc! { "_id": &name }, doc! { "$set": { "epoch": 2_i64 } })
            .await
            .unwrap();

        // The old holder, unaware (its own clock says its lease is valid): refused.
        let err = t
            .number(as_events(&docs[1..]), false, &old, None)
            .await
            .expect_err("fenced");
        assert_eq!(err.code(), "FENCED", "{err}");
        assert_eq!(
            count_numbered(&coll, "seq").await,
            1,
            "not a single number from the stale holder"
        );
        assert_eq!(counter(&plain, &db, &name).await, Some(1));
        let err = t
            .state()
            .save(None, Some(true), &fence(1))
            .await
            .expect_err("token write fenced");
        assert_eq!(err.code(), "FENCED");
        assert!(metrics.fenced.with_label_values(&[&id]).get() >= 2);

        // The new holder goes on from the counter.
        let outcome = t
            .number(as_events(&docs[1..]), false, &fence(2), None)
            .await
            .expect("epoch 2 numbers");
        assert_eq!(outcome.numbered, 2);
        assert_eq!(numbers(&coll, "seq").await, vec![1, 2, 3]);
        plain.database(&db).drop().await.ok();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_instances_one_holder_and_a_takeover_after_shutdown() {
    let (db, plain, coll) = test_db("twoinst").await;
    let mut a_cfg = gapless_config(&db, "");
    a_cfg.settings.lease.instance_id = "A".into();
    let mut b_cfg = a_cfg.clone();
    b_cfg.settings.lease.instance_id = "B".into();
    let a = start(a_cfg, options().await, false);
    wait_running(&a).await;
    let b = start(b_cfg, options().await, false);
    let trigger = format!("{db}.orders.seq");
    let deadline = Instant::now() + WAIT;
    loop {
        let h = b.health.snapshot().1.get(&trigger).cloned();
        if h.as_ref()
            .is_some_and(|h| h.state == mongo_seq_sidecar::health::State::Standby)
        {
            let h = h.unwrap();
            assert!(!h.lease_held);
            assert_eq!(h.lease_owner.as_deref(), Some("A"));
            break;
        }
        assert!(Instant::now() < deadline, "B never stood by: {h:?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(a.health.snapshot().1[&trigger].lease_held);
    coll.insert_many((0..50).map(|i| doc! { "i": i }))
        .await
        .unwrap();
    wait_numbered(&coll, "seq", 50, WAIT).await;
    // A stops gracefully (releases the lease): B takes over and numbers the rest.
    a.stop().await;
    coll.insert_many((0..50).map(|i| doc! { "j": i }))
        .await
        .unwrap();
    wait_numbered(&coll, "seq", 100, WAIT).await;
    assert!(b.health.snapshot().1[&trigger].lease_held);
    assert_eq!(
        b.metrics
            .lease_acquired
            .with_label_values(&[&trigger])
            .get(),
        1
    );
    b.stop().await;
    assert_eq!(numbers(&coll, "seq").await, (1..=100).collect::<Vec<i64>>());
    plain.database(&db).drop().await.ok();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_counters_intents_and_leases_stop_the_trigger_with_a_clear_error_and_are_not_overwritten(
) {
    struct Case {
        label: &'static str,
        trigger: &'static str,
        counter: Option<Document>,
        lease: Option<Document>,
        code: &'static str,
    }
    let cases = [
        Case {
            label: "at_max",
            trigger: "gapless = true\nmax = 5",
            counter: Some(doc! { "seq": 5_i64 }),
            lease: None,
            code: "SEQUENCE_EXHAUSTED",
        },
        Case {
            label: "at_max_plain",
            trigger: "max = 5",
            counter: Some(doc! { "seq": 5_i64 }),
            lease: None,
            code: "SEQUENCE_EXHAUSTED",
        },
        Case {
            label: "overflow",
            trigger: "gapless = true",
            counter: Some(doc! { "seq": i64::MAX }),
            lease: None,
            code: "OVERFLOW",
        },
        Case {
            label: "overflow_plain",
            trigger: "",
            counter: Some(doc! { "seq": i64::MAX }),
            lease: None,
            code: "OVERFLOW",
        },
        Case {
            label: "bad_intent",
            trigger: "gapless = true",
            counter: Some(
                doc! { "seq": 3_i64, "intent": { "first": 4_i64, "count": 2_i64, "ids": ["x"] } },
            ),
            lease: None,
            code: "MALFORMED_COUNTER",
        },
        Case {
            label: "bad_lease",
            trigger: "",
            counter: None,
            lease: Some(doc! { "lease": { "owner": 7, "epoch": 1 } }),
            code: "MALFORMED_LEASE",
        },
    ];
    for case in cases {
        let (db, plain, coll) = test_db(case.label).await;
        let cfg = config(&db, case.trigger, "");
        let name = format!("{db}.orders");
        let trigger = format!("{name}.seq");
        let state: Collection<Document> = plain.database(&db).collection("mongo_seq_state");
        if let Some(mut c) = case.counter.clone() {
            c.insert("_id", &name);
            counters(&plain, &db).await.insert_one(c).await.unwrap();
        }
        if let Some(mut l) = case.lease.clone() {
            l.insert("_id", &trigger);
            state.insert_one(l).await.unwrap();
        }
        coll.insert_one(doc! { "i": 1 }).await.unwrap();
        let run = start(cfg, options().await, false);
        let h = wait_error(&run.health, &trigger).await;
        assert_eq!(
            h.last_error_code.as_deref(),
            Some(case.code),
            "{}: {h:?}",
            case.label
        );
        assert!(!h.healthy, "{}", case.label);
        println!(
            "{}: {}",
            case.label,
            h.last_error.clone().unwrap_or_default()
        );
        tokio::time::sleep(Duration::from_millis(300)).await;
        run.stop().await;
        assert_eq!(
            count_numbered(&coll, "seq").await,
            0,
            "{}: nothing numbered",
            case.label
        );
        let mut after_counter = counters(&plain, &db)
            .await
            .find_one(doc! { "_id": &name })
            .await
            .unwrap();
        if let Some(c) = after_counter.as_mut() {
            c.remove("epoch"); // the holder stamps its epoch; nothing else may change
        }
        let expected = case.counter.clone().map(|mut c| {
            c.insert("_id", &name);
            c
        });
        let mut after = after_counter.map(|mut d| {
            d.remove("_id");
            d
        });
        let mut want = expected.map(|mut d| {
            d.remove("_id");
            d
        });
        if case.counter.is_none() {
            after = None;
            want = None;
        }
        assert_eq!(after, want, "{}: counter untouched", case.label);
        if let Some(l) = case.lease {
            let stored = state
                .find_one(doc! { "_id": &trigger })
                .await
                .unwrap()
                .unwrap();
            assert_eq!(
                stored.get("lease"),
                l.get("lease"),
                "{}: lease document untouched",
                case.label
            );
        }
        plain.database(&db).drop().await.ok();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn configs_with_shared_sequences_or_bad_lease_settings_are_refused() {
    let base = "[mongodb]\nuri = \"mongodb://h/\"\n";
    let t = "[[trigger]]\ndatabase = \"app\"\ncollection = \"a\"\nfield = \"n\"\nsequence = \"s\"\n[[trigger]]\ndatabase = \"app\"\ncollection = \"b\"\nfield = \"n\"\nsequence = \"s\"\n";
    let err = mongo_seq_sidecar::config::parse(&format!("{base}{t}"), "t")
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("trigger[1].sequence") && err.contains("already used"),
        "{err}"
    );
    let one =
        "[[trigger]]\ndatabase = \"app\"\ncollection = \"a\"\nfield = \"n\"\ngapless = true\n";
    for (lease, key) in [
        ("ttl_ms = 10", "lease.ttl_ms"),
        ("ttl_ms = 1000\nrenew_ms = 900", "lease.renew_ms"),
        ("instance_id = \"\"", "lease.instance_id"),
    ] {
        let err = mongo_seq_sidecar::config::parse(&format!("{base}[lease]\n{lease}\n{one}"), "t")
            .unwrap_err()
            .to_string();
        assert!(err.contains(key), "{lease}: {err}");
    }
    let cfg = mongo_seq_sidecar::config::parse(
        &format!("{base}[lease]\nttl_ms = 3000\ninstance_id = \"node-1\"\n{one}"),
        "t",
    )
    .unwrap();
    assert!(cfg.triggers[0].numbering.gapless());
    assert_eq!(cfg.settings.lease.instance_id, "node-1");
    assert_eq!(cfg.settings.lease.renew, Duration::from_millis(1000));
    assert_eq!(cfg.settings.lease.margin, Duration::from_millis(600));
}
