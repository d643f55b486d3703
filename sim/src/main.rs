//! `mongo-seq-sim`: runs seeded schedules of the whole protocol against the model of a
//! replica set and prints, last, exactly one line:
//! `SIM schedules=<n> faults=<n> violations=<n> seed=<first>..<last>`.

use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::Parser;
use mongo_seq_sim::focus::Focus;
use mongo_seq_sim::mutants::Mutant;
use mongo_seq_sim::runner::{replay, run_many, Runs};
use mongo_seq_sim::schedule::Outcome;

/// Deterministic simulation of mongo-seq under replica-set faults.
///
/// Each schedule is one seed: the deployment (3 or 5 members, or 2 and an arbiter), the
/// write concern it defaults to, the clients' options, the fault rates and every
/// interleaving follow from it. A failing schedule is replayed with its trace (who sent what,
/// which fault struck) and its seed printed: `mongo-seq-sim --seed <seed> --schedules 1
/// --trace` replays it exactly.
#[derive(Parser, Debug)]
#[command(name = "mongo-seq-sim", version)]
struct Args {
    /// Number of schedules to run.
    #[arg(long, default_value_t = 100)]
    schedules: u64,
    /// The first seed (schedules use seed, seed+1, …).
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Stop starting schedules after this many seconds (the line reports what ran).
    #[arg(long)]
    time_limit_secs: Option<u64>,
    /// Worker threads (default: the machine's cores).
    #[arg(long)]
    jobs: Option<usize>,
    /// Print the trace of every schedule run (use with --schedules 1).
    #[arg(long)]
    trace: bool,
    /// Switch on one protocol mutant (no-epoch-condition, token-before-batch, read-ahead-token,
    /// skip-pending-intent, renew-without-epoch, counter-w1, unfenced-completion,
    /// unanchored-skip-read, unconditioned-numbering, read-before-own-writes, ignore-definition,
    /// skip-deletion-record, batch-read-before-own-writes).
    #[arg(long)]
    mutant: Option<Mutant>,
    /// Draw every schedule's fault rates toward one rare interleaving (stale-incarnations:
    /// sidecar processes frozen and replaced by a new one with their instance id).
    #[arg(long)]
    focus: Option<Focus>,
    /// Hunt every mutant: run schedules from --seed until each is caught (at most
    /// --schedules each); fails when one is not. A mutant too rare for common schedules
    /// (listed in `FOCUSED`: unfenced-completion) is hunted on schedules focused on it.
    #[arg(long)]
    mutants: bool,
}

fn print_failure(outcome: &Outcome) {
    let replayed = match replay(outcome) {
        Ok(replayed) => replayed,
        Err(why) => {
            eprintln!("NOT DETERMINISTIC: {why}");
            outcome.clone()
        }
    };
    eprintln!(
        "---- seed {} FAILED ({}) ----",
        outcome.seed, replayed.summary
    );
    for line in &replayed.trace {
        eprintln!("{line}");
    }
    for violation in &outcome.violations {
        eprintln!("VIOLATION seed {}: {violation}", outcome.seed);
    }
    let mutant = outcome
        .mutant
        .map(|m| format!(" --mutant {m}"))
        .unwrap_or_default();
    let focus = outcome
        .focus
        .map(|f| format!(" --focus {f}"))
        .unwrap_or_default();
    eprintln!(
        "replay: mongo-seq-sim --seed {} --schedules 1 --trace{mutant}{focus}",
        outcome.seed
    );
}

fn main() -> ExitCode {
    let args = Args::parse();
    let jobs = args
        .jobs
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let limit = args.time_limit_secs.map(Duration::from_secs);
    if args.mutants {
        return hunt_mutants(&args, jobs);
    }
    if args.trace {
        let mut totals = mongo_seq_sim::runner::Totals {
            first: args.seed,
            last: args.seed,
            ..Default::default()
        };
        for seed in args.seed..args.seed + args.schedules {
            let outcome = mongo_seq_sim::schedule::run_focused(seed, args.mutant, args.focus, true);
            println!("---- seed {seed} ({}) ----", outcome.summary);
            for line in &outcome.trace {
                println!("{line}");
            }
            for violation in &outcome.violations {
                println!("VIOLATION seed {seed}: {violation}");
            }
            totals.schedules += 1;
            totals.faults += outcome.faults;
            totals.violations += outcome.violations.len() as u64;
            totals.last = seed;
        }
        println!("{}", totals.line());
        return if totals.violations == 0 {
            ExitCode::SUCCESS
        } else {
            ExitCode::FAILURE
        };
    }
    let started = Instant::now();
    let last_report = std::sync::Mutex::new(Instant::now());
    let runs = Runs {
        first: args.seed,
        count: args.schedules,
        limit,
        jobs,
        mutant: args.mutant,
        focus: args.focus,
        stop_at_first_failure: false,
    };
    let totals = run_many(runs, &print_failure, &|t| {
        let mut last = last_report.lock().expect("progress");
        if last.elapsed() >= Duration::from_secs(10) {
            eprintln!(
                "progress: {} schedules, {} faults, {} violations, {:.0} s",
                t.schedules,
                t.faults,
                t.violations,
                started.elapsed().as_secs_f64()
            );
            *last = Instant::now();
        }
    });
    eprintln!(
        "{} schedules in {:.1} s ({:.1}/s on {jobs} threads){}",
        totals.schedules,
        started.elapsed().as_secs_f64(),
        totals.schedules as f64 / started.elapsed().as_secs_f64().max(1e-3),
        if totals.failing.is_empty() {
            String::new()
        } else {
            format!("; failing seeds: {:?}", totals.failing)
        }
    );
    eprintln!("{}", totals.anchored_line());
    println!("{}", totals.line());
    if totals.violations == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

fn hunt_mutants(args: &Args, jobs: usize) -> ExitCode {
    let mut all_caught = true;
    let mut grand = mongo_seq_sim::runner::Totals {
        first: args.seed,
        last: args.seed,
        ..Default::default()
    };
    for mutant in Mutant::ALL {
        let started = Instant::now();
        let found = std::sync::Mutex::new(None::<u64>);
        let focus = mongo_seq_sim::mutants::focus_of(mutant);
        let first = args.seed;
        let runs = Runs {
            first,
            count: args.schedules,
            limit: None,
            jobs,
            mutant: Some(mutant),
            focus,
            stop_at_first_failure: true,
        };
        let totals = run_many(
            runs,
            &|outcome| {
                let mut found = found.lock().expect("found");
                if found.map_or(true, |f| outcome.seed < f) {
                    *found = Some(outcome.seed);
                }
            },
            &|_| {},
        );
        grand.schedules += totals.schedules;
        grand.faults += totals.faults;
        grand.violations += totals.violations;
        grand.last = grand.last.max(totals.last);
        let focused = focus
            .map(|f| format!(" focused on {f}"))
            .unwrap_or_default();
        match found.into_inner().expect("found") {
            Some(seed) => println!(
                "MUTANT {mutant}: caught by seed {seed}, after {} schedules{focused} ({:.1} s)",
                seed - first + 1,
                started.elapsed().as_secs_f64()
            ),
            None => {
                all_caught = false;
                println!(
                    "MUTANT {mutant}: NOT caught in {} schedules{focused}",
                    totals.schedules
                );
            }
        }
    }
    println!("{}", grand.line());
    if all_caught {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
