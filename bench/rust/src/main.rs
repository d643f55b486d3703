//! `make bench`'s Rust lines (bench/client/rust.mjs runs this release binary and adds its
//! figures to the report): the `mongo-seq` crate's `next()` with blocks of 1, 100 and 1000
//! against MongoDB's tutorial written in Rust (`getNextSequence`: one `findAndModify` with
//! `$inc` per number), with 1 and 10 concurrent tasks, rows interleaved round by round (each
//! round's ratio against the tutorial of the same round; the median is reported); and a warm
//! `next()` (a number from the block in hand, no round trip) in ns, beside a plain Rust hi/lo,
//! and a yearly sequence's warm `next()` beside the plain one (at most 2×).
//!
//! Usage: `mongo-seq-bench --uri URI --db NAME [--rounds N] [--numbers 1=400,100=20000,1000=50000]
//! [--warm-calls N]`. Prints one JSON object per figure on stdout (`name`, `value`, `unit`,
//! `what`, `server`); progress goes to stderr. No figure is asserted: they are printed.
//!
//! `--block1-pairs N [--suffix S] [--link TEXT]`: only block 1 at one task against the
//! tutorial, whose ratio sits near 1 (a row of a few hundred numbers moves with the machine's
//! load by more than the margin): N pairs of short chunks, alternating, the order flipped every
//! pair, each pair's ratio (tutorial time ÷ ours) and their median (`rust.block1.c1.vs_tutorial`
//! + S), as the JS comparison does (bench/client/blocks.mjs).

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use mongo_seq::{Reset, SequenceOptions, Sequences};
use mongodb::bson::{doc, Document};
use mongodb::options::ReturnDocument;
use mongodb::{Collection, Database};
use serde_json::json;

const BLOCKS: [u64; 3] = [1, 100, 1000];
const CALLERS: [usize; 2] = [1, 10];

struct Args {
    uri: String,
    db: String,
    rounds: usize,
    numbers: BTreeMap<u64, i64>,
    warm_calls: u64,
    /// Block 1 pairs only (`--block1-pairs`), with the figure's suffix and link.
    block1_pairs: Option<usize>,
    suffix: String,
    link: String,
}

fn args() -> Result<Args, String> {
    let mut args = Args {
        uri: String::new(),
        db: String::new(),
        rounds: 3,
        numbers: BTreeMap::from([(1, 400), (100, 20_000), (1000, 50_000)]),
        warm_calls: 100_000,
        block1_pairs: None,
        suffix: String::new(),
        link: "loopback".to_owned(),
    };
    let mut given = std::env::args().skip(1);
    while let Some(flag) = given.next() {
        let value = given.next().ok_or(format!("{flag} needs a value"))?;
        let number = |v: &str| {
            v.parse::<u64>()
                .map_err(|_| format!("{flag}: not a count: {v}"))
        };
        match flag.as_str() {
            "--uri" => args.uri = value,
            "--db" => args.db = value,
            "--rounds" => args.rounds = number(&value)?.clamp(1, 100) as usize,
            "--warm-calls" => args.warm_calls = number(&value)?.max(1),
            "--block1-pairs" => args.block1_pairs = Some(number(&value)?.clamp(1, 10_000) as usize),
            "--suffix" => args.suffix = value,
            "--link" => args.link = value,
            "--numbers" => {
                for pair in value.split(',') {
                    let (block, count) =
                        pair.split_once('=').ok_or(format!("--numbers: {pair}"))?;
                    args.numbers.insert(number(block)?, number(count)? as i64);
                }
            }
            _ => return Err(format!("unknown flag {flag}")),
        }
    }
    if args.uri.is_empty() || args.db.is_empty() {
        return Err("usage: mongo-seq-bench --uri URI --db NAME [--rounds N] [--numbers 1=400,100=20000,1000=50000] [--warm-calls N] [--block1-pairs N [--suffix S] [--link TEXT]]".into());
    }
    Ok(args)
}

fn figure(name: &str, value: f64, unit: &str, what: &str, server: bool) {
    let line =
        json!({ "name": name, "value": value, "unit": unit, "what": what, "server": server });
    println!("{line}");
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    let n = values.len();
    if n % 2 == 1 {
        values[n / 2]
    } else {
        (values[n / 2 - 1] + values[n / 2]) / 2.0
    }
}

/// Numbers per second taking `count` numbers with `callers` concurrent tasks.
async fn measure<F, Fut>(callers: usize, count: i64, take: F) -> f64
where
    F: Fn() -> Fut + Clone + Send + 'static,
    Fut: Future<Output = i64> + Send,
{
    let left = Arc::new(AtomicI64::new(count));
    let started = Instant::now();
    let tasks: Vec<_> = (0..callers)
        .map(|_| {
            let (left, take) = (Arc::clone(&left), take.clone());
            tokio::spawn(async move {
                while left.fetch_sub(1, Ordering::Relaxed) > 0 {
                    std::hint::black_box(take().await);
                }
            })
        })
        .collect();
    for task in tasks {
        task.await.expect("a task");
    }
    count as f64 / started.elapsed().as_secs_f64()
}

/// MongoDB's tutorial: the counter `{ _id: name, seq: 0 }` inserted up front, then
/// `getNextSequence(name)`: one `findAndModify` `{ $inc: { seq: 1 } }`, the document after.
async fn tutorial(
    counters: &Collection<Document>,
    name: &str,
) -> impl Fn() -> std::pin::Pin<Box<dyn Future<Output = i64> + Send>> + Clone + Send + 'static {
    counters
        .insert_one(doc! { "_id": name, "seq": 0 })
        .await
        .expect("the tutorial's counter");
    let (counters, name) = (counters.clone(), name.to_owned());
    move || {
        let (counters, name) = (counters.clone(), name.clone());
        Box::pin(async move {
            let counter = counters
                .find_one_and_update(doc! { "_id": &name }, doc! { "$inc": { "seq": 1 } })
                .return_document(ReturnDocument::After)
                .await
                .expect("findAndModify")
                .expect("the counter");
            counter
                .get_i32("seq")
                .map(i64::from)
                .or_else(|_| counter.get_i64("seq"))
                .expect("seq")
        })
    }
}

async fn blocks(db: &Database, args: &Args) {
    let counters = db.collection::<Document>("counters");
    // Warm-up: the connection pool, the allocator.
    let warm = tutorial(&counters, "warm").await;
    measure(10, 200, warm).await;
    let warm = Sequences::new(db)
        .sequence("warm-block", SequenceOptions::new().block(10))
        .unwrap();
    measure(10, 2000, move || {
        let warm = warm.clone();
        async move { warm.next().await.expect("next") }
    })
    .await;

    let mut rows: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    let mut serial = 0;
    for round in 0..args.rounds {
        for callers in CALLERS {
            let mut order: Vec<Option<u64>> =
                std::iter::once(None).chain(BLOCKS.map(Some)).collect();
            if round % 2 == 1 {
                order.reverse(); // no row always runs first
            }
            for row in order {
                serial += 1;
                let name = format!("row-{serial}");
                let (key, per_second) = match row {
                    None => {
                        let next = tutorial(&counters, &name).await;
                        (
                            "tutorial".to_owned(),
                            measure(callers, args.numbers[&1], next).await,
                        )
                    }
                    Some(block) => {
                        let sequence = Sequences::new(db)
                            .sequence(&name, SequenceOptions::new().block(block))
                            .expect("a sequence");
                        let take = move || {
                            let sequence = sequence.clone();
                            async move { sequence.next().await.expect("next") }
                        };
                        (
                            format!("block{block}"),
                            measure(callers, args.numbers[&block], take).await,
                        )
                    }
                };
                rows.entry(format!("{key}.c{callers}"))
                    .or_default()
                    .push(per_second);
            }
        }
        eprintln!("rust bench: round {} of {}", round + 1, args.rounds);
    }
    for callers in CALLERS {
        let tutorial = rows[&format!("tutorial.c{callers}")].clone();
        figure(
            &format!("rust.tutorial.c{callers}.numbers_per_s"),
            median(tutorial.clone()),
            "numbers/s",
            &format!("Rust: the tutorial's getNextSequence, {callers} task(s), loopback"),
            true,
        );
        for block in BLOCKS {
            let key = format!("block{block}.c{callers}");
            let per_second = rows[&key].clone();
            let ratios = per_second
                .iter()
                .zip(&tutorial)
                .map(|(a, t)| a / t)
                .collect();
            figure(
                &format!("rust.{key}.numbers_per_s"),
                median(per_second),
                "numbers/s",
                &format!("Rust: sequence(block {block}).next(), {callers} task(s), loopback"),
                true,
            );
            figure(
                &format!("rust.{key}.vs_tutorial"),
                median(ratios),
                "x",
                &format!("Rust: block {block}, {callers} task(s) ÷ the tutorial in Rust, same tasks (median of {} rounds)", args.rounds),
                true,
            );
        }
    }
}

/// Numbers per chunk of a block-1 pair.
const PAIR_CHUNK: usize = 20;

/// Block 1 at one task against the tutorial in pairs of short chunks (module docs).
async fn block1_pairs(db: &Database, args: &Args, pairs: usize) {
    let counters = db.collection::<Document>("counters");
    let tutorial = tutorial(&counters, "tutorial-pairs").await;
    let sequence = Sequences::new(db)
        .sequence("block1-pairs", SequenceOptions::new().block(1))
        .expect("a sequence");
    let ours = move || {
        let sequence = sequence.clone();
        async move { sequence.next().await.expect("next") }
    };
    // Milliseconds for a chunk of `take`.
    async fn chunk<F, Fut>(take: &F) -> f64
    where
        F: Fn() -> Fut,
        Fut: Future<Output = i64>,
    {
        let started = Instant::now();
        for _ in 0..PAIR_CHUNK {
            std::hint::black_box(take().await);
        }
        started.elapsed().as_secs_f64() * 1000.0
    }
    // Both counters exist, both paths warm.
    chunk(&tutorial).await;
    chunk(&ours).await;
    let mut ratios = Vec::with_capacity(pairs);
    let (mut theirs_ms, mut ours_ms) = (Vec::new(), Vec::new());
    for pair in 0..pairs {
        let (t, o) = if pair % 2 == 0 {
            let t = chunk(&tutorial).await;
            (t, chunk(&ours).await)
        } else {
            let o = chunk(&ours).await;
            (chunk(&tutorial).await, o)
        };
        ratios.push(t / o);
        theirs_ms.push(t / PAIR_CHUNK as f64);
        ours_ms.push(o / PAIR_CHUNK as f64);
    }
    let link = &args.link;
    figure(
        &format!("rust.block1.c1.ms_per_number{}", args.suffix),
        median(ours_ms),
        "ms",
        &format!("Rust: sequence(block 1).next(), 1 task, {link} (median chunk)"),
        true,
    );
    figure(
        &format!("rust.tutorial.c1.ms_per_number{}", args.suffix),
        median(theirs_ms),
        "ms",
        &format!("Rust: the tutorial's getNextSequence, 1 task, {link} (median chunk)"),
        true,
    );
    figure(
        &format!("rust.block1.c1.vs_tutorial{}", args.suffix),
        median(ratios),
        "x",
        &format!("Rust: block 1, 1 task ÷ the tutorial in Rust, {link} (median of {pairs} interleaved pairs of {PAIR_CHUNK} numbers each)"),
        true,
    );
}

/// The reference for a warm `next()`: hi/lo written plainly, a block in a mutex.
struct PlainHiLo {
    block: Mutex<(i64, i64)>,
}

impl PlainHiLo {
    fn take(&self) -> Option<i64> {
        let mut block = self.block.lock().unwrap();
        (block.0 < block.1).then(|| {
            block.0 += 1;
            block.0
        })
    }
}

async fn warm_next(db: &Database, args: &Args) {
    // The largest block: one round trip per million calls.
    let sequence = Sequences::new(db)
        .sequence("warm", SequenceOptions::new().block(1_000_000))
        .expect("a sequence");
    sequence.next().await.expect("the first block");
    // A yearly sequence's warm next(): the period at hand is kept (the clock compared with its
    // end), no date converted per call.
    let yearly = Sequences::new(db)
        .sequence(
            "warm-yearly",
            SequenceOptions::new()
                .reset(Reset::Yearly)
                .time_zone("Europe/Paris")
                .block(1_000_000),
        )
        .expect("a yearly sequence");
    yearly.next().await.expect("the first block");
    let plain = PlainHiLo {
        block: Mutex::new((0, i64::MAX)),
    };
    // Short samples, the three rows interleaved, medians: on a loaded machine a preemption
    // spoils a few samples instead of a whole row.
    let calls = args.warm_calls.min(900_000);
    const SAMPLE: u64 = 2_000;
    let samples = (calls / SAMPLE).max(5);
    let (mut library, mut reference, mut periodic) = (Vec::new(), Vec::new(), Vec::new());
    let per_call = |started: Instant| started.elapsed().as_nanos() as f64 / SAMPLE as f64;
    for sample in 0..=samples {
        let started = Instant::now();
        for _ in 0..SAMPLE {
            std::hint::black_box(sequence.next().await.expect("next"));
        }
        let ns = per_call(started);
        let started = Instant::now();
        for _ in 0..SAMPLE {
            std::hint::black_box(yearly.next().await.expect("next"));
        }
        let yearly_ns = per_call(started);
        let started = Instant::now();
        for _ in 0..SAMPLE {
            std::hint::black_box(plain.take());
        }
        let plain_ns = per_call(started);
        if sample > 0 {
            // sample 0 warms up
            library.push(ns);
            reference.push(plain_ns);
            periodic.push(yearly_ns);
        }
    }
    let ratios = library.iter().zip(&reference).map(|(a, b)| a / b).collect();
    let yearly_ratios = periodic.iter().zip(&library).map(|(a, b)| a / b).collect();
    figure(
        "rust.next_warm.yearly_ns",
        median(periodic),
        "ns",
        "Rust: warm next() of a yearly sequence (Europe/Paris), median of samples",
        false,
    );
    figure(
        "rust.next_warm.yearly_vs_plain",
        median(yearly_ratios),
        "x",
        "Rust: warm next(), yearly ÷ plain (same samples)",
        false,
    );
    figure(
        "rust.next_warm_ns",
        median(library),
        "ns",
        "Rust: warm next() (no round trip), median of samples",
        false,
    );
    figure(
        "rust.next_warm.hilo_rust_ns",
        median(reference),
        "ns",
        "the same with a plain Rust hi/lo (a block in a Mutex)",
        false,
    );
    figure(
        "rust.next_warm.vs_hilo_rust",
        median(ratios),
        "x",
        "Rust: the crate ÷ plain hi/lo",
        false,
    );
}

#[tokio::main]
async fn main() {
    let args = match args() {
        Ok(args) => args,
        Err(message) => {
            eprintln!("mongo-seq-bench: {message}");
            std::process::exit(2);
        }
    };
    let client = mongodb::Client::with_uri_str(&args.uri)
        .await
        .expect("connect");
    let db = client.database(&args.db);
    if let Some(pairs) = args.block1_pairs {
        block1_pairs(&db, &args, pairs).await;
    } else {
        blocks(&db, &args).await;
        warm_next(&db, &args).await;
    }
    let _ = db.drop().await;
}
