// Sequence objects against a real driver and server: numbers, blocks, current, setNext,
// seedFromMax, scopes, formats and exact 64-bit values.
import { test } from "node:test";
import assert from "node:assert/strict";
import { Long } from "mongodb";
import { Sequences } from "mongo-seq";
import { useMongo } from "./support.mjs";

const mongo = useMongo();

test("next() follows the tutorial: counter { _id: name, seq: last issued }, starting at 1 (and its definition)", async () => {
  const db = mongo.freshDb("seq_next");
  const userIds = new Sequences(db).sequence("userid");
  assert.deepEqual([await userIds.next(), await userIds.next(), await userIds.next()], [1, 2, 3]);
  assert.deepEqual(await db.collection("counters").find().toArray(), [{ _id: "userid", seq: 3, definition: { start: 1, step: 1 }, definitionDigest: "b1992bd103fd143e" }]);
  assert.equal(await userIds.current(), 3);
});

test("a counter created by the tutorial's getNextSequence() keeps counting (legacy double seq)", async () => {
  const db = mongo.freshDb("seq_legacy");
  await db.collection("counters").insertOne({ _id: "userid", seq: 41.0 });
  const userIds = new Sequences(db).sequence("userid");
  assert.equal(await userIds.next(), 42);
});

test("block: one round trip per block; the unused rest is a gap, never reissued", async () => {
  const db = mongo.freshDb("seq_block");
  const counters = "counters_block";
  mongo.commands.reset();
  const first = new Sequences(db, { collection: counters }).sequence("orders", { block: 100, maxBlock: 100 });
  const numbers = [];
  for (let i = 0; i < 250; i++) numbers.push(await first.next());
  assert.deepEqual(numbers, Array.from({ length: 250 }, (_, i) => i + 1));
  assert.equal(mongo.commands.count("findAndModify"), 3, "250 numbers from blocks of 100 take 3 reservations");
  assert.equal(await first.current(), 300, "the counter records the whole third block");
  // A second process (a new Sequences) continues after the reserved block: 251..300 are a gap.
  const second = new Sequences(db, { collection: counters }).sequence("orders", { block: 100, maxBlock: 100 });
  assert.equal(await second.next(), 301);
  assert.equal(await first.next(), 251, "the first process still hands out its own block");
});

test("maxBlock: under load the block doubles per refill up to maxBlock; a process continues after what it held", async () => {
  const db = mongo.freshDb("seq_grow");
  // Refills come milliseconds apart here (less than a second): 10, 20, 40, then 80 (the cap).
  const ids = new Sequences(db).sequence("ids", { block: 10, maxBlock: 80 });
  assert.equal(ids.options.maxBlock, 80);
  mongo.commands.reset();
  const numbers = [];
  for (let i = 0; i < 230; i++) numbers.push(await ids.next());
  assert.deepEqual(numbers, Array.from({ length: 230 }, (_, i) => i + 1), "in order, no gap");
  assert.equal(mongo.commands.count("findAndModify"), 5, "10 + 20 + 40 + 80 + 80 numbers in 5 reservations (23 at block 10)");
  assert.equal(await ids.current(), 230);
  assert.equal(await ids.next(), 231);
  // The default maxBlock is 10 × block and is left out of the normalized options.
  const defaulted = new Sequences(db).sequence("d", { block: 10 });
  assert.equal(defaulted.options.maxBlock, undefined);
  mongo.commands.reset();
  for (let i = 0; i < 1000; i++) await defaulted.next();
  assert.equal(mongo.commands.count("findAndModify"), 13, "10 + 20 + 40 + 80, then 9 × 100 (the default cap, 10 × block) for 1,000 numbers");
  // What a process holds when it stops is a gap (here 50, at most maxBlock): another continues after it.
  assert.equal(await new Sequences(db).sequence("d", { block: 10 }).next(), 1051);
  await assert.rejects(async () => new Sequences(db).sequence("bad", { block: 10, maxBlock: 5 }), (error) => {
    assert.equal(error.code, "INVALID_OPTION");
    assert.equal(error.details.option, "maxBlock");
    assert.match(error.message, /at least `block` \(10\)/);
    return true;
  });
});

test("nextMany(1000) is one round trip and in order; nextMany(0) is empty", async () => {
  const db = mongo.freshDb("seq_many");
  const ids = new Sequences(db).sequence("ids", { block: 7 });
  await ids.next();
  mongo.commands.reset();
  const many = await ids.nextMany(1000);
  assert.equal(many.length, 1000);
  assert.deepEqual(many, Array.from({ length: 1000 }, (_, i) => i + 2));
  assert.equal(mongo.commands.count("findAndModify"), 1);
  assert.deepEqual(await ids.nextMany(0), []);
  await assert.rejects(ids.nextMany(-1), { code: "INVALID_ARGUMENT" });
  await assert.rejects(ids.nextMany(1.5), { code: "INVALID_ARGUMENT" });
});

test("concurrent next() calls share one refill and never repeat a number", async () => {
  const db = mongo.freshDb("seq_concurrent");
  const ids = new Sequences(db).sequence("ids", { block: 10, maxBlock: 10 });
  mongo.commands.reset();
  const numbers = await Promise.all(Array.from({ length: 50 }, () => ids.next()));
  assert.deepEqual([...numbers].sort((a, b) => a - b), Array.from({ length: 50 }, (_, i) => i + 1));
  assert.equal(mongo.commands.count("findAndModify"), 5, "50 numbers, blocks of 10: exactly 5 reservations");
});

/**
 * Watches the `name` commands of the test client from now on: the most in flight at once, and
 * `settled()`, which resolves once none is in flight (a refill ahead runs in the background).
 */
function watchInFlight(name) {
  let now = 0;
  let most = 0;
  let waiting = [];
  const started = (event) => event.commandName === name && (most = Math.max(most, ++now));
  const ended = (event) => {
    if (event.commandName !== name) return;
    now -= 1;
    if (now === 0) for (const resolve of waiting.splice(0)) resolve();
  };
  mongo.client.on("commandStarted", started).on("commandSucceeded", ended).on("commandFailed", ended);
  return {
    most: () => most,
    /** Resolves once no such command is in flight (after a turn, so one just begun has started). */
    settled: async () => {
      await new Promise((resolve) => setTimeout(resolve, 0));
      if (now > 0) await new Promise((resolve) => waiting.push(resolve));
    },
    stop: () => mongo.client.off("commandStarted", started).off("commandSucceeded", ended).off("commandFailed", ended),
  };
}

test("refillAhead: the next block is reserved at half a block, in the background; a process holds at most a block and a half", async () => {
  const db = mongo.freshDb("seq_ahead");
  const ids = new Sequences(db).sequence("ids", { block: 10, maxBlock: 10, refillAhead: true });
  const watch = watchInFlight("findAndModify");
  try {
    mongo.commands.reset();
    const numbers = [];
    for (let i = 0; i < 5; i++) numbers.push(await ids.next());
    await watch.settled();
    assert.equal(mongo.commands.count("findAndModify"), 1, "half the block is left: nothing reserved ahead yet");
    numbers.push(await ids.next()); // served from the block; then the refill ahead starts
    await watch.settled();
    assert.equal(mongo.commands.count("findAndModify"), 2, "the 6th number started the next block's reservation");
    assert.equal(await ids.current(), 20, "the counter holds the block ahead (11..20)");
    for (let i = 0; i < 14; i++) numbers.push(await ids.next());
    assert.deepEqual(numbers, Array.from({ length: 20 }, (_, i) => i + 1), "in order, no gap: the block ahead is served after the block");
    await watch.settled();
    assert.equal(mongo.commands.count("findAndModify"), 3, "16th number: half of 11..20 gone, the third block reserved ahead");
    assert.equal(watch.most(), 1, "one reservation in flight at a time");
    // What a process holds when it stops is a gap: another process continues after it.
    assert.equal(await new Sequences(db).sequence("ids", { block: 10, maxBlock: 10, refillAhead: true }).next(), 31);
  } finally {
    watch.stop();
  }
});

test("refillAhead with 10 concurrent callers: one reservation in flight at a time, numbers in order, exact counts", async () => {
  const db = mongo.freshDb("seq_ahead_concurrent");
  for (const refillAhead of [false, true]) {
    const name = `ids-${refillAhead}`;
    const ids = new Sequences(db).sequence(name, { block: 10, maxBlock: 10, refillAhead });
    await ids.next(); // the first block: 1..10
    const watch = watchInFlight("findAndModify");
    try {
      mongo.commands.reset();
      const perCaller = Array.from({ length: 10 }, () => []);
      await Promise.all(perCaller.map(async (mine) => {
        for (let i = 0; i < 20; i++) mine.push(await ids.next());
      }));
      for (const mine of perCaller) assert.deepEqual(mine, [...mine].sort((a, b) => a - b), `${name}: each caller's numbers increase`);
      const taken = perCaller.flat().sort((a, b) => a - b);
      assert.deepEqual(taken, Array.from({ length: 200 }, (_, i) => i + 2), `${name}: no gap, no repeat`);
      await watch.settled(); // a refill ahead may still be on its way
      assert.equal(watch.most(), 1, `${name}: one reservation in flight at a time`);
      const reservations = mongo.commands.count("findAndModify");
      const counter = await ids.current();
      assert.equal(counter, 10 + 10 * reservations, `${name}: one block per reservation`);
      // 2..201 after the first block: the blocks up to 201..210, one reservation each; with
      // refillAhead too (its block ahead of 201..210 is due only once half of that is gone).
      assert.equal(reservations, 20, `${name}: 20 blocks after the first`);
    } finally {
      watch.stop();
    }
  }
});

test("start, step, negative step and max", async () => {
  const db = mongo.freshDb("seq_options");
  const seqs = new Sequences(db);
  const evens = seqs.sequence("evens", { start: 1000, step: 2 });
  assert.deepEqual(await evens.nextMany(3), [1000, 1002, 1004]);
  const down = seqs.sequence("down", { start: 3, step: -1, min: 1 });
  assert.deepEqual(await down.nextMany(3), [3, 2, 1]);
  await assert.rejects(down.next(), { name: "MongoSeqError", code: "SEQUENCE_EXHAUSTED" });
  const small = seqs.sequence("small", { max: 5, block: 4 });
  assert.deepEqual(await small.nextMany(4), [1, 2, 3, 4]);
  assert.equal(await small.next(), 5, "a block near the bound takes what is left");
  await assert.rejects(small.next(), { code: "SEQUENCE_EXHAUSTED" });
  assert.deepEqual(await small.state(), { last: 5, next: null });
});

test("setNext moves forward, refuses backwards unless forced, and drops the local block", async () => {
  const db = mongo.freshDb("seq_setnext");
  const ids = new Sequences(db).sequence("ids", { block: 10, maxBlock: 10 });
  assert.equal(await ids.next(), 1);
  const outcome = await ids.setNext(5000);
  assert.deepEqual(outcome, { previousLast: 10, created: false, next: 5000 });
  assert.equal(await ids.next(), 5000, "the rest of the old block (2..10) is dropped");
  await assert.rejects(ids.setNext(100), (error) => {
    assert.equal(error.code, "BACKWARDS_REFUSED");
    assert.equal(error.details.next, 100);
    return true;
  });
  assert.equal(await ids.current(), 5009, "a refused setNext writes nothing");
  await ids.setNext(100, { force: true });
  assert.equal(await ids.next(), 100);
  assert.equal(await new Sequences(db).sequence("fresh").setNext(7).then((o) => o.created), true);
});

test("seedFromMax jumps past the largest number in a collection, never backwards", async () => {
  const db = mongo.freshDb("seq_seed");
  const users = db.collection("users");
  await users.insertMany([{ _id: 17 }, { _id: 3 }, { _id: "not-a-number" }, { _id: 41 }]);
  const ids = new Sequences(db).sequence("userid");
  assert.deepEqual(await ids.seedFromMax(users, "_id"), { last: 41, next: 42 });
  assert.equal(await ids.next(), 42);
  assert.deepEqual(await ids.seedFromMax(users), { last: 42, next: 43 }, "never moves backwards");
  assert.deepEqual(await ids.seedFromMax(1000), { last: 1000, next: 1001 });
  const empty = new Sequences(db).sequence("empty");
  assert.deepEqual(await empty.seedFromMax(db.collection("nothing")), { last: null, next: 1 });
});

test("scoped sequences keep one counter per scope value; formats render beside the number", async () => {
  const db = mongo.freshDb("seq_scope");
  const invoices = new Sequences(db).sequence("invoices", { scope: ["tenant"], format: "INV-{seq:06}" });
  assert.equal(await invoices.next({ tenant: "acme" }), 1);
  assert.equal(await invoices.next({ tenant: "acme" }), 2);
  assert.equal(await invoices.next({ tenant: "globex" }), 1);
  assert.equal(invoices.format(2), "INV-000002");
  const ids = (await db.collection("counters").find().sort({ _id: 1 }).toArray()).map((c) => c._id);
  assert.deepEqual(ids, ["invoices/tenant=acme", "invoices/tenant=globex"]);
  await assert.rejects(invoices.next(), { code: "MISSING_SCOPE_FIELD" });
});

test("numbers beyond 2^53 come back as exact BigInt and are stored as exact int64", async () => {
  const db = mongo.freshDb("seq_bigint");
  const big = new Sequences(db).sequence("big", { block: 3, format: "N{seq}" });
  const start = 2n ** 53n - 1n; // 9007199254740991: the last safe integer
  await big.setNext(start);
  const numbers = await big.nextMany(4);
  assert.deepEqual(numbers, [9007199254740991, 9007199254740992n, 9007199254740993n, 9007199254740994n]);
  const counter = await db.collection("counters").findOne({ _id: "big" }, { useBigInt64: true });
  assert.equal(counter.seq, 9007199254740994n, "the counter holds the exact int64");
  assert.equal(await big.current(), 9007199254740994n);
  assert.equal(big.format(9007199254740993n), "N9007199254740993");
  // Through an insert: the document's number is the exact int64 too.
  const seqs = new Sequences(db);
  const inserted = await seqs.insertOne(db.collection("things"), { a: 1 }, { sequence: big, field: "n", formatField: "code" });
  assert.deepEqual([inserted.value, inserted.formatted], [9007199254740995n, "N9007199254740995"]);
  const stored = await db.collection("things").findOne({ _id: inserted.insertedId }, { useBigInt64: true });
  assert.equal(stored.n, 9007199254740995n);
});

// At the top (or bottom) of the int64 range the reservation's filter itself
// refuses, whichever protocol the options select, so the counter can never wrap on any server.
test("the int64 limit: the last number is issued, then OVERFLOW, and the counter never wraps", async () => {
  const MAX = 2n ** 63n - 1n;
  const MIN = -(2n ** 63n);
  const cases = [
    // [label, options, counter seeded at, numbers expected before OVERFLOW]
    ["tutorial_upsert", {}, MAX - 2n, [MAX - 1n, MAX]],
    ["block", { block: 10 }, MAX - 3n, [MAX - 2n, MAX - 1n, MAX]],
    ["custom_start", { start: 5 }, MAX - 1n, [MAX]],
    ["countdown_upsert", { start: -1, step: -1 }, MIN + 2n, [MIN + 1n, MIN]],
    ["countdown_block", { start: -1, step: -1, block: 5 }, MIN + 1n, [MIN]],
  ];
  for (const [label, options, seeded, expected] of cases) {
    const db = mongo.freshDb(`seq_int64_${label}`);
    const counters = db.collection("counters");
    await counters.insertOne({ _id: "edge", seq: Long.fromBigInt(seeded) });
    const edge = new Sequences(db).sequence("edge", options);
    const got = [];
    for (const _ of expected) got.push(BigInt(await edge.next()));
    assert.deepEqual(got, expected, label);
    await assert.rejects(edge.next(), { code: "OVERFLOW" }, label);
    await assert.rejects(edge.nextMany(1), { code: "OVERFLOW" }, label);
    const counter = await counters.findOne({ _id: "edge" }, { useBigInt64: true });
    assert.equal(counter.seq, expected.at(-1), `${label}: the counter stays at the limit`);
  }
});
