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

test("an insert refused half-way counts only the documents it inserted (ordered and unordered)", async () => {
  const db = client.db(uniqueDbName("substrate_insert_n"));
  const docs = db.collection("docs");
  await docs.insertOne({ _id: 1 });
  for (const [ordered, inserted] of [[true, 1], [false, 2]]) {
    const base = ordered ? 10 : 20;
    const error = await docs.insertMany([{ _id: base }, { _id: 1 }, { _id: base + 1 }], { ordered }).then(
      () => assert.fail("the duplicate _id was accepted"),
      (e) => e,
    );
    assert.equal(error.code, 11000);
    assert.equal(error.result.insertedCount, inserted, `ordered: ${ordered}`);
  }
  assert.equal(await docs.countDocuments(), 4);
  await db.dropDatabase();
});

test("a change event of a document names its namespace (ns)", async () => {
  const db = client.db(uniqueDbName("substrate_ns"));
  const events = db.collection("events");
  await db.createCollection("events");
  const stream = events.watch([]);
  await stream.tryNext(); // opens the cursor before the insert
  await events.insertOne({ n: 1 });
  const event = await withTimeout(stream.next(), 20_000, "no change event within 20 s");
  assert.deepEqual(event.ns, { db: db.databaseName, coll: "events" });
  await stream.close();
  await db.dropDatabase();
});

test("a drop of a collection that does not exist succeeds or fails with NamespaceNotFound (26)", async () => {
  // MongoDB 7.0+ drops nothing without an error; before, it answers code 26, never a bare message.
  const db = client.db(uniqueDbName("substrate_ns_not_found"));
  await db.command({ drop: "missing" }).catch((e) => assert.equal(e.code, 26, `${e.message} (code ${e.code})`));
  await db.dropDatabase();
});

test("a refused delete statement is a write error, and the others run (unordered)", async () => {
  const db = client.db(uniqueDbName("substrate_delete_errors"));
  await db.collection("docs").insertMany([{ _id: 1 }, { _id: 2 }]);
  const reply = await db.command({ delete: "docs", deletes: [{ q: { _id: { $unsupported: 1 } }, limit: 0 }, { q: { _id: 2 }, limit: 1 }], ordered: false });
  assert.equal(reply.ok, 1);
  assert.equal(reply.n, 1);
  assert.equal(reply.writeErrors?.length, 1);
  assert.equal(reply.writeErrors[0].index, 0);
  assert.deepEqual(await db.collection("docs").find().toArray(), [{ _id: 1 }]);
  await db.dropDatabase();
});

test("a stream sees its own collection's drop, then invalidate, and no other collection's drop", async () => {
  const db = client.db(uniqueDbName("substrate_drop"));
  await db.createCollection("watched");
  await db.createCollection("other");
  const stream = db.collection("watched").watch([]);
  await stream.tryNext(); // opens the cursor before the writes
  await db.dropCollection("other");
  await db.collection("watched").insertOne({ _id: 1 });
  await db.dropCollection("watched");
  const next = () => withTimeout(stream.next(), 20_000, "no change event within 20 s");
  const seen = [await next(), await next(), await next()];
  assert.deepEqual(
    seen.map((e) => [e.operationType, e.ns?.coll]),
    [["insert", "watched"], ["drop", "watched"], ["invalidate", undefined]],
  );
  await stream.close();
  await db.dropDatabase();
});

test("hello names a replica set and its member, and a connection id", async () => {
  // The embedded server is a replica set only when asked (the conformance run asks for one).
  const previous = process.env.MONGO_TEST_SERVER_REPLICA_SET;
  process.env.MONGO_TEST_SERVER_REPLICA_SET = "substrate";
  const set = await startMongo();
  if (previous === undefined) delete process.env.MONGO_TEST_SERVER_REPLICA_SET;
  else process.env.MONGO_TEST_SERVER_REPLICA_SET = previous;
  const members = new MongoClient(set.uri);
  try {
    let topology;
    members.on("topologyDescriptionChanged", (e) => (topology = e.newDescription.type));
    const hello = await members.db("admin").command({ hello: 1 });
    assert.equal(typeof hello.setName, "string");
    assert.ok(hello.hosts.includes(hello.me) && hello.primary === hello.me, JSON.stringify(hello));
    assert.equal(typeof hello.connectionId, "number");
    assert.equal(topology, "ReplicaSetWithPrimary");
  } finally {
    await members.close();
    await set.stop();
  }
});

// A real server holds a change stream's getMore until an event comes or maxAwaitTimeMS passes,
// and runs other connections' commands meanwhile (the embedded server's patch 18,
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
