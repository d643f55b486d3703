// Where the benchmark's scenarios run: a fresh embedded test server each (its oplog, which every
// change-stream getMore rescans, starts empty every time), or MONGODB_URI with a database of its
// own per scenario; optionally behind the latency proxy (tests/harness/tcp-proxy.mjs).
import { MongoClient } from "mongodb";
import { startMongo, uniqueDbName } from "../../tests/harness/mongo.mjs";
import { startProxy } from "../../tests/harness/tcp-proxy.mjs";

/** The link conditions the comparisons run under: added delay each way through the proxy. */
export const LINKS = {
  rtt0: { delayMs: 0, label: "loopback through the counting proxy" },
  rtt1ms: { delayMs: 0.5, label: "0.5 ms each way (same region)" },
  rtt4ms: { delayMs: 2, label: "2 ms each way (cross-zone)" },
};

/** Runs `fn({ uri, db, embedded })` against a server of its own (embedded) and stops it after. */
export async function withServer(label, fn) {
  const server = await startMongo();
  const db = uniqueDbName(label);
  try {
    return await fn({ uri: server.uri, db, embedded: server.embedded });
  } finally {
    if (!server.embedded) {
      // Our scenario's database only; the server is the user's.
      const client = await MongoClient.connect(server.uri);
      await client.db(db).dropDatabase().catch(() => {});
      await client.close();
    }
    // The harness unrefs the server process; keep the loop alive until it has exited.
    const keepAlive = setInterval(() => {}, 1000);
    await server.stop();
    clearInterval(keepAlive);
  }
}

/** Runs `fn(proxy)` with a proxy to `uri` adding `delayMs` each way; closes it after. */
export async function withProxy(uri, delayMs, fn) {
  const proxy = await startProxy(uri, { delayMs });
  try {
    return await fn(proxy);
  } finally {
    await proxy.close();
  }
}

/** Median round trip of `ping` through `uri`, in ms (what a link adds, measured). */
export async function pingMs(uri, count = 50) {
  const client = await MongoClient.connect(uri);
  try {
    const admin = client.db("admin");
    await admin.command({ ping: 1 });
    const times = [];
    for (let i = 0; i < count; i++) {
      const started = performance.now();
      await admin.command({ ping: 1 });
      times.push(performance.now() - started);
    }
    times.sort((a, b) => a - b);
    return times[Math.floor(times.length / 2)];
  } finally {
    await client.close();
  }
}
