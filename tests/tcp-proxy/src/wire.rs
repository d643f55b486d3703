//! Reads the MongoDB wire protocol off both directions of a connection, so the proxy counts
//! every command a client sends (driver-internal `getMore`s and heartbeats included), whatever
//! language the client is written in, and how long each kind waited for its reply.

use std::collections::{BTreeMap, HashMap};
use std::time::{Duration, Instant};

/// Bytes kept from the start of each message: enough for the header, an `OP_QUERY`'s namespace
/// and the body's first element (the command name and, for most commands, the collection).
const HEAD_BYTES: usize = 512;

const OP_MSG: i32 = 2013;
const OP_QUERY: i32 = 2004;
const OP_COMPRESSED: i32 = 2012;

/// Commands seen, by name and by `name collection` (when the command's value is a string), and
/// per name the time from the request's last byte to the reply's last byte, summed; while a
/// trace is on, every command answered as a JSON line (see [`Trace`]).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Counts {
    pub commands: BTreeMap<String, u64>,
    pub by_collection: BTreeMap<String, u64>,
    pub waited: BTreeMap<String, Duration>,
    pub trace: Option<Trace>,
}

/// Every command answered since the trace began: `{"conn":N,"cmd":…,"coll":…,"sent_us":…,
/// "answered_us":…}`, times from the trace's start (which command waited for which).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Trace {
    pub start: Instant,
    pub lines: Vec<String>,
}

impl Counts {
    pub fn record(&mut self, name: String, collection: Option<String>) {
        if let Some(collection) = collection {
            *self
                .by_collection
                .entry(format!("{name} {collection}"))
                .or_default() += 1;
        }
        *self.commands.entry(name).or_default() += 1;
    }
}

/// One connection's requests waiting for their reply: request id → (command, collection, when
/// sent), and the connection's number (for traces).
#[derive(Debug, Default)]
pub struct InFlight {
    connection: u64,
    waiting: HashMap<i32, (String, Option<String>, Instant)>,
}

impl InFlight {
    #[cfg(test)]
    pub fn new() -> Self {
        Self::default()
    }

    pub fn of_connection(connection: u64) -> Self {
        Self {
            connection,
            ..Self::default()
        }
    }

    #[cfg(test)]
    pub fn is_empty(&self) -> bool {
        self.waiting.is_empty()
    }
}

/// A request (client → server): counts its command and notes it as waiting for a reply.
pub fn on_request(message: &[u8], counts: &mut Counts, in_flight: &mut InFlight) {
    let (name, collection) = command_of(message);
    if let Some(id) = i32_at(message, 4) {
        in_flight
            .waiting
            .insert(id, (name.clone(), collection.clone(), Instant::now()));
    }
    counts.record(name, collection);
}

/// A reply (server → client): adds the time its request waited (and traces it).
pub fn on_reply(message: &[u8], counts: &mut Counts, in_flight: &mut InFlight) {
    let Some((name, collection, sent)) =
        i32_at(message, 8).and_then(|id| in_flight.waiting.remove(&id))
    else {
        return;
    };
    if let Some(trace) = &mut counts.trace {
        let micros = |at: Instant| at.saturating_duration_since(trace.start).as_micros();
        let coll = collection.map_or("null".to_owned(), |c| format!("{c:?}"));
        trace.lines.push(format!(
            "{{\"conn\":{},\"cmd\":{name:?},\"coll\":{coll},\"sent_us\":{},\"answered_us\":{}}}",
            in_flight.connection,
            micros(sent),
            micros(Instant::now())
        ));
    }
    *counts.waited.entry(name).or_default() += sent.elapsed();
}

/// Splits one direction's byte stream into messages (they may arrive in any chunking).
#[derive(Debug, Default)]
pub struct MessageSplitter {
    head: Vec<u8>,
    length: Option<usize>,
    received: usize,
}

impl MessageSplitter {
    /// Feeds a chunk; calls `on_message` with the head of every message it completes.
    pub fn feed(&mut self, mut data: &[u8], mut on_message: impl FnMut(&[u8])) {
        while !data.is_empty() {
            let Some(length) = self.length else {
                let take = (4 - self.head.len()).min(data.len());
                self.head.extend_from_slice(&data[..take]);
                data = &data[take..];
                if self.head.len() == 4 {
                    let declared = i32::from_le_bytes([
                        self.head[0],
                        self.head[1],
                        self.head[2],
                        self.head[3],
                    ]);
                    // A length below the header's own 4 bytes is garbage: treat it as 4 (skip on).
                    self.length = Some(usize::try_from(declared).unwrap_or(0).max(4));
                    self.received = 4;
                }
                continue;
            };
            let take = (length - self.received).min(data.len());
            let keep = take.min(HEAD_BYTES.saturating_sub(self.head.len()));
            self.head.extend_from_slice(&data[..keep]);
            self.received += take;
            data = &data[take..];
            if self.received == length {
                on_message(&self.head);
                self.head.clear();
                self.length = None;
                self.received = 0;
            }
        }
    }
}

fn i32_at(bytes: &[u8], at: usize) -> Option<i32> {
    let slice = bytes.get(at..at + 4)?;
    Some(i32::from_le_bytes([slice[0], slice[1], slice[2], slice[3]]))
}

fn cstring_at(bytes: &[u8], at: usize) -> Option<(&[u8], usize)> {
    let rest = bytes.get(at..)?;
    let end = rest.iter().position(|&b| b == 0)?;
    Some((&rest[..end], at + end + 1))
}

/// The command name (first key of the body) and, when its value is a string, the collection.
fn command_of(message: &[u8]) -> (String, Option<String>) {
    let body = match i32_at(message, 12) {
        // flagBits, then the first section; kind 0 is the body document.
        Some(OP_MSG) if message.get(20) == Some(&0) => Some(21),
        Some(OP_MSG) => None,
        // flags, fullCollectionName, numberToSkip, numberToReturn, query.
        Some(OP_QUERY) => cstring_at(message, 20).map(|(_, after)| after + 8),
        Some(OP_COMPRESSED) => return ("(compressed)".to_owned(), None),
        Some(code) => return (format!("(opcode {code})"), None),
        None => return ("(truncated)".to_owned(), None),
    };
    let Some(document) = body else {
        return ("(unparsed)".to_owned(), None);
    };
    // Document: int32 length, then elements: type byte, cstring name, value.
    let element = document + 4;
    let Some(&kind) = message.get(element) else {
        return ("(unparsed)".to_owned(), None);
    };
    let Some((name, value_at)) = cstring_at(message, element + 1) else {
        return ("(unparsed)".to_owned(), None);
    };
    let name = String::from_utf8_lossy(name).into_owned();
    let collection = (kind == 0x02)
        .then(|| {
            let length = usize::try_from(i32_at(message, value_at)?).ok()?;
            let text = message.get(value_at + 4..value_at + 4 + length.checked_sub(1)?)?;
            Some(String::from_utf8_lossy(text).into_owned())
        })
        .flatten();
    (name, collection)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An OP_MSG whose body is `{ <name>: <string value>, x: 1 }` (the tail is not parsed).
    fn op_msg(name: &str, value: &str) -> Vec<u8> {
        let mut doc = Vec::new();
        doc.push(0x02);
        doc.extend_from_slice(name.as_bytes());
        doc.push(0);
        doc.extend_from_slice(&((value.len() + 1) as i32).to_le_bytes());
        doc.extend_from_slice(value.as_bytes());
        doc.push(0);
        doc.extend_from_slice(&[0x10, b'x', 0, 1, 0, 0, 0, 0]);
        let mut body = ((doc.len() + 4) as i32).to_le_bytes().to_vec();
        body.extend_from_slice(&doc);
        let mut message = Vec::new();
        let length = 16 + 4 + 1 + body.len();
        message.extend_from_slice(&(length as i32).to_le_bytes());
        message.extend_from_slice(&[1, 0, 0, 0, 0, 0, 0, 0]);
        message.extend_from_slice(&OP_MSG.to_le_bytes());
        message.extend_from_slice(&[0, 0, 0, 0, 0]);
        message.extend_from_slice(&body);
        message
    }

    #[test]
    fn counts_commands_however_the_stream_is_chunked() {
        let mut stream = op_msg("update", "orders");
        stream.extend(op_msg("findAndModify", "counters"));
        stream.extend(op_msg("update", "mongo_seq_state"));
        for chunk in [1, 3, 7, 64, stream.len()] {
            let mut splitter = MessageSplitter::default();
            let mut counts = Counts::default();
            let mut in_flight = InFlight::new();
            for piece in stream.chunks(chunk) {
                splitter.feed(piece, |m| on_request(m, &mut counts, &mut in_flight));
            }
            assert_eq!(counts.commands.get("update"), Some(&2), "chunk {chunk}");
            assert_eq!(counts.commands.get("findAndModify"), Some(&1));
            assert_eq!(counts.by_collection.get("update mongo_seq_state"), Some(&1));
            assert_eq!(counts.by_collection.get("findAndModify counters"), Some(&1));
        }
    }

    #[test]
    fn long_messages_are_skipped_past_their_head() {
        let mut message = op_msg("insert", "orders");
        let padding = 100_000;
        let length = message.len() + padding;
        message[..4].copy_from_slice(&(length as i32).to_le_bytes());
        message.extend(std::iter::repeat(0u8).take(padding));
        message.extend(op_msg("getMore", "x"));
        let mut counts = Counts::default();
        let mut in_flight = InFlight::new();
        MessageSplitter::default().feed(&message, |m| on_request(m, &mut counts, &mut in_flight));
        assert_eq!(counts.commands.get("insert"), Some(&1));
        assert_eq!(counts.commands.get("getMore"), Some(&1));
    }

    #[test]
    fn legacy_op_query_handshakes_are_named() {
        let mut doc = vec![0x10];
        doc.extend_from_slice(b"isMaster\0");
        doc.extend_from_slice(&1i32.to_le_bytes());
        let mut query = ((doc.len() + 5) as i32).to_le_bytes().to_vec();
        query.extend(doc);
        query.push(0);
        let mut message = Vec::new();
        message.extend_from_slice(&[0; 4]);
        message.extend_from_slice(&[0; 8]);
        message.extend_from_slice(&OP_QUERY.to_le_bytes());
        message.extend_from_slice(&[0; 4]);
        message.extend_from_slice(b"admin.$cmd\0");
        message.extend_from_slice(&[0; 8]);
        message.extend(query);
        let length = message.len() as i32;
        message[..4].copy_from_slice(&length.to_le_bytes());
        let mut counts = Counts::default();
        let mut in_flight = InFlight::new();
        MessageSplitter::default().feed(&message, |m| on_request(m, &mut counts, &mut in_flight));
        assert_eq!(counts.commands.get("isMaster"), Some(&1));
    }

    #[test]
    fn replies_add_the_time_their_request_waited() {
        let mut request = op_msg("getMore", "x");
        request[4..8].copy_from_slice(&77i32.to_le_bytes());
        let mut reply = op_msg("cursor", "x");
        reply[8..12].copy_from_slice(&77i32.to_le_bytes());
        let mut counts = Counts::default();
        let mut in_flight = InFlight::new();
        MessageSplitter::default().feed(&request, |m| on_request(m, &mut counts, &mut in_flight));
        std::thread::sleep(Duration::from_millis(2));
        MessageSplitter::default().feed(&reply, |m| on_reply(m, &mut counts, &mut in_flight));
        assert!(counts.waited["getMore"] >= Duration::from_millis(2));
        assert!(in_flight.is_empty());
    }
}
