// Inserting numbered documents: insertOne/insertMany over a counter, the tutorial's optimistic
// loop, and reading back a number another process assigns.
import { test } from "node:test";
import assert from "node:assert/strict";
import { Sequences } from "mongo-seq";
import { useMongo } from "./support.mjs";

const mongo = useMongo();

test("insertOne numbers _id and inserts a copy (the tutorial's users example)", async () => {
  const db = mongo.freshDb("ins_one");
  const seqs = new Sequences(db);
  const users = db.collection("users");
  const sarah = { name: "Sarah C." };
  const result = await seqs.insertOne(users, sarah, { sequence: "userid", field: "_id" });
  assert.deepEqual(result, { insertedId: 1, value: 1, formatted: undefined });
  await seqs.insertOne(users, { name: "Bob D." }, { sequence: "userid" });
  assert.deepEqual(await users.find().sort({ _id: 1 }).toArray(), [
    { _id: 1, name: "Sarah C." },
    { _id: 2, name: "Bob D." },
  ]);
  assert.deepEqual(sarah, { name: "Sarah C." }, "the caller's document is not modified");
});

test("insertOne skips numbers already taken (duplicate key on the field) and retries", async () => {
  const db = mongo.freshDb("ins_retry");
  const users = db.collection("users");
  await users.insertMany([{ _id: 1, name: "imported" }, { _id: 2, name: "imported" }]);
  const result = await new Sequences(db).insertOne(users, { name: "new" }, { sequence: "userid" });
  assert.equal(result.value, 3);
  assert.equal(await users.countDocuments(), 3);
});

test("insertOne surfaces a duplicate key on another unique field at once", async () => {
  const db = mongo.freshDb("ins_other_dup");
  const users = db.collection("users");
  await users.createIndex({ email: 1 }, { unique: true });
  const seqs = new Sequences(db);
  await seqs.insertOne(users, { email: "a@example.com" }, { sequence: "userid" });
  mongo.commands.reset();
  await assert.rejects(seqs.insertOne(users, { email: "a@example.com" }, { sequence: "userid" }), { code: 11000 });
  assert.equal(mongo.commands.count("insert"), 1, "no retry loop on a foreign duplicate");
  assert.equal(mongo.commands.count("findAndModify"), 1);
});

test("insertMany surfaces a duplicate key on another unique field at once; the documents before it are in", async () => {
  const db = mongo.freshDb("ins_many_other_dup");
  const users = db.collection("users");
  await users.createIndex({ email: 1 }, { unique: true });
  await users.insertOne({ _id: "taken", email: "b@example.com" });
  const seqs = new Sequences(db);
  mongo.commands.reset();
  const docs = [{ email: "a@example.com" }, { email: "b@example.com" }, { email: "c@example.com" }];
  await assert.rejects(seqs.insertMany(users, docs, { sequence: "userid", field: "n" }), { code: 11000 });
  assert.equal(mongo.commands.count("insert"), 1, "no retry loop on a foreign duplicate");
  assert.deepEqual((await users.find({ n: { $exists: true } }).toArray()).map((d) => [d.email, d.n]), [["a@example.com", 1]]);
});

test("insertMany of 1,000 documents issues exactly one counter command", async () => {
  const db = mongo.freshDb("ins_many");
  const seqs = new Sequences(db);
  const orders = db.collection("orders");
  const docs = Array.from({ length: 1000 }, (_, i) => ({ item: i }));
  mongo.commands.reset();
  const result = await seqs.insertMany(orders, docs, { sequence: "orderid", field: "number" });
  assert.equal(mongo.commands.count("findAndModify"), 1, JSON.stringify(mongo.commands.snapshot()));
  assert.equal(mongo.commands.count("find"), 0, "no counter reads");
  assert.equal(result.insertedCount, 1000);
  assert.deepEqual(result.values, Array.from({ length: 1000 }, (_, i) => i + 1));
  const stored = await orders.find({}, { projection: { _id: 0 } }).sort({ number: 1 }).toArray();
  assert.deepEqual(stored, docs.map((doc, i) => ({ item: doc.item, number: i + 1 })), "numbered in the given order");
});

test("insertMany with a scope takes one reservation per scope value; formats fill formatField", async () => {
  const db = mongo.freshDb("ins_many_scope");
  const seqs = new Sequences(db);
  seqs.sequence("invoice", { scope: ["tenant"], format: "INV-{seq:04}" });
  const invoices = db.collection("invoices");
  const docs = ["a", "b", "a", "a", "b"].map((tenant) => ({ tenant }));
  mongo.commands.reset();
  const result = await seqs.insertMany(invoices, docs, { sequence: "invoice", field: "no", formatField: "code" });
  assert.equal(mongo.commands.count("findAndModify"), 2);
  assert.deepEqual(result.values, [1, 1, 2, 3, 2]);
  assert.deepEqual(result.formatted, ["INV-0001", "INV-0001", "INV-0002", "INV-0003", "INV-0002"]);
  const stored = await invoices.find({ tenant: "a" }, { projection: { _id: 0 } }).sort({ no: 1 }).toArray();
  assert.deepEqual(stored, [
    { tenant: "a", no: 1, code: "INV-0001" },
    { tenant: "a", no: 2, code: "INV-0002" },
    { tenant: "a", no: 3, code: "INV-0003" },
  ]);
});

test("insertMany renumbers the documents after a taken number and keeps the ones before", async () => {
  const db = mongo.freshDb("ins_many_retry");
  const users = db.collection("users");
  await users.insertOne({ _id: 3, name: "imported" });
  const result = await new Sequences(db).insertMany(users, [{ n: "a" }, { n: "b" }, { n: "c" }, { n: "d" }], { sequence: "userid" });
  assert.deepEqual(result.values, [1, 2, 5, 6], "3 was taken: c and d get the next reservation");
  assert.deepEqual(
    (await users.find().sort({ _id: 1 }).toArray()).map((d) => d._id),
    [1, 2, 3, 5, 6],
  );
});

test("insertOptimistic: the tutorial's loop (max(_id) + 1, retry on duplicate key)", async () => {
  const db = mongo.freshDb("ins_optimistic");
  const users2 = db.collection("users2");
  const seqs = new Sequences(db);
  const grace = await seqs.insertOptimistic(users2, { name: "Grace H." });
  const ted = await seqs.insertOptimistic(users2, { name: "Ted R." });
  assert.deepEqual([grace.value, ted.value], [1, 2]);
  assert.deepEqual(await users2.find().sort({ _id: 1 }).toArray(), [
    { _id: 1, name: "Grace H." },
    { _id: 2, name: "Ted R." },
  ]);
  // Concurrent callers collide on the same candidate; each retries until its insert wins.
  const results = await Promise.all(Array.from({ length: 10 }, (_, i) => seqs.insertOptimistic(users2, { i })));
  assert.deepEqual(results.map((r) => r.value).sort((a, b) => a - b), Array.from({ length: 10 }, (_, i) => i + 3));
  assert.equal(await db.collection("counters").countDocuments(), 0, "no counters collection involved");
});

test("insertOptimistic with a sequence's start, step and format in another field", async () => {
  const db = mongo.freshDb("ins_optimistic_opts");
  const tickets = db.collection("tickets");
  await tickets.createIndex({ no: 1 }, { unique: true });
  const seqs = new Sequences(db);
  const ticket = seqs.sequence("ticket", { start: 100, step: 10, format: "T{seq}" });
  const first = await seqs.insertOptimistic(tickets, { title: "x" }, { sequence: ticket, field: "no", formatField: "code" });
  const second = await seqs.insertOptimistic(tickets, { title: "y" }, { sequence: "ticket", field: "no", formatField: "code" });
  assert.deepEqual([first.value, first.formatted, second.value, second.formatted], [100, "T100", 110, "T110"]);
  const stored = await tickets.findOne({ _id: second.insertedId });
  assert.equal(stored.no, 110);
});

test("waitForNumber resolves with the number another process writes, or times out with a code", async () => {
  const db = mongo.freshDb("ins_wait");
  const orders = db.collection("orders");
  const { insertedId } = await orders.insertOne({ item: "book" });
  const seqs = new Sequences(db);
  // Stands in for the sidecar: numbers the document a little later.
  const sidecar = setTimeout(() => orders.updateOne({ _id: insertedId }, { $set: { seq: 2n ** 60n } }), 150);
  try {
    assert.equal(await seqs.waitForNumber(orders, insertedId, { field: "seq", timeoutMs: 5000 }), 2n ** 60n);
  } finally {
    clearTimeout(sidecar);
  }
  const other = (await orders.insertOne({ item: "pen" })).insertedId;
  const started = Date.now();
  await assert.rejects(seqs.waitForNumber(orders, other, { timeoutMs: 300 }), (error) => {
    assert.equal(error.name, "MongoSeqError");
    assert.equal(error.code, "WAIT_TIMEOUT");
    assert.deepEqual(error.details, { field: "seq", timeoutMs: 300, found: true });
    return true;
  });
  assert.ok(Date.now() - started >= 300);
  await orders.updateOne({ _id: other }, { $set: { seq: "soon" } });
  await assert.rejects(seqs.waitForNumber(orders, other, { timeoutMs: 300 }), { code: "MALFORMED_DOCUMENT" });
  // The sidecar may number a nested field (`field = "meta.seq"` in its config).
  const nested = (await orders.insertOne({ item: "ink", meta: { seq: 7 } })).insertedId;
  assert.equal(await seqs.waitForNumber(orders, nested, { field: "meta.seq", timeoutMs: 1000 }), 7);
});
