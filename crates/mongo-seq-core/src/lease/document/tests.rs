use super::*;
use crate::protocol::plan::Plan;
use crate::sequence::scope::counters_of;

#[test]
fn the_held_filter_names_the_holder_and_its_epoch() {
    assert_eq!(
        held_filter("t", "me", 3),
        json!({"_id": "t", "lease.owner": "me", "lease.epoch": {"$numberLong": "3"}})
    );
}

pub(crate) fn request(held: Option<i64>, now: i64) -> LeaseRequest {
    LeaseRequest {
        lease_id: "t".into(),
        owner: "me".into(),
        now_ms: now,
        ttl_ms: 1000,
        held,
        min_epoch: 0,
        release: false,
        process: None,
        holder_gone: None,
    }
}

pub(crate) fn doc(owner: &str, epoch: i64, expires: i64) -> Reply {
    Reply::Document {
        document: json!({"_id": "t", "lease": {"owner": owner, "epoch": epoch, "expiresAt": expires}}),
    }
}

fn run(plan: &mut Lease, replies: Vec<Reply>) -> (Vec<Command>, Result<LeaseOutcome, SeqError>) {
    let mut commands = Vec::new();
    let mut step = plan.current_step();
    for reply in replies {
        match step {
            Ok(Step::Command(c)) => {
                commands.push(c);
                step = plan.feed(reply);
            }
            other => return (commands, other.map(|_| LeaseOutcome::Released)),
        }
    }
    match step {
        Ok(Step::Done(out)) => (commands, Ok(out)),
        Ok(Step::Command(c)) => panic!("still wants {c:?}"),
        Err(e) => (commands, Err(e)),
    }
}

#[test]
fn first_acquisition_upserts_epoch_one() {
    let mut plan = Lease::new(&request(None, 5000)).unwrap();
    let (commands, out) = run(&mut plan, vec![Reply::None, doc("me", 1, 6000)]);
    assert_eq!(
        out.unwrap(),
        LeaseOutcome::Held {
            epoch: 1,
            expires_at_ms: 6000,
            acquired: true
        }
    );
    let Command::FindOneAndUpdate {
        filter, options, ..
    } = &commands[1]
    else {
        panic!()
    };
    assert_eq!(filter, &json!({"_id": "t", "lease": {"$exists": false}}));
    assert!(options.upsert);
}

#[test]
fn renew_keeps_the_epoch_and_busy_when_someone_else_holds_it() {
    let mut plan = Lease::new(&request(Some(3), 5000)).unwrap();
    let (commands, out) = run(&mut plan, vec![doc("me", 3, 5500), doc("me", 3, 6000)]);
    assert_eq!(
        out.unwrap(),
        LeaseOutcome::Held {
            epoch: 3,
            expires_at_ms: 6000,
            acquired: false
        }
    );
    let Command::FindOneAndUpdate { filter, update, .. } = &commands[1] else {
        panic!()
    };
    assert_eq!(filter["lease.epoch"], ejson::long(3));
    assert_eq!(
        update,
        &json!({"$set": {"lease.expiresAt": ejson::long(6000)}})
    );

    let mut plan = Lease::new(&request(None, 5000)).unwrap();
    let (_, out) = run(&mut plan, vec![doc("other", 3, 5001)]);
    assert_eq!(
        out.unwrap(),
        LeaseOutcome::Busy {
            owner: "other".into(),
            epoch: 3,
            expires_at_ms: 5001,
            process: None,
        }
    );
    // Held 3, but the lease moved on to 4: lost.
    let mut plan = Lease::new(&request(Some(3), 5000)).unwrap();
    let (_, out) = run(&mut plan, vec![doc("other", 4, 9000)]);
    assert!(matches!(out.unwrap(), LeaseOutcome::Busy { epoch: 4, .. }));
    // Even if it expired: a holder that lost its lease does not take it back silently.
    let mut plan = Lease::new(&request(Some(3), 5000)).unwrap();
    let (_, out) = run(&mut plan, vec![doc("other", 4, 10)]);
    assert!(matches!(out.unwrap(), LeaseOutcome::Busy { epoch: 4, .. }));
}

#[test]
fn takeover_after_expiry_bumps_the_epoch_and_retries_a_lost_race() {
    let mut req = request(None, 5000);
    req.min_epoch = 7;
    let mut plan = Lease::new(&req).unwrap();
    let (commands, out) = run(
        &mut plan,
        vec![doc("other", 3, 5000), Reply::None, doc("third", 4, 9000)],
    );
    assert!(matches!(out.unwrap(), LeaseOutcome::Busy { epoch: 4, .. }));
    let Command::FindOneAndUpdate { filter, update, .. } = &commands[1] else {
        panic!()
    };
    assert_eq!(filter["lease.expiresAt"], ejson::long(5000));
    assert_eq!(
        update["$set"]["lease"]["epoch"],
        ejson::long(8),
        "above min_epoch"
    );
}

#[test]
fn malformed_leases_are_refused_without_writing() {
    for lease in [
        json!(5),
        json!({"owner": "x", "epoch": "1", "expiresAt": 1}),
        json!({"epoch": 1, "expiresAt": 1}),
        json!({"owner": "x", "epoch": 0, "expiresAt": 1}),
    ] {
        let mut plan = Lease::new(&request(None, 1)).unwrap();
        let err = plan
            .feed(Reply::Document {
                document: json!({"_id": "t", "lease": lease}),
            })
            .unwrap_err();
        assert_eq!(err.code(), "MALFORMED_LEASE");
    }
}

#[test]
fn release_and_stamp() {
    let mut req = request(Some(2), 1);
    req.release = true;
    let mut plan = Lease::new(&req).unwrap();
    let (commands, out) = run(&mut plan, vec![Reply::None]);
    assert_eq!(out.unwrap(), LeaseOutcome::Released);
    assert!(matches!(&commands[0], Command::FindOneAndUpdate { .. }));
    let (filter, _) = stamp_epoch(&counters_of("orders"), 4);
    assert_eq!(filter["$or"][1]["_id"]["$lt"], json!("orders0"));
}
