// Drain: a backlog already inserted, the consumer started afterwards from the resume point it
// had before the inserts; time until every document is numbered (the numbering throughput
// itself). Consumers: the Atlas-trigger recipe, the sidecar (batch 1/100/1000, default and
// gapless), the change-stream consumer's limit (stream-limit.mjs: the stream read in batches of
// 1,000 with read-ahead, one update per batch, nothing else), and the bulk-update limit: bulk updates setting the number on the same documents in batches of
// the same size (no counter, no stream). Every run gets a fresh server and connects through
// the proxy of its link (which also counts every command on the wire). With `on: "match"` the
// backlog is inserted as drafts and then issued by one updateMany (an update event per order),
// before the sidecar starts: the drain of numbering on issue, beside that of inserts. With
// `sealFields` (gapless) the sidecar also seals each order's fields: the cost of sealing.
import { MongoClient } from "mongodb";
import { withServer, withProxy } from "../lib/servers.mjs";
import { startSidecarConsumer, startScriptConsumer, finishRun } from "./consumers.mjs";
import { orders, insertBacklog } from "./documents.mjs";

/**
 * One consumer run: `{ numbered, seconds, rate, commands, cpuSeconds, rssMiB, batches, capped }`;
 * with `trace`, also the proxy's trace of every command the consumer sent (drain-trace.mjs).
 */
export async function drainOnce({ consumer, batch = 1000, gapless = false, on = "insert", sealFields, delayMs, docs, capSeconds, bin, trace = false }) {
  return withServer("drain", ({ uri, db }) =>
    withProxy(uri, delayMs, async (proxy) => {
      const client = await MongoClient.connect(uri);
      try {
        const collection = client.db(db).collection("orders");
        // The resume point from before the inserts.
        let startAfter;
        if (consumer === "sidecar") {
          const first = await startSidecarConsumer({ uri: proxy.uri, db, batchSize: batch, gapless, on, sealFields, bin });
          await first.stop();
        } else {
          // The index the sidecar creates, for the others too: every consumer maintains it.
          await collection.createIndex({ seq: 1 }, { unique: true, partialFilterExpression: { seq: { $exists: true } } });
        }
        if (consumer === "recipe" || consumer === "consumer") {
          const stream = collection.watch([{ $match: { operationType: "insert" } }], { maxAwaitTimeMS: 100 });
          await stream.tryNext();
          startAfter = stream.resumeToken;
          await stream.close();
        }
        const backlog = orders(docs, on === "match" ? { status: "draft" } : {});
        await insertBacklog(collection, backlog);
        if (on === "match") await collection.updateMany({}, { $set: { status: "issued" } });
        await proxy.reset();
        if (trace) await proxy.trace();
        if (consumer === "limit") return await bulkUpdateLimit({ uri: proxy.uri, db, ids: backlog.map((d) => d._id), batch, proxy, capSeconds });

        const running =
          consumer === "sidecar"
            ? await startSidecarConsumer({ uri: proxy.uri, db, batchSize: batch, gapless, on, sealFields, bin })
            : await startScriptConsumer({ kind: consumer, uri: proxy.uri, db, startAfter });
        // From the sidecar's lease taken (before its start-up: index, intents, state), the
        // others' line before they open their stream: in either the aggregate that opens it,
        // which on the embedded server already brings the first batch, is timed (consumers.mjs).
        const started = running.leaseAt ?? running.openingAt;
        const run = await finishRun({ running, proxy, collection, docs, started, cpuBefore: running.cpu(), capSeconds });
        return trace ? { ...run, trace: await proxy.dump() } : run;
      } finally {
        await client.close();
      }
    }),
  );
}

/** The unavoidable work: one `update` command per `batch` documents, nothing else. */
async function bulkUpdateLimit({ uri, db, ids, batch, proxy, capSeconds }) {
  const client = await MongoClient.connect(uri);
  try {
    const database = client.db(db);
    await database.command({ ping: 1 });
    await proxy.reset();
    const started = performance.now();
    const numbered = await bulkUpdate(database, ids, batch, started + capSeconds * 1000);
    const seconds = (performance.now() - started) / 1000;
    return { numbered, seconds, rate: numbered / seconds, commands: await proxy.counts(), capped: numbered < ids.length };
  } finally {
    await client.close();
  }
}


/** Sets `seq` on the documents of `ids`, one `update` command per `batch`, until `deadline` (ms). */
export async function bulkUpdate(database, ids, batch, deadline) {
  let numbered = 0;
  for (let i = 0; i < ids.length && performance.now() < deadline; i += batch) {
    const updates = ids.slice(i, i + batch).map((_id, k) => ({ q: { _id, seq: { $exists: false } }, u: { $set: { seq: i + k + 1 } } }));
    const reply = await database.command({ update: "orders", updates, ordered: false });
    if (reply.nModified !== updates.length) throw new Error(`limit: ${reply.nModified} of ${updates.length} updated`);
    numbered += updates.length;
  }
  return numbered;
}
