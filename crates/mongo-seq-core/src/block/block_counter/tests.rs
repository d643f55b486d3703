use super::*;
use crate::protocol::plan::{Plan, Step};
use crate::protocol::reply::Reply;
use serde_json::json;

fn counter(options: serde_json::Value) -> BlockCounter {
    let spec = SequenceSpec::parse(&options).unwrap();
    BlockCounter::new(&spec, spec.name()).unwrap()
}

fn ticket(take: Take) -> u64 {
    match take {
        Take::Ticket(ticket) => ticket,
        Take::Numbers(numbers) => panic!("expected a ticket, got {numbers:?}"),
    }
}

fn values(numbers: Option<Numbers>) -> Vec<i64> {
    numbers.expect("served").values().collect()
}

/// Runs a refill against a counter document holding `last` before it.
fn complete(counter: &mut BlockCounter, refill: Refill, last: i64) -> ReservedRange {
    let Refill { id, mut plan } = refill;
    let Ok(Step::Command(command)) = plan.current_step() else {
        panic!("a reservation starts with a command")
    };
    let increment = serde_json::to_value(&command).unwrap()["update"]["$inc"]["seq"]["$numberLong"]
        .as_str()
        .unwrap()
        .parse::<i64>()
        .unwrap();
    let reply = Reply::Document {
        document: json!({ "_id": "c", "seq": { "$numberLong": last.checked_add(increment).unwrap().to_string() } }),
    };
    let Ok(Step::Done(range)) = plan.feed(reply) else {
        panic!("one command")
    };
    counter.refilled(id, range);
    range
}

#[test]
fn block_one_coalesces_waiters_in_order() {
    let mut c = counter(json!({ "name": "c" }));
    let tickets: Vec<u64> = (0..3).map(|_| ticket(c.take(1).unwrap())).collect();
    let many = ticket(c.take(2).unwrap());
    let refill = c.refill(tickets[1], None).unwrap().expect("a refill");
    assert!(
        c.refill(tickets[0], None).unwrap().is_none(),
        "one in flight"
    );
    let range = complete(&mut c, refill, 0);
    assert_eq!(
        (range.first, range.last),
        (1, 5),
        "one $inc for all five numbers"
    );
    assert_eq!(values(c.ready(tickets[0])), [1]);
    assert_eq!(values(c.ready(tickets[1])), [2]);
    assert_eq!(values(c.ready(tickets[2])), [3]);
    assert_eq!(values(c.ready(many)), [4, 5]);
    assert_eq!(c.ready(many), None, "collected once");
    assert_eq!(c.take_one(), None, "no gap: nothing left");
}

#[test]
fn larger_blocks_refill_one_block_at_a_time() {
    let mut c = counter(json!({ "name": "c", "block": 2 }));
    let tickets: Vec<u64> = (0..3).map(|_| ticket(c.take(1).unwrap())).collect();
    let refill = c.refill(tickets[0], None).unwrap().unwrap();
    complete(&mut c, refill, 0);
    assert_eq!(values(c.ready(tickets[0])), [1]);
    assert_eq!(values(c.ready(tickets[1])), [2]);
    assert_eq!(c.ready(tickets[2]), None);
    let refill = c.refill(tickets[2], None).unwrap().unwrap();
    complete(&mut c, refill, 2);
    assert_eq!(values(c.ready(tickets[2])), [3]);
    assert_eq!(c.take_one(), Some(4));
    assert_eq!(c.take(0).unwrap(), Take::Numbers(Numbers::default()));
}

#[test]
fn a_partial_block_then_the_rest_and_no_overtaking() {
    let mut c = counter(json!({ "name": "c", "block": 3 }));
    let first = ticket(c.take(1).unwrap());
    let refill = c.refill(first, None).unwrap().unwrap();
    complete(&mut c, refill, 0);
    assert_eq!(values(c.ready(first)), [1]);
    let many = ticket(c.take(4).unwrap()); // 2, 3 now; 2 more from the refill
    let late = ticket(c.take(1).unwrap());
    assert_eq!(c.peek(), None, "nobody overtakes a waiter");
    let refill = c.refill(late, None).unwrap().unwrap();
    complete(&mut c, refill, 3);
    assert_eq!(values(c.ready(many)), [2, 3, 4, 5]);
    assert_eq!(values(c.ready(late)), [6]);
}

#[test]
fn set_next_during_a_refill_drops_its_range() {
    let mut c = counter(json!({ "name": "c", "block": 10 }));
    let waiter = ticket(c.take(1).unwrap());
    let refill = c.refill(waiter, None).unwrap().unwrap();
    assert_eq!(c.discard(), 0);
    complete(&mut c, refill, 0);
    assert_eq!(
        c.ready(waiter),
        None,
        "the block reserved before setNext is dropped"
    );
    let refill = c
        .refill(waiter, None)
        .unwrap()
        .expect("the waiter runs a new refill");
    complete(&mut c, refill, 5000);
    assert_eq!(values(c.ready(waiter)), [5001]);
}

#[test]
fn a_failed_refill_fails_the_waiter_that_ran_it() {
    let mut c = counter(json!({ "name": "c" }));
    let a = ticket(c.take(1).unwrap());
    let b = ticket(c.take(1).unwrap());
    let refill = c.refill(b, None).unwrap().unwrap();
    c.refill_failed(refill.id);
    assert!(
        c.refill(b, None).is_err(),
        "b gave up: its ticket is no longer known"
    );
    let refill = c.refill(a, None).unwrap().unwrap();
    assert_eq!(
        serde_json::to_value(refill.plan.current_step().unwrap()).unwrap()["command"]["update"],
        json!({
            "$inc": { "seq": { "$numberLong": "1" } },
            "$set": { "definition": { "start": { "$numberLong": "1" }, "step": { "$numberLong": "1" } } }
        }),
        "a alone now"
    );
}

#[test]
fn refill_ahead_keeps_numbers_in_order_and_holds_at_most_a_block_and_a_half() {
    let mut c = counter(json!({ "name": "c", "block": 10, "refillAhead": true }));
    let first = ticket(c.take(1).unwrap());
    let refill = c.refill(first, None).unwrap().unwrap();
    complete(&mut c, refill, 0);
    let mut seen = values(c.ready(first));
    let mut last = 10;
    for _ in 0..100 {
        let value = match c.take_one() {
            Some(value) => value,
            None => {
                let Take::Numbers(numbers) = c.take(1).unwrap() else {
                    panic!("the block ahead is back before the block runs dry here")
                };
                let value: Vec<i64> = numbers.values().collect();
                if let Some(refill) = c.refill_ahead(None) {
                    assert!(c.refill_ahead(None).is_none(), "one in flight");
                    let held = c.block.remaining();
                    assert!(held * 2 <= 10, "started at half a block: {held} left");
                    let range = complete(&mut c, refill, last);
                    last = range.last;
                    assert!(held + range.count <= 15, "at most a block and a half held");
                }
                value[0]
            }
        };
        seen.push(value);
    }
    assert_eq!(
        seen,
        (1..=101).collect::<Vec<_>>(),
        "no gap, no repeat, in order"
    );
}

#[test]
fn set_next_drops_the_range_ahead_and_the_refill_ahead_in_flight() {
    let mut c = counter(json!({ "name": "c", "block": 4, "refillAhead": true }));
    let first = ticket(c.take(3).unwrap());
    let refill = c.refill(first, None).unwrap().unwrap();
    complete(&mut c, refill, 0);
    assert_eq!(values(c.ready(first)), [1, 2, 3]);
    let ahead = c.refill_ahead(None).expect("one number left of 4: due");
    complete(&mut c, ahead, 4);
    assert_eq!(c.discard(), 5, "4 in hand, 5..8 ahead");
    let late = c.refill_ahead(None).expect("due again: nothing held");
    assert_eq!(c.discard(), 0);
    complete(&mut c, late, 8);
    assert_eq!(
        c.take_one(),
        None,
        "the refill from before setNext was dropped"
    );
}

#[test]
fn a_withdrawn_caller_leaves_the_queue_and_its_refill_serves_the_others() {
    let mut c = counter(json!({ "name": "c", "block": 3 }));
    let first = ticket(c.take(1).unwrap());
    let refill = c.refill(first, None).unwrap().unwrap();
    complete(&mut c, refill, 0);
    assert_eq!(values(c.ready(first)), [1]);
    let gone = ticket(c.take(4).unwrap()); // 2, 3 from the block, 2 more to wait for
    let stays = ticket(c.take(1).unwrap());
    let refill = c.refill(gone, None).unwrap().unwrap();
    assert_eq!(c.withdraw(gone), 2, "2 and 3 were its own: a gap");
    assert_eq!(c.withdraw(gone), 0, "withdrawn once");
    complete(&mut c, refill, 3);
    assert_eq!(
        values(c.ready(stays)),
        [4],
        "the refill it started serves the next in line"
    );
    assert_eq!(c.take_one(), Some(5), "the rest stays in the block");
    let served = ticket(c.take(2).unwrap()); // 6 now, 1 to wait for
    let refill = c.refill(served, None).unwrap().unwrap();
    complete(&mut c, refill, 6);
    assert_eq!(
        c.withdraw(served),
        2,
        "served but never collected: 6 and 7 dropped"
    );
    assert_eq!(c.ready(served), None);
    assert_eq!(c.take_one(), Some(8));
}

/// Takes the whole block in hand and refills at `now_ms` (a counter at `last` before it):
/// how many numbers the refill reserved.
fn drain_and_refill(c: &mut BlockCounter, now_ms: Option<i64>, last: i64) -> u64 {
    while c.take_one().is_some() {}
    let waiter = ticket(c.take(1).unwrap());
    let refill = c.refill(waiter, now_ms).unwrap().expect("a refill");
    let range = complete(c, refill, last);
    assert_eq!(c.ready(waiter).map(|n| n.count()), Some(1));
    range.count
}

#[test]
fn the_block_grows_under_load_and_shrinks_back() {
    let mut c = counter(json!({ "name": "c", "block": 10, "maxBlock": 40 }));
    let mut last = 0;
    let mut sizes = Vec::new();
    // Refills 100 ms apart: 10, 20, 40, 40 (the cap); then 1.5 s: kept; then 2.5 s apart: halved.
    for now in [0, 100, 200, 300, 1_800, 4_300, 6_800, 9_300] {
        let count = drain_and_refill(&mut c, Some(now), last);
        last += i64::try_from(count).unwrap();
        sizes.push(count);
    }
    assert_eq!(sizes, [10, 20, 40, 40, 40, 20, 10, 10]);
    assert_eq!(c.block_size(), 10);
}

#[test]
fn the_block_keeps_its_size_without_a_clock_at_block_one_or_at_max_block() {
    for (options, clock) in [
        (json!({ "name": "c", "block": 10 }), false),
        (json!({ "name": "c", "block": 10, "maxBlock": 10 }), true),
    ] {
        let mut c = counter(options);
        let mut last = 0;
        for now in 0..5 {
            let count = drain_and_refill(&mut c, clock.then_some(now), last);
            assert_eq!(count, 10);
            last += 10;
        }
    }
    // Block 1 holds nothing between calls: each refill is what the waiters asked for.
    let mut c = counter(json!({ "name": "c" }));
    for now in 0..5 {
        assert_eq!(drain_and_refill(&mut c, Some(now), now), 1);
    }
    // A clock that goes backwards or jumps to the extremes only moves the size within bounds.
    let mut c = counter(json!({ "name": "c", "block": 10 }));
    let mut last = 0;
    for now in [i64::MAX, i64::MIN, 0, -5, i64::MAX] {
        let count = drain_and_refill(&mut c, Some(now), last);
        assert!((10..=100).contains(&count), "{count}");
        last += i64::try_from(count).unwrap();
    }
}

#[test]
fn a_refill_ahead_grows_with_the_block() {
    let mut c = counter(json!({ "name": "c", "block": 4, "refillAhead": true }));
    assert_eq!(drain_and_refill(&mut c, Some(0), 0), 4);
    // Half of the grown block left: a refill ahead, 100 ms later, reserves 8.
    while c.peek().is_some() {
        c.take_one();
    }
    assert!(matches!(c.take(1).unwrap(), Take::Numbers(_)));
    let ahead = c.refill_ahead(Some(100)).expect("due");
    assert_eq!(complete(&mut c, ahead, 4).count, 8);
    assert_eq!(c.block_size(), 8);
}

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
