//! The model against the manual's documented replica-set behaviours.

use bson::{doc, Bson, Document};

use super::stream::{read, start_now, Position};
use super::*;

fn request(operation: Operation, read_concern: ReadLevel) -> Request {
    Request {
        after_cluster_time: None,
        secondary_ok: false,
        max_time_ms: None,
        db: "app".into(),
        operation,
        read_concern,
        session: None,
    }
}

fn increment(counter: &str) -> Operation {
    Operation::FindAndModify {
        collection: "counters".into(),
        filter: doc! {"_id": counter},
        update: doc! {"$inc": {"seq": 1_i64}},
        upsert: true,
        new: true,
        sort: None,
    }
}

fn find_counter(counter: &str) -> Operation {
    Operation::Find {
        collection: "counters".into(),
        filter: doc! {"_id": counter},
        projection: None,
        sort: None,
        limit: None,
    }
}

fn seq(response: &Response) -> Option<i64> {
    match response {
        Response::Value(Some(d)) => d.get_i64("seq").ok(),
        Response::Documents(docs) => docs.first().and_then(|d| d.get_i64("seq").ok()),
        _ => None,
    }
}

fn run(cluster: &mut Cluster, node: usize, operation: Operation, level: ReadLevel) -> Executed {
    execute(cluster, node, &request(operation, level)).expect("command")
}

#[test]
fn a_w1_write_is_rolled_back_when_the_primary_fails_before_replicating() {
    let mut c = Cluster::new(3, 0);
    c.isolate(0);
    // The cut-off primary still acknowledges w:1.
    let acked = run(&mut c, 0, increment("o"), ReadLevel::Local);
    assert_eq!(seq(&acked.response), Some(1));
    let new = c.elect().expect("the other two elect");
    assert_ne!(new, 0);
    // The new primary never saw it: the same number is issued again.
    let again = run(&mut c, new, increment("o"), ReadLevel::Local);
    assert_eq!(seq(&again.response), Some(1));
    c.heal(0);
    assert!(c.replicate(0, usize::MAX).unwrap());
    assert_eq!(
        c.rolled_back.len(),
        1,
        "the old primary's write was rolled back"
    );
    let after = run(&mut c, new, find_counter("o"), ReadLevel::Majority);
    assert_eq!(seq(&after.response), Some(1));
}

#[test]
fn a_majority_write_survives_failover() {
    let mut c = Cluster::new(3, 0);
    let write = run(&mut c, 0, increment("o"), ReadLevel::Local);
    let ts = write.last_ts.unwrap();
    assert_eq!(c.write_status(0, write.term, ts), WriteStatus::Pending);
    c.replicate(1, usize::MAX).unwrap();
    assert_eq!(c.write_status(0, write.term, ts), WriteStatus::Committed);
    c.crash(0);
    let new = c.elect().unwrap();
    assert_eq!(
        new, 1,
        "only the member holding the write can win (its oplog is newer)"
    );
    // It holds the write (local), but learned the commit point from member 0 as of its fetch,
    // before member 0 counted it: its majority snapshot is older until it commits an entry of
    // its own term (what `afterClusterTime` waits for).
    let local = run(&mut c, new, find_counter("o"), ReadLevel::Local);
    assert_eq!(seq(&local.response), Some(1));
    let read = run(&mut c, new, find_counter("o"), ReadLevel::Majority);
    assert_eq!(seq(&read.response), None);
    assert!(c.node(new).commit_ts < ts);
    c.replicate(2, usize::MAX).unwrap();
    assert!(c.node(new).commit_ts >= ts);
    let read = run(&mut c, new, find_counter("o"), ReadLevel::Majority);
    assert_eq!(seq(&read.response), Some(1));
}

#[test]
fn local_reads_see_what_majority_reads_do_not_yet() {
    let mut c = Cluster::new(3, 0);
    run(&mut c, 0, increment("o"), ReadLevel::Local);
    let local = run(&mut c, 0, find_counter("o"), ReadLevel::Local);
    let majority = run(&mut c, 0, find_counter("o"), ReadLevel::Majority);
    assert_eq!(seq(&local.response), Some(1));
    assert_eq!(seq(&majority.response), None);
    c.replicate(2, 1).unwrap();
    let majority = run(&mut c, 0, find_counter("o"), ReadLevel::Majority);
    assert_eq!(seq(&majority.response), Some(1));
}

#[test]
fn a_deposed_primary_serves_stale_reads_until_it_steps_down() {
    let mut c = Cluster::new(3, 0);
    run(&mut c, 0, increment("o"), ReadLevel::Local);
    c.replicate_all();
    c.isolate(0);
    let new = c.elect().unwrap();
    run(&mut c, new, increment("o"), ReadLevel::Local);
    c.replicate_all();
    let stale = run(&mut c, 0, find_counter("o"), ReadLevel::Majority);
    assert_eq!(
        seq(&stale.response),
        Some(1),
        "the old primary still answers, with old data"
    );
    c.step_down(0);
    let refused = execute(&mut c, 0, &request(find_counter("o"), ReadLevel::Majority)).unwrap_err();
    assert_eq!(refused.code(), Some(13435));
    let refused = execute(&mut c, 0, &request(increment("o"), ReadLevel::Local)).unwrap_err();
    assert_eq!(refused.code(), Some(10107));
}

#[test]
fn a_retried_statement_applies_once_unless_its_first_attempt_rolled_back() {
    let mut c = Cluster::new(3, 0);
    let mut retryable = request(increment("o"), ReadLevel::Local);
    retryable.session = Some((7, 1));
    let first = execute(&mut c, 0, &retryable).unwrap();
    let retry = execute(&mut c, 0, &retryable).unwrap();
    assert_eq!(seq(&first.response), Some(1));
    assert_eq!(
        seq(&retry.response),
        Some(1),
        "the retry answers the recorded result"
    );
    // The record replicates with the write: a retry on the next primary applies nothing.
    c.replicate_all();
    c.crash(0);
    let new = c.elect().unwrap();
    assert_eq!(
        seq(&execute(&mut c, new, &retryable).unwrap().response),
        Some(1)
    );
    // A write (and its record) lost in a rollback: the retry applies it anew.
    let mut second = request(increment("o"), ReadLevel::Local);
    second.session = Some((7, 2));
    c.isolate(new);
    execute(&mut c, new, &second).unwrap();
    c.restart(0);
    let newer = c.elect().unwrap();
    assert_eq!(
        seq(&execute(&mut c, newer, &second).unwrap().response),
        Some(2)
    );
    // An older transaction number is refused.
    assert_eq!(
        execute(&mut c, newer, &retryable).unwrap_err().code(),
        Some(225)
    );
}

fn insert(id: i32) -> Operation {
    Operation::Insert {
        collection: "docs".into(),
        documents: vec![doc! {"_id": id}],
        ordered: true,
    }
}

fn kinds(events: &[Document]) -> Vec<String> {
    events
        .iter()
        .map(|e| {
            let kind = e.get_str("operationType").unwrap_or("?");
            match e
                .get_document("documentKey")
                .ok()
                .and_then(|k| k.get("_id"))
            {
                Some(Bson::Int32(id)) => format!("{kind}:{id}"),
                _ => kind.to_owned(),
            }
        })
        .collect()
}

#[test]
fn change_streams_deliver_committed_events_in_order_and_resume() {
    let mut c = Cluster::new(3, 0);
    let start = start_now(c.node(0));
    run(&mut c, 0, insert(1), ReadLevel::Local);
    run(&mut c, 0, insert(2), ReadLevel::Local);
    let batch = read(c.node(0), "app.docs", &[], start, 10, None).unwrap();
    assert!(batch.events.is_empty(), "nothing is majority-committed yet");
    c.replicate(1, 1).unwrap();
    let batch = read(c.node(0), "app.docs", &[], start, 10, None).unwrap();
    assert_eq!(kinds(&batch.events), ["insert:1"]);
    c.replicate_all();
    let token = batch.events[0].get_document("_id").unwrap();
    let resumed = read(
        c.node(0),
        "app.docs",
        &[],
        Position::from_token(token).unwrap(),
        10,
        None,
    )
    .unwrap();
    assert_eq!(kinds(&resumed.events), ["insert:2"]);
    // The post-batch token of an empty batch moves on to the commit point.
    let after = Position::from_token(&resumed.post_batch_token).unwrap();
    let quiet = read(
        c.node(0),
        "app.docs",
        &[doc! {"$match": {"operationType": "insert"}}],
        after,
        10,
        None,
    )
    .unwrap();
    assert!(quiet.events.is_empty());
}

#[test]
fn history_is_lost_once_the_oplog_is_truncated_past_the_token() {
    let mut c = Cluster::new(3, 0);
    let start = start_now(c.node(0));
    run(&mut c, 0, insert(1), ReadLevel::Local);
    run(&mut c, 0, insert(2), ReadLevel::Local);
    c.truncate_oplog(0, c.clock());
    assert_eq!(
        c.node(0).truncated_through,
        start.ts,
        "never past the commit point"
    );
    c.replicate_all();
    c.truncate_oplog(0, c.clock());
    let lost = read(c.node(0), "app.docs", &[], start, 10, None).unwrap_err();
    assert_eq!(lost.code(), Some(286));
}

#[test]
fn dropping_the_watched_collection_invalidates_the_stream() {
    let mut c = Cluster::new(3, 0);
    let start = start_now(c.node(0));
    run(&mut c, 0, insert(1), ReadLevel::Local);
    run(
        &mut c,
        0,
        Operation::Drop {
            collection: "docs".into(),
        },
        ReadLevel::Local,
    );
    run(&mut c, 0, insert(2), ReadLevel::Local);
    c.replicate_all();
    let filter = [doc! {"$match": {"operationType": "insert"}}];
    let batch = read(c.node(0), "app.docs", &filter, start, 10, None).unwrap();
    assert_eq!(kinds(&batch.events), ["insert:1", "invalidate"]);
    assert!(batch.invalidated);
    // Starting after the invalidate token: the recreated collection's events.
    let after = Position::from_token(&batch.post_batch_token).unwrap();
    let next = read(c.node(0), "app.docs", &filter, after, 10, None).unwrap();
    assert_eq!(kinds(&next.events), ["insert:2"]);
}

#[test]
fn duplicate_keys_upserts_and_unsupported_commands() {
    let mut c = Cluster::new(1, 0);
    // A guarded upsert whose counter exists but does not match: DuplicateKey (the core's
    // reservation relies on it).
    run(&mut c, 0, increment("o"), ReadLevel::Local);
    let guarded = Operation::FindAndModify {
        collection: "counters".into(),
        filter: doc! {"_id": "o", "seq": {"$lte": 0_i64}},
        update: doc! {"$inc": {"seq": 1_i64}},
        upsert: true,
        new: true,
        sort: None,
    };
    assert_eq!(
        execute(&mut c, 0, &request(guarded, ReadLevel::Local))
            .unwrap_err()
            .code(),
        Some(11000)
    );
    let bad = Operation::Find {
        collection: "counters".into(),
        filter: doc! {"seq": {"$regex": "x"}},
        projection: None,
        sort: None,
        limit: None,
    };
    assert!(matches!(
        execute(&mut c, 0, &request(bad, ReadLevel::Local)),
        Err(ModelError::Unsupported(_))
    ));
}

#[test]
fn with_an_arbiter_and_a_member_down_nothing_commits() {
    // Primary-secondary-arbiter: w:"majority" needs both data members.
    let mut c = Cluster::new(2, 1);
    c.crash(1);
    let write = run(&mut c, 0, increment("o"), ReadLevel::Local);
    assert_eq!(
        c.write_status(0, write.term, write.last_ts.unwrap()),
        WriteStatus::Pending
    );
    c.restart(1);
    c.replicate_all();
    assert_eq!(
        c.write_status(0, write.term, write.last_ts.unwrap()),
        WriteStatus::Committed
    );
}

/// `waitForNumber`'s read: the sidecar's numbering write, applied by a primary that
/// fails before replicating it, is visible to `local` reads there and then rolled back (the
/// document ends with another number); a `majority` read never shows it.
#[test]
fn a_number_read_local_may_roll_back_one_read_majority_may_not() {
    let mut c = Cluster::new(3, 0);
    let document = || Operation::Find {
        collection: "ledger".into(),
        filter: doc! {"_id": "a"},
        projection: None,
        sort: None,
        limit: None,
    };
    let number = |c: &mut Cluster, node, level| {
        let read = run(c, node, document(), level);
        match read.response {
            Response::Documents(docs) => docs.first().and_then(|d| d.get_i64("seq").ok()),
            _ => None,
        }
    };
    run(
        &mut c,
        0,
        Operation::Insert {
            collection: "ledger".into(),
            documents: vec![doc! {"_id": "a"}],
            ordered: true,
        },
        ReadLevel::Local,
    );
    while c.replicate_all() {}
    let statement = |n: i64| Statement {
        filter: doc! {"_id": "a", "seq": {"$exists": false}},
        update: doc! {"$set": {"seq": n}},
        multi: false,
        upsert: false,
    };
    let numbering = |n| Operation::Update {
        collection: "ledger".into(),
        statements: vec![statement(n)],
        ordered: true,
    };
    run(&mut c, 0, numbering(5), ReadLevel::Local);
    assert_eq!(number(&mut c, 0, ReadLevel::Local), Some(5));
    assert_eq!(number(&mut c, 0, ReadLevel::Majority), None);
    c.crash(0);
    let new = c.elect().expect("members 1 and 2 elect one of them");
    run(&mut c, new, numbering(6), ReadLevel::Local);
    while c.replicate_all() {}
    c.restart(0);
    while c.replicate_all() {}
    let on_old = c
        .node(0)
        .data
        .collection("app.ledger")
        .and_then(|l| l.documents().next().and_then(|d| d.get_i64("seq").ok()));
    assert_eq!(on_old, Some(6), "5 was rolled back on the old primary");
    assert_eq!(number(&mut c, new, ReadLevel::Majority), Some(6));
}

#[test]
fn a_write_reports_its_operation_time_the_newest_entry_it_wrote_else_the_member_s() {
    let mut c = Cluster::new(3, 0);
    let set = |id: &str| Operation::Update {
        collection: "docs".into(),
        statements: vec![Statement {
            filter: doc! {"_id": id},
            update: doc! {"$set": {"n": 1_i64}},
            multi: false,
            upsert: true,
        }],
        ordered: true,
    };
    let wrote = run(&mut c, 0, set("a"), ReadLevel::Local);
    let Response::Write { operation_time, .. } = wrote.response else {
        panic!("a write reply")
    };
    assert_eq!(operation_time, wrote.last_ts, "the entry it wrote");
    run(&mut c, 0, increment("o"), ReadLevel::Local);
    // Nothing to change: the member's newest entry (the counter's), as the server reports.
    let noop = run(&mut c, 0, set("a"), ReadLevel::Local);
    assert_eq!(noop.last_ts, None);
    let Response::Write { operation_time, .. } = noop.response else {
        panic!("a write reply")
    };
    assert_eq!(operation_time, Some(c.node(0).last_ts()));
    assert!(operation_time > wrote.last_ts);
}

fn set_status(id: i32, status: &str) -> Operation {
    Operation::Update {
        collection: "docs".into(),
        statements: vec![exec::Statement {
            filter: doc! {"_id": id},
            update: doc! {"$set": {"status": status}},
            multi: false,
            upsert: false,
        }],
        ordered: true,
    }
}

#[test]
fn an_update_lookup_brings_a_version_no_older_than_the_event_and_null_once_gone() {
    let mut c = Cluster::new(1, 0);
    let start = start_now(c.node(0));
    run(&mut c, 0, insert(1), ReadLevel::Local);
    run(&mut c, 0, set_status(1, "draft"), ReadLevel::Local);
    run(&mut c, 0, set_status(1, "issued"), ReadLevel::Local);
    run(&mut c, 0, set_status(1, "cancelled"), ReadLevel::Local);
    let mut seen = std::collections::BTreeSet::new();
    for seed in 0..64 {
        let mut rng = crate::rng::SimRng::new(seed);
        let batch = read(c.node(0), "app.docs", &[], start, 10, Some(&mut rng)).unwrap();
        let updates: Vec<&Document> = batch
            .events
            .iter()
            .filter(|e| e.get_str("operationType") == Ok("update"))
            .collect();
        assert_eq!(updates.len(), 3);
        // The second update's lookup: its own version (issued) or the newer one (cancelled).
        let status = updates[1]
            .get_document("fullDocument")
            .unwrap()
            .get_str("status")
            .unwrap();
        assert!(["issued", "cancelled"].contains(&status), "{status}");
        seen.insert(status.to_owned());
        assert!(updates[1].get_datetime("wallTime").is_ok());
    }
    assert_eq!(
        seen.len(),
        2,
        "both the event's version and a newer one are seen"
    );
    // Without updateLookup an update event has no document.
    let plain = read(c.node(0), "app.docs", &[], start, 10, None).unwrap();
    assert!(plain.events[1].get("fullDocument").is_none());
    // Once the document is gone, every lookup after the deletion finds nothing.
    run(
        &mut c,
        0,
        Operation::Delete {
            collection: "docs".into(),
            filter: doc! {"_id": 1},
            multi: false,
        },
        ReadLevel::Local,
    );
    let gone = (0..64).any(|seed| {
        let mut rng = crate::rng::SimRng::new(seed);
        let batch = read(c.node(0), "app.docs", &[], start, 10, Some(&mut rng)).unwrap();
        // The last update's lookup: its own version, or null (after the deletion).
        batch.events[3].get("fullDocument") == Some(&Bson::Null)
    });
    assert!(gone, "a lookup after the deletion finds nothing");
}
