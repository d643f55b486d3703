//! Several OS processes on one counter (js/test/processes.test.mjs): every number is issued
//! once whatever the block sizes, a legacy double counter keeps counting, the first use of a
//! fresh sequence by all of them at once (the tutorial's upsert race) never surfaces an error,
//! the optimistic loop succeeds at realistic contention, and the tutorial's own
//! `getNextSequence()` in other processes interleaves with the library without a duplicate.
//!
//! The workers are this test binary run again (`harness = false`: `main` below is the runner):
//! `processes worker <kind> <uri> <db> …` connects, prints `ready`, waits for a line on stdin
//! (so every worker starts at the same moment), works, and prints its numbers as JSON.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, Command, Stdio};
use std::time::Instant;

use futures_util::future::join_all;
use mongo_seq::{OptimisticOptions, SequenceOptions, Sequences};
use mongo_seq_test_harness::{mongodb_uri, unique_db_name};
use mongodb::bson::{doc, Document};
use mongodb::options::ReturnDocument;
use mongodb::{Client, Database};
use serde_json::Value;

type TestResult = Result<(), Box<dyn std::error::Error>>;

/// One case: its name and its body.
type Case = (&'static str, fn() -> TestResult);

const CASES: [Case; 5] = [
    (
        "eight_processes_with_blocks_of_1_7_and_100_issue_every_number_once",
        mixed_blocks,
    ),
    (
        "eight_processes_on_a_legacy_double_counter_issue_1_to_1600",
        legacy_double,
    ),
    (
        "first_use_by_eight_processes_at_once_issues_1_to_8_and_one_counter",
        first_use,
    ),
    (
        "insert_optimistic_by_eight_processes_back_to_back_none_fails",
        optimistic,
    ),
    (
        "the_tutorial_s_code_in_other_processes_interleaves_without_a_duplicate",
        tutorial_mixed,
    ),
];

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("worker") {
        worker(&args[1..]);
        return;
    }
    // libtest's flags (`--nocapture`, `--test-threads`, …) are ignored but `--list`, which
    // lists the cases as libtest does instead of running them; other words filter.
    let filters: Vec<&String> = args.iter().filter(|a| !a.starts_with('-')).collect();
    let chosen = CASES.into_iter().filter(|(name, _)| {
        filters.is_empty() || filters.iter().any(|f| name.contains(f.as_str()))
    });
    if args.iter().any(|a| a == "--list") {
        let names: Vec<&str> = chosen.map(|(name, _)| name).collect();
        for name in &names {
            println!("{name}: test");
        }
        println!("\n{} tests, 0 benchmarks", names.len());
        return;
    }
    let mut ran = 0;
    for (name, case) in chosen {
        let started = Instant::now();
        if let Err(error) = case() {
            println!("test {name} ... FAILED\n{error}");
            std::process::exit(101);
        }
        println!(
            "test {name} ... ok ({:.1} s)",
            started.elapsed().as_secs_f64()
        );
        ran += 1;
    }
    println!("\ntest result: ok. {ran} passed; 0 failed");
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime")
}

/// Runs one worker per argument list at the same moment; returns what each printed (JSON).
fn run_together(kind: &str, db: &str, per_worker: &[Vec<String>]) -> Result<Vec<Value>, String> {
    let uri = mongodb_uri();
    let mut children: Vec<(Child, BufReader<std::process::ChildStdout>)> = Vec::new();
    for args in per_worker {
        let mut child = Command::new(std::env::current_exe().map_err(|e| e.to_string())?)
            .args(["worker", kind, &uri, db])
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| format!("spawning a worker: {e}"))?;
        let stdout = BufReader::new(child.stdout.take().expect("piped"));
        children.push((child, stdout));
    }
    for (_, stdout) in &mut children {
        let mut line = String::new();
        stdout.read_line(&mut line).map_err(|e| e.to_string())?;
        if line.trim() != "ready" {
            return Err(format!("a worker did not get ready: {line:?}"));
        }
    }
    for (child, _) in &mut children {
        let stdin = child.stdin.as_mut().expect("piped");
        writeln!(stdin, "go").map_err(|e| e.to_string())?;
    }
    let mut results = Vec::new();
    for (mut child, mut stdout) in children {
        let mut line = String::new();
        stdout.read_line(&mut line).map_err(|e| e.to_string())?;
        let status = child.wait().map_err(|e| e.to_string())?;
        if !status.success() {
            return Err(format!("a worker failed ({status}): {line}"));
        }
        results.push(serde_json::from_str(&line).map_err(|e| format!("{e}: {line:?}"))?);
    }
    Ok(results)
}

fn numbers(value: &Value) -> Vec<i64> {
    value
        .as_array()
        .expect("an array")
        .iter()
        .map(|n| n.as_i64().expect("an integer"))
        .collect()
}

fn with_db<F, Fut>(label: &str, body: F) -> TestResult
where
    F: FnOnce(String, Database) -> Fut,
    Fut: std::future::Future<Output = TestResult>,
{
    runtime().block_on(async {
        let name = unique_db_name(label);
        let client = Client::with_uri_str(mongodb_uri()).await?;
        let db = client.database(&name);
        let result = body(name, db.clone()).await;
        let _ = db.drop().await;
        result
    })
}

fn distinct(all: &[i64]) -> usize {
    let mut sorted = all.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    sorted.len()
}

fn take_args(sequence: &str, blocks: &[u64], count: u64) -> Vec<Vec<String>> {
    blocks
        .iter()
        .map(|block| vec![sequence.to_owned(), block.to_string(), count.to_string()])
        .collect()
}

fn mixed_blocks() -> TestResult {
    with_db("proc_mixed", |name, db| async move {
        let blocks = [1, 7, 100, 1, 7, 100, 1, 7];
        let results = run_together("take", &name, &take_args("userid", &blocks, 2000))?;
        let all: Vec<i64> = results.iter().flat_map(numbers).collect();
        assert_eq!(all.len(), 16_000);
        assert_eq!(distinct(&all), 16_000, "numbers issued twice");
        let counter = counter(&db, "userid").await?;
        assert!(counter.get_i64("seq")? >= *all.iter().max().unwrap());
        Ok(())
    })
}

// A counter the tutorial's shell function created holds a double (`seq: 0.0`).
fn legacy_double() -> TestResult {
    with_db("proc_legacy", |name, db| async move {
        let counters = db.collection::<Document>("counters");
        counters
            .insert_one(doc! { "_id": "userid", "seq": 0.0 })
            .await?;
        let results = run_together("take", &name, &take_args("userid", &[1; 8], 200))?;
        let all: Vec<i64> = results.iter().flat_map(numbers).collect();
        assert_eq!(distinct(&all), 1600);
        assert_eq!(
            all.iter().max(),
            Some(&1600),
            "1..1600: none lost or repeated"
        );
        Ok(())
    })
}

fn first_use() -> TestResult {
    with_db("proc_first_use", |name, db| async move {
        let results = run_together("take", &name, &take_args("fresh", &[1; 8], 1))?;
        let mut all: Vec<i64> = results.iter().flat_map(numbers).collect();
        all.sort_unstable();
        assert_eq!(all, (1..=8).collect::<Vec<_>>());
        let counters: Vec<Document> = futures_util::TryStreamExt::try_collect(
            db.collection::<Document>("counters").find(doc! {}).await?,
        )
        .await?;
        assert_eq!(
            counters,
            [
                doc! { "_id": "fresh", "seq": 8_i64, "definition": { "start": 1_i64, "step": 1_i64 }, "definitionDigest": "b1992bd103fd143e" }
            ],
            "exactly one counter document"
        );
        Ok(())
    })
}

fn optimistic() -> TestResult {
    with_db("proc_optimistic", |name, db| async move {
        let args: Vec<Vec<String>> = (0..8)
            .map(|_| vec!["docs".to_owned(), "100".to_owned()])
            .collect();
        let results = run_together("optimistic", &name, &args)?;
        let failures: Vec<&Value> = results
            .iter()
            .flat_map(|r| r["failures"].as_array().unwrap())
            .collect();
        assert!(
            failures.is_empty(),
            "{} of 800 inserts failed: {failures:?}",
            failures.len()
        );
        let values: Vec<i64> = results.iter().flat_map(|r| numbers(&r["values"])).collect();
        assert_eq!(distinct(&values), 800, "every insert got its own number");
        assert_eq!(
            db.collection::<Document>("docs")
                .count_documents(doc! {})
                .await?,
            800
        );
        Ok(())
    })
}

fn tutorial_mixed() -> TestResult {
    with_db("proc_tutorial", |name, db| async move {
        // Four library workers (blocks of 1 and 10) and four running the tutorial's function
        // (block 0), at once.
        let args = take_args("userid", &[1, 0, 10, 0, 1, 0, 10, 0], 300);
        let results = run_together("take", &name, &args)?;
        let all: Vec<i64> = results.iter().flat_map(numbers).collect();
        assert_eq!(all.len(), 8 * 300);
        assert_eq!(distinct(&all), all.len(), "no number issued twice");
        assert!(counter(&db, "userid").await?.get_i64("seq")? >= *all.iter().max().unwrap());
        Ok(())
    })
}

async fn counter(db: &Database, id: &str) -> Result<Document, Box<dyn std::error::Error>> {
    Ok(db
        .collection::<Document>("counters")
        .find_one(doc! { "_id": id })
        .await?
        .ok_or("no counter")?)
}

/// A worker: `take <uri> <db> <sequence> <block> <count>` (block 0: the tutorial's
/// `getNextSequence()`, one `findAndModify` with `$inc` and upsert per number), or
/// `optimistic <uri> <db> <collection> <count>`.
fn worker(args: &[String]) {
    let [kind, uri, db, rest @ ..] = args else {
        panic!("worker <kind> <uri> <db> …")
    };
    runtime().block_on(async {
        let client = Client::with_uri_str(uri).await.expect("connect");
        let db = client.database(db);
        let seqs = Sequences::new(&db);
        println!("ready");
        let mut go = String::new();
        std::io::stdin().read_line(&mut go).expect("stdin");
        let output = match (kind.as_str(), rest) {
            ("take", [name, block, count]) => {
                let block: u64 = block.parse().expect("block");
                let count: usize = count.parse().expect("count");
                let numbers = if block == 0 {
                    tutorial(&db, name, count).await
                } else {
                    take(&seqs, name, block, count).await
                };
                serde_json::json!(numbers)
            }
            ("optimistic", [collection, count]) => {
                let collection = db.collection::<Document>(collection);
                let (mut values, mut failures) = (Vec::new(), Vec::new());
                for i in 0..count.parse::<u32>().expect("count") {
                    match seqs
                        .insert_optimistic(&collection, doc! { "i": i }, OptimisticOptions::new())
                        .await
                    {
                        Ok(inserted) => values.push(inserted.value),
                        Err(error) => failures.push(error.to_string()),
                    }
                }
                serde_json::json!({ "values": values, "failures": failures })
            }
            _ => panic!("unknown worker {kind} {rest:?}"),
        };
        println!("{output}");
    });
}

/// Ten callers at a time on the one sequence: exercises the shared refill in flight.
async fn take(seqs: &Sequences, name: &str, block: u64, count: usize) -> Vec<i64> {
    let sequence = seqs
        .sequence(name, SequenceOptions::new().block(block))
        .expect("a sequence");
    let mut numbers = Vec::with_capacity(count);
    while numbers.len() < count {
        let batch = (count - numbers.len()).min(10);
        for number in join_all((0..batch).map(|_| sequence.next())).await {
            numbers.push(number.expect("a number"));
        }
    }
    numbers
}

/// MongoDB's tutorial, `getNextSequence(name)`, as written there.
async fn tutorial(db: &Database, name: &str, count: usize) -> Vec<i64> {
    let counters = db.collection::<Document>("counters");
    let mut numbers = Vec::with_capacity(count);
    for _ in 0..count {
        let counter = loop {
            // The tutorial's upsert race: two first uses at once, one fails with a duplicate
            // key; the tutorial's answer is to call again.
            match counters
                .find_one_and_update(doc! { "_id": name }, doc! { "$inc": { "seq": 1 } })
                .upsert(true)
                .return_document(ReturnDocument::After)
                .await
            {
                Ok(counter) => break counter.expect("upserted"),
                Err(error) if error.to_string().contains("E11000") => continue,
                Err(error) => panic!("{error}"),
            }
        };
        let seq = counter
            .get_i64("seq")
            .or_else(|_| counter.get_i32("seq").map(i64::from))
            .or_else(|_| counter.get_f64("seq").map(|f| f as i64))
            .expect("an integer");
        numbers.push(seq);
    }
    numbers
}
