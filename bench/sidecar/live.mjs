// Live: writers insert while the consumer runs (the fake's insert path bounds this one);
// documents numbered per second, and every command the consumer sends per numbered document
// (through the counting proxy, no added delay), getMores and heartbeats included.
import { MongoClient } from "mongodb";
import { withServer, withProxy } from "../lib/servers.mjs";
import { concurrently } from "../lib/stats.mjs";
import { startWatchingConsumer, finishRun } from "./consumers.mjs";
import { orders } from "./documents.mjs";
import { bulkUpdate } from "./drain.mjs";

export const WRITERS = 4;

/** One run: `{ numbered, seconds, rate, insertRate, tailSeconds, commands, cpuSeconds, rssMiB, batches }` (tail: last insert → all numbered). */
export async function liveOnce({ consumer, batch = 1000, gapless = false, docs, capSeconds, bin }) {
  return withServer("live", ({ uri, db }) =>
    withProxy(uri, 0, async (proxy) => {
      const client = await MongoClient.connect(uri, { maxPoolSize: WRITERS + 2 });
      try {
        const collection = client.db(db).collection("orders");
        if (consumer === "limit") return await bulkUpdateLimit({ proxy, collection, db, docs });
        const running = await startWatchingConsumer({ consumer, proxy, collection, db, batch, gapless, bin });
        const backlog = orders(docs);
        await proxy.reset();
        const cpuBefore = running.cpu();
        const started = performance.now();
        await concurrently(WRITERS, docs, (i) => collection.insertOne(backlog[i]));
        const insertSeconds = (performance.now() - started) / 1000;
        const run = await finishRun({ running, proxy, collection, docs, started, cpuBefore, capSeconds });
        return { ...run, insertRate: docs / insertSeconds, tailSeconds: run.seconds - insertSeconds };
      } finally {
        await client.close();
      }
    }),
  );
}

/**
 * The bulk-update limit of a live run: the unavoidable work, the same inserts with no consumer
 * running (no stream read competes with them), then one `update` per 1,000 documents setting
 * the number (through the counting proxy). Its rate counts from the first insert to the last
 * number, as the consumers' do.
 */
async function bulkUpdateLimit({ proxy, collection, db, docs }) {
  await collection.createIndex({ seq: 1 }, { unique: true, partialFilterExpression: { seq: { $exists: true } } });
  const backlog = orders(docs);
  const started = performance.now();
  await concurrently(WRITERS, docs, (i) => collection.insertOne(backlog[i]));
  const insertSeconds = (performance.now() - started) / 1000;
  await proxy.reset();
  const client = await MongoClient.connect(proxy.uri);
  try {
    const numbered = await bulkUpdate(client.db(db), backlog.map((d) => d._id), 1000, Infinity);
    const seconds = (performance.now() - started) / 1000;
    return { numbered, seconds, rate: numbered / seconds, insertRate: docs / insertSeconds, tailSeconds: seconds - insertSeconds, commands: await proxy.counts(), batches: Math.ceil(docs / 1000), capped: false };
  } finally {
    await client.close();
  }
}
