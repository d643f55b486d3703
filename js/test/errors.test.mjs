// Bad input: every case fails with a MongoSeqError carrying its code, before anything is
// written (the database's contents are compared before and after).
import { test } from "node:test";
import assert from "node:assert/strict";
import { Double, Long, MongoServerError, ObjectId } from "mongodb";
import { Sequences, core } from "mongo-seq";
import { useMongo, assertRefused as assertRefusedIn, snapshot } from "./support.mjs";

const mongo = useMongo();

const assertRefused = (label, code, act, seed) => assertRefusedIn(mongo, label, code, act, seed);

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

// A tutorial counter the legacy shell stored as a double is converted to int64 by its first
// reservation (a compare-and-set on the value read), so it costs one command from then on and
// several processes on it do not keep losing that compare-and-set (see processes.test.mjs).
test("a legacy counter stored as a double (the old shell's seq: 5.0) keeps counting, as an int64 from then on", async () => {
  const db = mongo.freshDb("legacy_double");
  await db.collection("counters").insertOne({ _id: "userid", seq: new Double(5) });
  const userIds = new Sequences(db).sequence("userid");
  assert.equal(await userIds.next(), 6);
  const counter = await db.collection("counters").findOne({ _id: "userid" }, { promoteValues: false });
  assert.equal(counter.seq._bsontype, "Long", "converted by the first reservation");
  mongo.commands.reset();
  assert.deepEqual(await userIds.nextMany(2), [7, 8]);
  assert.equal(mongo.commands.count("findAndModify") + mongo.commands.count("find"), 1, "one command per reservation from then on");
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
  // The README promises INVALID_NAME for every bad name, whatever its type (issue 8, item 10).
  for (const [label, name] of [["number", 42], ["object", { toString: () => "x" }], ["symbol", Symbol("x")], ["null", null]]) {
    const error = await assertRefused(`name_${label}`, "INVALID_NAME", async (seqs) => seqs.sequence(name).next());
    assert.match(error.message, /name.*must be a string/, error.message);
  }
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
  // Where the number and formatted id go are the core's checks, all INVALID_ARGUMENT (like `field`).
  await assertRefused("format_field", "INVALID_ARGUMENT", (seqs, db) =>
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

// Issue 8, item 3: a document that is not a document, or a number field the package cannot
// write, is refused before anything is reserved: no counter moves, nothing is inserted.
test("inserting something that is not a document writes nothing", async () => {
  const notDocuments = [
    ["null", null],
    ["undefined", undefined],
    ["number", 5],
    ["string", "x"],
    ["array", [{ a: 1 }]],
    ["date", new Date(0)],
    ["map", new Map([["a", 1]])],
    ["objectid", new ObjectId()],
    ["function", () => ({})],
  ];
  for (const [label, doc] of notDocuments) {
    const error = await assertRefused(`doc_one_${label}`, "INVALID_ARGUMENT", (seqs, db) =>
      seqs.insertOne(db.collection("users"), doc, { sequence: "userid" }),
    );
    assert.equal(error.details.argument, "doc", error.message);
    await assertRefused(`doc_optimistic_${label}`, "INVALID_ARGUMENT", (seqs, db) => seqs.insertOptimistic(db.collection("users"), doc));
    const many = await assertRefused(`doc_many_${label}`, "INVALID_ARGUMENT", (seqs, db) =>
      seqs.insertMany(db.collection("users"), [{ a: 1 }, doc], { sequence: "userid" }),
    );
    assert.equal(many.details.argument, "docs[1]", many.message);
  }
  for (const [label, docs] of [["null", null], ["object", { 0: {} }], ["string", "ab"]]) {
    await assertRefused(`docs_${label}`, "INVALID_ARGUMENT", (seqs, db) => seqs.insertMany(db.collection("users"), docs, { sequence: "userid" }));
  }
});

test("a number field or format field the package cannot write is refused by every insert and seedFromMax", async () => {
  const badFields = ["$n", "", "a.b", ".a", "a\u0000b", "x".repeat(1025), 5, null, {}];
  for (const [index, field] of badFields.entries()) {
    const check = (error) => assert.equal(error.details.argument, "field", error.message);
    check(await assertRefused(`field_one_${index}`, "INVALID_ARGUMENT", (seqs, db) => seqs.insertOne(db.collection("users"), {}, { sequence: "userid", field })));
    check(await assertRefused(`field_many_${index}`, "INVALID_ARGUMENT", (seqs, db) => seqs.insertMany(db.collection("users"), [{}], { sequence: "userid", field })));
    check(await assertRefused(`field_opt_${index}`, "INVALID_ARGUMENT", (seqs, db) => seqs.insertOptimistic(db.collection("users"), {}, { field })));
    check(await assertRefused(`field_seed_${index}`, "INVALID_ARGUMENT", (seqs, db) => seqs.sequence("userid").seedFromMax(db.collection("users"), field)));
    if (field === null) continue; // formatField: null means none
    const formatted = (seqs) => seqs.sequence("inv", { format: "INV-{seq}" });
    const format = await assertRefused(`format_field_${index}`, "INVALID_ARGUMENT", (seqs, db) =>
      seqs.insertOne(db.collection("users"), {}, { sequence: formatted(seqs), field: "n", formatField: field }),
    );
    assert.equal(format.details.argument, "formatField", format.message);
  }
  const scoped = (seqs) => seqs.sequence("inv", { scope: ["tenant", "customer.region"], format: "I{seq}" });
  for (const [label, options] of [
    ["same", { field: "n", formatField: "n" }],
    ["scope", { field: "tenant" }],
    ["scope_parent", { field: "customer" }],
    ["format_scope", { field: "n", formatField: "tenant" }],
  ]) {
    const doc = { tenant: "acme", customer: { region: "eu" } };
    await assertRefused(`field_clash_${label}`, "INVALID_ARGUMENT", (seqs, db) =>
      seqs.insertOne(db.collection("users"), doc, { sequence: scoped(seqs), ...options }),
    );
    await assertRefused(`field_clash_many_${label}`, "INVALID_ARGUMENT", (seqs, db) =>
      seqs.insertMany(db.collection("users"), [doc], { sequence: scoped(seqs), ...options }),
    );
  }
});

// Issue 8, item 6: a counter outside the sequence's range is reported, and never written.
test("a counter outside the sequence's bounds is MALFORMED_COUNTER and stays as it is", async () => {
  const cases = [
    ["below_min", { min: 1 }, -5],
    ["below_min_block", { min: 1, block: 10 }, -5],
    ["above_max", { max: 100 }, 150],
    ["countdown_above_max", { start: 100, step: -1, max: 100 }, 150],
    ["countdown_below_min", { start: -1, step: -1, min: -50 }, -60],
  ];
  for (const [label, options, seq] of cases) {
    const seed = (db) => db.collection("counters").insertOne({ _id: "userid", seq });
    await assertRefused(`bounds_next_${label}`, "MALFORMED_COUNTER", (seqs) => seqs.sequence("userid", options).next(), seed);
    await assertRefused(`bounds_many_${label}`, "MALFORMED_COUNTER", (seqs) => seqs.sequence("userid", options).nextMany(3), seed);
    await assertRefused(`bounds_current_${label}`, "MALFORMED_COUNTER", (seqs) => seqs.sequence("userid", options).current(), seed);
  }
});

// A refused seed writes nothing: `$max` leaves a malformed `seq` as it is (a string sorts after
// every number), so the definition it used to `$set` beside it was written by a refused call.
test("seedFromMax on a malformed counter is MALFORMED_COUNTER with nothing written", async () => {
  const cases = [
    ["string", {}, "5"],
    ["fraction", {}, 1.5],
    ["array", {}, [1]],
    ["above_max", { max: 100 }, 150],
    ["below_min", { min: 10, start: 10 }, 2],
    ["countdown_above", { start: 100, step: -1, max: 100 }, 150],
  ];
  for (const [label, options, seq] of cases) {
    const seed = (db) => db.collection("counters").insertOne({ _id: "userid", seq });
    await assertRefused(`seed_value_${label}`, "MALFORMED_COUNTER", (seqs) => seqs.sequence("userid", options).seedFromMax(options.step < 0 ? 50 : 60), seed);
    await assertRefused(`seed_collection_${label}`, "MALFORMED_COUNTER", (seqs, db) => seqs.sequence("userid", options).seedFromMax(db.collection("users")), async (db) => {
      await seed(db);
      await db.collection("users").insertOne({ _id: options.step < 0 ? 50 : 60 });
    });
  }
  // A legacy double counter is seeded, as an int64 from then on; a well-formed one as before.
  const db = mongo.freshDb("seed_legacy_double");
  await db.collection("counters").insertMany([{ _id: "legacy", seq: new Double(5) }, { _id: "ahead", seq: new Double(2000) }]);
  const seqs = new Sequences(db);
  assert.deepEqual(await seqs.sequence("legacy").seedFromMax(1000), { last: 1000, next: 1001 });
  assert.deepEqual(await seqs.sequence("ahead").seedFromMax(1000), { last: 2000, next: 2001 });
  const stored = await db.collection("counters").find({}, { promoteValues: false }).sort({ _id: 1 }).toArray();
  // (The same value as an int64 over 2000.0: the embedded server keeps the double, FAKE-SERVER.md row 13.)
  assert.deepEqual(stored.map((c) => [c._id, Number(c.seq), c.definition !== undefined]), [
    ["ahead", 2000, true],
    ["legacy", 1000, true],
  ]);
  assert.equal(stored[1].seq._bsontype, "Long");
});

// Issue 8, item 7: `$type: "long"` also matches an array holding a long; such a counter must
// be reported like any other malformed counter, with every kind of sequence.
test("a counter whose seq is an array is MALFORMED_COUNTER, never the server's error", async () => {
  for (const [label, options] of [["default", {}], ["bounded", { max: 1000 }], ["start", { start: 10 }], ["countdown", { start: -1, step: -1 }]]) {
    for (const [kind, seq] of [["ints", [1, 2]], ["long", [Long.fromNumber(3)]], ["empty", []], ["nested", [[1]]]]) {
      const seed = (db) => db.collection("counters").insertOne({ _id: "userid", seq });
      await assertRefused(`array_${label}_${kind}`, "MALFORMED_COUNTER", (seqs) => seqs.sequence("userid", options).next(), seed);
      // A next on the sequence's grid (a countdown from -1 counts down): only the counter is wrong.
      const next = (options.step ?? 1) < 0 ? -500 : 500;
      await assertRefused(`array_set_${label}_${kind}`, "MALFORMED_COUNTER", (seqs) => seqs.sequence("userid", options).setNext(next), seed);
    }
  }
});

test("every error code the core can raise is listed by core.errorCodes()", () => {
  const codes = core.errorCodes();
  assert.ok(codes.includes("SEQUENCE_EXHAUSTED") && codes.includes("MISSING_SCOPE_FIELD"));
  assert.equal(new Set(codes).size, codes.length);
});

test("a counters write the server refuses for its shard key is UNSUPPORTED_SHARD_KEY, naming the collection and what to do (mongos' reply, canned: no sharded cluster runs here)", async () => {
  const db = mongo.freshDb("sharded");
  // What mongos answers for a counters collection sharded on { tenant: 1 }: an upsert by `_id`
  // lacks the shard key.
  const refusal = new MongoServerError({ ok: 0, code: 61, codeName: "ShardKeyNotFound", errmsg: "Failed to target upsert by query :: could not extract exact shard key" });
  const shardedCounters = (collection) =>
    new Proxy(collection, {
      get(target, key) {
        if (key === "findOneAndUpdate") return async () => Promise.reject(refusal);
        const value = Reflect.get(target, key, target);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
  const sharded = { databaseName: db.databaseName, collection: (name) => shardedCounters(db.collection(name)) };
  const seqs = new Sequences(sharded);
  for (const act of [() => seqs.sequence("orders").next(), () => seqs.insertOne(db.collection("orders"), { item: "x" }, { sequence: "orders" })]) {
    const error = await act().then(() => undefined, (e) => e);
    assert.equal(error?.code, "UNSUPPORTED_SHARD_KEY", String(error?.stack ?? error));
    assert.equal(error.name, "MongoSeqError");
    assert.equal(error.details.collection, `${db.databaseName}.counters`);
    assert.match(error.message, new RegExp(`the collection ${db.databaseName}\\.counters is sharded on a key other than \`_id\``));
    assert.match(error.message, /could not extract exact shard key \(code 61\)/);
    assert.match(error.message, /keep the counters in an unsharded collection \(the package's `collection` option/);
    assert.match(error.message, /shard it on \{ _id: 1 \} or \{ _id: "hashed" \}/);
  }
  // Any other server error is the driver's, as it raised it.
  const other = new MongoServerError({ ok: 0, code: 11600, codeName: "InterruptedAtShutdown", errmsg: "shutting down" });
  const down = { databaseName: db.databaseName, collection: (name) => new Proxy(db.collection(name), { get: (t, k) => (k === "findOneAndUpdate" ? async () => Promise.reject(other) : typeof t[k] === "function" ? t[k].bind(t) : t[k]) }) };
  const error = await new Sequences(down).sequence("orders").next().then(() => undefined, (e) => e);
  assert.equal(error, other);
  assert.deepEqual(await snapshot(db), {});
});
