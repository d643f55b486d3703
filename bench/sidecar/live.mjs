// Live: writers insert while the consumer runs (the fake's insert path bounds this one);
// documents numbered per second, and every command the consumer sends per numbered document
// (through the counting proxy, no added delay), getMores and heartbeats included.
import { MongoClient } from "mongodb";
import { withServer, withProxy } from "../lib/servers.mjs";
import { concurrently } from "../lib/stats.mjs";
import { startWatchingConsumer, finishRun } from "./consumers.mjs";
import { orders } from "./documents.mjs";

export const WRITERS = 4;

/** One run: `{ numbered, seconds, rate, insertRate, commands, cpuSeconds, rssMiB, batches }`. */
export async function liveOnce({ consumer, batch = 1000, gapless = false, docs, capSeconds, bin }) {
  return withServer("live", ({ uri, db }) =>
    withProxy(uri, 0, async (proxy) => {
      const client = await MongoClient.connect(uri, { maxPoolSize: WRITERS + 2 });
      try {
        const collection = client.db(db).collection("orders");
        const running = await startWatchingConsumer({ consumer, proxy, collection, db, batch, gapless, bin });
        const backlog = orders(docs);
        await proxy.reset();
        const cpuBefore = running.cpu();
        const started = performance.now();
        await concurrently(WRITERS, docs, (i) => collection.insertOne(backlog[i]));
        const insertSeconds = (performance.now() - started) / 1000;
        const run = await finishRun({ running, proxy, collection, docs, started, cpuBefore, capSeconds });
        return { ...run, insertRate: docs / insertSeconds };
      } finally {
        await client.close();
      }
    }),
  );
}
