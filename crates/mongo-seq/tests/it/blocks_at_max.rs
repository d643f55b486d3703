//! Blocks near `max` (js/test/blocks-at-max.test.mjs): a refused `next_many` keeps the numbers
//! in hand and reports what the caller asked for and what is left for it, a grown block never
//! inflates that, and every number up to `max` is handed out, by any number of holders.

use crate::common;

use common::setup;
use mongo_seq::{Error, ErrorKind, SequenceOptions, Sequences};

type TestResult = Result<(), Box<dyn std::error::Error>>;

/// `(requested, available)` of a `SEQUENCE_EXHAUSTED`.
fn refused(error: &Error) -> (u64, u64) {
    assert_eq!(error.kind(), ErrorKind::SequenceExhausted, "{error}");
    (error.requested().unwrap(), error.available().unwrap())
}

#[tokio::test]
async fn a_refused_next_many_keeps_the_numbers_in_hand() -> TestResult {
    let s = setup("max_keeps").await;
    let ids = s
        .seqs()
        .sequence("ids", SequenceOptions::new().block(10).max(12))?;
    assert_eq!(ids.next().await?, 1);
    let error = ids.next_many(20).await.unwrap_err();
    assert_eq!(refused(&error), (20, 11), "{error}");
    assert!(
        error
            .to_string()
            .contains("20 number(s) requested, 11 left"),
        "{error}"
    );
    assert_eq!(ids.current().await?, Some(10), "nothing reserved");
    assert_eq!(ids.next().await?, 2, "2..10 were kept");
    assert_eq!(ids.next_many(10).await?, (3..=12).collect::<Vec<_>>());
    assert_eq!(refused(&ids.next().await.unwrap_err()), (1, 0));
    s.drop_db().await;
    Ok(())
}

#[tokio::test]
async fn a_grown_block_never_inflates_a_refused_request() -> TestResult {
    let s = setup("max_grown").await;
    let ids = s
        .seqs()
        .sequence("ids", SequenceOptions::new().block(10).max(15))?;
    assert_eq!(ids.next().await?, 1);
    assert_eq!(ids.next_many(10).await?, (2..=11).collect::<Vec<_>>());
    // Refills less than a second apart: the block grew (20, then 40) and the process holds 12..15.
    let error = ids.next_many(10).await.unwrap_err();
    assert_eq!(refused(&error), (10, 4), "{error}");
    assert_eq!(ids.next_many(4).await?, [12, 13, 14, 15]);
    assert_eq!(refused(&ids.next_many(4).await.unwrap_err()), (4, 0));
    s.drop_db().await;
    Ok(())
}

#[tokio::test]
async fn two_processes_taking_in_turn_hand_out_every_number_up_to_max() -> TestResult {
    let s = setup("max_two").await;
    for (round, counts) in [[1_u64, 1], [3, 3], [1, 3], [7, 2]].into_iter().enumerate() {
        // Two `Sequences` objects: two processes' blocks of one counter.
        let name = format!("ids{round}");
        let options = || SequenceOptions::new().block(10).max(100);
        let holders = [
            Sequences::new(&s.db).sequence(&name, options())?,
            Sequences::new(&s.db).sequence(&name, options())?,
        ];
        let mut handed = Vec::new();
        let mut refused_once = [false; 2];
        let mut empty = [false; 2];
        for turn in 0..1_000 {
            let index = turn % 2;
            let count = if refused_once[index] {
                1
            } else {
                counts[index]
            };
            match holders[index].next_many(count).await {
                Ok(numbers) => handed.extend(numbers),
                Err(error) => {
                    let (requested, left) = refused(&error);
                    assert!(requested == count && left < count, "{error}");
                    refused_once[index] = true;
                    empty[index] = count == 1;
                    if empty == [true, true] {
                        break;
                    }
                }
            }
        }
        handed.sort_unstable();
        assert_eq!(handed, (1..=100).collect::<Vec<_>>(), "taking {counts:?}");
    }
    s.drop_db().await;
    Ok(())
}
