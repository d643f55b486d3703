//! A gapless completion vacates a number before it gives it: with a condition, a
//! document counted gone (unnumbered, no longer matching) can match again, and the numbers after
//! it then move up; the ordered `update` must move the last one first.

use mongo_seq_core::{plan_completion, Holds, Intent, SequenceSpec};
use serde_json::{json, Value};

fn long(n: i64) -> Holds {
    Holds::Number(n)
}

#[test]
fn numbers_moving_up_are_written_last_first_and_moving_down_first_first() {
    let spec = SequenceSpec::parse(&json!({ "name": "credits" })).unwrap();
    let intent = Intent {
        first: 1,
        count: 3,
        ids: vec![json!("a"), json!("b"), json!("c")],
        epoch: 1,
    };
    // `a` was counted gone (b got 1, c got 2) and is back: b 1→2 and c 2→3 before a takes 1.
    let back = vec![
        (json!("a"), Holds::Nothing),
        (json!("b"), long(1)),
        (json!("c"), long(2)),
    ];
    let completion = plan_completion(&spec, None, &intent, &back, &[]).unwrap();
    let order: Vec<(&Value, i64)> = completion
        .assignments
        .iter()
        .map(|a| (&a.id, a.number))
        .collect();
    assert_eq!(
        order,
        [(&json!("c"), 3), (&json!("b"), 2), (&json!("a"), 1)]
    );
    // `a` is gone: b 2→1 first, then c 3→2 (the intent's order).
    let gone = vec![(json!("b"), long(2)), (json!("c"), long(3))];
    let completion = plan_completion(&spec, None, &intent, &gone, &[]).unwrap();
    let order: Vec<(&Value, i64)> = completion
        .assignments
        .iter()
        .map(|a| (&a.id, a.number))
        .collect();
    assert_eq!(order, [(&json!("b"), 1), (&json!("c"), 2)]);
}
