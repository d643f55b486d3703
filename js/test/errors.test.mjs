// Bad input: every case fails with a MongoSeqError carrying its code, before anything is
// written (the database's contents are compared before and after).
import { test } from "node:test";
import assert from "node:assert/strict";
import { Double } from "mongodb";
import { Sequences, isMongoSeqError, core } from "mongo-seq";
import { useMongo, snapshot } from "./support.mjs";

const mongo = useMongo();

/** Runs `act` on a seeded database; asserts it throws/rejects with `code` and writes nothing. */
async function assertRefused(label, code, act, seed = async () => {}) {
  const db = mongo.freshDb(`err_${label}`);
  await db.collection("users").insertOne({ _id: 1, name: "existing" });
  await seed(db);
  const before = await snapshot(db);
  let caught;
  try {
    await act(new Sequences(db), db);
  } catch (error) {
    caught = error;
  }
  assert.ok(caught, `${label}: expected ${code}, but nothing was thrown`);
  assert.ok(isMongoSeqError(caught), `${label}: not a MongoSeqError: ${caught?.stack ?? caught}`);
  assert.equal(caught.code, code, `${label}: ${caught.message}`);
  assert.ok(caught.message.length > 10, "the message explains the problem");
  assert.deepEqual(await snapshot(db), before, `${label}: something was written`);
  return caught;
}

test("an unknown option is UNKNOWN_OPTION, naming the key", async () => {
  const error = await assertRefused("unknown", "UNKNOWN_OPTION", async (seqs) => seqs.sequence("userid", { colour: "red" }).next());
  assert.equal(error.details.key, "colour");
  await assertRefused("unknown_js", "UNKNOWN_OPTION", async (seqs, db) => new Sequences(db, { colection: "x" }));
  await assertRefused("unknown_insert", "UNKNOWN_OPTION", (seqs, db) =>
    seqs.insertOne(db.collection("users"), { name: "x" }, { sequence: "userid", feild: "_id" }),
  );
});

test("a zero step is INVALID_STEP", async () => {
  await assertRefused("zero_step", "INVALID_STEP", async (seqs) => seqs.sequence("userid", { step: 0 }).next());
});

test("a non-integer counter document is MALFORMED_COUNTER (bounded sequence)", async () => {
  await assertRefused(
    "malformed_string",
    "MALFORMED_COUNTER",
    (seqs) => seqs.sequence("userid", { max: 1000 }).next(),
    (db) => db.collection("counters").insertOne({ _id: "userid", seq: "forty-two" }),
  );
  await assertRefused(
    "malformed_double",
    "MALFORMED_COUNTER",
    (seqs) => seqs.sequence("userid", { max: 1000 }).current(),
    (db) => db.collection("counters").insertOne({ _id: "userid", seq: 1.5 }),
  );
});

// Default options use the tutorial's upsert; its filter only matches an integer `seq`, so a
// fractional or string counter is never incremented.
test("a non-integer counter document with default options writes nothing", async () => {
  for (const [label, seq] of [["fraction", 1.5], ["string", "12"]]) {
    await assertRefused(
      `malformed_default_${label}`,
      "MALFORMED_COUNTER",
      (seqs) => seqs.sequence("userid").next(),
      (db) => db.collection("counters").insertOne({ _id: "userid", seq }),
    );
  }
});

test("a legacy counter stored as a double (the old shell's seq: 5.0) keeps counting, and stays a double", async () => {
  const db = mongo.freshDb("legacy_double");
  await db.collection("counters").insertOne({ _id: "userid", seq: new Double(5) });
  const userIds = new Sequences(db).sequence("userid");
  assert.equal(await userIds.next(), 6);
  assert.deepEqual(await userIds.nextMany(2), [7, 8]);
  const counter = await db.collection("counters").findOne({ _id: "userid" }, { promoteValues: false });
  assert.equal(counter.seq._bsontype, "Double", "the tutorial's counter keeps its type");
  assert.equal(counter.seq.valueOf(), 8);
});

test("exceeding max is SEQUENCE_EXHAUSTED, for next(), nextMany() and insertMany()", async () => {
  const atMax = (db) => db.collection("counters").insertOne({ _id: "userid", seq: 10 });
  const error = await assertRefused("max_next", "SEQUENCE_EXHAUSTED", (seqs) => seqs.sequence("userid", { max: 10 }).next(), atMax);
  assert.equal(error.details.bound, 10);
  await assertRefused(
    "max_many",
    "SEQUENCE_EXHAUSTED",
    (seqs) => seqs.sequence("userid", { max: 12 }).nextMany(5),
    atMax,
  );
  await assertRefused(
    "max_insert_many",
    "SEQUENCE_EXHAUSTED",
    (seqs, db) => {
      seqs.sequence("userid", { max: 12 });
      return seqs.insertMany(db.collection("users"), [{}, {}, {}], { sequence: "userid", field: "n" });
    },
    atMax,
  );
  await assertRefused("max_set_next", "OUT_OF_BOUNDS", (seqs) => seqs.sequence("userid", { max: 10 }).setNext(11));
});

test("an empty or invalid sequence name is INVALID_NAME", async () => {
  for (const name of ["", " padded", "a/b", "tab\there", "x".repeat(201)]) {
    const error = await assertRefused(`name_${name.length}`, "INVALID_NAME", async (seqs) => seqs.sequence(name).next());
    assert.equal(error.details.name, name);
  }
  await assertRefused("name_type", "INVALID_OPTION", async (seqs) => seqs.sequence(42).next());
});

test("a scope field missing in the document is MISSING_SCOPE_FIELD, for every insert", async () => {
  const scoped = (seqs) => seqs.sequence("invoice", { scope: ["tenant"] });
  await assertRefused("scope_one", "MISSING_SCOPE_FIELD", (seqs, db) => {
    scoped(seqs);
    return seqs.insertOne(db.collection("invoices"), { amount: 5 }, { sequence: "invoice" });
  });
  const error = await assertRefused("scope_many", "MISSING_SCOPE_FIELD", (seqs, db) => {
    scoped(seqs);
    // The bad document is the last one: nothing may be reserved or inserted for the others.
    return seqs.insertMany(db.collection("invoices"), [{ tenant: "a" }, { tenant: "b" }, { amount: 1 }], { sequence: "invoice" });
  });
  assert.equal(error.details.field, "tenant");
  await assertRefused("scope_optimistic", "MISSING_SCOPE_FIELD", (seqs, db) =>
    seqs.insertOptimistic(db.collection("invoices"), { amount: 5 }, { sequence: scoped(seqs) }),
  );
  await assertRefused("scope_value", "INVALID_SCOPE_VALUE", (seqs, db) => {
    scoped(seqs);
    return seqs.insertOne(db.collection("invoices"), { tenant: ["a"] }, { sequence: "invoice" });
  });
});

test("other misuse is refused with a code", async () => {
  await assertRefused("no_sequence", "INVALID_OPTION", (seqs, db) => seqs.insertOne(db.collection("users"), {}, {}));
  await assertRefused("format_field", "INVALID_OPTION", (seqs, db) =>
    seqs.insertOne(db.collection("users"), {}, { sequence: "plain", formatField: "code" }),
  );
  await assertRefused("conflict", "SEQUENCE_CONFLICT", async (seqs) => {
    seqs.sequence("userid", { block: 10 });
    seqs.sequence("userid", { block: 20 });
  });
  await assertRefused("bad_field", "INVALID_ARGUMENT", (seqs, db) => seqs.insertOptimistic(db.collection("users"), {}, { field: "a.b" }));
  await assertRefused("bad_format", "INVALID_FORMAT", async (seqs) => seqs.sequence("userid", { format: "INV-{id}" }));
  await assertRefused("bad_value", "INVALID_ARGUMENT", (seqs) => seqs.sequence("userid").setNext("soon"));
});

test("every error code the core can raise is listed by core.errorCodes()", () => {
  const codes = core.errorCodes();
  assert.ok(codes.includes("SEQUENCE_EXHAUSTED") && codes.includes("MISSING_SCOPE_FIELD"));
  assert.equal(new Set(codes).size, codes.length);
});
