// Hostile arguments at every public entry point: each is refused
// with a MongoSeqError whose code is documented and whose message names the argument or option
// and what was expected, in the package's words — never a Wasm trap, a Rust or serde internal,
// or a driver TypeError after a number was reserved — and nothing is written.
import { test } from "node:test";
import assert from "node:assert/strict";
import { Long } from "mongodb";
import { Sequences, core, importCounters, isMongoSeqError } from "mongo-seq";
import { useMongo, assertRefused, LEAKS } from "./support.mjs";

const mongo = useMongo();

/** Refused with `code`, nothing written, and the message names `name` (in backticks). */
async function refused(label, code, name, act) {
  const error = await assertRefused(mongo, label, code, act);
  if (name !== undefined) assert.ok(error.message.includes(`\`${name}\``), `${label}: message does not name \`${name}\`: ${error.message}`);
  return error;
}

const INEXACT = 9007199254740993; // a JS number: really 9007199254740992, not what was typed

test("sequence(): every integer option refuses NaN, infinities, fractions, inexact numbers and absurd sizes", async () => {
  const bad = [
    ["block", NaN, /NaN/],
    ["block", Infinity, /Infinity/],
    ["block", -Infinity, /Infinity/],
    ["block", 1.5, /integer/],
    ["block", "10", /integer/],
    ["block", 0, /at least 1/],
    ["block", 1e12, /1000000/],
    ["block", 1_000_001, /1000000/],
    ["start", INEXACT, /BigInt/],
    ["start", 2 ** 53, /BigInt/],
    ["step", -(2 ** 60), /BigInt/],
    ["min", NaN, /NaN/],
    ["max", 2n ** 64n, /64-bit/],
    ["max", -(2n ** 63n) - 1n, /64-bit/],
    ["start", () => 1, /function/],
    ["start", Symbol("s"), /symbol/],
    ["start", new Date(0), /Date/],
    ["start", { valueOf: () => 1 }, /integer/],
  ];
  for (const [option, value, message] of bad) {
    const error = await refused(`opt_${option}_${String(value).slice(0, 12)}`, "INVALID_OPTION", option, async (seqs) => seqs.sequence("s", { [option]: value }));
    assert.match(error.message, message, error.message);
    assert.equal(error.details.option, option);
  }
  const db = mongo.freshDb("opt_ok");
  const seqs = new Sequences(db);
  assert.equal(seqs.sequence("big", { start: 9007199254740993n }).options.start, 9007199254740993n, "BigInt is exact");
  assert.equal(seqs.sequence("long", { start: Long.fromString("9007199254740993") }).options.start, 9007199254740993n, "so is a Long");
  assert.equal(seqs.sequence("wide", { block: 1_000_000 }).options.block, 1_000_000, "the largest block");
});

test("sequence(): options that are not an object, and a name inside them, are refused", async () => {
  for (const [label, options] of [["number", 5], ["string", "block"], ["array", [1]], ["function", () => ({})], ["true", true]]) {
    await refused(`opts_${label}`, "INVALID_OPTION", "options", async (seqs) => seqs.sequence("s", options));
  }
  await refused("opts_name_differs", "INVALID_OPTION", "name", async (seqs) => seqs.sequence("s", { name: "t" }));
  const seqs = new Sequences(mongo.freshDb("opts_roundtrip"));
  const first = seqs.sequence("s", { block: 5 });
  assert.equal(seqs.sequence("s", first.options), first, "normalized options round-trip");
});

test("Sequence methods refuse wrong-typed arguments before any command", async () => {
  const cases = [
    ["next_scope", "INVALID_ARGUMENT", "scope", (s) => s.sequence("s").next(5)],
    ["next_scope_str", "INVALID_ARGUMENT", "scope", (s) => s.sequence("s").next("acme")],
    ["many_string", "INVALID_ARGUMENT", "count", (s) => s.sequence("s").nextMany("5")],
    ["many_nan", "INVALID_ARGUMENT", "count", (s) => s.sequence("s").nextMany(NaN)],
    ["many_neg", "INVALID_ARGUMENT", "count", (s) => s.sequence("s").nextMany(-1)],
    ["many_inexact", "INVALID_ARGUMENT", "count", (s) => s.sequence("s").nextMany(INEXACT)],
    ["many_undefined", "INVALID_ARGUMENT", "count", (s) => s.sequence("s").nextMany()],
    ["current_scope", "INVALID_ARGUMENT", "scope", (s) => s.sequence("s").current(7)],
    ["state_scope", "INVALID_ARGUMENT", "scope", (s) => s.sequence("s").state([])],
    ["set_nan", "INVALID_ARGUMENT", "next", (s) => s.sequence("s").setNext(NaN)],
    ["set_inexact", "INVALID_ARGUMENT", "next", (s) => s.sequence("s").setNext(INEXACT)],
    ["set_huge", "INVALID_ARGUMENT", "next", (s) => s.sequence("s").setNext(2n ** 64n)],
    ["set_object", "INVALID_ARGUMENT", "next", (s) => s.sequence("s").setNext({ toString: () => "5" })],
    ["set_opts", "INVALID_OPTION", "setNext options", (s) => s.sequence("s").setNext(5, 7)],
    ["set_force", "INVALID_OPTION", "force", (s) => s.sequence("s").setNext(5, { force: "yes" })],
    ["seed_field_number", "INVALID_ARGUMENT", "field", (s, db) => s.sequence("s").seedFromMax(db.collection("users"), 5)],
    ["seed_field_object", "INVALID_ARGUMENT", "field", (s, db) => s.sequence("s").seedFromMax(db.collection("users"), {})],
    ["seed_value_nan", "INVALID_ARGUMENT", "value", (s) => s.sequence("s").seedFromMax(NaN)],
    ["seed_value_null", "INVALID_ARGUMENT", "value", (s) => s.sequence("s").seedFromMax(null)],
    ["seed_value_string", "INVALID_ARGUMENT", "value", (s) => s.sequence("s").seedFromMax("users")],
    ["seed_opts", "INVALID_OPTION", "seedFromMax options", (s, db) => s.sequence("s").seedFromMax(db.collection("users"), "_id", 3)],
    ["format_nan", "INVALID_ARGUMENT", "value", async (s) => s.sequence("f", { format: "F{seq}" }).format(NaN)],
    ["format_inexact", "INVALID_ARGUMENT", "value", async (s) => s.sequence("f", { format: "F{seq}" }).format(INEXACT)],
    ["counter_id", "INVALID_ARGUMENT", "scope", async (s) => s.sequence("s").counterId(true)],
  ];
  for (const [label, code, name, act] of cases) await refused(label, code, name, act);
});

test("Sequences and its inserts refuse wrong-typed arguments before reserving a number", async () => {
  const cases = [
    ["db_null", "INVALID_ARGUMENT", "db", async () => new Sequences(null)],
    ["db_opts", "INVALID_OPTION", "Sequences options", async (s, db) => new Sequences(db, 5)],
    ["db_collection", "INVALID_OPTION", "collection", async (s, db) => new Sequences(db, { collection: 5 })],
    ["one_coll", "INVALID_ARGUMENT", "collection", (s) => s.insertOne("users", {}, { sequence: "s" })],
    ["many_coll", "INVALID_ARGUMENT", "collection", (s) => s.insertMany(null, [{}], { sequence: "s" })],
    ["opt_coll", "INVALID_ARGUMENT", "collection", (s) => s.insertOptimistic({ collectionName: "users" }, {})],
    ["wait_coll", "INVALID_ARGUMENT", "collection", (s) => s.waitForNumber("orders", 1)],
    ["one_sequence", "INVALID_OPTION", "sequence", (s, db) => s.insertOne(db.collection("users"), {}, { sequence: 5 })],
    ["one_opts", "INVALID_OPTION", "insert options", (s, db) => s.insertOne(db.collection("users"), {}, "s")],
    ["opt_sequence", "INVALID_OPTION", "sequence", (s, db) => s.insertOptimistic(db.collection("users"), {}, { sequence: {} })],
    ["opt_attempts_zero", "INVALID_OPTION", "maxAttempts", (s, db) => s.insertOptimistic(db.collection("users"), {}, { maxAttempts: 0 })],
    ["opt_attempts_nan", "INVALID_OPTION", "maxAttempts", (s, db) => s.insertOptimistic(db.collection("users"), {}, { maxAttempts: NaN })],
    ["opt_attempts_huge", "INVALID_OPTION", "maxAttempts", (s, db) => s.insertOptimistic(db.collection("users"), {}, { maxAttempts: 1e9 })],
    ["wait_timeout", "INVALID_OPTION", "timeoutMs", (s, db) => s.waitForNumber(db.collection("users"), 1, { timeoutMs: "5" })],
    ["wait_timeout_nan", "INVALID_OPTION", "timeoutMs", (s, db) => s.waitForNumber(db.collection("users"), 1, { timeoutMs: NaN })],
    ["wait_poll_zero", "INVALID_OPTION", "pollMs", (s, db) => s.waitForNumber(db.collection("users"), 1, { pollMs: 0 })],
    ["wait_poll_nan", "INVALID_OPTION", "pollMs", (s, db) => s.waitForNumber(db.collection("users"), 1, { pollMs: NaN })],
    ["wait_field", "INVALID_ARGUMENT", "field", (s, db) => s.waitForNumber(db.collection("users"), 1, { field: 5 })],
    ["wait_field_dollar", "INVALID_ARGUMENT", "field", (s, db) => s.waitForNumber(db.collection("users"), 1, { field: "$n" })],
  ];
  for (const [label, code, name, act] of cases) await refused(label, code, name, act);
});

// The core export is for tools: whatever they pass, a MongoSeqError (or a result), never a trap.
test("the core export never traps and never leaks internals, whatever it is given", () => {
  const hostile = [undefined, null, NaN, Infinity, -1, 1.5, INEXACT, 2n ** 64n, "", "x", true, [], [1], {}, { toString: () => "x" }, () => 1, Symbol("s"), new Date(0), new Map()];
  const spec = new core.SequenceSpec({ name: "s", format: "S{seq}" });
  const allocator = new core.BlockAllocator(10);
  const counter = spec.blockCounter("s");
  const yearly = new core.SequenceSpec({ name: "y", reset: "yearly", yearStart: 4, timeZone: "Europe/Paris", format: "Y{yyyy}-{seq}" });
  // The admin plans: the cold module's object, made from the same options.
  const admin = new core.SequenceAdmin({ name: "s", format: "S{seq}" });
  const yearlyAdmin = new core.SequenceAdmin({ name: "y", reset: "yearly", yearStart: 4, timeZone: "Europe/Paris", format: "Y{yyyy}-{seq}" });
  const calls = {
    checkInstant: (v) => core.checkInstant("date", v),
    checkInstantArgument: (v) => core.checkInstant(v, 0),
    periodOf: (v) => yearly.periodOf(v),
    periodStart: (v) => yearly.periodStart(v),
    nextPeriodStart: (v) => yearly.nextPeriodStart(v),
    counterIdPeriod: (v) => yearly.counterId(undefined, v),
    formatValuePeriod: (v) => yearly.formatValue(1, v),
    formatSeqPeriod: (v) => core.formatSeq("{yyyy}{seq}", 1, v),
    counterKey: (v) => yearly.counterKey(v),
    numberingIndex: (v) => yearly.numberingIndex(v),
    assignFilter: (v) => yearlyAdmin.assign("n", "code", v, undefined, undefined, 0),
    assignSort: (v) => yearlyAdmin.assign("n", "code", {}, v, undefined, 0),
    assignDateField: (v) => yearlyAdmin.assign("n", "code", {}, undefined, v),
    assignNow: (v) => yearlyAdmin.assign("n", "code", {}, undefined, undefined, v),
    insertOneDateField: (v) => yearly.insertOne("n", "code", {}, v),
    insertOneNow: (v) => yearly.insertOne("n", "code", {}, undefined, v),
    insertManyNow: (v) => yearly.insertMany("n", "code", 2, undefined, undefined, v),
    options: (v) => new core.SequenceSpec({ name: "o", reset: "yearly", yearStart: v }),
    optionsZone: (v) => new core.SequenceSpec({ name: "o", reset: "daily", timeZone: v }),
    optionsReset: (v) => new core.SequenceSpec({ name: "o", reset: v }),
    SequenceSpec: (v) => new core.SequenceSpec(v),
    SequenceAdmin: (v) => new core.SequenceAdmin(v),
    counterId: (v) => spec.counterId(v),
    formatValue: (v) => spec.formatValue(v),
    reserve: (v) => spec.reserve(v),
    reserveCount: (v) => spec.reserve({ counterId: "s", count: v }),
    current: (v) => spec.current(v),
    setNext: (v) => admin.setNext(v, 5, false),
    setNextValue: (v) => admin.setNext("s", v, false),
    setNextForce: (v) => admin.setNext("s", 5, v),
    seedFromMax: (v) => admin.seedFromMax("s", v),
    seedFromMaxId: (v) => admin.seedFromMax(v, 5),
    seedFromCollection: (v) => admin.seedFromCollection(v),
    seedFromCollectionDoc: (v) => admin.seedFromCollection("_id", v),
    insertOptimistic: (v) => spec.insertOptimistic(v),
    insertOptimisticFormat: (v) => spec.insertOptimistic("_id", undefined, v),
    insertOptimisticAttempts: (v) => spec.insertOptimistic("_id", undefined, undefined, v),
    checkInsertFields: (v) => spec.checkInsertFields(v),
    BlockAllocator: (v) => new core.BlockAllocator(v),
    refillRequest: (v) => allocator.refillRequest(v, 1),
    refillRequestWanted: (v) => allocator.refillRequest("s", v),
    refill: (v) => allocator.refill(v),
    take: (v) => allocator.take(v),
    rangeValues: (v) => core.rangeValues(v),
    formatSeq: (v) => core.formatSeq(v, 1),
    formatSeqValue: (v) => core.formatSeq("{seq}", v),
    readInteger: (v) => core.readInteger(v, "n"),
    readIntegerField: (v) => core.readInteger(1, v),
    audit: (v) => core.audit(v, 1, 1, null),
    auditStart: (v) => core.audit([], v, 1, null),
    account: (v) => core.account(1, 1, 3, v, []),
    accountLedger: (v) => core.account(1, 1, 3, [1], v),
    accountStep: (v) => core.account(1, v, 3, [], []),
    accountCounter: (v) => core.account(1, 1, v, [], []),
    unnumbered: (v) => core.unnumbered(v, []),
    unnumberedDeadLetters: (v) => core.unnumbered([], v),
    checkCount: (v) => core.checkCount("count", v),
    feed: (v) => spec.current("s").feed(v),
    feedJson: (v) => spec.current("s").feedJson(v),
    blockCounter: (v) => spec.blockCounter(v),
    counterTake: (v) => counter.take(v),
    counterReady: (v) => counter.ready(v),
    counterRefill: (v) => counter.refill(v),
    insertOne: (v) => spec.insertOne(v),
    insertOneFormat: (v) => spec.insertOne("_id", v),
    insertOneDoc: (v) => spec.insertOne("_id", undefined, v),
    insertMany: (v) => spec.insertMany(v, undefined, 1),
    insertManyCount: (v) => spec.insertMany("_id", undefined, v),
    insertManyDocs: (v) => spec.insertMany("_id", undefined, 1, v),
  };
  const problems = [];
  for (const [name, call] of Object.entries(calls)) {
    for (const value of hostile) {
      try {
        call(value);
      } catch (error) {
        const shown = `${name}(${typeof value === "symbol" ? "Symbol" : String(value).slice(0, 20)})`;
        if (!isMongoSeqError(error)) problems.push(`${shown}: ${error?.name}: ${error?.message}`);
        else if (LEAKS.test(error.message)) problems.push(`${shown}: leaks internals: ${error.message}`);
      }
    }
  }
  assert.deepEqual(problems, []);
});

test("Sequences bson option: refused unless it is a driver's BSON export; another driver copy's BSON works", async () => {
  const db = mongo.freshDb("args_bson");
  for (const [bson, says] of [
    [5, /`bson`: must be the BSON export of a mongodb driver/],
    [null, /`bson`: must be the BSON export/],
    [{}, /`bson`: has no `EJSON`/],
    [{ EJSON: {}, Long: {}, Int32() {}, Double() {}, calculateObjectSize() {} }, /`bson`: has no `EJSON.parse`/],
  ]) {
    assert.throws(
      () => new Sequences(db, { bson }),
      (error) => isMongoSeqError(error) && error.code === "INVALID_OPTION" && says.test(error.message) && !LEAKS.test(error.message),
    );
  }
  // mongoose 8 ships its own driver (6) and bson (6); this package resolves driver 7.
  const { default: mongoose } = await import("mongoose");
  const connection = await mongoose.createConnection(mongo.server.uri, { dbName: db.databaseName }).asPromise();
  try {
    await assert.rejects(
      () => new Sequences(connection.db).sequence("ids").next(),
      (error) => isMongoSeqError(error) && error.code === "INVALID_OPTION" && /`bson`: .*mongoose\.mongo\.BSON/.test(error.message),
    );
    assert.equal(await db.collection("counters").countDocuments(), 0, "nothing written");
    const ids = new Sequences(connection.db, { bson: mongoose.mongo.BSON }).sequence("ids", { start: 5 });
    assert.deepEqual(await ids.nextMany(2), [5, 6]);
  } finally {
    await connection.close();
  }
});

// Collection names the server would refuse (or that name its own collections)
// are the package's INVALID_OPTION, before any command — the rule is the core's, shared with
// the sidecar's config and the import options.
test("collection names with `$`, NUL, `system.*` or past the 255-byte namespace: INVALID_OPTION before any command", async () => {
  const db = mongo.freshDb("coll_names");
  const long = "c".repeat(256 - db.databaseName.length); // the namespace `<db>.<name>`: 257 bytes
  const bad = [
    ["$cmd", /must not contain `\$`/],
    ["count$", /must not contain `\$`/],
    ["a\0b", /NUL/],
    ["system.profile", /`system\.`/],
    ["system.js", /`system\.`/],
    ["", /must not be empty/],
    [long, /namespace .* over MongoDB's 255/],
  ];
  mongo.commands.reset();
  for (const [name, says] of bad) {
    const label = JSON.stringify(name.slice(0, 20));
    let error = captured(() => new Sequences(db, { collection: name }));
    assert.ok(isMongoSeqError(error) && error.code === "INVALID_OPTION", `${label}: ${error}`);
    assert.match(error.message, /^invalid option `collection`: /, label);
    assert.match(error.message, says, label);
    assert.doesNotMatch(error.message, LEAKS);
    for (const key of ["counters", "source"]) {
      error = await importCounters(db, { from: "mongoose-sequence", [key]: name }).then(() => assert.fail(`${label}: import accepted ${key}`), (e) => e);
      assert.ok(isMongoSeqError(error) && error.code === "INVALID_OPTION", `${label} ${key}: ${error}`);
      assert.match(error.message, new RegExp(`\`${key}\``), label);
    }
  }
  assert.deepEqual(mongo.commands.snapshot(), {}, "no command sent");
  assert.equal(new Sequences(db, { collection: "c".repeat(250 - db.databaseName.length) }).counters.collectionName.length, 250 - db.databaseName.length);
});

test("importCounters(db) without options says it got undefined", async () => {
  const db = mongo.freshDb("import_undefined");
  for (const [args, says] of [
    [[db], /`options`: must be an object \{ from, apply, … \}, got undefined/],
    [[db, null], /got null/],
    [[db, "mongoose-sequence"], /got string "mongoose-sequence"/],
  ]) {
    await assert.rejects(() => importCounters(...args), (error) => isMongoSeqError(error) && error.code === "INVALID_OPTION" && says.test(error.message));
  }
});

function captured(act) {
  try {
    act();
  } catch (error) {
    return error;
  }
  return undefined;
}
