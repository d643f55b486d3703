// Proves the substrate with the official Node driver, against the embedded test server or
// MONGODB_URI: atomic $inc counters, duplicate-key errors, resumable change streams.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { MongoClient } from "mongodb";
import { startMongo, uniqueDbName, withTimeout } from "../harness/mongo.mjs";

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
    await new Promise((r) => setTimeout(r, 100));
  }
}

for (const option of ["resumeAfter", "startAfter"]) {
  test(`a change stream reopened with ${option} delivers exactly the missed events`, async () => {
    const db = client.db(uniqueDbName(`substrate_${option}`));
    const events = db.collection("events");
    await events.insertOne({ n: 0 });
    const pipeline = [{ $match: { operationType: "insert" } }];

    let stream = events.watch(pipeline);
    await stream.tryNext(); // opens the cursor before the inserts, so it sees them
    await events.insertMany([1, 2, 3].map((n) => ({ n })));
    assert.deepEqual(await readInserts(stream, 3), [1, 2, 3]);
    const token = stream.resumeToken;
    await stream.close();

    await events.insertMany([4, 5, 6].map((n) => ({ n })));
    stream = events.watch(pipeline, { [option]: token });
    assert.deepEqual(await readInserts(stream, 3), [4, 5, 6], "exactly the missed events, in order");
    await assertNothingMore(stream);
    await events.insertOne({ n: 7 });
    assert.deepEqual(await readInserts(stream, 1), [7]);
    await stream.close();
    await db.dropDatabase();
  });
}
