// Live: writers insert while the consumer runs (the fake's insert path bounds this one);
// documents numbered per second, and every command the consumer sends per numbered document
// (through the counting proxy, no added delay), getMores and heartbeats included.
import { MongoClient } from "mongodb";
import { withServer, withProxy } from "../lib/servers.mjs";
import { concurrently, waitFor } from "../lib/stats.mjs";
import { startSidecarConsumer, startRecipeConsumer } from "./consumers.mjs";
import { orders } from "./documents.mjs";

export const WRITERS = 4;

/** One run: `{ numbered, seconds, rate, insertRate, commands, cpuSeconds, rssMiB, batches }`. */
export async function liveOnce({ consumer, batch = 1000, gapless = false, docs, capSeconds }) {
  return withServer("live", ({ uri, db }) =>
    withProxy(uri, 0, async (proxy) => {
      const client = await MongoClient.connect(uri, { maxPoolSize: WRITERS + 2 });
      try {
        const collection = client.db(db).collection("orders");
        if (consumer === "recipe") await collection.createIndex({ seq: 1 }, { unique: true, partialFilterExpression: { seq: { $exists: true } } });
        const running =
          consumer === "sidecar"
            ? await startSidecarConsumer({ uri: proxy.uri, db, batchSize: batch, gapless })
            : await startRecipeConsumer({ uri: proxy.uri, db });
        const backlog = orders(docs);
        await proxy.reset();
        const cpuBefore = running.cpu();
        const started = performance.now();
        await concurrently(WRITERS, docs, (i) => collection.insertOne(backlog[i]));
        const insertSeconds = (performance.now() - started) / 1000;
        const deadline = started + capSeconds * 1000;
        const numbered = await waitFor(async () => {
          const n = await running.numbered();
          return n >= docs || performance.now() > deadline ? n : 0;
        }, { everyMs: 25, timeoutMs: capSeconds * 1000 + 30_000, what: `${consumer} to number ${docs} live inserts` });
        const seconds = (performance.now() - started) / 1000;
        const cpuSeconds = running.cpu() - cpuBefore;
        const rssMiB = running.rss();
        const batches = running.batches ? await running.batches() : undefined;
        const commands = await proxy.counts();
        await running.stop();
        return { numbered, seconds, rate: numbered / seconds, insertRate: docs / insertSeconds, commands, cpuSeconds, rssMiB, batches, capped: numbered < docs };
      } finally {
        await client.close();
      }
    }),
  );
}
