// Counters other recipes already keep, used in place with `counterField`: the Go
// block-allocation article's `{ _id, sequence }` and the Atlas trigger recipe's
// `{ _id: "<db>.<collection>", seq_value }`; the recipe keeps running beside mongo-seq on the
// same counter and no number is issued twice.
import { test } from "node:test";
import assert from "node:assert/strict";
import { Sequences } from "mongo-seq";
import { useMongo, assertRefused } from "./support.mjs";

const mongo = useMongo();

test("counterField 'sequence': the Go article's counter keeps counting, and its shape is kept (plus the definition)", async () => {
  const db = mongo.freshDb("shape_go");
  await db.collection("counters").insertOne({ _id: "invoices", sequence: 500 });
  const invoices = new Sequences(db).sequence("invoices", { counterField: "sequence", block: 10 });
  assert.equal(invoices.options.counterField, "sequence");
  assert.deepEqual(await invoices.nextMany(3), [501, 502, 503]);
  assert.deepEqual(await db.collection("counters").findOne({ _id: "invoices" }), { _id: "invoices", sequence: 510, definition: { start: 1, step: 1 }, definitionDigest: "b1992bd103fd143e" });
  assert.equal(await invoices.current(), 510);
  await invoices.setNext(600);
  assert.deepEqual(await db.collection("counters").findOne({ _id: "invoices" }), { _id: "invoices", sequence: 599, definition: { start: 1, step: 1 }, definitionDigest: "b1992bd103fd143e" });
});

test("counterField 'seq_value': the Atlas recipe's own update interleaved with mongo-seq's gives no duplicate", async () => {
  const db = mongo.freshDb("shape_atlas");
  const counters = db.collection("counters");
  const counterId = `${db.databaseName}.students`;
  // The recipe's trigger function: one $inc with upsert per inserted document.
  const recipeNext = async () => (await counters.findOneAndUpdate({ _id: counterId }, { $inc: { seq_value: 1 } }, { returnDocument: "after", upsert: true })).seq_value;
  const students = new Sequences(db).sequence(counterId, { counterField: "seq_value" });
  const batches = new Sequences(db).sequence(counterId, { counterField: "seq_value", block: 7 });
  const issued = [await recipeNext()];
  const work = [];
  for (let i = 0; i < 40; i++) {
    work.push(recipeNext(), students.next(), batches.next());
    if (i % 10 === 0) work.push(students.nextMany(5));
  }
  for (const value of await Promise.all(work)) issued.push(...[value].flat());
  assert.equal(new Set(issued).size, issued.length, "no number issued twice");
  const counter = await counters.findOne({ _id: counterId });
  assert.deepEqual(Object.keys(counter).sort(), ["_id", "definition", "definitionDigest", "seq_value"], "the recipe's shape is kept, plus the definition and its digest, which its $inc leaves alone");
  assert.ok(counter.seq_value >= Math.max(...issued), "the counter is past every number issued");
});

test("counterField on a counter of another shape, or a bad counterField: MongoSeqError, nothing written", async () => {
  const error = await assertRefused(
    mongo,
    "shape_missing",
    "MALFORMED_COUNTER",
    (seqs) => seqs.sequence("users", { counterField: "seq_value" }).next(),
    (db) => db.collection("counters").insertOne({ _id: "users", seq: 5 }),
  );
  assert.match(error.message, /no `seq_value` field/);
  for (const [value, says] of [
    ["", /counterField.*must not be empty/],
    ["a.b", /counterField.*plain top-level field/],
    ["_id", /counterField.*`_id` is reserved/],
    [5, /counterField.*must be a string, got number 5/],
  ]) {
    const refused = await assertRefused(mongo, "shape_bad", "INVALID_OPTION", (seqs) => seqs.sequence("users", { counterField: value }));
    assert.match(refused.message, says);
  }
});

// The Atlas recipe as published keys its counter by the change event's
// namespace, `_id: { db, coll }` (a document, in that field order), adopted in place with the
// `counterId` option — by the package and by the mongoose plugin.
test("counterId { db, coll }: the Atlas recipe's own counter, its $inc interleaved with mongo-seq's (package and mongoose plugin), no duplicate", async () => {
  const db = mongo.freshDb("shape_atlas_ns");
  const counters = db.collection("counters");
  const ns = { db: db.databaseName, coll: "students" };
  // The recipe's trigger function: `findOneAndUpdate({ _id: changeEvent.ns }, { $inc: { seq_value: 1 } }, { upsert: true, returnNewDocument: true })`.
  const recipeNext = async () => (await counters.findOneAndUpdate({ _id: ns }, { $inc: { seq_value: 1 } }, { returnDocument: "after", upsert: true })).seq_value;
  const issued = [await recipeNext(), await recipeNext()];
  const students = new Sequences(db).sequence("students", { counterId: ns, counterField: "seq_value", block: 5 });
  assert.deepEqual(students.options.counterId, { db: db.databaseName, coll: "students" });
  const work = [];
  for (let i = 0; i < 30; i++) work.push(recipeNext(), students.next());
  for (const value of await Promise.all(work)) issued.push(value);

  const { default: mongoose } = await import("mongoose");
  const connection = await mongoose.createConnection(mongo.server.uri, { dbName: db.databaseName }).asPromise();
  try {
    const { sequencePlugin } = await import("mongo-seq/mongoose");
    const schema = new mongoose.Schema({ name: String });
    schema.plugin(sequencePlugin, { field: "studentId", sequence: "students-plugin", counterId: ns, counterField: "seq_value" });
    const Student = connection.model("Student", schema);
    for (const doc of await Student.insertMany([{ name: "a" }, { name: "b" }])) issued.push(doc.studentId);
    issued.push((await Student.create({ name: "c" })).studentId);
    assert.equal(await Student.current(), Math.max(...issued));
  } finally {
    await connection.close();
  }
  issued.push(await recipeNext());
  assert.equal(new Set(issued).size, issued.length, `no number issued twice: ${issued}`);
  const all = await counters.find().toArray();
  assert.equal(all.length, 1, "one counter: the recipe's own, no second one made");
  assert.deepEqual(Object.keys(all[0]._id), ["db", "coll"], "its _id kept, in the recipe's field order");
  assert.deepEqual(Object.keys(all[0]).sort(), ["_id", "definition", "definitionDigest", "seq_value"], "the recipe's fields, and the definition with its digest");
  assert.equal(all[0].seq_value, Math.max(...issued));
  assert.deepEqual(await students.setNext(1000), { previousLast: Math.max(...issued), created: false, next: 1000 });
  assert.deepEqual(await students.rewindAll(), { rewound: 1, next: 1 });

  for (const [value, says] of [
    [{ $in: [1] }, /`counterId`: must be a document of fields, got one with `\$in`/],
    [5, /`counterId`: must be a string or a document/],
  ]) {
    const refused = await assertRefused(mongo, "shape_counter_id", "INVALID_OPTION", (seqs) => seqs.sequence("s", { counterId: value }));
    assert.match(refused.message, says);
  }
  await assertRefused(mongo, "shape_counter_id_scope", "INVALID_OPTION", (seqs) => seqs.sequence("s", { counterId: ns, scope: ["t"] }));
});

// Every name the package reports for a counter is its `_id`: a string `counterId` is the
// counter's id in counterId(), SEQUENCE_CONFLICT, void's ledger entries and results.
test("counterId \"shop.students\": counterId(), SEQUENCE_CONFLICT and void name the counter by its _id", async () => {
  const db = mongo.freshDb("shape_counter_id_string");
  const students = new Sequences(db).sequence("students", { counterId: "shop.students" });
  assert.equal(students.counterId(), "shop.students");
  const docs = db.collection("students");
  for (let i = 0; i < 3; i++) await docs.insertOne({ _id: await students.next() });
  assert.deepEqual(await db.collection("counters").find().toArray(), [{ _id: "shop.students", seq: 3, definition: { start: 1, step: 1 }, definitionDigest: "b1992bd103fd143e" }]);
  await docs.deleteOne({ _id: 2 });
  const voided = await students.void(2, { reason: "dropped out", collection: docs });
  assert.equal(voided.counterId, "shop.students");
  const entry = await db.collection("mongo_seq_ledger").findOne();
  assert.deepEqual([entry._id, entry.sequence], [{ counter: "shop.students", number: 2 }, "students"]);
  const again = await students.void(2, { reason: "twice", collection: docs }).catch((e) => e);
  assert.equal(again.code, "ALREADY_VOIDED");
  assert.equal(again.details.counterId, "shop.students");
  assert.match(again.message, /counter `shop\.students`/);
  // Another process with another step on the same counter.
  const conflict = await new Sequences(db).sequence("students", { counterId: "shop.students", step: 2 }).next().catch((e) => e);
  assert.equal(conflict.code, "SEQUENCE_CONFLICT", String(conflict));
  assert.equal(conflict.details.counterId, "shop.students");
  assert.match(conflict.message, /shop\.students/);
  assert.doesNotMatch(conflict.message.replaceAll("shop.students", ""), /`students`/);
  // The same counter through a sequence named after it: one series.
  assert.equal(await new Sequences(db).sequence("shop.students").next(), 4);
  assert.equal(await students.next(), 5);
});
