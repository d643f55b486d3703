// Replays the core's part of tests/vectors/periods.json through the Wasm core, as the native
// runner does (crates/mongo-seq-core/tests/it/vectors/mod.rs, `period_vectors`): an instant passes
// checkInstant; a local date gives its period (periodOf), the counter id in that period
// (counterId, read back by counterKey), the next period's first date (nextPeriodStart) and the
// formatted id (formatValue). The host's part (instant → local date, Intl) is replayed by
// `runHostPeriodVectors` through the package: its `localDates` (the answer to the core's
// command), a periodic `Sequence#periodOf`, and the core's period window answered by Intl.
import { readFileSync } from "node:fs";
import { parseExact } from "./exact-json.mjs";

export const PERIOD_FILE = new URL("../vectors/periods.json", import.meta.url);

/** The sequence of a case (the file's conventions). */
function options(testCase) {
  const result = { name: "inv", reset: testCase.reset, timeZone: testCase.timeZone };
  for (const key of ["yearStart", "format"]) if (testCase[key] !== undefined) result[key] = testCase[key];
  if (testCase.document !== undefined) result.scope = Object.keys(testCase.document);
  return result;
}

/** What the core gives for a case, or `{ error, stage }`. */
function runCase(core, testCase) {
  const got = {};
  const stage = (name, run) => {
    try {
      return run();
    } catch (error) {
      throw Object.assign(new Error(error.message), { code: error.code, stage: name, core: error });
    }
  };
  if (testCase.instant !== undefined) {
    stage("instant", () => core.checkInstant("date", Number(testCase.instant)));
    got.instant = testCase.instant;
  }
  const spec = new core.SequenceSpec(options(testCase));
  try {
    const period = stage("period", () => spec.periodOf(testCase.localDate));
    got.period = period;
    got.counterId = spec.counterId(testCase.document, period);
    const key = spec.counterKey(got.counterId);
    if (key.period !== period) throw new Error(`${got.counterId}: counterKey gives period ${key.period}`);
    got.nextPeriodStart = spec.nextPeriodStart(period) ?? null;
    if (testCase.format !== undefined) got.formatted = spec.formatValue(testCase.value, period);
  } finally {
    spec.free();
  }
  return got;
}

/** Runs every case; `{ total, failures: string[] }`. */
export function runPeriodVectors(core, vectors = parseExact(readFileSync(PERIOD_FILE, "utf8"))) {
  const failures = [];
  for (const testCase of vectors.cases) {
    const problems = [];
    try {
      const got = runCase(core, testCase);
      if (testCase.error !== undefined) problems.push(`expected ${testCase.error.code} at ${testCase.error.stage}, got ${JSON.stringify(got)}`);
      else {
        for (const [key, value] of Object.entries(got)) {
          if (testCase[key] !== value) problems.push(`${key} is ${JSON.stringify(value)}, expected ${JSON.stringify(testCase[key])}`);
        }
      }
    } catch (error) {
      if (testCase.error === undefined) problems.push(`failed at ${error.stage ?? "?"}: ${error.code ?? ""} ${error.message}`);
      else if (error.code !== testCase.error.code || error.stage !== testCase.error.stage) {
        problems.push(`expected ${testCase.error.code} at ${testCase.error.stage}, got ${error.code} at ${error.stage} (${error.message})`);
      }
    }
    if (problems.length > 0) failures.push(`── ${testCase.name}\n${problems.join("\n")}`);
  }
  return { total: vectors.cases.length, failures };
}

/** The core's window of `ms` (its `PeriodWindows`, local dates from the package's `localDates`), as strings. */
function coreWindow(core, localDates, testCase, ms) {
  const spec = new core.SequenceSpec(options(testCase));
  const windows = spec.periodWindows();
  try {
    let step = windows.periodAt(ms);
    while (typeof step !== "string") step = windows.localDates(localDates(testCase.timeZone, step));
    const window = windows.current();
    return { from: String(window?.from), until: String(window?.until) };
  } finally {
    windows.free();
    spec.free();
  }
}

/** A `Db` stand-in: `Sequence#periodOf` sends nothing to the server. */
const NO_DB = { databaseName: "vectors", collection: () => ({}) };

/**
 * The host's part: for each case with an `instant` and a `localDate`, the package's
 * `localDates(timeZone, [instant])` is `localDate`, and a sequence of the case's options gives
 * the case's `period` for the instant (`periodOf`: the core's window over Intl) — asked twice,
 * cold and warm —, and the core's `PeriodWindows` answered by `localDates` gives its `window`
 * (the native replay: crates/mongo-seq/tests/it/local_dates.rs).
 */
export function runHostPeriodVectors({ core, localDates, Sequences }, vectors = parseExact(readFileSync(PERIOD_FILE, "utf8"))) {
  const failures = [];
  const cases = vectors.cases.filter((c) => c.instant !== undefined && c.localDate !== undefined);
  const seqs = new Sequences(NO_DB);
  cases.forEach((testCase, index) => {
    const problems = [];
    const ms = Number(testCase.instant);
    try {
      const [date] = localDates(testCase.timeZone, [ms]);
      if (date !== testCase.localDate) problems.push(`local date is ${JSON.stringify(date)}, expected ${JSON.stringify(testCase.localDate)}`);
      if (testCase.error === undefined) {
        const { name: _name, ...rest } = options(testCase);
        const sequence = seqs.sequence(`case${index}`, rest);
        for (const label of ["cold", "warm"]) {
          const period = sequence.periodOf(ms);
          if (period !== testCase.period) problems.push(`periodOf (${label}) is ${JSON.stringify(period)}, expected ${JSON.stringify(testCase.period)}`);
        }
        const window = coreWindow(core, localDates, testCase, ms);
        if (window.from !== testCase.window.from || window.until !== testCase.window.until) {
          problems.push(`window is ${JSON.stringify(window)}, expected ${JSON.stringify(testCase.window)}`);
        }
      }
    } catch (error) {
      problems.push(`failed: ${error.code ?? ""} ${error.message}`);
    }
    if (problems.length > 0) failures.push(`── ${testCase.name}\n${problems.join("\n")}`);
  });
  return { total: cases.length, failures };
}
