//! How a vector case runs: a plan driven through the case's steps ([`drive`]), or an object's
//! methods called in order (`calls`: a block allocator, a `BlockCounter`).

use super::*;

/// Runs `case` again with every command handed over ([`Plan::take_step`]) instead of lent:
/// the same commands (checked by [`drive`]), outcome and notes as `got` and `trace`'s.
pub(crate) fn handed_over(case: &Value, got: &Outcome, trace: &mut Trace) {
    let mut taking = Trace {
        take: true,
        ..Trace::default()
    };
    let again = run(case, &mut taking);
    let view = |outcome: &Outcome| outcome.as_ref().map_err(SeqError::code).cloned();
    if view(&again) != view(got) || to_json(&taking.notes) != to_json(&trace.notes) {
        trace.problems.push(format!(
            "handed over (take_step): outcome or notes differ: {:?}",
            view(&again)
        ));
    }
    for problem in taking.problems {
        trace
            .problems
            .push(format!("handed over (take_step): {problem}"));
    }
}

/// Drives a plan through the case's steps, collecting its notes; returns the outcome.
pub(crate) fn drive<P: Plan>(
    plan: Result<P, SeqError>,
    steps: &[Value],
    trace: &mut Trace,
) -> Outcome
where
    P::Output: Serialize,
{
    let mut plan = plan?;
    trace.notes.extend(plan.drain_notes());
    let mut step = if trace.take {
        plan.take_step()
    } else {
        plan.current_step()
    };
    for (index, expected) in steps.iter().enumerate() {
        let command = match &step {
            Ok(Step::Command(command)) => to_json(command),
            Ok(Step::Done(output)) => {
                trace.problems.push(format!(
                    "step {index}: plan finished early with {}",
                    to_json(output)
                ));
                return step.map(|_| Value::Null);
            }
            Err(error) => {
                trace.problems.push(format!(
                    "step {index}: plan failed early with {} ({error})",
                    error.code()
                ));
                return Err(error.clone());
            }
        };
        if command != expected["command"] {
            trace.differing.push((index, command.clone()));
            trace.problems.push(format!(
                "step {index}: command differs\n  expected: {}\n  actual:   {}",
                expected["command"], command
            ));
        }
        match Reply::from_json(&expected["reply"]) {
            Ok(reply) => {
                step = if trace.take {
                    plan.feed_and_take(reply)
                } else {
                    plan.feed(reply)
                };
                trace.notes.extend(plan.drain_notes());
            }
            // A reply that does not parse never reaches the plan, which keeps waiting.
            Err(error) => return Err(error),
        }
    }
    // A finished plan reports the same result again and refuses further replies.
    let replay = plan.current_step().map(|s| to_json(StepView::from(&s)));
    let first = step
        .as_ref()
        .map(|s| to_json(StepView::from(s)))
        .map_err(Clone::clone);
    if replay.as_ref().map_err(SeqError::code) != first.as_ref().map_err(SeqError::code) {
        trace
            .problems
            .push("current_step() after the last feed does not repeat the outcome".to_owned());
    }
    match step {
        Ok(Step::Done(output)) => {
            if plan.feed(Reply::None).err().map(|e| e.code()) != Some("UNEXPECTED_REPLY") {
                trace
                    .problems
                    .push("feeding a finished plan must fail with UNEXPECTED_REPLY".to_owned());
            }
            Ok(to_json(output))
        }
        Ok(Step::Command(command)) => {
            trace.problems.push(format!(
                "steps ended but the plan still wants {}",
                to_json(command)
            ));
            Ok(Value::Null)
        }
        Err(error) => Err(error),
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) enum StepView {
    Command(Value),
    Done(Value),
}

impl<T: Serialize> From<&Step<T>> for StepView {
    fn from(step: &Step<T>) -> Self {
        match step {
            Step::Command(command) => Self::Command(to_json(command)),
            Step::Done(output) => Self::Done(to_json(output)),
        }
    }
}

/// The positional arguments of one call of a `calls` case.
pub(crate) struct Args(Vec<Value>);

impl Args {
    fn get(&self, i: usize) -> &Value {
        self.0.get(i).unwrap_or(&Value::Null)
    }

    fn u(&self, i: usize) -> u64 {
        self.get(i)
            .as_u64()
            .unwrap_or_else(|| panic!("argument {i} is not a count"))
    }
}

/// Runs a case's calls in order through `call(method, args)`, comparing each outcome.
pub(crate) fn run_calls(
    calls: &[Value],
    trace: &mut Trace,
    mut call: impl FnMut(&str, &Args) -> Outcome,
) {
    for (index, entry) in calls.iter().enumerate() {
        let args = Args(entry["args"].as_array().cloned().unwrap_or_default());
        let method = entry["method"].as_str().unwrap_or("");
        let got = call(method, &args);
        if let Ok(output) = &got {
            if output.get("command").is_some() && entry.get("output") != Some(output) {
                trace.differing_calls.push((index, output.clone()));
            }
        }
        compare(
            &format!("call {index} {method}"),
            entry,
            &got,
            &mut trace.problems,
        );
    }
}

pub(crate) fn run_block(input: &Value, calls: &[Value], trace: &mut Trace) -> Outcome {
    let block = u64::try_from(int(input, "block")).unwrap_or(0);
    let mut allocator = BlockAllocator::new(block)?;
    run_calls(calls, trace, |method, args| match method {
        "isEmpty" => Ok(json!(allocator.is_empty())),
        "remaining" => Ok(json!(allocator.remaining())),
        "next" => Ok(to_json(allocator.next())),
        "take" => Ok(to_json(allocator.take(args.u(0)))),
        "discard" => Ok(json!(allocator.discard())),
        "refillRequest" => Ok(to_json(
            allocator.refill_request(args.get(0).as_str().unwrap_or(""), args.u(1)),
        )),
        "refill" => {
            let range: ReservedRange =
                serde_json::from_value(args.get(0).clone()).expect("range arg");
            allocator.refill(range).map(|()| Value::Null)
        }
        other => panic!("unknown blockAllocator method {other}"),
    });
    Ok(Value::Null)
}

/// The steps of a refill: `{command}` while it waits for a reply, `{done: null}` once its range
/// went to the counter.
pub(crate) fn refill_step(
    step: Result<Step<ReservedRange>, SeqError>,
) -> Result<(Value, Option<ReservedRange>), SeqError> {
    match step? {
        Step::Command(command) => Ok((json!({ "command": command }), None)),
        Step::Done(range) => Ok((json!({ "done": null }), Some(range))),
    }
}

/// A refill's first step; the refill stays open for `feed`/`abandon` (`null`: none to run).
pub(crate) fn opened(refill: Option<Refill>, open: &mut Option<(u64, Reservation)>) -> Outcome {
    let Some(refill) = refill else {
        return Ok(Value::Null);
    };
    let step = refill_step(refill.plan.current_step()).map(|(view, _)| view);
    *open = Some((refill.id, refill.plan));
    step
}

pub(crate) fn run_counter(input: &Value, calls: &[Value], trace: &mut Trace) -> Outcome {
    let mut counter = BlockCounter::new(&spec(input)?, text(input, "counterId"))?;
    let mut open: Option<(u64, Reservation)> = None;
    run_calls(calls, trace, |method, args| match method {
        "take" => counter.take(args.u(0)).map(to_json),
        "takeOne" => Ok(to_json(counter.take_one())),
        "ready" => Ok(to_json(counter.ready(args.u(0)))),
        "refill" => counter
            .refill(args.u(0), args.get(1).as_i64())
            .and_then(|refill| opened(refill, &mut open)),
        "refillAhead" => opened(counter.refill_ahead(args.get(0).as_i64()), &mut open),
        "feed" => {
            let (id, mut plan) = open.take().expect("feed: no open refill");
            let step =
                Reply::from_json(args.get(0)).and_then(|reply| refill_step(plan.feed(reply)));
            match step {
                Ok((view, Some(range))) => {
                    counter.refilled(id, range);
                    Ok(view)
                }
                Ok((view, None)) => {
                    open = Some((id, plan));
                    Ok(view)
                }
                Err(error) => {
                    counter.refill_failed(id);
                    Err(error)
                }
            }
        }
        "abandon" => {
            let (id, _) = open.take().expect("abandon: no open refill");
            counter.refill_failed(id);
            Ok(Value::Null)
        }
        "discard" => Ok(json!(counter.discard())),
        other => panic!("unknown blockCounter method {other}"),
    });
    Ok(Value::Null)
}

/// A `RouteStep` in the vectors' terms: `{counter, period}`, `{period}`, `{localDates}`.
fn route_view(step: RouteStep) -> Value {
    match step {
        RouteStep::Counter { counter, period } => {
            json!({ "counter": counter.index(), "period": period.map(|p| p.text()) })
        }
        RouteStep::Period(period) => json!({ "period": period.map(|p| p.text()) }),
        RouteStep::LocalDates(instants) => json!({ "localDates": instants }),
    }
}

/// Runs a seriesCounters case's calls: routes (the local dates the core asks for answered from
/// the case, as a host's time-zone data would), and a routed counter's methods by its handle.
pub(crate) fn run_series(input: &Value, calls: &[Value], trace: &mut Trace) -> Outcome {
    let mut series = SeriesCounters::new(&spec(input)?)?;
    let mut open: Option<(CounterHandle, u64, Reservation)> = None;
    let handle =
        |args: &Args| CounterHandle::from_index(usize::try_from(args.u(0)).expect("a handle"));
    run_calls(calls, trace, |method, args| match method {
        "route" => {
            let ms = |i| args.get(i).as_i64();
            let scope = Some(args.get(0)).filter(|s| !s.is_null());
            series
                .route_scope(scope, ms(1), ms(2).expect("nowMs"))
                .map(route_view)
        }
        "periodAt" => series
            .period_at(args.get(0).as_i64().expect("ms"))
            .map(route_view),
        "localDates" => {
            let dates = args.get(0).as_array().expect("dates").iter();
            let dates = dates.map(|d| d.as_str().unwrap_or("").to_owned()).collect();
            series.answer(dates).map(route_view)
        }
        "takeOneNow" => {
            let now = args.get(0).as_i64().expect("nowMs");
            let warm = series
                .unscoped()
                .and_then(|unscoped| series.warm_counter(unscoped, now, 0));
            Ok(to_json(
                warm.and_then(|h| series.counter(h).ok()?.take_one()),
            ))
        }
        "counterOf" => series
            .counter_of(args.get(0).as_str().unwrap_or(""))
            .map(|h| json!(h.index())),
        "counterId" => series
            .counter_ref(handle(args))
            .map(|c| json!(c.counter_id())),
        "take" => series.counter(handle(args))?.take(args.u(1)).map(to_json),
        "ready" => Ok(to_json(series.counter(handle(args))?.ready(args.u(1)))),
        "refill" => {
            let h = handle(args);
            let refill = series.counter(h)?.refill(args.u(1), args.get(2).as_i64())?;
            let mut one = None;
            let view = opened(refill, &mut one);
            open = one.map(|(id, plan)| (h, id, plan));
            view
        }
        "feed" => {
            let (h, id, mut plan) = open.take().expect("feed: no open refill");
            let step =
                Reply::from_json(args.get(0)).and_then(|reply| refill_step(plan.feed(reply)));
            match step {
                Ok((view, Some(range))) => {
                    series.counter(h)?.refilled(id, range);
                    Ok(view)
                }
                Ok((view, None)) => {
                    open = Some((h, id, plan));
                    Ok(view)
                }
                Err(error) => {
                    series.counter(h)?.refill_failed(id);
                    Err(error)
                }
            }
        }
        "discard" => Ok(json!(series.discard(args.get(0).as_str().unwrap_or("")))),
        "discardAll" => Ok(json!(series.discard_all())),
        other => panic!("unknown seriesCounters method {other}"),
    });
    Ok(Value::Null)
}
