//! A sealed finish and the seals the counter already records.

use serde_json::{json, Value};

use super::*;
use crate::protocol::plan::Plan;
use crate::protocol::reply::WriteResult;
use crate::seal::link::Seal;

fn numbering() -> NumberingSpec {
    NumberingSpec::from_json(&json!({
        "sequence": {"name": "inv", "sealFields": ["total"]},
        "field": "no",
        "gapless": true,
    }))
    .unwrap()
}

/// The counter as a finish of epoch 3 reads it: number 1's seal recorded by a holder of
/// `recorded_by` (`None`: by a version that did not say).
fn counter(recorded_by: Option<i64>) -> CounterSeal {
    CounterSeal {
        present: true,
        head: Some("h1".to_owned()),
        pending: vec![PendingSeal {
            id: json!("a"),
            number: 1,
            seal: Seal {
                hash: "h1".to_owned(),
                previous: None,
            },
        }],
        pending_epoch: recorded_by,
        ..CounterSeal::default()
    }
}

/// The finish of number 2 (document `b`) by a holder of epoch 3.
fn finish(counter: CounterSeal) -> FinishIntent {
    let intent = Intent {
        first: 2,
        count: 1,
        ids: vec![json!("b")],
        epoch: 3,
    };
    let issued = vec![Issued {
        id: json!("b"),
        number: 2,
        document: json!({"_id": "b", "no": 2, "total": 20}),
    }];
    FinishIntent::sealing(&numbering(), "inv", &intent, 2, 3, Some(counter), issued).unwrap()
}

fn command(step: Step<FinishOutcome>) -> Command {
    match step {
        Step::Command(command) => command,
        Step::Done(outcome) => panic!("done early: {outcome:?}"),
    }
}

/// The `_id`s a seals' update writes on.
fn sealed_ids(command: &Command) -> Vec<Value> {
    let Command::Update {
        collection: Collection::Documents,
        updates,
        ..
    } = command
    else {
        panic!("not the seals' update: {command:?}");
    };
    updates.iter().map(|u| u.filter["_id"].clone()).collect()
}

/// The `$set` of the update that clears the intent.
fn finish_set(command: &Command) -> Value {
    let Command::FindOneAndUpdate {
        collection: Collection::Counters,
        update,
        ..
    } = command
    else {
        panic!("not the finish's update: {command:?}");
    };
    update["$set"].clone()
}

fn written(n: u64) -> Reply {
    Reply::WriteResult(WriteResult {
        n,
        n_modified: n,
        ..WriteResult::default()
    })
}

#[test]
fn an_earlier_holder_s_recorded_seals_are_written_before_the_finish_replaces_them() {
    // A deposed holder (epoch 2) recorded number 1's seal and never wrote it; a takeover's
    // CompletePending read the counter before: the new holder's finish writes it first.
    for recorded_by in [Some(2), None] {
        let mut plan = finish(counter(recorded_by));
        let first = command(plan.current_step().unwrap());
        assert_eq!(sealed_ids(&first), vec![json!("a")], "{recorded_by:?}");
        let set = finish_set(&command(plan.feed(written(1)).unwrap()));
        assert_eq!(set["seal.pending"][0]["id"], json!("b"));
        assert_eq!(set["seal.pending"][0]["seal"]["previous"], json!("h1"));
        assert_eq!(set["seal.pendingEpoch"], ejson::long(3));
        let last = command(
            plan.feed(Reply::Document {
                document: json!({}),
            })
            .unwrap(),
        );
        assert_eq!(sealed_ids(&last), vec![json!("b")]);
        assert!(matches!(
            plan.feed(written(1)).unwrap(),
            Step::Done(FinishOutcome::Finished)
        ));
    }
}

#[test]
fn a_holder_s_own_recorded_seals_are_not_written_again() {
    // Its previous batch's: written before this finish began (one command per batch).
    let plan = finish(counter(Some(3)));
    let set = finish_set(&command(plan.current_step().unwrap()));
    assert_eq!(set["seal.pending"][0]["id"], json!("b"));
}

/// A counter whose `seal.pendingEpoch` is not an int64 (a string, a double, 2^63, an array) is
/// refused as malformed, naming the field, rather than read as "no epoch" (which would make a
/// finish rewrite seals a later holder recorded).
#[test]
fn a_pending_epoch_that_is_not_an_int64_is_a_malformed_counter() {
    for bad in [
        json!("3"),
        json!(3.5),
        json!({"$numberLong": "9223372036854775808"}),
        json!({"$numberDouble": "NaN"}),
        json!([3]),
    ] {
        let counter = json!({"_id": "inv", "seq": 1, "seal": {"hash": "h1", "pending": [], "pendingEpoch": bad}});
        let error = CounterSeal::read(&counter, "inv").unwrap_err();
        assert_eq!(error.code(), "MALFORMED_COUNTER", "{bad}");
        assert!(error.to_string().contains("pendingEpoch"), "{bad}: {error}");
    }
    let fine = json!({"_id": "inv", "seq": 1, "seal": {"hash": "h1", "pending": [], "pendingEpoch": {"$numberLong": "3"}}});
    assert_eq!(
        CounterSeal::read(&fine, "inv").unwrap().pending_epoch,
        Some(3)
    );
}
