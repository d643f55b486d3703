// Numbering on issue: `assign(collection, filter, options)` numbers the documents that match
// and have no number (the core's assign plan), each write conditioned on the document still
// matching and unnumbered; several processes at once never number a document twice.
import { test } from "node:test";
import assert from "node:assert/strict";
import { MongoClient } from "mongodb";
import { Sequences } from "mongo-seq";
import { useMongo, assertRefused } from "./support.mjs";

const mongo = useMongo();
const YEARLY = { reset: "yearly", timeZone: "Europe/Paris", format: "INV-{yyyy}-{seq:04}" };

test("assign numbers the matching unnumbered documents in sort order, each in its date's period, and leaves the rest", async () => {
  const db = mongo.freshDb("assign_basic");
  const seqs = new Sequences(db);
  const invoices = db.collection("invoices");
  await invoices.insertMany([
    { _id: 1, status: "issued", issuedAt: new Date("2026-01-03T10:00:00Z") },
    { _id: 2, status: "draft", issuedAt: new Date("2026-01-01T10:00:00Z") },
    { _id: 3, status: "issued", issuedAt: new Date("2025-12-31T22:30:00Z") }, // 23:30 in Paris: 2025
    { _id: 4, status: "issued", issuedAt: new Date("2026-01-02T10:00:00Z") },
    { _id: 5, status: "issued", issuedAt: new Date("2026-01-01T10:00:00Z"), number: 99, ref: "kept" },
  ]);
  seqs.sequence("invoices", YEARLY);
  const options = { sequence: "invoices", field: "number", formatField: "ref", dateField: "issuedAt", sort: { issuedAt: 1 } };
  const outcome = await seqs.assign(invoices, { status: "issued" }, options);
  assert.deepEqual(outcome, {
    assigned: [
      { _id: 3, value: 1, formatted: "INV-2025-0001", period: "2025" },
      { _id: 4, value: 1, formatted: "INV-2026-0001", period: "2026" },
      { _id: 1, value: 2, formatted: "INV-2026-0002", period: "2026" },
    ],
    skipped: [],
  });
  const numbers = await invoices.find({}, { projection: { number: 1, ref: 1, numberPeriod: 1 } }).sort({ _id: 1 }).toArray();
  assert.deepEqual(numbers, [
    { _id: 1, number: 2, ref: "INV-2026-0002", numberPeriod: "2026" },
    { _id: 2 },
    { _id: 3, number: 1, ref: "INV-2025-0001", numberPeriod: "2025" },
    { _id: 4, number: 1, ref: "INV-2026-0001", numberPeriod: "2026" },
    { _id: 5, number: 99, ref: "kept" },
  ]);
  // The unique index it relies on was created.
  const index = (await invoices.indexes()).find((i) => i.name === "mongo_seq_number");
  assert.deepEqual(index?.key, { numberPeriod: 1, number: 1 });
  // Run again: nothing left to number; a draft issued later gets the next number.
  assert.deepEqual(await seqs.assign(invoices, { status: "issued" }, options), { assigned: [], skipped: [] });
  await invoices.updateOne({ _id: 2 }, { $set: { status: "issued" } });
  assert.deepEqual((await seqs.assign(invoices, { status: "issued" }, options)).assigned, [{ _id: 2, value: 3, formatted: "INV-2026-0003", period: "2026" }]);
});

test("assign with a plain sequence, default now for a periodic one, and skipped documents", async () => {
  const db = mongo.freshDb("assign_plain");
  const seqs = new Sequences(db);
  const orders = db.collection("orders");
  await orders.insertMany([{ _id: "b", ok: true }, { _id: "a", ok: true }, { _id: "c", ok: false }]);
  assert.deepEqual(await seqs.assign(orders, { ok: true }, { sequence: "orders", field: "seq" }), {
    assigned: [
      { _id: "a", value: 1 },
      { _id: "b", value: 2 },
    ],
    skipped: [],
  });
  // A periodic sequence without dateField: now. A scoped one skips a document without its scope field.
  seqs.sequence("tickets", { reset: "monthly", timeZone: "UTC", scope: ["desk"] });
  const tickets = db.collection("tickets");
  await tickets.insertMany([{ _id: 1, desk: "x" }, { _id: 2 }]);
  const outcome = await seqs.assign(tickets, {}, { sequence: "tickets", field: "n" });
  assert.equal(outcome.assigned.length, 1);
  assert.equal(outcome.assigned[0].period.length, 7);
  assert.deepEqual(
    outcome.skipped.map(({ _id, code }) => ({ _id, code })),
    [{ _id: 2, code: "MISSING_SCOPE_FIELD" }],
  );
});

test("two concurrent assigns never number a document twice; a document that stops matching is left alone", async () => {
  const db = mongo.freshDb("assign_race");
  const invoices = db.collection("invoices");
  const count = 300;
  await invoices.insertMany(Array.from({ length: count }, (_, i) => ({ _id: i, status: "draft", issuedAt: new Date(Date.UTC(2026, 0, 1 + (i % 60), 12)) })));
  // Two processes: two clients, two Sequences, each assigning in a loop while documents are
  // issued ten at a time, and every seventh goes back to draft before it got a number.
  const other = new MongoClient(mongo.server.uri);
  await other.connect();
  try {
    const a = new Sequences(db);
    const b = new Sequences(other.db(db.databaseName));
    for (const seqs of [a, b]) seqs.sequence("invoices", YEARLY);
    const options = { sequence: "invoices", field: "number", formatField: "ref", dateField: "issuedAt" };
    let issuing = true;
    const issue = (async () => {
      for (let i = 0; i < count; i += 10) {
        await invoices.updateMany({ _id: { $gte: i, $lt: i + 10 } }, { $set: { status: "issued" } });
        await invoices.updateMany({ _id: { $gte: i, $lt: i + 10, $mod: [7, 0] }, number: { $exists: false } }, { $set: { status: "draft" } });
      }
      issuing = false;
    })();
    const assignLoop = async (seqs, sort) => {
      const assigned = [];
      for (let round = 0; issuing || round === 0; round++) {
        assigned.push(...(await seqs.assign(invoices, { status: "issued" }, { ...options, sort })).assigned);
      }
      assigned.push(...(await seqs.assign(invoices, { status: "issued" }, { ...options, sort })).assigned);
      return assigned;
    };
    const [first, second] = await Promise.all([assignLoop(a, { _id: 1 }), assignLoop(b, { _id: -1 }), issue]);
    const all = [...first, ...second];
    const ids = all.map((entry) => entry._id);
    console.log(`assign race: ${first.length} + ${second.length} numbered`);
    assert.equal(new Set(ids).size, ids.length, "no document reported numbered twice");
    const docs = await invoices.find().sort({ _id: 1 }).toArray();
    for (const doc of docs) {
      if (doc.number === undefined) assert.equal(doc.status, "draft", `issued ${doc._id} has no number`);
    }
    // Each number at most once in each period; what the writers report is what is stored.
    const numbered = docs.filter((doc) => doc.number !== undefined);
    assert.equal(numbered.length, ids.length);
    assert.ok(numbered.length < count, "some documents stopped matching before they were numbered");
    const keys = numbered.map((doc) => `${doc.numberPeriod}/${doc.number}`);
    assert.equal(new Set(keys).size, keys.length, "a number given twice");
    for (const entry of all) {
      const doc = docs.find((d) => d._id === entry._id);
      assert.deepEqual([doc.number, doc.ref, doc.numberPeriod], [entry.value, entry.formatted, entry.period]);
    }
    // Gaps are allowed (a losing writer's reservation), duplicates are not: the counter is past every number.
    const counter = await db.collection("counters").findOne({ _id: "invoices/2026" });
    assert.ok(counter.seq >= Math.max(...numbered.map((doc) => doc.number)));
  } finally {
    await other.close();
  }
});

test("assign refuses bad arguments before anything is written", async () => {
  const seed = async (db) => db.collection("invoices").insertOne({ _id: 1, status: "issued", at: "yesterday" });
  const cases = [
    ["filter", "INVALID_ARGUMENT", (seqs, db) => seqs.assign(db.collection("invoices"), "issued", { sequence: "s", field: "n" })],
    ["filter-null", "INVALID_ARGUMENT", (seqs, db) => seqs.assign(db.collection("invoices"), null, { sequence: "s", field: "n" })],
    ["sort", "INVALID_ARGUMENT", (seqs, db) => seqs.assign(db.collection("invoices"), {}, { sequence: "s", field: "n", sort: { at: 2 } })],
    ["sequence", "INVALID_OPTION", (seqs, db) => seqs.assign(db.collection("invoices"), {}, { field: "n" })],
    ["unknown", "UNKNOWN_OPTION", (seqs, db) => seqs.assign(db.collection("invoices"), {}, { sequence: "s", field: "n", gapless: true })],
    ["collection", "INVALID_ARGUMENT", (seqs) => seqs.assign({}, {}, { sequence: "s", field: "n" })],
  ];
  for (const [label, code, act] of cases) await assertRefused(mongo, `assign_${label}`, code, act, seed);
  // A bad dateField value is a skipped document, reported, never numbered.
  const db = mongo.freshDb("assign_bad_date");
  await seed(db);
  const seqs = new Sequences(db);
  seqs.sequence("s", YEARLY);
  const outcome = await seqs.assign(db.collection("invoices"), {}, { sequence: "s", field: "n", formatField: "ref", dateField: "at" });
  assert.deepEqual(outcome.assigned, []);
  assert.deepEqual(
    outcome.skipped.map(({ _id, code }) => ({ _id, code })),
    [{ _id: 1, code: "INVALID_DATE" }],
  );
  assert.equal((await db.collection("invoices").findOne({ _id: 1 })).n, undefined);
});
