use super::*;
use crate::protocol::plan::Plan;
use serde_json::json;

fn spec(options: Value) -> SequenceSpec {
    SequenceSpec::parse(&options).unwrap()
}

fn command(step: Result<Step<InsertOutcome>, SeqError>) -> Value {
    match step.unwrap() {
        Step::Command(command) => serde_json::to_value(command).unwrap(),
        Step::Done(done) => panic!("done early: {done:?}"),
    }
}

fn numbers(values: &[i64]) -> Reply {
    Reply::Numbers {
        values: values.to_vec(),
    }
}

#[test]
fn one_retries_a_taken_number_with_the_next() {
    let spec = spec(json!({ "name": "users", "format": "U{seq}" }));
    let mut plan =
        InsertNumbered::one(&spec, "_id", Some("code"), None, &InsertDates::default()).unwrap();
    assert_eq!(
        command(plan.current_step()),
        json!({ "op": "take", "counterId": "users", "count": 1 })
    );
    let insert = command(plan.feed(numbers(&[1])));
    assert_eq!(
        insert["fields"],
        json!({ "_id": { "$numberLong": "1" }, "code": "U1" })
    );
    assert_eq!(insert["duplicateKeyOn"], "_id");
    command(plan.feed(Reply::DuplicateKey));
    command(plan.feed(numbers(&[2])));
    let Ok(Step::Done(done)) = plan.feed(Reply::Inserted) else {
        panic!("done")
    };
    assert_eq!(done.values, [2]);
    assert_eq!(done.formatted, Some(vec!["U2".to_owned()]));
}

#[test]
fn many_groups_by_scope_and_renumbers_from_the_refused_document() {
    let spec = spec(json!({ "name": "inv", "scope": ["t"] }));
    let docs = [
        json!({ "t": "a" }),
        json!({ "t": "b" }),
        json!({ "t": "a" }),
    ];
    let mut plan =
        InsertNumbered::many(&spec, "n", None, 3, Some(&docs), &InsertDates::default()).unwrap();
    assert_eq!(command(plan.current_step())["counterId"], "inv/t=a");
    assert_eq!(command(plan.feed(numbers(&[1, 2])))["counterId"], "inv/t=b");
    let insert = command(plan.feed(numbers(&[1])));
    assert_eq!(insert["first"], 0);
    assert_eq!(insert["fields"][2], json!({ "n": { "$numberLong": "2" } }));
    let refused = Reply::WriteResult(crate::WriteResult {
        n: 1,
        write_errors: vec![crate::WriteError {
            index: 1,
            code: 11000,
            errmsg: "dup".to_owned(),
        }],
        ..Default::default()
    });
    let take = command(plan.feed(refused));
    assert_eq!(take["counterId"], "inv/t=b", "the first document is in");
    let take = command(plan.feed(numbers(&[2])));
    assert_eq!(
        (take["counterId"].clone(), take["count"].clone()),
        (json!("inv/t=a"), json!(1))
    );
    let insert = command(plan.feed(numbers(&[3])));
    assert_eq!(insert["first"], 1);
    let Ok(Step::Done(done)) = plan.feed(Reply::WriteResult(crate::WriteResult {
        n: 2,
        ..Default::default()
    })) else {
        panic!("done")
    };
    assert_eq!(done.values, [1, 2, 3]);
    assert_eq!(done.formatted, None);
}

#[test]
fn gives_up_after_max_retries_and_checks_before_taking() {
    let spec_ = spec(json!({ "name": "users" }));
    let mut plan = InsertNumbered::one(&spec_, "_id", None, None, &InsertDates::default()).unwrap();
    let mut step = plan.current_step();
    for attempt in 1..=MAX_RETRIES {
        command(step);
        command(plan.feed(numbers(&[i64::from(attempt)])));
        step = plan.feed(Reply::DuplicateKey);
    }
    assert_eq!(step.unwrap_err().code(), "TOO_MANY_RETRIES");
    let scoped = spec(json!({ "name": "inv", "scope": ["t"] }));
    let docs = [json!({ "t": "a" }), json!({})];
    let error = InsertNumbered::many(&scoped, "n", None, 2, Some(&docs), &InsertDates::default())
        .unwrap_err();
    assert_eq!(error.code(), "MISSING_SCOPE_FIELD");
    let Ok(Step::Done(done)) =
        InsertNumbered::many(&spec_, "n", None, 0, None, &InsertDates::default())
            .unwrap()
            .current_step()
    else {
        panic!("nothing to insert")
    };
    assert!(done.values.is_empty());
}

fn dates(dates: &[&str]) -> Reply {
    Reply::LocalDates {
        dates: dates.iter().map(|d| (*d).to_owned()).collect(),
    }
}

#[test]
fn periodic_inserts_ask_for_dates_and_group_by_scope_and_period() {
    let spec = spec(json!({
        "name": "inv", "scope": ["t"], "reset": "yearly", "timeZone": "Europe/Paris",
        "format": "INV-{yyyy}-{seq:03}"
    }));
    let at = |ms: i64| json!({ "$date": { "$numberLong": ms.to_string() } });
    let docs = [
        json!({ "t": "a", "at": at(1_767_222_000_000) }),
        json!({ "t": "a", "at": { "$date": "2025-12-31T22:59:59.999Z" } }),
        json!({ "t": "b", "at": at(1_767_222_000_000) }),
        json!({ "t": "a", "at": at(1_767_222_000_001) }),
    ];
    let by_field = InsertDates {
        date_field: Some("at".to_owned()),
        now_ms: Some(0),
    };
    let mut plan =
        InsertNumbered::many(&spec, "n", Some("code"), 4, Some(&docs), &by_field).unwrap();
    assert_eq!(
        command(plan.current_step()),
        json!({ "op": "localDates", "timeZone": "Europe/Paris",
                "instants": [1_767_222_000_000i64, 1_767_221_999_999i64, 1_767_222_000_000i64, 1_767_222_000_001i64] })
    );
    let take = command(plan.feed(dates(&[
        "2026-01-01",
        "2025-12-31",
        "2026-01-01",
        "2026-01-01",
    ])));
    assert_eq!(
        take,
        json!({ "op": "take", "counterId": "inv/t=a/2026", "count": 2 })
    );
    let take = command(plan.feed(numbers(&[1, 2])));
    assert_eq!(take["counterId"], "inv/t=a/2025");
    let take = command(plan.feed(numbers(&[7])));
    assert_eq!(take["counterId"], "inv/t=b/2026");
    let insert = command(plan.feed(numbers(&[1])));
    assert_eq!(
        insert["fields"],
        json!([
            { "n": { "$numberLong": "1" }, "code": "INV-2026-001", "nPeriod": "2026" },
            { "n": { "$numberLong": "7" }, "code": "INV-2025-007", "nPeriod": "2025" },
            { "n": { "$numberLong": "1" }, "code": "INV-2026-001", "nPeriod": "2026" },
            { "n": { "$numberLong": "2" }, "code": "INV-2026-002", "nPeriod": "2026" },
        ])
    );
    let Ok(Step::Done(done)) = plan.feed(Reply::WriteResult(crate::WriteResult {
        n: 4,
        ..Default::default()
    })) else {
        panic!("done")
    };
    assert_eq!(done.formatted.unwrap()[1], "INV-2025-007");
}

#[test]
fn without_a_date_field_one_instant_for_the_call() {
    let spec = spec(json!({ "name": "t", "reset": "monthly" }));
    let mut plan =
        InsertNumbered::one(&spec, "n", None, Some(&json!({})), &InsertDates::now(-1)).unwrap();
    assert_eq!(
        command(plan.current_step()),
        json!({ "op": "localDates", "timeZone": "UTC", "instants": [-1] })
    );
    let take = command(plan.feed(dates(&["1969-12-31"])));
    assert_eq!(
        take,
        json!({ "op": "take", "counterId": "t/1969-12", "count": 1 })
    );
    let mut many = InsertNumbered::many(&spec, "n", None, 3, None, &InsertDates::now(0)).unwrap();
    command(many.current_step());
    let take = command(many.feed(dates(&["1970-01-01"])));
    assert_eq!(
        take,
        json!({ "op": "take", "counterId": "t/1970-01", "count": 3 })
    );
    // A shell that answers with the wrong number of dates is refused.
    let mut plan = InsertNumbered::one(&spec, "n", None, None, &InsertDates::now(0)).unwrap();
    assert_eq!(
        plan.feed(dates(&[])).unwrap_err().code(),
        "UNEXPECTED_REPLY"
    );
}

#[test]
fn bad_dates_are_refused_before_anything_is_taken() {
    let yearly = spec(json!({ "name": "inv", "reset": "yearly" }));
    let field = |name: &str| InsertDates {
        date_field: Some(name.to_owned()),
        now_ms: None,
    };
    let docs = [
        json!({ "at": { "$date": "2026-01-01T00:00:00Z" } }),
        json!({ "at": "2026-01-01" }),
    ];
    let error = InsertNumbered::many(&yearly, "n", None, 2, Some(&docs), &field("at")).unwrap_err();
    assert_eq!(
        (error.code(), error.details()),
        (
            "INVALID_DATE",
            Some(json!({ "argument": "dateField", "index": 1 }))
        )
    );
    assert!(error.to_string().contains("`at` is not a date"), "{error}");
    let error =
        InsertNumbered::one(&yearly, "n", None, Some(&json!({})), &field("at")).unwrap_err();
    assert_eq!(
        error.details(),
        Some(json!({ "argument": "dateField", "index": 0 }))
    );
    let error = InsertNumbered::many(&yearly, "n", None, 2, None, &field("at")).unwrap_err();
    assert_eq!(error.option_name(), Some("docs"));
    let error = InsertNumbered::one(&yearly, "n", None, None, &InsertDates::default()).unwrap_err();
    assert_eq!(
        (error.code(), error.option_name()),
        ("INVALID_ARGUMENT", Some("now"))
    );
    let error =
        InsertNumbered::one(&yearly, "n", None, None, &InsertDates::now(i64::MAX)).unwrap_err();
    assert_eq!(
        (error.code(), error.option_name()),
        ("INVALID_DATE", Some("date"))
    );
    let plain = spec(json!({ "name": "p" }));
    let error = InsertNumbered::one(&plain, "n", None, None, &field("at")).unwrap_err();
    assert_eq!(
        (error.code(), error.option_name()),
        ("INVALID_ARGUMENT", Some("dateField"))
    );
    let error = InsertNumbered::one(&yearly, "n", None, None, &field("n")).unwrap_err();
    assert_eq!(error.option_name(), Some("dateField"));
    // Fiscal year 10000: the date of the document is named.
    let fiscal = spec(json!({ "name": "f", "reset": "yearly", "yearStart": 7 }));
    let docs = vec![json!({ "at": { "$date": "2026-01-01T00:00:00Z" } }); 2];
    let mut plan = InsertNumbered::many(&fiscal, "n", None, 2, Some(&docs), &field("at")).unwrap();
    let error = plan.feed(dates(&["2026-01-01", "9999-07-01"])).unwrap_err();
    assert_eq!(
        (error.code(), error.details()),
        (
            "INVALID_DATE",
            Some(json!({ "argument": "dateField", "index": 1 }))
        )
    );
}
