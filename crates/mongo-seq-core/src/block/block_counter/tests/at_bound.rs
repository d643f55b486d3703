//! Near the bound: a refused caller keeps nothing and loses nothing, against a model of the
//! server that answers the reservation's commands.

use super::*;

/// A counters collection holding one counter, answering a reservation's commands as a server
/// would (the filter's room condition on `seq`, `$inc`, the `findOne` and the `insertOne`).
#[derive(Default)]
struct Server {
    seq: Option<i64>,
}

impl Server {
    fn long(value: &serde_json::Value) -> i64 {
        value["$numberLong"]
            .as_str()
            .map_or_else(|| value.as_i64().unwrap(), |text| text.parse().unwrap())
    }

    fn answer(&mut self, command: &serde_json::Value) -> Reply {
        let document = |seq: i64| Reply::Document {
            document: json!({ "_id": "c", "seq": { "$numberLong": seq.to_string() } }),
        };
        match command["op"].as_str().unwrap() {
            "findOneAndUpdate" => {
                let condition = &command["filter"]["seq"];
                let fits = self.seq.is_some_and(|seq| {
                    condition.get("$lte").is_none_or(|v| seq <= Self::long(v))
                        && condition.get("$gte").is_none_or(|v| seq >= Self::long(v))
                });
                if !fits {
                    return Reply::None;
                }
                let seq = self
                    .seq
                    .unwrap()
                    .checked_add(Self::long(&command["update"]["$inc"]["seq"]))
                    .unwrap();
                self.seq = Some(seq);
                document(seq)
            }
            "findOne" => self.seq.map_or(Reply::None, document),
            "insertOne" => {
                if self.seq.is_some() {
                    return Reply::DuplicateKey;
                }
                self.seq = Some(Self::long(&command["document"]["seq"]));
                Reply::Inserted
            }
            other => panic!("unexpected command {other}"),
        }
    }

    /// Runs `refill` to its end: the counter hears how it ended; its error, if any.
    fn run(&mut self, counter: &mut BlockCounter, refill: Refill) -> Result<(), SeqError> {
        let Refill { id, mut plan } = refill;
        let mut step = plan.current_step();
        loop {
            match step {
                Ok(Step::Command(command)) => {
                    let command = serde_json::to_value(&command).unwrap();
                    step = plan.feed(self.answer(&command));
                }
                Ok(Step::Done(range)) => {
                    counter.refilled(id, range);
                    return Ok(());
                }
                Err(error) => {
                    counter.refill_failed(id);
                    return Err(error);
                }
            }
        }
    }

    /// `next_many(count)` as a shell runs it: numbers now, or refills until served.
    fn take(
        &mut self,
        counter: &mut BlockCounter,
        count: u64,
        now_ms: i64,
    ) -> Result<Vec<i64>, SeqError> {
        let ticket = match counter.take(count)? {
            Take::Numbers(numbers) => return Ok(numbers.values().collect()),
            Take::Ticket(ticket) => ticket,
        };
        loop {
            if let Some(numbers) = counter.ready(ticket) {
                return Ok(numbers.values().collect());
            }
            let refill = counter
                .refill(ticket, Some(now_ms))?
                .expect("one caller: a refill");
            self.run(counter, refill)?;
        }
    }
}

/// The details of a `SEQUENCE_EXHAUSTED`: (requested, available).
fn refused(error: &SeqError) -> (u64, u64) {
    match error {
        SeqError::SequenceExhausted {
            requested,
            available,
            ..
        } => (*requested, *available),
        other => panic!("expected SEQUENCE_EXHAUSTED, got {other}"),
    }
}

#[test]
fn a_refused_take_keeps_the_numbers_in_hand() {
    let mut c = counter(json!({ "name": "c", "block": 10, "max": 12 }));
    let mut server = Server::default();
    assert_eq!(server.take(&mut c, 1, 0).unwrap(), [1]);
    let error = server.take(&mut c, 20, 10).unwrap_err();
    assert_eq!(refused(&error), (20, 11), "2..10 in hand and 11, 12 left");
    assert!(
        error
            .to_string()
            .contains("20 number(s) requested, 11 left"),
        "{error}"
    );
    assert_eq!(server.seq, Some(10), "nothing reserved");
    assert_eq!(c.take_one(), Some(2), "the numbers in hand were kept");
    assert_eq!(
        server.take(&mut c, 10, 20).unwrap(),
        (3..=12).collect::<Vec<_>>()
    );
    assert_eq!(refused(&server.take(&mut c, 1, 30).unwrap_err()), (1, 0));
}

#[test]
fn a_grown_block_never_inflates_what_a_refusal_reports() {
    let mut c = counter(json!({ "name": "c", "block": 10, "max": 15 }));
    let mut server = Server::default();
    assert_eq!(server.take(&mut c, 1, 0).unwrap(), [1]);
    assert_eq!(
        server.take(&mut c, 10, 10).unwrap(),
        (2..=11).collect::<Vec<_>>()
    );
    // The block grew to 20, then 40: the caller still asked for 10, and 4 are left (in hand).
    let error = server.take(&mut c, 10, 20).unwrap_err();
    assert_eq!(refused(&error), (10, 4));
    assert_eq!(server.take(&mut c, 4, 30).unwrap(), [12, 13, 14, 15]);
    assert_eq!(refused(&server.take(&mut c, 1, 40).unwrap_err()), (1, 0));
}

#[test]
fn a_refused_caller_s_numbers_serve_the_callers_behind_it() {
    let mut c = counter(json!({ "name": "c", "block": 10, "max": 12 }));
    let mut server = Server::default();
    assert_eq!(server.take(&mut c, 1, 0).unwrap(), [1]);
    let many = ticket(c.take(20).unwrap()); // 2..10 now, 11 more to wait for
    let one = ticket(c.take(1).unwrap());
    let refill = c.refill(many, None).unwrap().unwrap();
    let error = server.run(&mut c, refill).unwrap_err();
    assert_eq!(refused(&error), (20, 11));
    assert_eq!(
        values(c.ready(one)),
        [2],
        "first in line after the refused one"
    );
    assert_eq!(c.take_one(), Some(3));
    // A caller behind another that waits for more than is left: its own need is reported.
    let many = ticket(c.take(20).unwrap()); // 4..10 now
    let late = ticket(c.take(2).unwrap());
    let refill = c.refill(late, None).unwrap().unwrap();
    assert_eq!(
        refused(&server.run(&mut c, refill).unwrap_err()),
        (2, 0),
        "the 2 left go to the caller before it first"
    );
    let refill = c.refill(many, None).unwrap().unwrap();
    assert_eq!(refused(&server.run(&mut c, refill).unwrap_err()), (20, 9));
    assert_eq!(
        server.take(&mut c, 9, 0).unwrap(),
        (4..=12).collect::<Vec<_>>()
    );
}

#[test]
fn after_set_next_a_refused_caller_s_numbers_are_a_gap() {
    let mut c = counter(json!({ "name": "c", "block": 10, "max": 12 }));
    let mut server = Server::default();
    assert_eq!(server.take(&mut c, 1, 0).unwrap(), [1]);
    let many = ticket(c.take(20).unwrap()); // 2..10 given to it
    c.discard();
    let refill = c.refill(many, None).unwrap().unwrap();
    assert!(server.run(&mut c, refill).is_err());
    assert_eq!(
        c.take_one(),
        None,
        "numbers from before setNext are never handed out"
    );
}

/// Holders of one counter (processes, or objects of one process) taking in turn, `counts[i]`
/// numbers at a time; once refused, one at a time. Every number up to the bound is handed out,
/// once, before every holder is refused.
fn hand_out_everything(options: &serde_json::Value, counts: &[u64], clock: bool) {
    let mut server = Server::default();
    let mut holders: Vec<BlockCounter> = counts.iter().map(|_| counter(options.clone())).collect();
    // Refused once (taking one at a time since), and refused one number (holding none).
    let mut refused_once = vec![false; counts.len()];
    let mut empty = vec![false; counts.len()];
    let mut handed = Vec::new();
    for turn in 0..10_000_i64 {
        let index = usize::try_from(turn).unwrap().rem_euclid(counts.len());
        let count = if refused_once[index] {
            1
        } else {
            counts[index]
        };
        match server.take(&mut holders[index], count, if clock { turn } else { 0 }) {
            Ok(numbers) => handed.extend(numbers),
            Err(error) => {
                let (requested, left) = refused(&error);
                assert_eq!(requested, count, "{error}");
                assert!(left < requested, "{error}");
                refused_once[index] = true;
                empty[index] = count == 1;
                if empty.iter().all(|done| *done) {
                    break;
                }
            }
        }
    }
    handed.sort_unstable();
    let max = options["max"].as_i64().unwrap();
    assert_eq!(
        handed,
        (1..=max).collect::<Vec<_>>(),
        "{options} taking {counts:?}"
    );
}

#[test]
fn every_number_up_to_max_is_handed_out_with_any_holders_and_growth() {
    for options in [
        json!({ "name": "c", "max": 100, "block": 10 }),
        json!({ "name": "c", "max": 97, "block": 7, "maxBlock": 50 }),
        json!({ "name": "c", "max": 100, "block": 10, "refillAhead": true }),
    ] {
        for counts in [
            &[1, 1][..],
            &[3, 3],
            &[1, 3],
            &[5, 1, 2],
            &[7, 2],
            &[20, 1],
            &[4, 4, 4, 4],
        ] {
            for clock in [true, false] {
                hand_out_everything(&options, counts, clock);
            }
        }
    }
}
