//! `/metrics` counts exactly: every command the sidecar sends is in `mongo_seq_commands_total`
//! (change-stream `getMore`s included, each under its trigger), and a document that cannot be
//! numbered is counted once in `mongo_seq_documents_skipped_total`, however often it is met.

use crate::common;

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use common::*;
use mongodb::bson::doc;
use prometheus::proto::MetricFamily;

const WAIT: Duration = Duration::from_secs(90);

/// `mongo_seq_commands_total` as {(trigger, command): count}.
fn command_counts(families: &[MetricFamily]) -> BTreeMap<(String, String), u64> {
    let mut out = BTreeMap::new();
    for family in families
        .iter()
        .filter(|f| f.get_name() == "mongo_seq_commands_total")
    {
        for metric in family.get_metric() {
            let label = |name: &str| {
                metric
                    .get_label()
                    .iter()
                    .find(|l| l.get_name() == name)
                    .map(|l| l.get_value().to_owned())
                    .unwrap_or_default()
            };
            out.insert(
                (label("trigger"), label("command")),
                metric.get_counter().get_value() as u64,
            );
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_command_on_the_wire_is_counted_under_its_trigger() {
    let (db, plain, orders) = test_db("cmdmetrics").await;
    let invoices = plain
        .database(&db)
        .collection::<mongodb::bson::Document>("invoices");
    let text = config_toml(&db, "", "batch_size = 50")
        + "\n[[trigger]]\ndatabase = \""
        + &db
        + "\"\ncollection = \"invoices\"\nfield = \"no\"\n";
    let cfg = mongo_seq_sidecar::config::parse(&text, "test").unwrap();
    let (options, log) = monitored_options().await;
    let run = start(cfg, options, false);
    wait_running(&run).await;
    for round in 0..5 {
        orders
            .insert_many((0..40).map(|i| doc! { "round": round, "i": i }))
            .await
            .unwrap();
        invoices
            .insert_many((0..20).map(|i| doc! { "round": round, "i": i }))
            .await
            .unwrap();
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    wait_numbered(&orders, "seq", 200, WAIT).await;
    wait_numbered(&invoices, "no", 100, WAIT).await;
    let metrics = run.metrics.clone();
    run.stop().await;

    let counted = command_counts(&metrics.registry().gather());
    let sent = log.snapshot();
    println!("sent {sent:?}\ncounted {counted:?}");
    // Every command sent, by name, is counted once (lease traffic as `lease:<name>`).
    for (name, n) in &sent {
        let in_metrics: u64 = counted
            .iter()
            .filter(|((_, c), _)| c == name || c.strip_prefix("lease:") == Some(name))
            .map(|(_, v)| v)
            .sum();
        assert_eq!(
            in_metrics, *n,
            "`{name}`: {n} sent, {in_metrics} counted: {counted:?}"
        );
    }
    let total_sent: u64 = sent.values().sum();
    let total_counted: u64 = counted.values().sum();
    assert_eq!(
        total_counted, total_sent,
        "nothing counted that was not sent"
    );
    // Each under its trigger: both watch their own stream, reserve and write for themselves.
    for trigger in [format!("{db}.orders.seq"), format!("{db}.invoices.no")] {
        for command in [
            "getMore",
            "aggregate",
            "findAndModify",
            "update",
            "lease:findAndModify",
        ] {
            let n = counted
                .get(&(trigger.clone(), command.to_owned()))
                .copied()
                .unwrap_or(0);
            assert!(n > 0, "{trigger} {command}: {counted:?}");
        }
    }
    let unattributed: u64 = counted
        .iter()
        .filter(|((t, _), _)| t.is_empty())
        .map(|(_, v)| v)
        .sum();
    assert_eq!(
        unattributed, 0,
        "every command has its trigger: {counted:?}"
    );
    plain.database(&db).drop().await.ok();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_document_that_cannot_be_numbered_is_counted_once() {
    let (db, plain, coll) = test_db("skipmetric").await;
    // A long backfill (per tenant), during which documents without a tenant arrive: the
    // backfill meets them, and so does the change stream opened before it.
    for chunk in 0..2 {
        coll.insert_many((0..1000).map(|i| doc! { "tenantId": "acme", "i": chunk * 1000 + i }))
            .await
            .unwrap();
    }
    let cfg = config(&db, "scope = [\"tenantId\"]", "batch_size = 20");
    let run = start(cfg.clone(), options().await, false);
    let trigger = format!("{db}.orders.seq");
    let deadline = Instant::now() + WAIT;
    while run
        .health
        .snapshot()
        .1
        .get(&trigger)
        .is_none_or(|h| h.state != mongo_seq_sidecar::health::State::Backfilling)
    {
        assert!(Instant::now() < deadline, "no backfill");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    coll.insert_many((0..10).map(|i| doc! { "noTenant": i }))
        .await
        .unwrap();
    wait_running(&run).await;
    assert!(
        run.metrics
            .backfill_remaining
            .with_label_values(&[&trigger])
            .get()
            == 0,
        "backfill done"
    );
    wait_numbered(&coll, "seq", 2000, WAIT).await;
    // The stream's events for the 10 have been processed once it is quiet again.
    let events = run.metrics.events.with_label_values(&[&trigger]);
    let deadline = Instant::now() + WAIT;
    while events.get() < 10 {
        assert!(Instant::now() < deadline, "stream events: {}", events.get());
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    let skipped = run.metrics.skipped.with_label_values(&[&trigger]).get();
    run.stop().await;
    assert_eq!(
        skipped, 10,
        "10 documents without a tenant, each counted once"
    );

    // A later backfill (history lost, --backfill) in the same process does not count them again,
    // nor does a new process count them twice.
    let run = start(cfg, options().await, true);
    wait_running(&run).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(run.metrics.skipped.with_label_values(&[&trigger]).get(), 10);
    run.stop().await;
    assert_eq!(count_numbered(&coll, "seq").await, 2000);
    plain.database(&db).drop().await.ok();
}
