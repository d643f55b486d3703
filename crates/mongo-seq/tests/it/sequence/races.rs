//! Sequences (js/test/sequence.test.mjs), continued: other writers on the same counter (the
//! tutorial, the Atlas recipe), rewind_all, first use by many handles, cancelled calls.

use crate::common;

use common::setup;
use futures_util::TryStreamExt;
use mongo_seq::{SequenceOptions, Sequences};
use mongodb::bson::{doc, Bson, Document};

type TestResult = Result<(), Box<dyn std::error::Error>>;

fn one_to(n: i64) -> Vec<i64> {
    (1..=n).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_tutorial_s_own_code_interleaved_on_one_counter_issues_no_number_twice() -> TestResult {
    let s = setup("seq_tutorial_mixed").await;
    let counters = s.db.collection::<Document>("counters");
    // MongoDB's tutorial: getNextSequence(name) = findAndModify {$inc: {seq: 1}}, upsert.
    let tutorial = {
        let counters = counters.clone();
        move || {
            let counters = counters.clone();
            async move {
                let counter = counters
                    .find_one_and_update(doc! { "_id": "userid" }, doc! { "$inc": { "seq": 1 } })
                    .upsert(true)
                    .return_document(mongodb::options::ReturnDocument::After)
                    .await?
                    .expect("upserted");
                Ok::<i64, mongodb::error::Error>(
                    counter
                        .get_i64("seq")
                        .or_else(|_| counter.get_i32("seq").map(i64::from))
                        .expect("an integer"),
                )
            }
        }
    };
    let one = s.seqs().sequence("userid", None)?;
    let blocks = Sequences::new(&s.db).sequence("userid", SequenceOptions::new().block(7))?;
    let mut issued = vec![tutorial().await?];
    let mut tasks = Vec::new();
    for i in 0..40 {
        let (one, blocks, tutorial) = (one.clone(), blocks.clone(), tutorial.clone());
        tasks.push(tokio::spawn(async move {
            let mut mine = vec![tutorial().await?, one.next().await?, blocks.next().await?];
            if i % 10 == 0 {
                mine.extend(one.next_many(5).await?);
            }
            Ok::<_, Box<dyn std::error::Error + Send + Sync>>(mine)
        }));
    }
    for task in tasks {
        issued.extend(task.await?.map_err(|e| e.to_string())?);
    }
    let mut distinct = issued.clone();
    distinct.sort_unstable();
    distinct.dedup();
    assert_eq!(distinct.len(), issued.len(), "no number issued twice");
    let counter = counters.find_one(doc! { "_id": "userid" }).await?.unwrap();
    assert!(
        counter.get_i64("seq")? >= *distinct.last().unwrap(),
        "the counter is past every number issued"
    );
    s.drop_db().await;
    Ok(())
}

#[tokio::test]
async fn rewind_all_sets_every_counter_of_the_sequence_back_and_drops_the_blocks() -> TestResult {
    let s = setup("seq_rewind").await;
    let orders = s
        .seqs()
        .sequence("orders", SequenceOptions::new().scope(["tenant"]).block(10))?;
    let acme = orders.scoped(&doc! { "tenant": "acme" })?;
    let globex = orders.scoped(&doc! { "tenant": "globex" })?;
    acme.next_many(3).await?;
    globex.next().await?;
    let outcome = orders.rewind_all().await?;
    assert_eq!((outcome.rewound, outcome.next), (2, 1));
    assert_eq!(
        (acme.next().await?, globex.next().await?),
        (1, 1),
        "the blocks in hand were dropped"
    );
    // A counter a sidecar keeps (a lease epoch) is refused unless forced, nothing written.
    s.db.collection::<Document>("counters")
        .insert_one(doc! { "_id": "orders/tenant=initech", "seq": 5_i64, "epoch": 3_i64 })
        .await?;
    let before = common::snapshot(&s.db).await;
    assert_eq!(
        orders.rewind_all().await.unwrap_err().code(),
        Some("REWIND_REFUSED")
    );
    assert_eq!(common::snapshot(&s.db).await, before);
    assert_eq!(orders.rewind_all_forced().await?.rewound, 3);
    s.drop_db().await;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn first_use_of_a_fresh_counter_by_many_handles_at_once_is_no_error() -> TestResult {
    // The tutorial's upsert race: sixteen handles that share nothing (each its own Sequences,
    // as sixteen processes would be) upsert the missing counter at the same moment; the
    // losers' duplicate key is retried inside.
    let s = setup("seq_first_use").await;
    s.monitor.gate(20);
    let tasks: Vec<_> = (0..16)
        .map(|_| {
            let ids = Sequences::new(&s.db).sequence("fresh", None).unwrap();
            tokio::spawn(async move { ids.next().await })
        })
        .collect();
    let mut numbers = Vec::new();
    for task in tasks {
        numbers.push(task.await??);
    }
    s.monitor.gate(0);
    numbers.sort_unstable();
    assert_eq!(numbers, one_to(16));
    let counters: Vec<Document> =
        s.db.collection::<Document>("counters")
            .find(doc! {})
            .await?
            .try_collect()
            .await?;
    assert_eq!(
        counters,
        [
            doc! { "_id": "fresh", "seq": 16_i64, "definition": { "start": 1_i64, "step": 1_i64 }, "definitionDigest": "b1992bd103fd143e" }
        ]
    );
    assert!(s.monitor.most_in_flight() > 1, "the upserts ran at once");
    s.drop_db().await;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_atlas_recipe_s_own_inc_interleaved_on_its_counter_issues_no_number_twice() -> TestResult
{
    let s = setup("seq_atlas_mixed").await;
    let counters = s.db.collection::<Document>("counters");
    let ns = doc! { "db": "shop", "coll": "students" };
    // The recipe's trigger: findOneAndUpdate({ _id: ns }, { $inc: { seq_value: 1 } }, upsert).
    let recipe = {
        let (counters, ns) = (counters.clone(), ns.clone());
        move || {
            let (counters, ns) = (counters.clone(), ns.clone());
            async move {
                let counter = counters
                    .find_one_and_update(doc! { "_id": ns }, doc! { "$inc": { "seq_value": 1 } })
                    .upsert(true)
                    .return_document(mongodb::options::ReturnDocument::After)
                    .await?
                    .expect("upserted");
                let value = counter.get("seq_value").and_then(Bson::as_i64);
                let value = value.or_else(|| counter.get_i32("seq_value").ok().map(i64::from));
                Ok::<i64, mongodb::error::Error>(value.expect("an integer"))
            }
        }
    };
    let options = SequenceOptions::new()
        .counter_id(ns.clone())
        .counter_field("seq_value");
    let students = s.seqs().sequence("students", options.clone())?;
    let blocks = Sequences::new(&s.db).sequence("students", options.block(5))?;
    let mut issued = vec![recipe().await?];
    let mut tasks = Vec::new();
    for _ in 0..30 {
        let (students, blocks, recipe) = (students.clone(), blocks.clone(), recipe.clone());
        tasks.push(tokio::spawn(async move {
            let mine = vec![
                recipe().await?,
                students.next().await?,
                blocks.next().await?,
            ];
            Ok::<_, Box<dyn std::error::Error + Send + Sync>>(mine)
        }));
    }
    for task in tasks {
        issued.extend(task.await?.map_err(|e| e.to_string())?);
    }
    let mut distinct = issued.clone();
    distinct.sort_unstable();
    distinct.dedup();
    assert_eq!(distinct.len(), issued.len(), "no number issued twice");
    let all: Vec<Document> = counters.find(doc! {}).await?.try_collect().await?;
    assert_eq!(all.len(), 1, "one counter, the recipe's: {all:?}");
    assert_eq!(all[0].get_document("_id")?, &ns, "its _id kept as it was");
    s.drop_db().await;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_cancelled_call_leaves_at_most_a_gap_and_its_refill_serves_the_others() -> TestResult {
    use std::time::Duration;
    let s = setup("seq_cancel").await;
    let ids = s.seqs().sequence("ids", SequenceOptions::new().block(10))?;
    s.monitor.gate(100);
    s.monitor.reset();
    // The first caller starts the refill and is cancelled while it is in flight; the second,
    // queued behind it, is served by that refill.
    let first = tokio::time::timeout(Duration::from_millis(20), ids.next());
    let second = {
        let ids = ids.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(5)).await;
            ids.next().await
        })
    };
    assert!(first.await.is_err(), "the first call was cancelled");
    let served = second.await??;
    s.monitor.gate(0);
    let third = ids.next().await?;
    assert!((1..=10).contains(&served) && served < third && third <= 10);
    assert_eq!(
        s.monitor.count("findAndModify"),
        1,
        "the cancelled caller's reservation served the others"
    );
    assert_eq!(
        ids.current().await?,
        Some(10),
        "the counter written once, whole"
    );

    // Many calls, every third cancelled at a random moment: never a number twice, one
    // reservation in flight at a time, and the counter past every number handed out.
    s.monitor.gate(3);
    s.monitor.reset();
    let tasks: Vec<_> = (0..120_u64)
        .map(|i| {
            let ids = ids.clone();
            tokio::spawn(async move {
                if i % 3 == 0 {
                    let wait = Duration::from_micros(500 * (i % 11));
                    tokio::time::timeout(wait, ids.next()).await.ok()
                } else {
                    Some(ids.next().await)
                }
            })
        })
        .collect();
    let mut numbers = vec![served, third];
    for task in tasks {
        if let Some(number) = task.await? {
            numbers.push(number?);
        }
    }
    s.monitor.gate(0);
    s.monitor.settled().await;
    let handed_out = numbers.len();
    numbers.sort_unstable();
    numbers.dedup();
    assert_eq!(numbers.len(), handed_out, "no number handed out twice");
    assert!(handed_out >= 82, "every call not cancelled got its number");
    assert_eq!(s.monitor.most_in_flight(), 1);
    assert!(ids.current().await?.unwrap() >= *numbers.last().unwrap());
    let after = ids.next().await?;
    assert!(after > *numbers.last().unwrap(), "numbers go on increasing");
    s.drop_db().await;
    Ok(())
}
