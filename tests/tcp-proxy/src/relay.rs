//! Moves bytes between a client and the server, one thread per direction, each chunk held
//! back `delay` after it arrived. Threads and `std::thread::sleep` (nanosleep) rather than an
//! async runtime: tokio's and Node's timers tick in whole milliseconds, too coarse for 0.5 ms.

use std::io::{Read, Write};
use std::net::{Shutdown, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use crate::wire::{on_reply, on_request, Counts, InFlight, MessageSplitter};

/// One proxied connection: both sockets, so `cut` can close them from outside.
pub struct Connection {
    client: TcpStream,
    upstream: TcpStream,
    /// Directions still relaying (2 → 0).
    running: Arc<AtomicUsize>,
}

impl Connection {
    pub fn close(&self) {
        let _ = self.client.shutdown(Shutdown::Both);
        let _ = self.upstream.shutdown(Shutdown::Both);
    }

    pub fn is_closed(&self) -> bool {
        self.running.load(Ordering::Acquire) == 0
    }
}

/// Relays `client` ↔ `upstream` until either side closes; counts the client's commands.
pub fn relay(
    client: TcpStream,
    upstream: TcpStream,
    delay: Duration,
    counts: Arc<Mutex<Counts>>,
    number: u64,
) -> std::io::Result<Connection> {
    let _ = client.set_nodelay(true);
    let _ = upstream.set_nodelay(true);
    let running = Arc::new(AtomicUsize::new(2));
    let connection = Connection {
        client: client.try_clone()?,
        upstream: upstream.try_clone()?,
        running: running.clone(),
    };
    let (client_read, upstream_write) = (client.try_clone()?, upstream.try_clone()?);
    let in_flight = Arc::new(Mutex::new(InFlight::of_connection(number)));
    let (mut requests, mut replies) = (MessageSplitter::default(), MessageSplitter::default());
    let (request_counts, request_flight) = (counts.clone(), in_flight.clone());
    let done = running.clone();
    thread::spawn(move || {
        pump(client_read, upstream_write, delay, |chunk| {
            let (mut counts, mut in_flight) = (
                request_counts.lock().expect("counts lock"),
                request_flight.lock().expect("in-flight lock"),
            );
            requests.feed(chunk, |m| on_request(m, &mut counts, &mut in_flight));
        });
        done.fetch_sub(1, Ordering::AcqRel);
    });
    thread::spawn(move || {
        pump(upstream, client, delay, |chunk| {
            let (mut counts, mut in_flight) = (
                counts.lock().expect("counts lock"),
                in_flight.lock().expect("in-flight lock"),
            );
            replies.feed(chunk, |m| on_reply(m, &mut counts, &mut in_flight));
        });
        running.fetch_sub(1, Ordering::AcqRel);
    });
    Ok(connection)
}

/// Copies `from` → `to`, each chunk delivered `delay` after it was read; closes both on the end.
fn pump(mut from: TcpStream, mut to: TcpStream, delay: Duration, mut observe: impl FnMut(&[u8])) {
    let mut buffer = vec![0u8; 64 * 1024];
    if delay.is_zero() {
        while let Ok(n @ 1..) = from.read(&mut buffer) {
            observe(&buffer[..n]);
            if to.write_all(&buffer[..n]).is_err() {
                break;
            }
        }
    } else {
        let (send, receive) = mpsc::channel::<(Instant, Vec<u8>)>();
        let (Ok(mut writer_to), Ok(stop_reader)) = (to.try_clone(), from.try_clone()) else {
            return;
        };
        let writer = thread::spawn(move || {
            for (due, chunk) in receive {
                let now = Instant::now();
                if due > now {
                    thread::sleep(due - now);
                }
                if writer_to.write_all(&chunk).is_err() {
                    let _ = stop_reader.shutdown(Shutdown::Both);
                    break;
                }
            }
        });
        while let Ok(n @ 1..) = from.read(&mut buffer) {
            observe(&buffer[..n]);
            if send
                .send((Instant::now() + delay, buffer[..n].to_vec()))
                .is_err()
            {
                break;
            }
        }
        drop(send);
        let _ = writer.join();
    }
    let _ = to.shutdown(Shutdown::Both);
    let _ = from.shutdown(Shutdown::Both);
}
