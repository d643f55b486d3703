// importCounters(): adopting the counters of mongoose-sequence (made here by mongoose-sequence
// itself) and of mongoose-auto-increment / @typegoose/auto-increment (their `identitycounters`
// documents): a dry run writes nothing, apply moves mongo-seq's counters past them and never
// backwards, and the plugin then numbers on from there.
import { test, after } from "node:test";
import assert from "node:assert/strict";
import mongoose from "mongoose";
import AutoIncrementFactory from "mongoose-sequence";
import { importCounters, isMongoSeqError, Sequences } from "mongo-seq";
import { sequencePlugin } from "mongo-seq/mongoose";
import { useMongo, snapshot, assertRefused } from "./support.mjs";

const mongo = useMongo();
let connection;
after(async () => {
  await connection?.dropDatabase().catch(() => {});
  await connection?.close();
});

test("mongoose-sequence: dry run reports and writes nothing; apply moves mongo-seq past it; the plugin continues", async () => {
  connection = await mongoose.createConnection(mongo.server.uri, { dbName: `mseq_import_${process.pid}` }).asPromise();
  // mongoose-sequence numbering orders (unscoped) and invoices per tenant (reference_fields).
  const AutoIncrement = AutoIncrementFactory(connection);
  const orderSchema = new mongoose.Schema({ item: String });
  orderSchema.plugin(AutoIncrement, { inc_field: "orderNo", id: "order_seq" });
  const invoiceSchema = new mongoose.Schema({ tenant: String });
  invoiceSchema.plugin(AutoIncrement, { inc_field: "invoiceNo", id: "invoice_seq", reference_fields: ["tenant"] });
  const Order = connection.model("Order", orderSchema);
  const Invoice = connection.model("Invoice", invoiceSchema);
  for (let i = 0; i < 5; i++) await new Order({ item: `i${i}` }).save();
  for (const tenant of ["acme", "acme", "globex"]) await new Invoice({ tenant }).save();

  const db = mongo.client.db(connection.db.databaseName);
  // The last number mongoose-sequence gave on each counter (its counter holds exactly that).
  const last = async (collection, field, filter = {}) =>
    (await db.collection(collection).find(filter).sort({ [field]: -1 }).limit(1).next())[field];
  const [orders, acme, globex] = [await last("orders", "orderNo"), await last("invoices", "invoiceNo", { tenant: "acme" }), await last("invoices", "invoiceNo", { tenant: "globex" })];
  const before = await snapshot(db);
  const dryRun = await importCounters(db, { from: "mongoose-sequence", counters: "mongo_seq_counters" });
  assert.deepEqual(await snapshot(db), before, "a dry run writes nothing");
  assert.equal(dryRun.applied, false);
  const summary = (report) => report.counters.map((c) => [c.counterId, c.sourceLast, c.before, c.action, c.after]).sort();
  assert.deepEqual(summary(dryRun), [
    ["invoice_seq/tenant=acme", acme, null, "create", null],
    ["invoice_seq/tenant=globex", globex, null, "create", null],
    ["order_seq", orders, null, "create", null],
  ]);

  const applied = await importCounters(db, { from: "mongoose-sequence", counters: "mongo_seq_counters", apply: true });
  assert.deepEqual(summary(applied), [
    ["invoice_seq/tenant=acme", acme, null, "create", acme],
    ["invoice_seq/tenant=globex", globex, null, "create", globex],
    ["order_seq", orders, null, "create", orders],
  ]);
  assert.deepEqual(await importCounters(db, { from: "mongoose-sequence", counters: "mongo_seq_counters", apply: true }).then(summary), [
    ["invoice_seq/tenant=acme", acme, acme, "keep", acme],
    ["invoice_seq/tenant=globex", globex, globex, "keep", globex],
    ["order_seq", orders, orders, "keep", orders],
  ], "running it again changes nothing");

  // The same models, now numbered by mongo-seq from the adopted counters.
  const nextOrders = new mongoose.Schema({ item: String });
  nextOrders.plugin(sequencePlugin, { field: "orderNo", sequence: "order_seq", counters: "mongo_seq_counters" });
  const nextInvoices = new mongoose.Schema({ tenant: String });
  nextInvoices.plugin(sequencePlugin, { field: "invoiceNo", sequence: "invoice_seq", scope: ["tenant"], counters: "mongo_seq_counters" });
  const Order2 = connection.model("Order2", nextOrders, "orders");
  const Invoice2 = connection.model("Invoice2", nextInvoices, "invoices");
  assert.equal((await Order2.create({ item: "next" })).orderNo, orders + 1);
  assert.deepEqual((await Invoice2.insertMany([{ tenant: "acme" }, { tenant: "globex" }])).map((d) => d.invoiceNo), [acme + 1, globex + 1]);
});

test("auto-increment (identitycounters { model, field, count }): renamed sequences, never backwards", async () => {
  const db = mongo.freshDb("import_ai");
  // As mongoose-auto-increment and @typegoose/auto-increment write them (count: last issued; a
  // plugin that never issued holds startAt - incrementBy).
  await db.collection("identitycounters").insertMany([
    { model: "User", field: "_id", count: 41 },
    { model: "Post", field: "postNo", count: -1 },
    { model: "Tag", field: "n", count: 3 },
    { field: "orphan", count: 9 },
  ]);
  await db.collection("counters").insertOne({ _id: "Tag.n", seq: 100 }); // mongo-seq already further

  const report = await importCounters(db, { from: "auto-increment", apply: true, names: { "User._id": "users" } });
  assert.deepEqual(
    report.counters.map((c) => [c.sequence, c.sourceLast, c.before, c.action, c.after]),
    [
      ["users", 41, null, "create", 41],
      ["Post.postNo", -1, null, "create", 0],
      ["Tag.n", 3, 100, "keep", 100],
    ],
  );
  assert.deepEqual(report.skipped.map((s) => s.reason), ["`model` must be a string, got nothing"]);
  assert.deepEqual(await db.collection("counters").find().sort({ _id: 1 }).toArray(), [
    // Each counter written records the sequence's definition.
    { _id: "Post.postNo", seq: 0, definition: { start: 1, step: 1 }, definitionDigest: "b1992bd103fd143e" },
    { _id: "Tag.n", seq: 100 }, // already further: not written
    { _id: "users", seq: 41, definition: { start: 1, step: 1 }, definitionDigest: "b1992bd103fd143e" },
  ]);
});

test("bad options: MongoSeqError naming the option, nothing written", async () => {
  for (const [options, code, says] of [
    [{ from: "auto-increment", apply: true, counters: "identitycounters" }, "INVALID_OPTION", /`counters`: `identitycounters` is the auto-increment plugins' collection/],
    [{ from: "auto-increment", apply: true, names: { "User._Id": "users" } }, "INVALID_OPTION", /`names`: `User._Id` is the key of no counter in `identitycounters` \(keys found: none\)/],
    [{ from: "sequence" }, "INVALID_OPTION", /`from`: must be one of mongoose-sequence, auto-increment/],
    [{ from: "auto-increment", apply: "yes" }, "INVALID_OPTION", /`apply`: must be a boolean/],
    [{ from: "auto-increment", dry: true }, "UNKNOWN_OPTION", /dry/],
    [{ from: "auto-increment", counterField: "a.b" }, "INVALID_OPTION", /counterField/],
    [null, "INVALID_OPTION", /must be an object/],
  ]) {
    const error = await assertRefused(mongo, "import_bad", code, (_, db) => importCounters(db, options));
    assert.match(error.message, says);
  }
  await assert.rejects(() => importCounters({}, { from: "auto-increment" }), (error) => isMongoSeqError(error) && error.code === "INVALID_ARGUMENT");
});

test("sharing mongoose-sequence's counters collection: its unique index refuses a counter at once (UNIQUE_INDEX_CONFLICT), not after retries", async () => {
  const shared = await mongoose.createConnection(mongo.server.uri, { dbName: `mseq_shared_${process.pid}` }).asPromise();
  try {
    // mongoose-sequence keeps its counters in `counters` with a unique index on {id, reference_value}.
    const AutoIncrement = AutoIncrementFactory(shared);
    const schema = new mongoose.Schema({ item: String });
    schema.plugin(AutoIncrement, { inc_field: "orderNo", id: "shared_order_seq" });
    const Order = shared.model("SharedOrder", schema);
    await Order.init();
    await new Order({ item: "a" }).save();
    const db = mongo.client.db(shared.db.databaseName);
    const sequences = new Sequences(db); // the same `counters` collection
    // mongo-seq's counters have neither field: the first one indexes as {id: null, reference_value: null} …
    assert.equal(await sequences.sequence("first").next(), 1);
    // … and every further one collides with it on that index.
    mongo.commands.reset();
    const error = await sequences.sequence("second").next().then(() => assert.fail("expected UNIQUE_INDEX_CONFLICT"), (e) => e);
    assert.equal(isMongoSeqError(error), true, String(error));
    assert.equal(error.code, "UNIQUE_INDEX_CONFLICT");
    assert.match(error.message, /id_1_reference_value_1/);
    assert.match(error.message, /counters collection/);
    // Whose index it is and what to do.
    assert.match(error.message, /it is mongoose-sequence's index on \{ id, reference_value \}/);
    assert.match(error.message, /`mongo-seq import --from mongoose-sequence --apply` \(the package's importCounters\(db, \{ from: "mongoose-sequence", apply: true \}\)\)/);
    assert.match(error.message, /or give mongo-seq a counters collection of its own/);
    assert.deepEqual(error.details, { collection: "counters", index: "id_1_reference_value_1" });
    assert.deepEqual(mongo.commands.snapshot(), { findAndModify: 1 }, "failed at the first reply: no read, no retry");
    // Its own collection works.
    assert.equal(await new Sequences(db, { collection: "mongo_seq_counters" }).sequence("second").next(), 1);
  } finally {
    await shared.dropDatabase().catch(() => {});
    await shared.close();
  }
});

// Replacing mongoose-sequence where it stands. Both default to `counters`; the
// import in place replaces its unique index by one over its own documents, so mongo-seq's
// counters fit beside them and a mongoose-sequence still running keeps its guarantee.
test("import in place (counters = source = `counters`): mongo-seq's counters fit beside mongoose-sequence's, which keeps numbering", async () => {
  const shared = await mongoose.createConnection(mongo.server.uri, { dbName: `mseq_in_place_${process.pid}` }).asPromise();
  try {
    const AutoIncrement = AutoIncrementFactory(shared);
    const schema = new mongoose.Schema({ tenant: String });
    schema.plugin(AutoIncrement, { inc_field: "orderNo", id: "inplace_seq" });
    const Order = shared.model("InPlaceOrder", schema);
    await Order.init();
    for (const tenant of ["a", "a", "b"]) await new Order({ tenant }).save();
    const db = mongo.client.db(shared.db.databaseName);
    const indexes = async () => (await db.collection("counters").indexes()).map((index) => index.name).sort();
    assert.deepEqual(await indexes(), ["_id_", "id_1_reference_value_1"]);

    const before = await snapshot(db);
    const dryRun = await importCounters(db, { from: "mongoose-sequence" });
    assert.deepEqual(dryRun.index, { dropped: "id_1_reference_value_1", created: "id_1_reference_value_-1_where_id", applied: false });
    assert.deepEqual(await snapshot(db), before, "a dry run writes nothing");
    assert.deepEqual(await indexes(), ["_id_", "id_1_reference_value_1"]);

    const report = await importCounters(db, { from: "mongoose-sequence", apply: true });
    assert.deepEqual(report.index, { dropped: "id_1_reference_value_1", created: "id_1_reference_value_-1_where_id", applied: true });
    const issued = (await db.collection("inplaceorders").find().toArray()).map((doc) => doc.orderNo);
    assert.deepEqual(report.counters.map((c) => [c.counterId, c.after]), [["inplace_seq", Math.max(...issued)]]);
    assert.deepEqual(await indexes(), ["_id_", "id_1_reference_value_-1_where_id"]);
    // mongo-seq's counters in the same collection: no second-counter conflict any more.
    const seqs = new Sequences(db);
    assert.deepEqual([await seqs.sequence("first").next(), await seqs.sequence("second").next()], [1, 1]);
    assert.equal(await seqs.sequence("inplace_seq").next(), Math.max(...issued) + 1, "past mongoose-sequence's numbers");
    // mongoose-sequence, still running during a rollout, still saves (from its own counter: two
    // numbering one series repeat numbers, so stop it once mongo-seq takes over) and keeps its
    // unique index's guarantee over its documents.
    assert.ok(Number.isInteger((await new Order({ tenant: "b" }).save()).orderNo));
    const own = await db.collection("counters").findOne({ id: "inplace_seq" });
    await assert.rejects(db.collection("counters").insertOne({ id: own.id, reference_value: own.reference_value, seq: 9 }), (error) => error.code === 11000);
    // Run again: idempotent.
    assert.equal((await importCounters(db, { from: "mongoose-sequence", apply: true })).index.applied, true);
  } finally {
    await shared.dropDatabase().catch(() => {});
    await shared.close();
  }
});
