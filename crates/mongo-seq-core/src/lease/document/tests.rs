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
        incarnation: None,
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
            incarnation: None,
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

fn with_incarnation(held: Option<i64>, now: i64, incarnation: &str) -> LeaseRequest {
    LeaseRequest {
        incarnation: Some(incarnation.into()),
        ..request(held, now)
    }
}

fn doc_of(owner: &str, incarnation: Option<&str>, epoch: i64, expires: i64) -> Reply {
    let mut lease = json!({"owner": owner, "epoch": epoch, "expiresAt": expires});
    if let Some(incarnation) = incarnation {
        lease["incarnation"] = json!(incarnation);
    }
    Reply::Document {
        document: json!({"_id": "t", "lease": lease}),
    }
}

#[test]
fn another_process_with_my_owner_id_is_busy_until_its_lease_expires_or_it_is_proved_gone() {
    // Live twin (another incarnation), or a lease written without one: busy, never reclaimed.
    for stored in [Some("p1"), None] {
        let mut plan = Lease::new(&with_incarnation(None, 5000, "p2")).unwrap();
        let (commands, out) = run(&mut plan, vec![doc_of("me", stored, 4, 5001)]);
        assert_eq!(commands.len(), 1, "nothing written");
        assert_eq!(
            out.unwrap(),
            LeaseOutcome::Busy {
                owner: "me".into(),
                epoch: 4,
                expires_at_ms: 5001,
                process: None,
                incarnation: stored.map(str::to_owned),
            }
        );
    }
    // Expired, or its holder proved gone: taken over like anyone's, the new incarnation stored.
    let mut gone = with_incarnation(None, 5000, "p2");
    gone.holder_gone = Some(LeaseHolder {
        owner: "me".into(),
        epoch: 4,
    });
    for (request, expires) in [(with_incarnation(None, 5000, "p2"), 5000), (gone, 9000)] {
        let mut plan = Lease::new(&request).unwrap();
        let (commands, out) = run(
            &mut plan,
            vec![
                doc_of("me", Some("p1"), 4, expires),
                doc_of("me", Some("p2"), 5, 6000),
            ],
        );
        assert!(matches!(
            out.unwrap(),
            LeaseOutcome::Held {
                epoch: 5,
                acquired: true,
                ..
            }
        ));
        let Command::FindOneAndUpdate { filter, update, .. } = &commands[1] else {
            panic!()
        };
        assert_eq!(filter["lease.expiresAt"], ejson::long(expires));
        assert_eq!(update["$set"]["lease"]["incarnation"], json!("p2"));
    }
}

#[test]
fn this_process_s_own_lease_is_reclaimed_at_once() {
    // Same owner, same incarnation (e.g. read again to raise the epoch): taken at once.
    let mut plan = Lease::new(&with_incarnation(None, 5000, "p2")).unwrap();
    let (_, out) = run(
        &mut plan,
        vec![
            doc_of("me", Some("p2"), 4, 9000),
            doc_of("me", Some("p2"), 5, 6000),
        ],
    );
    assert!(matches!(out.unwrap(), LeaseOutcome::Held { epoch: 5, .. }));
    // A caller without incarnation reclaims a lease without one (as before incarnations).
    let mut plan = Lease::new(&request(None, 5000)).unwrap();
    let (_, out) = run(
        &mut plan,
        vec![doc("me", 4, 9000), doc_of("me", None, 5, 6000)],
    );
    assert!(matches!(out.unwrap(), LeaseOutcome::Held { epoch: 5, .. }));
    // The holder renews whatever incarnation the lease carries: its epoch is its own.
    let mut plan = Lease::new(&with_incarnation(Some(4), 5000, "p2")).unwrap();
    let (_, out) = run(
        &mut plan,
        vec![
            doc_of("me", Some("p2"), 4, 5500),
            doc_of("me", Some("p2"), 4, 6000),
        ],
    );
    assert!(matches!(
        out.unwrap(),
        LeaseOutcome::Held {
            epoch: 4,
            acquired: false,
            ..
        }
    ));
}

#[test]
fn a_malformed_incarnation_is_refused() {
    for incarnation in [json!(""), json!(7), json!({"a": 1})] {
        let mut plan = Lease::new(&request(None, 1)).unwrap();
        let err = plan
            .feed(Reply::Document {
                document: json!({"_id": "t", "lease": {"owner": "me", "epoch": 1, "expiresAt": 1, "incarnation": incarnation}}),
            })
            .unwrap_err();
        assert_eq!(err.code(), "MALFORMED_LEASE");
    }
    let err = Lease::new(&with_incarnation(None, 1, "")).unwrap_err();
    assert_eq!(err.code(), "INVALID_ARGUMENT");
}
