//! Property tests: arbitrary options, documents, replies and arguments never panic, and a
//! few invariants hold (options round-trip, scoped ids are injective, ranges stay in bounds).

use std::collections::BTreeSet;

use mongo_seq_core::{
    account, audit, check_instant, format_seq, read_date, unnumbered, BlockAllocator, BlockCounter,
    CounterKey, CurrentValue, InsertDates, InsertNumbered, LocalDate, OptimisticInsert, Period,
    Plan, Reply, Reservation, ReserveRequest, ReservedRange, SeedFromMax, SequenceSpec, SetNext,
    Step, Take, MAX_INSTANT_MS, MAX_RUNS, MIN_INSTANT_MS,
};
use proptest::prelude::*;
use serde_json::{json, Map, Value};

use crate::common;
use common::{edge_int, json_value, key, number, text};

/// Options that are usually valid, with random values in every slot.
fn options() -> impl Strategy<Value = Value> {
    (
        prop_oneof![Just(json!("orders")), json_value()],
        prop::option::of(prop_oneof![edge_int().prop_map(Value::from), json_value()]),
        prop::option::of(prop_oneof![edge_int().prop_map(Value::from), json_value()]),
        prop::option::of(edge_int()),
        prop::option::of(edge_int()),
        prop::option::of(prop_oneof![(1u64..100).prop_map(Value::from), json_value()]),
        prop::option::of(prop_oneof![Just(json!(["tenantId"])), json_value()]),
        prop::option::of(prop_oneof![
            text().prop_map(Value::String),
            Just(json!("INV-{yyyy}-{mm}-{dd}-{yy}-{seq:06}")),
            json_value()
        ]),
        periodic(),
    )
        .prop_map(
            |(name, start, step, min, max, block, scope, format, (reset, zone, year_start))| {
                let mut map = Map::new();
                map.insert("name".into(), name);
                let mut put = |k: &str, v: Option<Value>| {
                    if let Some(v) = v {
                        map.insert(k.into(), v);
                    }
                };
                put("start", start);
                put("step", step);
                put("min", min.map(Value::from));
                put("max", max.map(Value::from));
                put("block", block);
                put("scope", scope);
                put("format", format);
                put("reset", reset);
                put("timeZone", zone);
                put("yearStart", year_start);
                Value::Object(map)
            },
        )
}

/// `reset`, `timeZone` and `yearStart`, usually valid.
fn periodic() -> impl Strategy<Value = (Option<Value>, Option<Value>, Option<Value>)> {
    (
        prop::option::of(prop_oneof![
            prop::sample::select(vec!["never", "yearly", "monthly", "daily"]).prop_map(Value::from),
            json_value()
        ]),
        prop::option::of(prop_oneof![
            prop::sample::select(vec!["UTC", "Europe/Paris", "Etc/GMT+5", "Paris"])
                .prop_map(Value::from),
            text().prop_map(Value::String),
            json_value()
        ]),
        prop::option::of(prop_oneof![
            edge_int().prop_map(Value::from),
            (0i64..14).prop_map(Value::from),
            json_value()
        ]),
    )
}

/// Local dates as a host might write them, good and bad.
fn date_text() -> impl Strategy<Value = String> {
    prop_oneof![
        (0u32..10001, 0u32..14, 0u32..33).prop_map(|(y, m, d)| format!("{y:04}-{m:02}-{d:02}")),
        (-20i64..20, 0u32..14, 0u32..33).prop_map(|(y, m, d)| format!("{y}-{m:02}-{d:02}")),
        "[-+0-9]{0,12}(-[0-9]{0,3}){0,3}",
        text(),
    ]
}

fn reply(counter_id: &'static str) -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(json!({"kind": "none"})),
        Just(json!({"kind": "inserted"})),
        Just(json!({"kind": "duplicateKey"})),
        number().prop_map(
            move |seq| json!({"kind": "document", "document": {"_id": counter_id, "seq": seq}})
        ),
        json_value().prop_map(|document| json!({"kind": "document", "document": document})),
        prop::collection::vec(number(), 0..3)
            .prop_map(|values| json!({"kind": "numbers", "values": values})),
        (0u64..3, prop_oneof![Just(11000i64), Just(121)]).prop_map(|(index, code)| json!({
            "kind": "writeResult", "n": index, "nModified": 0,
            "writeErrors": [{"index": index, "code": code, "errmsg": "e"}]
        })),
        json_value(),
    ]
}

/// One step of a client on a [`BlockCounter`].
#[derive(Debug, Clone)]
enum CounterCall {
    Take(u64),
    TakeOne,
    /// A refill for a ticket, at a time (any, out of order too) or none.
    Refill(u64, Option<i64>),
    /// Feed the open refill the answer of a model server (`None`), or another reply.
    Feed(Option<Value>),
    Abandon,
    Discard,
    Ready(u64),
}

/// What a server holding the counter at `last` answers to a reservation's command (it moves
/// `last` as the command says), so that refills never overlap.
fn model_answer(command: &Value, last: &mut i64) -> Value {
    let seq = |update: &Value, op: &str| {
        update[op]["seq"]["$numberLong"]
            .as_str()
            .and_then(|n| n.parse::<i64>().ok())
    };
    let document = |last: i64| json!({"kind": "document", "document": {"_id": "orders", "seq": {"$numberLong": last.to_string()}}});
    match command["op"].as_str() {
        Some("findOneAndUpdate") => {
            if let Some(inc) = seq(&command["update"], "$inc") {
                *last = last.saturating_add(inc);
            } else if let Some(set) = seq(&command["update"], "$set") {
                *last = set;
            }
            document(*last)
        }
        Some("insertOne") => {
            if let Some(set) = command["document"]["seq"]["$numberLong"]
                .as_str()
                .and_then(|n| n.parse().ok())
            {
                *last = set;
            }
            json!({"kind": "inserted"})
        }
        _ => document(*last),
    }
}

fn counter_call() -> impl Strategy<Value = CounterCall> {
    prop_oneof![
        (0u64..4).prop_map(CounterCall::Take),
        Just(CounterCall::TakeOne),
        (0u64..6, prop::option::of(any::<i64>()))
            .prop_map(|(ticket, now)| CounterCall::Refill(ticket, now)),
        prop::option::of(prop_oneof![
            Just(json!({"kind": "none"})),
            Just(json!({"kind": "duplicateKey"})),
            Just(json!({"kind": "inserted"})),
            json_value(),
        ])
        .prop_map(CounterCall::Feed),
        Just(CounterCall::Abandon),
        Just(CounterCall::Discard),
        (0u64..6).prop_map(CounterCall::Ready),
    ]
}

/// Feeds replies until the plan finishes; checks outputs with `check`.
fn drive<P: Plan>(mut plan: P, replies: &[Value], mut check: impl FnMut(&P::Output)) {
    let mut step = plan.current_step();
    for raw in replies {
        match step {
            Ok(Step::Command(_)) => {}
            Ok(Step::Done(ref output)) => {
                check(output);
                return;
            }
            Err(_) => return,
        }
        step = match Reply::from_json(raw) {
            Ok(reply) => plan.feed(reply),
            Err(_) => continue,
        };
    }
}

fn fixed_specs() -> Vec<SequenceSpec> {
    [
        json!({"name": "orders"}),
        json!({"name": "orders", "start": 1000, "max": 1100, "block": 7}),
        json!({"name": "orders", "start": 10, "step": -3, "min": -10}),
        json!({"name": "orders", "start": {"$numberLong": "9223372036854775800"}, "step": 2}),
        json!({"name": "orders", "format": "N{seq:03}"}),
        json!({"name": "orders", "reset": "yearly", "yearStart": 4, "format": "{yy}-{seq}", "scope": ["t"]}),
        json!({"name": "orders", "reset": "daily", "timeZone": "Europe/Paris"}),
    ]
    .iter()
    .map(|raw| SequenceSpec::parse(raw).expect("fixed spec"))
    .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn options_never_panic_and_round_trip(raw in prop_oneof![options(), json_value()]) {
        if let Ok(spec) = SequenceSpec::parse(&raw) {
            let normalized = serde_json::to_value(&spec).expect("serializable");
            prop_assert_eq!(SequenceSpec::parse(&normalized), Ok(spec));
        }
    }

    #[test]
    fn plans_never_panic(
        spec_index in 0usize..5,
        count in prop_oneof![1u64..20, any::<u64>()],
        min_count in prop::option::of(0u64..20),
        value in edge_int(),
        force in any::<bool>(),
        replies in prop::collection::vec(reply("orders"), 0..14),
        document in prop::option::of(json_value()),
    ) {
        let spec = fixed_specs().swap_remove(spec_index);
        let mut request = ReserveRequest::new("orders", count);
        request.min_count = min_count;
        if let Ok(plan) = Reservation::new(&spec, &request) {
            drive(plan, &replies, |range: &ReservedRange| {
                assert!(range.validate().is_ok());
                assert!(spec.min().map_or(true, |min| range.first.min(range.last) >= min));
                assert!(spec.max().map_or(true, |max| range.first.max(range.last) <= max));
                assert!(range.count <= count && range.count >= min_count.unwrap_or(count).max(1));
            });
        }
        if let Ok(plan) = CurrentValue::new(&spec, "orders") { drive(plan, &replies, |_| {}); }
        if let Ok(plan) = SetNext::new(&spec, "orders", value, force) { drive(plan, &replies, |_| {}); }
        if let Ok(plan) = SeedFromMax::new(&spec, "orders", value) { drive(plan, &replies, |_| {}); }
        if let Ok(plan) = OptimisticInsert::new(&spec, "_id", document.as_ref(), Some("code")) { drive(plan, &replies, |_| {}); }
    }

    #[test]
    fn any_request_json_is_handled(raw in json_value()) {
        let _ = ReserveRequest::from_json(&raw);
        let _ = Reply::from_json(&raw);
    }

    #[test]
    fn counter_ids_never_panic(document in json_value(), scope in prop::collection::vec(key(), 0..3)) {
        let raw = json!({"name": "orders", "scope": scope});
        if let Ok(spec) = SequenceSpec::parse(&raw) {
            let _ = spec.counter_id(Some(&document));
        }
    }

    #[test]
    fn scoped_ids_are_injective(
        a in prop_oneof![text().prop_map(Value::String), edge_int().prop_map(Value::from)],
        b in prop_oneof![text().prop_map(Value::String), edge_int().prop_map(Value::from)],
        c in text(),
    ) {
        let spec = SequenceSpec::parse(&json!({"name": "o", "scope": ["x", "y"]})).expect("spec");
        let id1 = spec.counter_id(Some(&json!({"x": a, "y": c})));
        let id2 = spec.counter_id(Some(&json!({"x": b, "y": c})));
        if let (Ok(id1), Ok(id2)) = (id1, id2) {
            prop_assert_eq!(id1 == id2, a == b);
        }
    }

    #[test]
    fn formats_never_panic(
        template in prop_oneof![text(), "[a-z{}]{0,4}\\{(yyyy|yy|mm|dd|seq)\\}[{}a-z]{0,4}"],
        value in edge_int(),
        period in prop::option::of(date_text()),
    ) {
        let period = period.and_then(|text| Period::parse(&text));
        let _ = format_seq(&template, value, period.as_ref());
    }

    #[test]
    fn periods_never_panic(
        date in date_text(),
        period in date_text(),
        year_start in 0i64..14,
        scope in prop::option::of(text()),
        instant in prop_oneof![edge_int(), (MIN_INSTANT_MS - 2..MIN_INSTANT_MS + 2), (MAX_INSTANT_MS - 2..MAX_INSTANT_MS + 2)],
        relaxed in text(),
    ) {
        let _ = LocalDate::parse("date", &date);
        let period = Period::parse(&period);
        let _ = CounterKey::parse(&format!("inv/t={}/{date}", scope.clone().unwrap_or_default()));
        let _ = check_instant("date", None, instant);
        let _ = read_date(&json!({"$date": relaxed}));
        let _ = read_date(&json!({"$date": instant}));
        for reset in ["never", "yearly", "monthly", "daily"] {
            let mut options = json!({"name": "inv", "reset": reset, "format": "{yyyy}{yy}{mm}{dd}{seq}"});
            if reset == "yearly" {
                options["yearStart"] = json!(year_start);
            }
            let Ok(spec) = SequenceSpec::parse(&options) else { continue };
            if let Ok(local) = LocalDate::parse("date", &date) {
                if let Ok(Some(found)) = spec.period_of(local, "date") {
                    // A date lies in its period: on or after its start, before the next.
                    let start = spec.period_start(&found).expect("its own period");
                    let next = spec.next_period_start(&found).expect("its own period");
                    prop_assert!(start.map_or(true, |start| start <= local));
                    prop_assert!(next.map_or(true, |next| local < next));
                    let document = json!({"t": scope.clone()});
                    if let Ok(id) = spec.counter_id_in(Some(&document), Some(&found)) {
                        let key = CounterKey::parse(&id);
                        prop_assert_eq!(key.map(|k| k.period), Ok(Some(found)));
                    }
                    let _ = spec.format_value(instant, Some(&found));
                }
            }
            if let Some(period) = &period {
                let _ = spec.next_period_start(period);
                let _ = spec.period_start(period);
                let _ = spec.counter_id_in(None, Some(period));
            }
        }
    }

    #[test]
    fn audits_never_panic(
        numbers in prop::collection::vec(prop_oneof![number(), json_value()], 0..40),
        start in edge_int(),
        step in edge_int(),
        counter in prop::option::of(edge_int()),
    ) {
        if let Ok(report) = audit(&numbers, start, step, counter) {
            prop_assert!(report.gaps.len() <= 10 && report.duplicates.len() <= 10);
            prop_assert!(report.distinct <= report.total);
        }
    }

    #[test]
    fn accounts_never_panic_and_every_number_is_one_thing(
        held in prop::collection::vec(prop_oneof![number(), json_value()], 0..40),
        ledger in prop::collection::vec(
            (edge_int(), prop_oneof![Just("void"), Just("deleted"), Just("lost")], json_value()).prop_map(
                |(n, kind, reason)| json!({"_id": {"counter": "c", "number": n}, "kind": kind, "reason": reason})
            ),
            0..20,
        ),
        start in edge_int(),
        step in edge_int(),
        counter in prop::option::of(edge_int()),
    ) {
        if let Ok(report) = account(start, step, counter, &held, &ledger) {
            let classified = [report.held, report.voided, report.deleted, report.gaps, report.duplicates]
                .iter()
                .try_fold(0u64, |sum, n| sum.checked_add(*n));
            // (A series of 2^64 numbers saturates its counts.)
            if report.numbers < u64::MAX {
                prop_assert_eq!(classified, Some(report.numbers));
            }
            prop_assert!(report.runs.len() <= MAX_RUNS && report.gap_runs.len() <= MAX_RUNS);
        }
        let _ = unnumbered(&held, &ledger);
    }

    #[test]
    fn block_counters_never_panic_nor_repeat_a_number(
        spec_index in 0usize..5,
        calls in prop::collection::vec(counter_call(), 0..40),
    ) {
        let spec = fixed_specs().swap_remove(spec_index);
        let mut counter = BlockCounter::new(&spec, "orders").expect("a counter of the spec");
        let mut open: Option<(u64, Reservation)> = None;
        let mut handed = BTreeSet::new();
        let mut last = spec.start().saturating_sub(spec.step());
        let mut hand = |values: &mut dyn Iterator<Item = i64>| {
            for value in values {
                assert!(handed.insert(value), "{value} handed out twice");
            }
        };
        for call in calls {
            match call {
                CounterCall::Take(count) => {
                    if let Ok(Take::Numbers(numbers)) = counter.take(count) {
                        hand(&mut numbers.values());
                    }
                }
                CounterCall::TakeOne => hand(&mut counter.take_one().into_iter()),
                CounterCall::Refill(ticket, now) => {
                    if let Ok(Some(refill)) = counter.refill(ticket, now) {
                        open = Some((refill.id, refill.plan));
                    }
                }
                CounterCall::Feed(raw) => {
                    let Some((id, mut plan)) = open.take() else { continue };
                    let raw = raw.unwrap_or_else(|| match plan.current_step() {
                        Ok(Step::Command(command)) => model_answer(&serde_json::to_value(command).expect("json"), &mut last),
                        _ => json!({"kind": "none"}),
                    });
                    match Reply::from_json(&raw).and_then(|reply| plan.feed(reply)) {
                        Ok(Step::Done(range)) => counter.refilled(id, range),
                        Ok(Step::Command(_)) => open = Some((id, plan)),
                        Err(_) => counter.refill_failed(id),
                    }
                }
                CounterCall::Abandon => {
                    if let Some((id, _)) = open.take() {
                        counter.refill_failed(id);
                    }
                }
                CounterCall::Discard => {
                    counter.discard();
                }
                CounterCall::Ready(ticket) => {
                    if let Some(numbers) = counter.ready(ticket) {
                        hand(&mut numbers.values());
                    }
                }
            }
        }
    }

    #[test]
    fn insert_plans_never_panic(
        spec_index in 0usize..7,
        count in 0u64..4,
        replies in prop::collection::vec(prop_oneof![
            reply("orders"),
            prop::collection::vec(date_text(), 0..4).prop_map(|dates| json!({"kind": "localDates", "dates": dates})),
        ], 0..14),
        documents in prop::option::of(prop::collection::vec(prop_oneof![
            json_value(),
            (edge_int(), text()).prop_map(|(ms, t)| json!({"t": t, "at": {"$date": {"$numberLong": ms.to_string()}}})),
            text().prop_map(|at| json!({"t": "a", "at": {"$date": at}})),
        ], 0..4)),
        date_field in prop::option::of(prop_oneof![Just("at".to_owned()), text()]),
        now_ms in prop::option::of(edge_int()),
    ) {
        let spec = fixed_specs().swap_remove(spec_index);
        let format_field = spec.format().map(|_| "code");
        let dates = InsertDates { date_field, now_ms };
        if let Ok(plan) = InsertNumbered::one(&spec, "_id", format_field, documents.as_ref().and_then(|d| d.first()), &dates) {
            drive(plan, &replies, |done| assert_eq!(done.values.len(), 1));
        }
        if let Ok(plan) = InsertNumbered::many(&spec, "n", format_field, count, documents.as_deref(), &dates) {
            drive(plan, &replies, |done| assert_eq!(done.values.len() as u64, count));
        }
    }

    #[test]
    fn block_allocator_never_panics(
        block in 0u64..5,
        ranges in prop::collection::vec((edge_int(), edge_int(), edge_int(), 0u64..5), 0..6),
        takes in prop::collection::vec(0u64..4, 0..12),
    ) {
        if let Ok(mut allocator) = BlockAllocator::new(block) {
            for ((first, last, step, count), take) in ranges.into_iter().zip(takes) {
                let _ = allocator.refill(ReservedRange { first, last, step, count });
                let _ = allocator.take(take);
                let _ = allocator.next();
                let _ = allocator.refill_request("orders", take);
            }
        }
    }

    /// A sequence's counters given any scope, date, clock, local dates and handle.
    #[test]
    fn series_counters_never_panic(
        reset in prop::sample::select(vec!["never", "yearly", "monthly", "daily"]),
        scoped in any::<bool>(),
        calls in prop::collection::vec((0u8..7, json_value(), edge_int(), edge_int(), prop::collection::vec(date_text(), 0..6)), 0..24),
    ) {
        use mongo_seq_core::{CounterHandle, RouteStep, SeriesCounters};
        let mut options = json!({"name": "inv", "reset": reset});
        if scoped {
            options["scope"] = json!(["t"]);
        }
        let mut series = SeriesCounters::new(&SequenceSpec::parse(&options).expect("a spec")).expect("counters");
        for (op, scope, ms, now, dates) in calls {
            let handle = CounterHandle::from_index(usize::try_from(now.rem_euclid(4)).unwrap_or(0));
            let step = match op {
                0 => series.route_scope(Some(&scope).filter(|s| !s.is_null()), Some(ms), now),
                1 => series.route_scope(Some(&json!({"t": scope})), None, now),
                2 => series.period_at(ms),
                3 => series.answer(dates),
                4 => series.counter(handle).map(|c| { let _ = c.take_one(); RouteStep::Period(None) }),
                5 => series.counter_of(&scope.to_string()).map(|_| RouteStep::Period(None)),
                _ => { series.discard(&scope.to_string()); Ok(RouteStep::Period(None)) }
            };
            if let Ok(RouteStep::Counter { counter, period }) = step {
                prop_assert!(series.counter_ref(counter).is_ok());
                prop_assert_eq!(period.is_some(), reset != "never");
            }
            if let Some(unscoped) = series.unscoped() {
                let _ = series.warm_counter(unscoped, now, ms);
            }
        }
    }
}
