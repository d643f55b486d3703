// Counters that know their definition: every write of a counter records the options
// that decide its numbers (start, step, bounds, reset, time zone, format, gapless) and refuses a
// counter recorded with others (SEQUENCE_CONFLICT naming both and the first option that differs;
// nothing reserved), at no extra command on the hot path, where the filter holds its digest
// alone; counters without one (the tutorial's, older versions') or without a digest (written
// before digests) are recorded by their next reservation; adoptDefinition rewrites both on purpose.
import { test } from "node:test";
import assert from "node:assert/strict";
import mongoose from "mongoose";
import { Sequences, isMongoSeqError } from "mongo-seq";
import { sequencePlugin } from "mongo-seq/mongoose";
import { useMongo, assertRefused } from "./support.mjs";

const mongo = useMongo();

/** The digest of `{start: 1, step: 1}`: SHA-256 of `{"start":{"$numberLong":"1"},"step":{"$numberLong":"1"}}`, 16 hex digits. */
const PLAIN_DIGEST = "b1992bd103fd143e";

test("two processes with different steps on one counter: the second is refused naming step, nothing reserved", async () => {
  const db = mongo.freshDb("definition_steps");
  // Two processes: two Sequences (one Sequences already refuses a name asked with other options).
  const first = new Sequences(db).sequence("invoices", { block: 5 });
  const second = new Sequences(db).sequence("invoices", { step: 2, start: 2 });
  assert.equal(await first.next(), 1);
  const before = await db.collection("counters").findOne({ _id: "invoices" });
  assert.deepEqual(before.definition, { start: 1, step: 1 }, "the reservation recorded the definition");
  assert.equal(before.definitionDigest, PLAIN_DIGEST, "and its digest");
  mongo.commands.reset();
  const error = await second.next().catch((e) => e);
  assert.ok(isMongoSeqError(error), String(error?.stack ?? error));
  assert.equal(error.code, "SEQUENCE_CONFLICT");
  assert.match(error.message, /counter `invoices` was defined with other options: `start` is 1 there and 2 here/);
  assert.match(error.message, /stored definition \{start: 1, step: 1\}, ours \{start: 2, step: 2\}/);
  assert.deepEqual(error.details, { counterId: "invoices", option: "start", ours: { start: 2, step: 2 }, stored: { start: 1, step: 1 } });
  assert.deepEqual(mongo.commands.snapshot(), { findAndModify: 1, find: 1 }, "the update, then one read on the conflict path only");
  assert.deepEqual(await db.collection("counters").findOne({ _id: "invoices" }), before, "nothing reserved");
  // The first process goes on from its block and beyond.
  assert.deepEqual(await first.nextMany(6), [2, 3, 4, 5, 6, 7]);
});

test("the check costs no command: a warm reservation is one findAndModify, a new counter one upsert", async () => {
  const db = mongo.freshDb("definition_count");
  const seqs = new Sequences(db);
  const orders = seqs.sequence("orders");
  mongo.commands.reset();
  assert.equal(await orders.next(), 1);
  assert.equal(await orders.next(), 2);
  assert.deepEqual(mongo.commands.snapshot(), { findAndModify: 2 });
  const bounded = seqs.sequence("tickets", { max: 100, start: 10 });
  mongo.commands.reset();
  assert.equal(await bounded.next(), 10);
  assert.equal(await bounded.next(), 11);
  // A missing counter, guarded: update, read, insert; then one update.
  assert.deepEqual(mongo.commands.snapshot(), { findAndModify: 2, find: 1, insert: 1 });
  assert.deepEqual((await db.collection("counters").findOne({ _id: "tickets" })).definition, { start: 10, step: 1, max: 100 });
});

test("a counter without a definition (the tutorial's, an older version's) keeps working and is given one", async () => {
  const db = mongo.freshDb("definition_tutorial");
  await db.collection("counters").insertOne({ _id: "orders", seq: 41 });
  const orders = new Sequences(db).sequence("orders", { format: "ORD-{seq:04}" });
  assert.equal(await orders.next(), 42);
  const { definitionDigest, ...counter } = await db.collection("counters").findOne({ _id: "orders" });
  assert.deepEqual(counter, {
    _id: "orders",
    seq: 42,
    definition: { start: 1, step: 1, format: "ORD-{seq:04}" },
  });
  assert.match(definitionDigest, /^[0-9a-f]{16}$/);
  mongo.commands.reset();
  assert.equal(await orders.next(), 43);
  assert.deepEqual(mongo.commands.snapshot(), { findAndModify: 1 }, "recorded: the digest alone from then on");
});

test("a counter written before digests (a definition, no digest) is recorded once, then numbered by the digest", async () => {
  const db = mongo.freshDb("definition_no_digest");
  const counters = db.collection("counters");
  // As the release before digests left it.
  await counters.insertOne({ _id: "orders", seq: 7, definition: { start: 1, step: 1 } });
  const orders = new Sequences(db).sequence("orders");
  mongo.commands.reset();
  assert.equal(await orders.next(), 8);
  assert.deepEqual(mongo.commands.snapshot(), { findAndModify: 2, find: 1 }, "refused by the digest, read, recorded");
  assert.deepEqual(await counters.findOne({ _id: "orders" }), { _id: "orders", seq: 8, definition: { start: 1, step: 1 }, definitionDigest: PLAIN_DIGEST });
  mongo.commands.reset();
  assert.equal(await orders.next(), 9);
  assert.deepEqual(mongo.commands.snapshot(), { findAndModify: 1 });
  // Another definition written before digests: refused naming the option, nothing written.
  await counters.insertOne({ _id: "tickets", seq: 7, definition: { start: 1, step: 2 } });
  const before = await counters.findOne({ _id: "tickets" });
  await assert.rejects(new Sequences(db).sequence("tickets").next(), { code: "SEQUENCE_CONFLICT", details: { counterId: "tickets", option: "step", ours: { start: 1, step: 1 }, stored: { start: 1, step: 2 } } });
  assert.deepEqual(await counters.findOne({ _id: "tickets" }), before);
});

test("a digest beside another definition (rewritten by a release before digests) is refused after the write, naming the option", async () => {
  const db = mongo.freshDb("definition_stale_digest");
  const counters = db.collection("counters");
  await counters.insertOne({ _id: "orders", seq: 7, definition: { start: 1, step: 1, max: 1000 }, definitionDigest: PLAIN_DIGEST });
  await assert.rejects(new Sequences(db).sequence("orders").next(), { code: "SEQUENCE_CONFLICT", details: { counterId: "orders", option: "max", ours: { start: 1, step: 1 }, stored: { start: 1, step: 1, max: 1000 } } });
  assert.equal((await counters.findOne({ _id: "orders" })).seq, 8, "the number taken is lost: a gap, never a repeat");
});

test("setNext, seedFromMax and rewindAll refuse a counter of another definition; nothing written", async () => {
  const seed = (db) => db.collection("counters").insertOne({ _id: "orders", seq: 5, definition: { start: 1, step: 2 } });
  for (const [label, act, option] of [
    ["set_next", (seqs) => seqs.sequence("orders").setNext(100), "step"],
    ["set_next_force", (seqs) => seqs.sequence("orders").setNext(1, { force: true }), "step"],
    ["seed", (seqs) => seqs.sequence("orders").seedFromMax(500), "step"],
    ["reset", (seqs) => seqs.sequence("orders").rewindAll({ force: true }), "step"],
    ["max", (seqs) => seqs.sequence("orders", { step: 2, max: 1000 }).next(), "max"],
  ]) {
    const error = await assertRefused(mongo, `definition_${label}`, "SEQUENCE_CONFLICT", act, seed);
    assert.equal(error.details.option, option, label);
  }
});

test("a periodic series records reset and time zone: the same series in another zone is refused", async () => {
  const db = mongo.freshDb("definition_zone");
  const at = new Date("2026-03-01T12:00:00Z");
  const madrid = new Sequences(db).sequence("inv", { reset: "yearly", timeZone: "Europe/Madrid" });
  const utc = new Sequences(db).sequence("inv", { reset: "yearly" });
  assert.equal(await madrid.next({ date: at }), 1);
  const error = await utc.next({ date: at }).catch((e) => e);
  assert.equal(error.code, "SEQUENCE_CONFLICT", String(error?.stack ?? error));
  assert.equal(error.details.option, "timeZone");
  assert.equal((await db.collection("counters").findOne({ _id: "inv/2026" })).seq, 1);
});

// What the docs say a definition holds: a series that resets records its zone and (yearly) its
// year's first month at their defaults too; a sequence that never resets records none of them.
test("a definition records reset, timeZone and yearStart of a series at their defaults too, and none of them otherwise", async () => {
  const db = mongo.freshDb("definition_defaults");
  const seqs = new Sequences(db);
  const at = { date: new Date("2026-03-01T12:00:00Z") };
  await seqs.sequence("yearly", { reset: "yearly" }).next(at);
  await seqs.sequence("monthly", { reset: "monthly" }).next(at);
  await seqs.sequence("plain").next();
  const definitions = Object.fromEntries((await db.collection("counters").find().toArray()).map((c) => [c._id, c.definition]));
  assert.deepEqual(definitions, {
    "yearly/2026": { start: 1, step: 1, reset: "yearly", timeZone: "UTC", yearStart: 1 },
    "monthly/2026-03": { start: 1, step: 1, reset: "monthly", timeZone: "UTC" },
    plain: { start: 1, step: 1 },
  });
});

test("adoptDefinition rewrites the definition on purpose and says what changed; then the new options reserve", async () => {
  const db = mongo.freshDb("definition_adopt");
  await new Sequences(db).sequence("orders").nextMany(3);
  const wider = new Sequences(db).sequence("orders", { max: 1000 });
  await assert.rejects(wider.next(), { code: "SEQUENCE_CONFLICT" });
  mongo.commands.reset();
  assert.deepEqual(await wider.adoptDefinition(), {
    counterId: "orders",
    previous: { start: 1, step: 1 },
    definition: { start: 1, step: 1, max: 1000 },
    changed: ["max"],
  });
  assert.deepEqual(mongo.commands.snapshot(), { findAndModify: 1 });
  const adopted = await db.collection("counters").findOne({ _id: "orders" });
  assert.match(adopted.definitionDigest, /^[0-9a-f]{16}$/);
  assert.notEqual(adopted.definitionDigest, PLAIN_DIGEST, "adopt rewrites the digest with the definition");
  assert.equal(await wider.next(), 4, "the number is left as it was");
  assert.deepEqual((await wider.adoptDefinition()).changed, [], "adopting it again changes nothing");
  // The old options are now the other definition.
  await assert.rejects(new Sequences(db).sequence("orders").next(), { code: "SEQUENCE_CONFLICT", details: { counterId: "orders", option: "max", ours: { start: 1, step: 1 }, stored: { start: 1, step: 1, max: 1000 } } });
});

test("adoptDefinition of a counter that does not exist, or with bad options: refused, nothing written", async () => {
  // Another counter, so that the collection exists whatever a server does with an update that
  // matches nothing (mongo-java-server creates the collection).
  const other = (db) => db.collection("counters").insertOne({ _id: "invoices", seq: 3 });
  const error = await assertRefused(mongo, "adopt_missing", "INVALID_ARGUMENT", (seqs) => seqs.sequence("orders").adoptDefinition(), other);
  assert.match(error.message, /counter "orders" does not exist/);
  await assertRefused(mongo, "adopt_scope", "MISSING_SCOPE_FIELD", (seqs) => seqs.sequence("orders", { scope: ["tenant"] }).adoptDefinition({ scope: {} }));
  await assertRefused(mongo, "adopt_unknown", "UNKNOWN_OPTION", (seqs) => seqs.sequence("orders").adoptDefinition({ force: true }));
});

test("the mongoose plugin: a second schema numbering the same series with another step is refused; adoptDefinition is a static", async () => {
  const db = mongo.freshDb("definition_mongoose");
  // Two connections: two services (one connection's models share a Sequences, which refuses a
  // name asked with other options before any counter is read).
  const connect = () => mongoose.createConnection(mongo.server.uri, { dbName: db.databaseName }).asPromise();
  const [one, two] = [await connect(), await connect()];
  try {
    const make = (connection, options) => {
      const schema = new mongoose.Schema({ title: String, no: Number });
      schema.plugin(sequencePlugin, { field: "no", sequence: "tickets", ...options });
      return connection.model("Ticket", schema);
    };
    const A = make(one, {});
    const B = make(two, { step: 10, start: 10 });
    assert.equal((await A.create({ title: "a" })).no, 1);
    await assert.rejects(B.create({ title: "b" }), { code: "SEQUENCE_CONFLICT" });
    assert.equal(await B.countDocuments({ title: "b" }), 0, "nothing saved");
    const adopted = await B.adoptDefinition();
    assert.deepEqual(adopted.changed, ["start", "step"]);
    assert.equal((await B.create({ title: "b" })).no, 11);
  } finally {
    await one.close();
    await two.close();
  }
});
