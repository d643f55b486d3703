// Writes the `seriesCounters` cases of core.json: each case's calls are run through the built
// package's Wasm core, the local dates it asks for answered by Intl (the package's own
// `localDates`) and written into the case as `localDates` calls, so every runner replays the
// same answers without time-zone data. Review the diff; `periods.py` (Python's zoneinfo)
// checks the same zones' dates. Run after `make build-js`: node tests/vectors/series-counters.mjs
import { readFileSync, writeFileSync } from "node:fs";
import { core, localDates } from "mongo-seq";

const FILE = new URL("./core.json", import.meta.url);
const ms = (iso) => Date.parse(iso);
const refill = (counterId, seq) => ({ kind: "document", document: { _id: counterId, seq: { $numberLong: String(seq) } } });

const CASES = [
  {
    name: "seriesCounters/unscoped-never-resets",
    note: "One counter, at hand from the first route: takeOneNow hands out its block without a question; a date is checked and ignored.",
    options: { name: "orders", block: 2 },
    calls: [
      ["takeOneNow", 0],
      ["route", null, null, 0],
      ["take", 0, 1],
      ["refill", 0, 1, null],
      ["feed", refill("orders", 2)],
      ["ready", 0, 1],
      ["takeOneNow", 0],
      ["takeOneNow", 0],
      ["route", null, ms("2026-05-17T00:00:00Z"), 0],
      ["route", null, 253402300800000, 0],
      ["counterOf", "orders"],
      ["counterOf", "orders/2026"],
    ],
  },
  {
    name: "seriesCounters/fiscal-year-start-in-summer-time",
    note: "yearStart 4 in London: fiscal 2027 starts at midnight on 1 April, summer time, 2026-03-31T23:00Z. The last millisecond before is 2026's; takeOneNow stops at the window's end; a date of 2026 routes back to 2026's counter without a question.",
    options: { name: "inv", reset: "yearly", yearStart: 4, timeZone: "Europe/London", block: 10 },
    calls: [
      ["route", null, null, ms("2026-03-31T22:59:59.999Z")],
      ["take", 0, 1],
      ["refill", 0, 1, null],
      ["feed", refill("inv/2026", 10)],
      ["ready", 0, 1],
      ["takeOneNow", ms("2026-03-31T22:59:59.999Z")],
      ["takeOneNow", ms("2026-03-31T23:00:00.000Z")],
      ["route", null, null, ms("2026-03-31T23:00:00.000Z")],
      ["counterId", 1],
      ["route", null, ms("2026-03-31T22:59:59.999Z"), ms("2026-03-31T23:00:00.000Z")],
      ["takeOneNow", ms("2026-03-31T22:00:00.000Z")],
      ["periodAt", ms("2026-03-31T23:00:00.000Z")],
      ["takeOneNow", ms("2026-03-31T22:00:00.000Z")],
      ["route", null, null, ms("2026-03-31T23:00:00.000Z")],
      ["discard", "inv/2026"],
      ["discard", "inv/2099"],
    ],
  },
  {
    name: "seriesCounters/scoped-daily",
    note: "A scoped sequence: no warm path without a scope, a missing scope refused; each scope has its counters, the window shared.",
    options: { name: "tickets", reset: "daily", timeZone: "Pacific/Auckland", scope: ["shop"] },
    calls: [
      ["takeOneNow", ms("2026-05-17T11:59:59.999Z")],
      ["route", null, null, ms("2026-05-17T11:59:59.999Z")],
      ["route", { shop: "a" }, null, ms("2026-05-17T11:59:59.999Z")],
      ["route", { shop: "b" }, null, ms("2026-05-17T11:59:59.999Z")],
      ["counterId", 1],
      ["route", { shop: "a" }, null, ms("2026-05-17T12:00:00.000Z")],
      ["counterId", 2],
      ["route", { shop: ["a"] }, null, ms("2026-05-17T12:00:00.000Z")],
      ["counter", 7],
    ],
  },
];

function stepOf(step, series) {
  if (Array.isArray(step)) return { localDates: step };
  if (typeof step === "number") return { counter: step, period: series.routedPeriod() ?? null };
  return { period: step ?? null };
}

function run(testCase) {
  const spec = new core.SequenceSpec(testCase.options);
  const series = spec.seriesCounters();
  const calls = [];
  let open;
  const record = (method, args, make) => {
    try {
      const output = make();
      calls.push({ method, args, output });
      return output;
    } catch (error) {
      if (error.name !== "MongoSeqError") throw error;
      calls.push({ method, args, error: { code: error.code } });
    }
  };
  const answering = (output) => {
    while (output?.localDates !== undefined) {
      const dates = localDates(testCase.options.timeZone, output.localDates);
      output = record("localDates", [dates], () => stepOf(series.localDates(dates), series));
    }
  };
  const counter = (handle, use) => {
    const view = series.counter(handle);
    try {
      return use(view);
    } finally {
      view.free();
    }
  };
  for (const [method, ...args] of testCase.calls) {
    const calls = {
      takeOneNow: () => {
        const value = series.takeOneNow(args[0]);
        return Number.isNaN(value) ? null : value;
      },
      route: () => stepOf(series.route(args[0] ?? undefined, args[1] ?? undefined, args[2]), series),
      periodAt: () => stepOf(series.periodAt(args[0]), series),
      counterOf: () => series.counterOf(args[0]),
      counterId: () => counter(args[0], (c) => c.counterId()),
      counter: () => counter(args[0], (c) => c.counterId()),
      take: () =>
        counter(args[0], (c) => {
          const taken = c.take(args[1]);
          return Array.isArray(taken) ? { numbers: taken } : { ticket: taken };
        }),
      ready: () => counter(args[0], (c) => c.ready(args[1]) ?? null),
      refill: () =>
        counter(args[0], (c) => {
          open = c.refill(args[1], args[2] ?? undefined);
          return open === undefined ? null : open.start();
        }),
      feed: () => {
        const step = open.feed(args[0]);
        if ("done" in step) open = open.free();
        return step;
      },
      discard: () => series.discard(args[0]),
    };
    const name = method === "counter" ? "counterId" : method;
    answering(record(name, args, calls[method]));
  }
  series.free();
  spec.free();
  return { name: testCase.name, op: "seriesCounters", note: testCase.note, input: { options: testCase.options }, calls };
}

// core.json is laid out by hand: the cases go in as text, after the others (replacing the
// ones written before).
const text = readFileSync(FILE, "utf8");
const MARK = ',\n    {\n      "name": "seriesCounters/';
const END = "\n  ]\n}\n";
const before = text.includes(MARK) ? text.slice(0, text.indexOf(MARK)) : text.slice(0, text.lastIndexOf(END));
const cases = CASES.map(run).map((c) => JSON.stringify(c, null, 2).replace(/^/gm, "    "));
writeFileSync(FILE, `${before},\n${cases.join(",\n")}${END}`);
console.log(`core.json: ${CASES.length} seriesCounters cases written`);
