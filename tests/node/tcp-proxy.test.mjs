// The TCP proxy the chaos test and the benchmarks share (tests/tcp-proxy, tests/harness/tcp-proxy.mjs):
// it counts exactly the commands a driver sends, holds each direction back by the delay it is
// given, and cuts every connection on demand.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { MongoClient } from "mongodb";
import { startMongo, uniqueDbName, countCommands } from "../harness/mongo.mjs";
import { startProxy } from "../harness/tcp-proxy.mjs";

// Monitoring connections' heartbeats and handshakes are on the wire but not in command monitoring.
const HANDSHAKES = new Set(["isMaster", "ismaster", "hello"]);

let server;
before(async () => {
  server = await startMongo();
});
after(async () => {
  await server?.stop();
});

test("counts the same commands as the driver's command monitoring, getMores included", async () => {
  const proxy = await startProxy(server.uri);
  const client = new MongoClient(proxy.uri, { monitorCommands: true });
  try {
    await client.connect();
    const monitored = countCommands(client);
    const db = client.db(uniqueDbName("proxy_counts"));
    const orders = db.collection("orders");
    const stream = orders.watch([], { maxAwaitTimeMS: 100 }); // an empty tryNext() waits this long
    await stream.tryNext();
    await orders.insertMany(Array.from({ length: 5 }, (_, i) => ({ i })));
    await db.collection("counters").findOneAndUpdate({ _id: "x" }, { $inc: { seq: 1 } }, { upsert: true });
    let events = 0;
    while (events < 5) if (await stream.tryNext()) events += 1;
    await stream.tryNext();
    await orders.find({}, { batchSize: 2 }).toArray();
    await stream.close();
    await db.dropDatabase();
    const { commands, byCollection } = await proxy.counts();
    const onWire = Object.fromEntries(Object.entries(commands).filter(([name]) => !HANDSHAKES.has(name)));
    assert.deepEqual(onWire, monitored.snapshot());
    assert.ok(monitored.count("getMore") >= 3, "the test exercises getMore");
    assert.equal(byCollection["insert orders"], 1);
    assert.equal(byCollection["findAndModify counters"], 1);
    await proxy.reset();
    assert.deepEqual((await proxy.counts()).commands, {});
  } finally {
    await client.close();
    await proxy.close();
  }
});

test("holds each direction back by the delay: a round trip takes at least twice it", async () => {
  const proxy = await startProxy(server.uri, { delayMs: 2 });
  const client = new MongoClient(proxy.uri);
  try {
    const admin = client.db("admin");
    await admin.command({ ping: 1 });
    for (let i = 0; i < 5; i++) {
      const started = performance.now();
      await admin.command({ ping: 1 });
      const ms = performance.now() - started;
      assert.ok(ms >= 4, `a ping took ${ms.toFixed(2)} ms through 2 ms each way`);
    }
  } finally {
    await client.close();
    await proxy.close();
  }
});

test("cut closes every open connection; the driver reconnects", async () => {
  const proxy = await startProxy(server.uri);
  const client = new MongoClient(proxy.uri, { serverSelectionTimeoutMS: 5000 });
  try {
    const admin = client.db("admin");
    await admin.command({ ping: 1 });
    assert.ok((await proxy.cut()) > 0, "there were connections to cut");
    assert.equal(proxy.cuts, 1);
    // The command in flight on a cut connection fails (unless the pool noticed first); the next
    // one goes over a new connection.
    await admin.command({ ping: 1 }).catch(() => {});
    await admin.command({ ping: 1 });
    assert.ok((await proxy.counts()).connections > 1, "the driver reconnected through the proxy");
  } finally {
    await client.close();
    await proxy.close();
  }
});
