// Business document series: sequences that restart every year, month or day in a
// time zone, numbered in the period of a given instant (`next({ date })`, dated inserts), and
// the options and dates refused before anything is written.
import { test } from "node:test";
import assert from "node:assert/strict";
import { Sequences, core, localDates } from "mongo-seq";
import { useMongo, assertRefused } from "./support.mjs";

const mongo = useMongo();
const YEARLY_PARIS = { reset: "yearly", timeZone: "Europe/Paris", format: "INV-{yyyy}-{seq:06}" };
/** The last millisecond of 2025 and the first of 2026 in Paris (UTC+1). */
const PARIS_2025_END = Date.parse("2025-12-31T22:59:59.999Z");
const PARIS_2026 = PARIS_2025_END + 1;

test("a yearly series numbers each instant in its year's counter, in the sequence's time zone", async () => {
  const db = mongo.freshDb("series_yearly");
  const invoices = new Sequences(db).sequence("invoices", YEARLY_PARIS);
  assert.deepEqual(invoices.options, { ...invoices.options, reset: "yearly", timeZone: "Europe/Paris", yearStart: 1 });
  assert.equal(await invoices.next({ date: PARIS_2025_END }), 1);
  assert.equal(await invoices.next({ date: new Date(PARIS_2026) }), 1);
  assert.equal(await invoices.next({ date: new Date(PARIS_2025_END - 1000) }), 2);
  assert.deepEqual(await invoices.nextMany(3, { date: PARIS_2026 }), [2, 3, 4]);
  assert.deepEqual(await invoices.nextFormatted({ date: PARIS_2026 }), { value: 5, period: "2026", formatted: "INV-2026-000005" });
  // Each period's counter records the series' definition: its reset and zone too.
  const DEFINITION = { start: 1, step: 1, reset: "yearly", timeZone: "Europe/Paris", yearStart: 1, format: "INV-{yyyy}-{seq:06}" };
  assert.deepEqual(await db.collection("counters").find().sort({ _id: 1 }).toArray(), [
    { _id: "invoices/2025", seq: 2, definition: DEFINITION, definitionDigest: "c08217eef273278e" },
    { _id: "invoices/2026", seq: 5, definition: DEFINITION, definitionDigest: "c08217eef273278e" },
  ]);
  assert.equal(invoices.periodOf(PARIS_2025_END), "2025");
  assert.equal(invoices.counterId(undefined, "2026"), "invoices/2026");
  assert.equal(invoices.format(7, "2025"), "INV-2025-000007");
  assert.equal(await invoices.current({ period: "2025" }), 2);
  assert.deepEqual(await invoices.state({ period: "2026" }), { last: 5, next: 6 });
});

test("next() without a date numbers in the current period; a scoped series takes (scope, { date })", async () => {
  const db = mongo.freshDb("series_now");
  const seqs = new Sequences(db);
  const monthly = seqs.sequence("tickets", { reset: "monthly", timeZone: "UTC", format: "T-{yyyy}{mm}-{seq}" });
  const nowPeriod = new Date().toISOString().slice(0, 7);
  const { period, formatted } = await monthly.nextFormatted();
  // The test could straddle a month's end: then the period is the next month's.
  assert.ok(period === nowPeriod || period > nowPeriod, period);
  assert.equal(formatted, `T-${period.replace("-", "")}-1`);
  const perTenant = seqs.sequence("orders", { reset: "daily", timeZone: "Pacific/Auckland", scope: ["tenant"], format: "{yy}{mm}{dd}-{seq:03}" });
  const date = Date.parse("2026-03-01T11:30:00Z"); // 2026-03-02 00:30 in Auckland (NZDT)
  assert.equal(await perTenant.next({ tenant: "acme" }, { date }), 1);
  assert.deepEqual(await perTenant.nextFormatted({ tenant: "acme" }, { date }), { value: 2, period: "2026-03-02", formatted: "260302-002" });
  assert.deepEqual(await perTenant.nextMany(2, { tenant: "zeta" }, { date }), [1, 2]);
  assert.ok(await db.collection("counters").findOne({ _id: "orders/tenant=acme/2026-03-02" }));
});

test("a fiscal year starting in April is named after the year it ends in", async () => {
  const db = mongo.freshDb("series_fiscal");
  const seq = new Sequences(db).sequence("fy", { reset: "yearly", yearStart: 4, timeZone: "Europe/London", format: "FY{yy}/{seq}" });
  assert.deepEqual(await seq.nextFormatted({ date: Date.parse("2026-03-31T22:59:59.999Z") }), { value: 1, period: "2026", formatted: "FY26/1" });
  assert.deepEqual(await seq.nextFormatted({ date: Date.parse("2026-03-31T23:00:00Z") }), { value: 1, period: "2027", formatted: "FY27/1" });
});

/** The core's window of `ms` for `options`, its local dates answered by the package (Intl). */
function coreWindow(options, ms) {
  const spec = new core.SequenceSpec({ name: "w", ...options });
  const windows = spec.periodWindows();
  try {
    let step = windows.periodAt(ms);
    while (typeof step !== "string") step = windows.localDates(localDates(options.timeZone, step));
    return windows.current();
  } finally {
    windows.free();
    spec.free();
  }
}

test("the warm path: the period window holds from the period's first instant to the next one's, and no Intl call inside it", () => {
  const jan1 = Date.parse("2025-12-31T11:00:00Z"); // 2026-01-01 00:00 NZDT
  const next = Date.parse("2026-12-31T11:00:00Z");
  const auckland = { reset: "yearly", timeZone: "Pacific/Auckland" };
  assert.deepEqual(coreWindow(auckland, Date.parse("2026-06-01T00:00:00Z")), { period: "2026", from: jan1, until: next });
  const sequence = new Sequences({ databaseName: "w", collection: () => ({}) }).sequence("w", auckland);
  assert.equal(sequence.periodOf(Date.parse("2026-06-01T00:00:00Z")), "2026");
  const formatToParts = Intl.DateTimeFormat.prototype.formatToParts;
  const probe = new core.SequenceSpec({ name: "probe", ...auckland });
  const windowsClass = Object.getPrototypeOf(probe.periodWindows());
  probe.free();
  const periodAt = windowsClass.periodAt;
  let calls = 0;
  let coreCalls = 0;
  Intl.DateTimeFormat.prototype.formatToParts = function (...args) {
    calls++;
    return formatToParts.apply(this, args);
  };
  windowsClass.periodAt = function (...args) {
    coreCalls++;
    return periodAt.apply(this, args);
  };
  try {
    for (const ms of [jan1, next - 1, Date.parse("2026-07-01T00:00:00Z")]) assert.equal(sequence.periodOf(ms), "2026");
    assert.equal(calls, 0, "no date formatted inside the window");
    assert.equal(coreCalls, 0, "no call into the core's windows inside the window at hand");
    assert.equal(sequence.periodOf(next), "2027");
    assert.equal(sequence.periodOf(jan1 - 1), "2025");
    assert.ok(calls > 0);
    // Alternating between the periods already seen: no search again (the core keeps them).
    calls = 0;
    for (const ms of [next, jan1, jan1 - 1, next + 5, jan1 + 5]) sequence.periodOf(ms);
    assert.equal(calls, 0, "the windows of recent periods are kept");
  } finally {
    Intl.DateTimeFormat.prototype.formatToParts = formatToParts;
    windowsClass.periodAt = periodAt;
  }
  // A daily window on a day whose midnight does not exist (Santiago's clocks jump 00:00 → 01:00
  // on 2026-09-06): the day begins at 01:00 local, 04:00 UTC.
  assert.deepEqual(coreWindow({ reset: "daily", timeZone: "America/Santiago" }, Date.parse("2026-09-06T12:00:00Z")), {
    period: "2026-09-06",
    from: Date.parse("2026-09-06T04:00:00Z"),
    until: Date.parse("2026-09-07T03:00:00Z"),
  });
});

test("an unknown time zone is refused by the host before any command, naming timeZone", async () => {
  for (const timeZone of ["Mars/Olympus_Mons", "Europe/Pariss"]) {
    const error = await assertRefused(mongo, "series_zone", "INVALID_OPTION", async (seqs) => seqs.sequence("inv", { reset: "yearly", timeZone }));
    assert.equal(error.details.option, "timeZone");
    assert.match(error.message, /not a time zone/);
  }
  // The name stays free: the sequence was not registered.
  const seqs = new Sequences(mongo.freshDb("series_zone_free"));
  assert.throws(() => seqs.sequence("inv", { reset: "yearly", timeZone: "Nowhere/Land" }), { code: "INVALID_OPTION" });
  assert.equal(seqs.sequence("inv", { reset: "yearly", timeZone: "Europe/Paris" }).options.timeZone, "Europe/Paris");
});

test("bad periodic options are refused naming the option, nothing written", async () => {
  const cases = [
    [{ reset: "weekly" }, "INVALID_OPTION", "reset"],
    [{ reset: "yearly", yearStart: 13 }, "INVALID_OPTION", "yearStart"],
    [{ reset: "yearly", yearStart: 4.5 }, "INVALID_OPTION", "yearStart"],
    [{ reset: "monthly", yearStart: 4 }, "INVALID_OPTION", "yearStart"],
    [{ timeZone: "Europe/Paris" }, "INVALID_OPTION", "timeZone"],
    [{ reset: "yearly", timeZone: "../etc/passwd" }, "INVALID_OPTION", "timeZone"],
    [{ reset: "yearly", counterId: "fixed" }, "INVALID_OPTION", "counterId"],
    [{ format: "INV-{yyyy}-{seq}" }, "INVALID_FORMAT", undefined],
    [{ reset: "never", format: "INV-{yy}-{seq}" }, "INVALID_FORMAT", undefined],
    [{ reset: "yearly", format: "INV-{mm}-{seq}" }, "INVALID_FORMAT", undefined],
  ];
  for (const [options, code, option] of cases) {
    const error = await assertRefused(mongo, "series_options", code, async (seqs) => {
      const seq = seqs.sequence("inv", options);
      await seq.next();
    });
    if (option !== undefined) assert.equal(error.details.option, option, JSON.stringify(options));
  }
});

test("bad dates are refused before anything is reserved (NaN, strings, invalid Dates, huge, 2^63)", async () => {
  const dates = [
    [NaN, "INVALID_ARGUMENT"],
    ["2026-01-01", "INVALID_ARGUMENT"],
    [new Date("not a date"), "INVALID_ARGUMENT"],
    [1.5, "INVALID_ARGUMENT"],
    [Infinity, "INVALID_ARGUMENT"],
    [2n ** 63n, "INVALID_ARGUMENT"],
    [8.64e15, "INVALID_DATE"],
    [-62135596800001, "INVALID_DATE"],
    [2 ** 53 - 1, "INVALID_DATE"],
  ];
  for (const resets of [true, false]) {
    for (const [date, code] of dates) {
      const error = await assertRefused(mongo, "series_dates", code, async (seqs) => {
        const seq = seqs.sequence("inv", resets ? YEARLY_PARIS : {});
        await seq.next({ date });
      });
      assert.equal(error.details.argument, "date", `${String(date)}: ${error.message}`);
    }
    await assertRefused(mongo, "series_dates_many", "INVALID_ARGUMENT", async (seqs) => seqs.sequence("inv", resets ? YEARLY_PARIS : {}).nextMany(2, { date: "yesterday" }));
  }
  await assertRefused(mongo, "series_next_options", "UNKNOWN_OPTION", async (seqs) => seqs.sequence("inv", YEARLY_PARIS).next({ data: 1 }));
  // A periodic counter needs its period: INVALID_ARGUMENT naming `period`.
  const error = await assertRefused(mongo, "series_period", "INVALID_ARGUMENT", async (seqs) => seqs.sequence("inv", YEARLY_PARIS).setNext(5));
  assert.equal(error.details.argument, "period");
});

test("dated inserts: each document numbered in the period of its dateField, the period written beside the number", async () => {
  const db = mongo.freshDb("series_insert");
  const seqs = new Sequences(db);
  const invoices = seqs.sequence("invoices", YEARLY_PARIS);
  const coll = db.collection("invoices");
  const index = await seqs.createNumberingIndex(coll, { sequence: invoices, field: "number", formatField: "ref" });
  assert.deepEqual(index, { name: "mongo_seq_number", keys: { numberPeriod: 1, number: 1 } });
  const one = await seqs.insertOne(coll, { issuedAt: new Date(PARIS_2025_END) }, { sequence: invoices, field: "number", formatField: "ref", dateField: "issuedAt" });
  assert.deepEqual([one.value, one.formatted, one.period], [1, "INV-2025-000001", "2025"]);
  const many = await seqs.insertMany(
    coll,
    [{ issuedAt: new Date(PARIS_2026) }, { issuedAt: new Date(PARIS_2025_END - 5) }, { issuedAt: new Date(PARIS_2026 + 5) }],
    { sequence: invoices, field: "number", formatField: "ref", dateField: "issuedAt" },
  );
  assert.deepEqual(many.values, [1, 2, 2]);
  assert.deepEqual(many.formatted, ["INV-2026-000001", "INV-2025-000002", "INV-2026-000002"]);
  assert.deepEqual(many.periods, ["2026", "2025", "2026"]);
  // Through the executor's localDates: an instant before 1970 (a negative int64 in the command) and one after 2100.
  const early = await seqs.insertMany(coll, [{ issuedAt: new Date("1969-12-31T23:30:00Z") }, { issuedAt: new Date("2101-01-01T00:00:00Z") }], { sequence: invoices, field: "number", formatField: "ref", dateField: "issuedAt" });
  assert.deepEqual(early.formatted, ["INV-1970-000001", "INV-2101-000001"]);
  await coll.deleteMany({ numberPeriod: { $in: ["1970", "2101"] } });
  // Without dateField: now, one instant for the whole call.
  const now = await seqs.insertOne(coll, { note: "now" }, { sequence: invoices, field: "number", formatField: "ref" });
  const year = invoices.periodOf();
  assert.equal(now.formatted, `INV-${year}-${String(now.value).padStart(6, "0")}`);
  assert.equal(now.period, year);
  const stored = await coll.find({}, { projection: { _id: 0, issuedAt: 0 } }).toArray();
  assert.deepEqual(stored.slice(0, 4), [
    { number: 1, ref: "INV-2025-000001", numberPeriod: "2025" },
    { number: 1, ref: "INV-2026-000001", numberPeriod: "2026" },
    { number: 2, ref: "INV-2025-000002", numberPeriod: "2025" },
    { number: 2, ref: "INV-2026-000002", numberPeriod: "2026" },
  ]);
});

test("insertMany of 1,000 documents over two periods: one reservation per period, one insertMany", async () => {
  const db = mongo.freshDb("series_insert_many_periods");
  const seqs = new Sequences(db);
  const invoices = seqs.sequence("invoices", YEARLY_PARIS);
  const docs = Array.from({ length: 1000 }, (_, i) => ({ i, issuedAt: new Date(i % 2 === 0 ? PARIS_2025_END - i : PARIS_2026 + i) }));
  mongo.commands.reset();
  const result = await seqs.insertMany(db.collection("invoices"), docs, { sequence: invoices, field: "number", dateField: "issuedAt" });
  assert.equal(mongo.commands.count("findAndModify"), 2, "one reservation per period");
  // One insertMany: as many insert commands as the driver's own insertMany of 1,000 documents
  // (it splits at the server's maxWriteBatchSize: 100,000 on real servers, 1,000 here).
  const inserts = mongo.commands.count("insert");
  mongo.commands.reset();
  await db.collection("plain").insertMany(docs.map(({ i }) => ({ i })));
  assert.equal(inserts, mongo.commands.count("insert"), "one insertMany of the 1,000 documents");
  assert.deepEqual(result.values.slice(0, 4), [1, 1, 2, 2]);
  assert.deepEqual(result.periods.slice(0, 2), ["2025", "2026"]);
  assert.deepEqual([await invoices.current({ period: "2025" }), await invoices.current({ period: "2026" })], [500, 500]);
});

test("dated inserts refuse a bad dateField before anything is taken", async () => {
  const options = (extra) => ({ sequence: "inv", field: "number", dateField: "issuedAt", ...extra });
  const define = (seqs) => seqs.sequence("inv", YEARLY_PARIS);
  for (const [doc, code] of [
    [{}, "INVALID_DATE"],
    [{ issuedAt: null }, "INVALID_DATE"],
    [{ issuedAt: "2026-01-01" }, "INVALID_DATE"],
    [{ issuedAt: 1767225600000 }, "INVALID_DATE"],
    [{ issuedAt: [new Date()] }, "INVALID_DATE"],
    [{ issuedAt: new Date(8.64e15) }, "INVALID_DATE"],
  ]) {
    const error = await assertRefused(mongo, "series_bad_date", code, async (seqs, db) => {
      define(seqs);
      await seqs.insertOne(db.collection("invoices"), doc, options());
    });
    assert.equal(error.details.argument, "dateField", error.message);
    // In a batch: the document's index, and none of the batch inserted.
    const batchError = await assertRefused(mongo, "series_bad_date_many", code, async (seqs, db) => {
      define(seqs);
      await seqs.insertMany(db.collection("invoices"), [{ issuedAt: new Date() }, doc], options());
    });
    assert.equal(batchError.details.index, 1, batchError.message);
  }
  // dateField with a sequence that never resets, or equal to field.
  await assertRefused(mongo, "series_date_plain", "INVALID_ARGUMENT", async (seqs, db) => seqs.insertOne(db.collection("x"), { issuedAt: new Date() }, { sequence: "plain", field: "number", dateField: "issuedAt" }));
  await assertRefused(mongo, "series_date_field", "INVALID_ARGUMENT", async (seqs, db) => {
    define(seqs);
    await seqs.insertOne(db.collection("x"), { number: new Date() }, options({ dateField: "number" }));
  });
});

test("a number already taken in its period (a document written by hand) is skipped and taken again, by insertOne and insertMany", async () => {
  const db = mongo.freshDb("series_taken");
  const seqs = new Sequences(db);
  const invoices = seqs.sequence("invoices", { reset: "yearly" });
  const coll = db.collection("invoices");
  await seqs.createNumberingIndex(coll, { sequence: invoices, field: "number" });
  // An import: numbers 2 and 5 of 2026 (and 3 of 2025, which takes nothing from 2026).
  await coll.insertMany([{ _id: "imported-2", number: 2, numberPeriod: "2026" }, { _id: "imported-5", number: 5, numberPeriod: "2026" }, { _id: "old-3", number: 3, numberPeriod: "2025" }]);
  const options = { sequence: invoices, field: "number", dateField: "issuedAt" };
  const issuedAt = new Date("2026-03-01T10:00:00Z");
  assert.equal((await seqs.insertOne(coll, { _id: "a", issuedAt }, options)).value, 1);
  assert.equal((await seqs.insertOne(coll, { _id: "b", issuedAt }, options)).value, 3, "2 is taken: skipped");
  const many = await seqs.insertMany(coll, [{ _id: "c", issuedAt }, { _id: "d", issuedAt }], options);
  assert.deepEqual(many.values, [4, 6], "5 is taken: skipped");
  assert.deepEqual(await coll.find({ numberPeriod: "2026" }, { projection: { number: 1 } }).sort({ number: 1 }).toArray(), [
    { _id: "a", number: 1 },
    { _id: "imported-2", number: 2 },
    { _id: "b", number: 3 },
    { _id: "c", number: 4 },
    { _id: "imported-5", number: 5 },
    { _id: "d", number: 6 },
  ]);
});

test("a duplicate key shaped as a real server sends it (keyPattern, keyValue) is classified by its key pattern", async () => {
  // The embedded server's duplicate-key errors carry the message only; a real server's carry
  // `keyPattern` and `keyValue` too (and servers before 4.2 name no field in the message). The
  // collection below raises such errors, once each, as the driver would, for the series' index
  // (renumbered) and for another unique index (the caller's own: thrown as it is).
  const db = mongo.freshDb("series_taken_shapes");
  const seqs = new Sequences(db);
  const invoices = seqs.sequence("invoices", { reset: "yearly" });
  const real = db.collection("invoices");
  const options = { sequence: invoices, field: "number", dateField: "issuedAt" };
  const issuedAt = new Date("2026-03-01T10:00:00Z");
  const serverError = (keyPattern, keyValue) => {
    const error = new Error("E11000 duplicate key error collection: app.invoices index: some_index dup key: { : \"2026\", : 1 }");
    return Object.assign(error, { name: "MongoServerError", code: 11000, keyPattern, keyValue });
  };
  const failingOnce = (make) => {
    let failed = false;
    return new Proxy(real, {
      get(target, key) {
        const value = Reflect.get(target, key, target);
        if (key !== "insertOne" && key !== "insertMany") return typeof value === "function" ? value.bind(target) : value;
        return async (...args) => {
          if (failed) return value.apply(target, args);
          failed = true;
          throw make(key);
        };
      },
    });
  };
  const inPeriod = serverError({ numberPeriod: 1, number: 1 }, { numberPeriod: "2026", number: 1 });
  assert.equal((await seqs.insertOne(failingOnce(() => inPeriod), { issuedAt }, options)).value, 2, "1 taken in its period: renumbered");
  const bulk = (writeError) => Object.assign(new Error(writeError.errmsg), { name: "MongoBulkWriteError", code: 11000, writeErrors: [{ index: 0, code: 11000, errmsg: writeError.errmsg, err: writeError }] });
  const manyOutcome = await seqs.insertMany(failingOnce(() => bulk({ index: 0, code: 11000, errmsg: inPeriod.message, keyPattern: inPeriod.keyPattern, keyValue: { numberPeriod: "2026", number: 3 } })), [{ issuedAt }], options);
  assert.deepEqual(manyOutcome.values, [4], "3 taken in its period: renumbered");
  const onEmail = serverError({ email: 1 }, { email: "a@example.com" });
  await assert.rejects(seqs.insertOne(failingOnce(() => onEmail), { issuedAt }, options), (error) => error === onEmail);
  await assert.rejects(
    seqs.insertMany(failingOnce(() => bulk({ index: 0, code: 11000, errmsg: onEmail.message, keyPattern: { email: 1 } })), [{ issuedAt }], options),
    (error) => error.name === "MongoBulkWriteError",
  );
});
