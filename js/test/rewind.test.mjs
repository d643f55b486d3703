// rewindAll(): every counter of a sequence — unscoped and each scope — back to `start`, what
// mongoose-sequence's `counterReset(id)` does without a reference. Counters a
// mongo-seq sidecar keeps (gapless or not: the counter does not say) are refused unless forced;
// the result says how many counters were rewound; other sequences' counters are not touched.
import { test } from "node:test";
import assert from "node:assert/strict";
import mongoose from "mongoose";
import { Sequences, isMongoSeqError } from "mongo-seq";
import { sequencePlugin } from "mongo-seq/mongoose";
import { useMongo, assertRefused } from "./support.mjs";

const mongo = useMongo();

test("rewindAll(): every scope back to start, how many said, blocks held dropped, other sequences untouched", async () => {
  const db = mongo.freshDb("rewind_all");
  const seqs = new Sequences(db);
  const orders = seqs.sequence("orders", { scope: ["tenant"], start: 100, block: 10, maxBlock: 10 });
  for (const tenant of ["a", "b", "c"]) await orders.nextMany(3, { tenant });
  const others = [seqs.sequence("orders2"), seqs.sequence("ordersX", { scope: ["tenant"] })];
  for (const other of others) await other.next(other.options.scope.length ? { tenant: "a" } : undefined);
  await db.collection("counters").insertOne({ _id: "orders", seq: 500 }); // the unscoped counter of the name

  mongo.commands.reset();
  assert.deepEqual(await orders.rewindAll(), { rewound: 4, next: 100 });
  assert.deepEqual(mongo.commands.snapshot(), { find: 1, update: 1 }, "one read, one updateMany");
  assert.deepEqual(await orders.next({ tenant: "a" }), 100, "the block held before the rewind is dropped");
  assert.deepEqual(await orders.next({ tenant: "c" }), 100);
  const counters = await db.collection("counters").find().sort({ _id: 1 }).toArray();
  assert.deepEqual(counters.map((c) => [c._id, c.seq]), [
    ["orders", 99],
    ["orders/tenant=a", 109],
    ["orders/tenant=b", 99],
    ["orders/tenant=c", 109],
    ["orders2", 1],
    ["ordersX/tenant=a", 1],
  ]);
  assert.deepEqual(await seqs.sequence("nothing").rewindAll(), { rewound: 0, next: 1 });
});

test("rewindAll() of counters a sidecar keeps (a lease epoch, a pending gapless intent): REWIND_REFUSED, nothing written; force resets", async () => {
  for (const [label, counter, says] of [
    ["epoch", { _id: "students/class=#1", seq: 40, epoch: 3 }, /1 counter is kept by a mongo-seq sidecar trigger \("students\/class=#1".*may number gaplessly/],
    ["intent", { _id: "students/class=#1", seq: 40, intent: { first: 41, count: 2, ids: [1, 2], epoch: 3 } }, /pending gapless intent/],
  ]) {
    const error = await assertRefused(
      mongo,
      `rewind_${label}`,
      "REWIND_REFUSED",
      (seqs) => seqs.sequence("students", { scope: ["class"] }).rewindAll(),
      (db) => db.collection("counters").insertMany([counter, { _id: "students/class=#2", seq: 7 }]),
    );
    assert.match(error.message, says);
    assert.match(error.message, /nothing was written \(2 counter\(s\) found; pass force/);
    assert.deepEqual(error.details, { name: "students", counters: 2 });
  }
  const db = mongo.freshDb("rewind_force");
  await db.collection("counters").insertMany([
    { _id: "students/class=#1", seq: 40, epoch: 3, intent: { first: 41, count: 1, ids: [1], epoch: 3 } },
    { _id: "students/class=#2", seq: 7 },
  ]);
  assert.deepEqual(await new Sequences(db).sequence("students", { scope: ["class"] }).rewindAll({ force: true }), { rewound: 2, next: 1 });
  assert.deepEqual(await db.collection("counters").find().sort({ _id: 1 }).toArray(), [
    { _id: "students/class=#1", seq: 0, epoch: 3, definition: { start: 1, step: 1 }, definitionDigest: "b1992bd103fd143e" },
    { _id: "students/class=#2", seq: 0, definition: { start: 1, step: 1 }, definitionDigest: "b1992bd103fd143e" },
  ]);
  for (const options of [{ force: "yes" }, { forced: true }, 5]) {
    await assert.rejects(() => new Sequences(db).sequence("students", { scope: ["class"] }).rewindAll(options), isMongoSeqError);
  }
});

test("the mongoose plugin's Model.rewindAll(): every tenant's counter, like mongoose-sequence's counterReset(id)", async () => {
  const connection = await mongoose.createConnection(mongo.server.uri, { dbName: mongo.freshDb("rewind_mongoose").databaseName }).asPromise();
  try {
    const schema = new mongoose.Schema({ tenant: String, item: String });
    schema.plugin(sequencePlugin, { field: "orderNo", sequence: "order_seq", scope: ["tenant"] });
    const Order = connection.model("Order", schema);
    await Order.insertMany([{ tenant: "a" }, { tenant: "a" }, { tenant: "b" }]);
    await Order.deleteMany({});
    assert.deepEqual(await Order.rewindAll(), { rewound: 2, next: 1 });
    const again = await Order.insertMany([{ tenant: "a" }, { tenant: "b" }]);
    assert.deepEqual(again.map((doc) => doc.orderNo), [1, 1]);
    await assert.rejects(() => Order.rewindAll({ scope: { tenant: "a" } }), (error) => error.code === "UNKNOWN_OPTION");
  } finally {
    await connection.close();
  }
});
