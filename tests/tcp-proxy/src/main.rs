//! `tcp-proxy`: a TCP proxy in front of MongoDB for the chaos test and the benchmarks
//! (driven from JS by `tests/harness/tcp-proxy.mjs`).
//!
//!   tcp-proxy --target HOST:PORT [--listen 127.0.0.1:0] [--delay-us 0]
//!
//! Prints `listening HOST:PORT` once it accepts connections. Each chunk is held back
//! `--delay-us` in each direction (0.5 ms each way ≈ a same-region link). Commands on standard
//! input, one per line, each answered with one line on standard output:
//!   counts  → `{"commands":{…},"by_collection":{"update orders":…},"waited_us":{…},"connections":N}`
//!             (waited_us: per command, the time from request to reply summed, in µs)
//!   reset   → `ok` (counts back to zero)
//!   cut     → `cut N` (every open connection closed, N of them)
//!   trace   → `ok` (from now on every command answered is traced, with its connection and times)
//!   dump    → `[{"conn":N,"cmd":…,"coll":…,"sent_us":…,"answered_us":…},…]` (the trace ends)
//! It exits when its standard input closes, so it dies with the process that started it.

mod relay;
mod wire;

use std::collections::BTreeMap;
use std::io::{BufRead, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use relay::Connection;
use wire::{Counts, Trace};

struct Options {
    target: String,
    listen: String,
    delay: Duration,
}

const USAGE: &str =
    "usage: tcp-proxy --target HOST:PORT [--listen 127.0.0.1:0] [--delay-us MICROSECONDS]";

fn parse_options() -> Result<Options, String> {
    let mut target = None;
    let mut listen = "127.0.0.1:0".to_owned();
    let mut delay_us: u64 = 0;
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let mut value = || {
            args.next()
                .ok_or_else(|| format!("{flag} needs a value\n{USAGE}"))
        };
        match flag.as_str() {
            "--target" => target = Some(value()?),
            "--listen" => listen = value()?,
            "--delay-us" => {
                let text = value()?;
                delay_us = text.parse().map_err(|_| {
                    format!("--delay-us expects a whole number of microseconds, got `{text}`")
                })?;
            }
            "-h" | "--help" => return Err(USAGE.to_owned()),
            other => return Err(format!("unknown argument `{other}`\n{USAGE}")),
        }
    }
    let target = target.ok_or_else(|| format!("--target is required\n{USAGE}"))?;
    Ok(Options {
        target,
        listen,
        delay: Duration::from_micros(delay_us),
    })
}

fn json_string(text: &str) -> String {
    let mut out = String::from("\"");
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn json_map(map: &BTreeMap<String, u64>) -> String {
    let fields: Vec<String> = map
        .iter()
        .map(|(k, v)| format!("{}:{v}", json_string(k)))
        .collect();
    format!("{{{}}}", fields.join(","))
}

fn main() {
    let options = match parse_options() {
        Ok(options) => options,
        Err(message) => {
            eprintln!("tcp-proxy: {message}");
            std::process::exit(2);
        }
    };
    let listener = TcpListener::bind(&options.listen).unwrap_or_else(|e| {
        eprintln!("tcp-proxy: cannot listen on {}: {e}", options.listen);
        std::process::exit(1);
    });
    let address = listener
        .local_addr()
        .map(|a| a.to_string())
        .unwrap_or_else(|_| options.listen.clone());
    let counts = Arc::new(Mutex::new(Counts::default()));
    let connections: Arc<Mutex<Vec<Connection>>> = Arc::default();
    let accepted = Arc::new(Mutex::new(0u64));
    {
        let (counts, connections, accepted) =
            (counts.clone(), connections.clone(), accepted.clone());
        let (target, delay) = (options.target.clone(), options.delay);
        thread::spawn(move || {
            for client in listener.incoming().flatten() {
                let Ok(upstream) = TcpStream::connect(&target) else {
                    continue; // the client sees its connection close
                };
                let number = {
                    let mut accepted = accepted.lock().expect("accepted lock");
                    *accepted += 1;
                    *accepted
                };
                if let Ok(connection) =
                    relay::relay(client, upstream, delay, counts.clone(), number)
                {
                    let mut open = connections.lock().expect("connections lock");
                    open.retain(|c| !c.is_closed());
                    open.push(connection);
                }
            }
        });
    }
    let mut stdout = std::io::stdout();
    let _ = writeln!(stdout, "listening {address}");
    let _ = stdout.flush();

    for line in std::io::stdin().lock().lines() {
        let Ok(line) = line else { break };
        let reply = match line.trim() {
            "counts" => {
                let counts = counts.lock().expect("counts lock").clone();
                format!(
                    "{{\"commands\":{},\"by_collection\":{},\"waited_us\":{},\"connections\":{}}}",
                    json_map(&counts.commands),
                    json_map(&counts.by_collection),
                    json_map(
                        &counts
                            .waited
                            .iter()
                            .map(|(k, v)| (k.clone(), v.as_micros() as u64))
                            .collect()
                    ),
                    *accepted.lock().expect("accepted lock")
                )
            }
            "reset" => {
                *counts.lock().expect("counts lock") = Counts::default();
                "ok".to_owned()
            }
            "trace" => {
                counts.lock().expect("counts lock").trace = Some(Trace {
                    start: Instant::now(),
                    lines: Vec::new(),
                });
                "ok".to_owned()
            }
            "dump" => {
                let trace = counts.lock().expect("counts lock").trace.take();
                format!("[{}]", trace.map(|t| t.lines.join(",")).unwrap_or_default())
            }
            "cut" => {
                let open: Vec<Connection> =
                    std::mem::take(&mut *connections.lock().expect("connections lock"));
                let live = open.iter().filter(|c| !c.is_closed()).count();
                for connection in &open {
                    connection.close();
                }
                format!("cut {live}")
            }
            "" => continue,
            other => format!("error: unknown command `{other}` (counts, reset, cut, trace, dump)"),
        };
        let _ = writeln!(stdout, "{reply}");
        let _ = stdout.flush();
    }
}
