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
            "$setOnInsert": {
                "definition": { "start": { "$numberLong": "1" }, "step": { "$numberLong": "1" } },
                "definitionDigest": "b1992bd103fd143e"
            }
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

// Near the bound: a model of the server, and every number handed out.
mod at_bound;
