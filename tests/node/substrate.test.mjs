// Proves the substrate with the official Node driver, against the embedded test server or
// MONGODB_URI: atomic $inc counters, duplicate-key errors, resumable change streams.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { MongoClient } from "mongodb";
import { startMongo, uniqueDbName, withTimeout, countCommands } from "../harness/mongo.mjs";

let server;
let client;
before(async () => {
  server = await startMongo();
  client = new MongoClient(server.uri);
  await client.connect();
});
after(async () => {
  await client?.close();
  await server?.stop();
});

test("8 concurrent tasks x 500 findOneAndUpdate($inc, upsert) issue exactly 1..4000", async () => {
  const db = client.db(uniqueDbName("substrate_inc"));
  const counters = db.collection("counters");
  const task = async () => {
    const got = [];
    for (let i = 0; i < 500; i++) {
      const after = await counters.findOneAndUpdate(
        { _id: "userid" },
        { $inc: { seq: 1 } },
        { upsert: true, returnDocument: "after" },
      );
      got.push(Number(after.seq));
    }
    return got;
  };
  const all = (await Promise.all(Array.from({ length: 8 }, task))).flat();
  assert.equal(all.length, 4000);
  assert.equal(new Set(all).size, 4000, "some number was issued twice");
  assert.deepEqual([...all].sort((a, b) => a - b), Array.from({ length: 4000 }, (_, i) => i + 1));
  await db.dropDatabase();
});

test("a unique index rejects a duplicate with code 11000", async () => {
  const db = client.db(uniqueDbName("substrate_dup"));
  const users = db.collection("users");
  await users.createIndex({ email: 1 }, { unique: true });
  await users.insertOne({ email: "sarah@example.com" });
  await assert.rejects(users.insertOne({ email: "sarah@example.com" }), (err) => err.code === 11000);
  assert.equal(await users.countDocuments(), 1);
  await db.dropDatabase();
});

async function readInserts(stream, n) {
  const seen = [];
  while (seen.length < n) {
    const event = await withTimeout(stream.next(), 20_000, "no change event within 20 s");
    assert.equal(event.operationType, "insert");
    assert.ok(event.fullDocument, "insert event carries fullDocument");
    seen.push(event.fullDocument.n);
  }
  return seen;
}

async function assertNothingMore(stream) {
  for (let i = 0; i < 5; i++) {
    assert.equal(await stream.tryNext(), null, "an event was delivered twice or unexpectedly");
  }
}

for (const option of ["resumeAfter", "startAfter"]) {
  test(`a change stream reopened with ${option} delivers exactly the missed events`, async () => {
    const db = client.db(uniqueDbName(`substrate_${option}`));
    const events = db.collection("events");
    await events.insertOne({ n: 0 });
    const pipeline = [{ $match: { operationType: "insert" } }];

    // A short await: every tryNext() that finds nothing waits this long (a real server's default: 1 s).
    const options = { maxAwaitTimeMS: 100 };
    let stream = events.watch(pipeline, options);
    await stream.tryNext(); // opens the cursor before the inserts, so it sees them
    await events.insertMany([1, 2, 3].map((n) => ({ n })));
    assert.deepEqual(await readInserts(stream, 3), [1, 2, 3]);
    const token = stream.resumeToken;
    await stream.close();

    await events.insertMany([4, 5, 6].map((n) => ({ n })));
    stream = events.watch(pipeline, { ...options, [option]: token });
    assert.deepEqual(await readInserts(stream, 3), [4, 5, 6], "exactly the missed events, in order");
    await assertNothingMore(stream);
    await events.insertOne({ n: 7 });
    assert.deepEqual(await readInserts(stream, 1), [7]);
    await stream.close();
    await db.dropDatabase();
  });
}

// A real server holds a change stream's getMore until an event comes or maxAwaitTimeMS passes,
// and runs other connections' commands meanwhile (the embedded server's patch 12,
// tests/FAKE-SERVER.md row 6). Counted, not timed: the driver's next() polls a server that
// answers empty getMores at once in a loop.
test("a change stream's getMore waits for the next event, and other commands run meanwhile", async () => {
  const dbName = uniqueDbName("substrate_await");
  const watcher = new MongoClient(server.uri, { monitorCommands: true });
  const commands = countCommands(watcher);
  try {
    const events = watcher.db(dbName).collection("events");
    await events.insertOne({ n: 0 });
    const opened = new Promise((resolve) => {
      watcher.on("commandSucceeded", (event) => {
        if (event.commandName === "aggregate") resolve();
      });
    });
    const stream = events.watch([{ $match: { operationType: "insert" } }], { maxAwaitTimeMS: 10_000 });
    const next = stream.next();
    await opened; // the stream sees what is inserted from now on
    await new Promise((resolve) => setTimeout(resolve, 200));
    // Another connection's insert gets through while the getMore waits.
    await client.db(dbName).collection("events").insertOne({ n: 1 });
    const event = await withTimeout(next, 20_000, "no change event within 20 s");
    assert.equal(event.fullDocument.n, 1);
    // One getMore: it waited, and the insert got through meanwhile (had the getMore held the
    // server, the insert would have waited for its empty answer, and a second getMore come).
    assert.equal(commands.count("getMore"), 1, "getMores sent by next() for one event");
    await stream.close();
  } finally {
    await watcher.close();
    await client.db(dbName).dropDatabase();
  }
});
