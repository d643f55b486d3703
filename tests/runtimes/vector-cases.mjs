// Replays tests/vectors/core.json (and audit.json, seal.json; ledger.json: `runLedgerVectors`) through the Wasm core as JS sees it (the package's `core`
// export): inputs go in as JS values (exact integers as BigInt), outputs come back as JS
// values and are compared, as canonical JSON text, with the expected ones. Mirrors the native
// runner crates/mongo-seq-core/tests/it/vectors/mod.rs, including its plan-protocol checks. Every plan
// is driven twice: through start()/feed() with JS values, and through the text forms the
// package runs (commandJson()/feedJson()), which must give the same commands and outcome.
import { readFileSync } from "node:fs";
import { parseExact, canonical, lineDiff } from "./exact-json.mjs";

export const VECTOR_FILE = new URL("../vectors/core.json", import.meta.url);
/** The audit's vectors (`account`, `unnumbered`), replayed by the same runner. */
export const AUDIT_FILE = new URL("../vectors/audit.json", import.meta.url);
export const LEDGER_FILE = new URL("../vectors/ledger.json", import.meta.url);
/** Sealed series: a link's seal, a series' chain verified; replayed by the same runner. */
export const SEAL_FILE = new URL("../vectors/seal.json", import.meta.url);

/** Runs every case of ledger.json (voids), as `runVectors` does core.json's. */
export function runLedgerVectors(core, vectors = parseExact(readFileSync(LEDGER_FILE, "utf8"))) {
  return runVectors(core, vectors);
}

/** Runs every case; resolves with `{ total, failures: string[] }`. */
export function runVectors(core, vectors = parseExact(readFileSync(VECTOR_FILE, "utf8"))) {
  const failures = [];
  for (const testCase of vectors.cases) {
    const problems = [];
    let outcome;
    try {
      outcome = { output: runCase(core, testCase, problems) };
    } catch (error) {
      if (!isCoreError(error)) problems.push(`threw a non-core error: ${error?.stack ?? error}`);
      outcome = { error };
    }
    const withCalls = ["blockAllocator", "blockCounter", "seriesCounters"].includes(testCase.op);
    if (!withCalls || testCase.error !== undefined) compare("result", testCase, outcome, problems);
    if (problems.length > 0) failures.push(`── ${testCase.name} (${testCase.op})\n${problems.join("\n")}`);
  }
  return { total: vectors.cases.length, failures };
}

function isCoreError(error) {
  return error instanceof Error && error.name === "MongoSeqError" && typeof error.code === "string";
}

/**
 * The spec of a case's `options` (`admin`: the cold module's `SequenceAdmin`, whose plans are
 * the admin paths), freed by the caller's `using`-like try/finally.
 */
function withSpec(core, input, use, admin = false) {
  const spec = admin ? new core.SequenceAdmin(input.options) : new core.SequenceSpec(input.options);
  try {
    return use(spec);
  } finally {
    spec.free();
  }
}

function runCase(core, testCase, problems) {
  const { input, steps = [] } = testCase;
  const optional = (value) => (value === null ? undefined : value);
  switch (testCase.op) {
    case "parseOptions":
      return withSpec(core, input, (spec) => spec.options());
    case "counterId":
      return withSpec(core, input, (spec) => spec.counterId(optional(input.document), optional(input.period)));
    case "formatSeq":
      return core.formatSeq(input.template, input.value, optional(input.period));
    case "audit":
      return core.audit(input.numbers, input.start, input.step, input.counter);
    case "account":
      return core.account(input.start, input.step, input.counter, input.held, input.ledger);
    case "sealLink": {
      const { encoding, hash } = core.sealLink(input.link, input.previous);
      return { encoding, hash };
    }
    case "verifySeries":
      return core.verifySeries(input.series, input.links, input.anchor, input.head);
    case "unnumbered":
      return core.unnumbered(input.documents, input.deadLetters);
    case "reserve":
      return withSpec(core, input, (spec) => drive(() => spec.reserve(input.request), steps, problems));
    case "current":
      return withSpec(core, input, (spec) => drive(() => spec.current(input.counterId), steps, problems));
    case "void":
      return withSpec(core, input, (spec) => drive(() => spec.voidNumbers(input.request), steps, problems), true);
    case "setNext":
      return withSpec(core, input, (spec) => drive(() => spec.setNext(input.counterId, input.next, input.force === true), steps, problems), true);
    case "adoptDefinition":
      return withSpec(core, input, (spec) => drive(() => spec.adoptDefinition(input.counterId, optional(input.gapless)), steps, problems), true);
    case "rewindAll":
      return withSpec(core, input, (spec) => drive(() => spec.rewindAll(input.force === true, optional(input.gapless), optional(input.existing)), steps, problems), true);
    case "checkNotKept":
      return withSpec(core, input, (spec) => drive(() => spec.checkNotKept(), steps, problems), true);
    case "seedFromMax":
      return withSpec(core, input, (spec) => drive(() => spec.seedFromMax(input.counterId, input.value), steps, problems), true);
    case "insertOptimistic":
      return withSpec(core, input, (spec) =>
        drive(() => spec.insertOptimistic(input.field, optional(input.document), optional(input.formatField), optional(input.maxAttempts)), steps, problems),
      );
    case "insertOne":
      return withSpec(core, input, (spec) => drive(() => spec.insertOne(input.field, optional(input.formatField), optional(input.document), optional(input.dateField), optional(input.nowMs)), steps, problems));
    case "insertMany":
      return withSpec(core, input, (spec) =>
        drive(
          () => spec.insertMany(input.field, optional(input.formatField), input.count, optional(input.documents), optional(input.dateField), optional(input.nowMs)),
          steps,
          problems,
        ),
      );
    case "assign":
      return withSpec(core, input, (spec) =>
        drive(
          () => spec.assign(input.field, optional(input.formatField), optional(input.filter), optional(input.sort), optional(input.dateField), optional(input.nowMs)),
          steps,
          problems,
        ),
        true,
      );
    case "counterKey":
      return withSpec(core, input, (spec) => spec.counterKey(input.counterId));
    case "importCounters":
      return drive(() => core.importCounters(input.request), steps, problems);
    case "checkCount":
      return core.checkCount(input.argument, input.value);
    case "checkFieldPath":
      return core.checkFieldPath(input.argument, input.field) ?? null;
    case "checkInsertFields":
      return withSpec(core, input, (spec) => spec.checkInsertFields(input.field, optional(input.formatField)) ?? null);
    case "blockAllocator":
      return runAllocator(core, input, testCase.calls ?? [], problems);
    case "blockCounter":
      return withSpec(core, input, (spec) => runCounter(spec, input, testCase.calls ?? [], problems));
    case "seriesCounters":
      return withSpec(core, input, (spec) => runSeries(spec, testCase.calls ?? [], problems));
    default:
      throw new Error(`unknown op ${testCase.op}: update the JS vector runner`);
  }
}

/**
 * Drives a plan (made by `make`) through the case's steps, checking each command, like the
 * native runner; then a second one through the text forms, which must agree.
 */
function drive(make, steps, problems) {
  const plan = make();
  let outcome;
  try {
    outcome = { output: driveObjects(plan, steps, problems) };
  } catch (error) {
    outcome = { error };
  }
  driveText(make(), steps, outcome, problems);
  if (outcome.error !== undefined) throw outcome.error;
  return outcome.output;
}

/** The same steps through commandJson()/feedJson(): same commands, same outcome. */
function driveText(plan, steps, expected, problems) {
  const mismatch = (what) => problems.push(`text forms: ${what}`);
  try {
    let command = plan.commandJson();
    for (const [index, step] of steps.entries()) {
      if (command === undefined) return mismatch(`finished early at step ${index}`);
      if (canonical(parseExact(command)) !== canonical(step.command)) mismatch(`step ${index}: command differs: ${command}`);
      command = plan.feedJson(canonical(step.reply));
    }
    if (command !== undefined) return mismatch(`still wants ${command}`);
    if (expected.error !== undefined) return mismatch(`finished, where start()/feed() failed with ${expected.error.code}`);
    if (canonical(plan.start().done) !== canonical(expected.output)) mismatch("another outcome");
  } catch (error) {
    if (expected.error === undefined) mismatch(`failed with ${error?.code ?? error}`);
    else if (error?.code !== expected.error.code) mismatch(`failed with ${error?.code}, not ${expected.error.code}`);
  } finally {
    plan.free();
  }
}

function driveObjects(plan, steps, problems) {
  try {
    let step = plan.start();
    for (const [index, expected] of steps.entries()) {
      if ("done" in step) {
        problems.push(`step ${index}: plan finished early with ${canonical(step.done)}`);
        return step.done;
      }
      const want = canonical(expected.command);
      const got = canonical(step.command);
      if (want !== got) problems.push(`step ${index}: command differs\n${lineDiff(want, got)}\n  expected: ${want}\n  actual:   ${got}`);
      step = plan.feed(expected.reply);
    }
    if (!("done" in step)) {
      problems.push(`steps ended but the plan still wants ${canonical(step.command)}`);
      return null;
    }
    if (canonical(plan.start()) !== canonical(step)) problems.push("start() after the last feed does not repeat the outcome");
    try {
      plan.feed({ kind: "none" });
      problems.push("feeding a finished plan must fail with UNEXPECTED_REPLY");
    } catch (error) {
      if (error.code !== "UNEXPECTED_REPLY") problems.push(`feeding a finished plan failed with ${error.code}`);
    }
    return step.done;
  } finally {
    plan.free();
  }
}

function runAllocator(core, input, calls, problems) {
  const allocator = new core.BlockAllocator(input.block);
  try {
    for (const [index, call] of calls.entries()) {
      let outcome;
      try {
        outcome = { output: allocator[call.method](...call.args) };
      } catch (error) {
        if (!isCoreError(error)) problems.push(`call ${index} ${call.method}: non-core error ${error?.stack ?? error}`);
        outcome = { error };
      }
      compare(`call ${index} ${call.method}`, call, outcome, problems);
    }
  } finally {
    allocator.free();
  }
  return null;
}

/** Runs a blockCounter case's calls; a refill in progress is the open Plan. */
function runCounter(spec, input, calls, problems) {
  const counter = spec.blockCounter(input.counterId);
  let open;
  const close = () => {
    open?.free();
    open = undefined;
  };
  /** A refill's first step; it stays open for feed/abandon (null: none to run). */
  const opened = (plan) => {
    if (plan === undefined) return null;
    open = plan;
    return plan.start();
  };
  const call = {
    take: (count) => {
      const taken = counter.take(count);
      return Array.isArray(taken) ? { numbers: taken } : { ticket: taken };
    },
    takeOne: () => {
      const value = counter.takeOne();
      return Number.isNaN(value) ? null : value;
    },
    ready: (ticket) => counter.ready(ticket) ?? null,
    refill: (ticket, nowMs) => opened(counter.refill(ticket, nowMs)),
    refillAhead: (nowMs) => opened(counter.refillAhead(nowMs)),
    feed: (reply) => {
      try {
        const step = open.feed(reply);
        if ("done" in step) close();
        return step;
      } catch (error) {
        close(); // what the package's loop does: a failed refill plan is freed
        throw error;
      }
    },
    abandon: () => {
      close();
      return null;
    },
    discard: () => counter.discard(),
  };
  try {
    runCalls(call, calls, problems);
  } finally {
    close();
    counter.free();
  }
  return null;
}

/** Runs a case's calls through the methods of `call`, comparing each outcome. */
function runCalls(call, calls, problems) {
  for (const [index, { method, args, ...expected }] of calls.entries()) {
    let outcome;
    try {
      outcome = { output: call[method](...args) };
    } catch (error) {
      if (!isCoreError(error)) problems.push(`call ${index} ${method}: non-core error ${error?.stack ?? error}`);
      outcome = { error };
    }
    compare(`call ${index} ${method}`, expected, outcome, problems);
  }
}

/**
 * Runs a seriesCounters case's calls: routes (the local dates the core asks for answered from
 * the case, as the native runner does), and a routed counter's methods by its handle.
 */
function runSeries(spec, calls, problems) {
  const series = spec.seriesCounters();
  let open;
  const close = () => {
    open?.free();
    open = undefined;
  };
  /** A step as the vectors write it. */
  const view = (step) => {
    if (Array.isArray(step)) return { localDates: step };
    if (typeof step === "number") return { counter: step, period: series.routedPeriod() ?? null };
    return { period: step ?? null };
  };
  /** `use` with the counter of `handle`, its view freed after. */
  const withCounter = (handle, use) => {
    const counter = series.counter(handle);
    try {
      return use(counter);
    } finally {
      counter.free();
    }
  };
  const call = {
    route: (scope, date, nowMs) => view(series.route(scope ?? undefined, date ?? undefined, nowMs)),
    periodAt: (ms) => view(series.periodAt(ms)),
    localDates: (dates) => view(series.localDates(dates)),
    takeOneNow: (nowMs) => {
      const value = series.takeOneNow(nowMs);
      return Number.isNaN(value) ? null : value;
    },
    counterOf: (counterId) => series.counterOf(counterId),
    counterId: (handle) => withCounter(handle, (counter) => counter.counterId()),
    take: (handle, count) =>
      withCounter(handle, (counter) => {
        const taken = counter.take(count);
        return Array.isArray(taken) ? { numbers: taken } : { ticket: taken };
      }),
    ready: (handle, ticket) => withCounter(handle, (counter) => counter.ready(ticket) ?? null),
    refill: (handle, ticket, nowMs) =>
      withCounter(handle, (counter) => {
        const plan = counter.refill(ticket, nowMs ?? undefined);
        if (plan === undefined) return null;
        open = plan;
        return plan.start();
      }),
    feed: (reply) => {
      try {
        const step = open.feed(reply);
        if ("done" in step) close();
        return step;
      } catch (error) {
        close();
        throw error;
      }
    },
    discard: (counterId) => series.discard(counterId),
    discardAll: () => series.discardAll(),
  };
  try {
    runCalls(call, calls, problems);
  } finally {
    close();
    series.free();
  }
  return null;
}

/** Compares `{output}` or `{error}` with the expected `output` / `error: {code, messageIncludes}`. */
function compare(label, expected, outcome, problems) {
  if (expected.error !== undefined) {
    if (outcome.error === undefined) {
      problems.push(`${label}: expected error ${expected.error.code}, got output ${canonical(outcome.output)}`);
      return;
    }
    if (outcome.error.code !== expected.error.code) {
      problems.push(`${label}: expected error ${expected.error.code}, got ${outcome.error.code} (${outcome.error.message})`);
    }
    const fragment = expected.error.messageIncludes;
    if (fragment !== undefined && !outcome.error.message.includes(fragment)) {
      problems.push(`${label}: message ${JSON.stringify(outcome.error.message)} lacks ${JSON.stringify(fragment)}`);
    }
    return;
  }
  if (outcome.error !== undefined) {
    problems.push(`${label}: unexpected error ${outcome.error.code} (${outcome.error.message})`);
    return;
  }
  const want = canonical(expected.output ?? null);
  const got = canonical(outcome.output);
  if (want !== got) problems.push(`${label}: output differs\n${lineDiff(want, got)}`);
}
