// Large batches: a batch never reserves numbers it cannot hand back. Sizes up
// to the documented limit (1,000,000 numbers per call) work, in one reservation; larger ones
// are refused before any command is sent, so no number is burnt.
import { test } from "node:test";
import assert from "node:assert/strict";
import { Sequences } from "mongo-seq";
import { useMongo, assertRefused } from "./support.mjs";

const mongo = useMongo();
const LIMIT = 1_000_000;

test("nextMany(200,000) returns every number in order, with one reservation", async () => {
  const db = mongo.freshDb("batch_many");
  const ids = new Sequences(db).sequence("ids", { block: 100 });
  assert.equal(await ids.next(), 1);
  mongo.commands.reset();
  const many = await ids.nextMany(200_000);
  assert.equal(mongo.commands.count("findAndModify"), 1);
  assert.equal(many.length, 200_000);
  assert.ok(many.every((value, index) => value === index + 2), "2 … 200,001 in order");
  assert.equal(await ids.current(), 200_001);
});

test("nextMany at the limit works; beyond it nothing is reserved", async () => {
  const db = mongo.freshDb("batch_limit");
  const ids = new Sequences(db).sequence("ids");
  const all = await ids.nextMany(LIMIT);
  assert.equal(all.length, LIMIT);
  assert.equal(all.at(-1), LIMIT);
  for (const count of [LIMIT + 1, 1e9, 2 ** 53 - 1]) {
    const error = await assertRefused(mongo, `batch_over_${count}`, "INVALID_ARGUMENT", (seqs) => seqs.sequence("ids").nextMany(count));
    assert.match(error.message, /`count`.*1000000/, error.message);
  }
  // A sequence holding a block refuses too, without dropping what it holds.
  const blocked = new Sequences(db).sequence("blocked", { block: 10 });
  assert.equal(await blocked.next(), 1);
  await assert.rejects(blocked.nextMany(LIMIT + 1), { code: "INVALID_ARGUMENT" });
  assert.equal(await blocked.next(), 2, "the block in hand is intact");
});

test("insertMany of 200,000 documents inserts them all, numbered in order, with one reservation", { timeout: 600_000 }, async () => {
  const db = mongo.freshDb("batch_insert");
  const orders = db.collection("orders");
  const docs = Array.from({ length: 200_000 }, (_, i) => ({ i }));
  mongo.commands.reset();
  const result = await new Sequences(db).insertMany(orders, docs, { sequence: "orders", field: "n" });
  assert.equal(mongo.commands.count("findAndModify"), 1);
  assert.equal(result.insertedCount, 200_000);
  assert.equal(result.values.length, 200_000);
  assert.equal(await orders.countDocuments(), 200_000);
  const last = await orders.find().sort({ n: -1 }).limit(1).next();
  assert.deepEqual([last.i, last.n], [199_999, 200_000]);
});

test("insertMany beyond the limit is refused before anything is reserved or inserted", async () => {
  const docs = new Array(LIMIT + 1).fill({});
  const error = await assertRefused(mongo, "batch_insert_over", "INVALID_ARGUMENT", (seqs, db) =>
    seqs.insertMany(db.collection("orders"), docs, { sequence: "orders" }),
  );
  assert.match(error.message, /`docs.length`: must be an integer from 0 to 1000000 \(split larger batches\), got 1000001/, error.message);
});
