// Latency from insertOne() called to the number visible to a reader, at fixed insert rates:
// writers on a schedule, a reader polling every 10 ms for numbers above the last one it saw
// (so the figures carry up to ~10 ms of polling granularity).
import { MongoClient } from "mongodb";
import { withServer, withProxy } from "../lib/servers.mjs";
import { percentile, sleep, waitFor } from "../lib/stats.mjs";
import { startWatchingConsumer } from "./consumers.mjs";
import { orders, totalCommands } from "./documents.mjs";

// Enough concurrent writers to reach 1,000 inserts/s on the embedded server.
const WRITERS = 8;

const POLL_MS = 10;

/**
 * One run at `rate` inserts/s (0: as fast as the writers go) for `seconds`; the consumer connects
 * through the counting proxy (no added delay), so its commands per document are counted too.
 */
export async function latencyOnce({ consumer, batch = 1000, gapless = false, rate, seconds, bin, settings }) {
  return withServer("latency", ({ uri, db }) => withProxy(uri, 0, (proxy) => latencyRun({ uri, proxy, db, consumer, batch, gapless, rate, seconds, bin, settings })));
}

async function latencyRun({ uri, proxy, db, consumer, batch, gapless, rate, seconds, bin, settings }) {
  const client = await MongoClient.connect(uri, { maxPoolSize: WRITERS + 2 });
  try {
    const collection = client.db(db).collection("orders");
    const running = await startWatchingConsumer({ consumer, proxy, collection, db, batch, gapless, bin, settings });
    await proxy.reset();
    const sentAt = new Map(); // _id hex → ms
    const latencies = [];
    const insertMs = []; // insertOne() round trips: the floor of every latency
    const pollMs = []; // the reader's own queries
    let reading = true;
    const reader = (async () => {
      let last = 0;
      while (reading || latencies.length < sentAt.size) {
        const asked = performance.now();
        const seen = await collection.find({ seq: { $gt: last } }, { projection: { _id: 1, seq: 1 } }).toArray();
        const at = performance.now();
        pollMs.push(at - asked);
        for (const { _id, seq } of seen) {
          const sent = sentAt.get(_id.toHexString());
          if (sent !== undefined) latencies.push(at - sent);
          last = Math.max(last, Number(seq));
        }
        if (!reading && performance.now() > drainDeadline) break;
        await sleep(POLL_MS);
      }
    })();
    let drainDeadline = Infinity;
    const planned = rate > 0 ? Math.round(rate * seconds) : Infinity;
    const documents = orders(rate > 0 ? planned : 200_000);
    const started = performance.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: WRITERS }, async () => {
        for (;;) {
          const i = next++;
          if (i >= documents.length) return;
          const due = rate > 0 ? started + (i / rate) * 1000 : started;
          if (rate === 0 && performance.now() - started > seconds * 1000) return;
          if (due > performance.now()) await sleep(due - performance.now());
          const sent = performance.now();
          sentAt.set(documents[i]._id.toHexString(), sent);
          await collection.insertOne(documents[i]);
          insertMs.push(performance.now() - sent);
        }
      }),
    );
    const insertSeconds = (performance.now() - started) / 1000;
    drainDeadline = performance.now() + 30_000;
    reading = false;
    await reader;
    const counts = await proxy.counts();
    const commands = totalCommands(counts);
    const batches = running.batches ? await running.batches() : undefined;
    await running.stop();
    if (latencies.length < sentAt.size) throw new Error(`${consumer}: ${sentAt.size - latencies.length} documents not numbered 30 s after the last insert`);
    return {
      docs: sentAt.size,
      insertRate: sentAt.size / insertSeconds,
      p50: percentile(latencies, 50),
      p95: percentile(latencies, 95),
      p99: percentile(latencies, 99),
      insertP50: percentile(insertMs, 50),
      pollP50: percentile(pollMs, 50),
      cmdsPerDoc: commands / sentAt.size,
      commands: counts.commands,
      docsPerBatch: batches ? sentAt.size / batches : undefined,
    };
  } finally {
    await client.close();
  }
}

/** The sidecar (batch 1000, defaults) at 200/s, 1,000/s and flat out; the recipe at 200/s (and 1,000/s in full mode). */
export async function runLatencySection({ options, report }) {
  const runs = [
    { consumer: "sidecar", rate: 200 },
    { consumer: "sidecar", rate: 1000 },
    { consumer: "sidecar", rate: 0 },
    { consumer: "recipe", rate: 200 },
    ...(options.full ? [{ consumer: "recipe", rate: 1000 }] : []),
  ];
  for (const { consumer, rate } of runs) {
    const result = await latencyOnce({ consumer, rate, seconds: options.latencySeconds });
    const name = `sidecar.${consumer === "recipe" ? "recipe." : ""}latency.${rate > 0 ? `r${rate}` : "rmax"}`;
    const who = consumer === "recipe" ? "recipe" : "sidecar batch 1000";
    const at = rate > 0 ? `${rate}/s planned, ${Math.round(result.insertRate)}/s achieved` : `flat out: ${Math.round(result.insertRate)} inserts/s`;
    for (const p of ["p50", "p95", "p99"]) {
      report.add(`${name}.${p}_ms`, result[p], "ms", `${who}: insertOne() → number visible, ${p}, ${at}`);
    }
    report.add(`${name}.insert_p50_ms`, result.insertP50, "ms", `${who}, ${at}: the insertOne() round trip itself, p50 (part of every latency)`);
    report.add(`${name}.reader_p50_ms`, result.pollP50, "ms", `${who}, ${at}: the reader's query, p50 (plus its 10 ms pause: the polling granularity)`);
    report.add(`${name}.cmds_per_doc`, result.cmdsPerDoc, "commands/doc", `${who}, ${at}: every command on the wire per document (getMore, heartbeats included)`, { server: false });
    if (result.docsPerBatch !== undefined) report.add(`${name}.docs_per_batch`, result.docsPerBatch, "docs/batch", `${who}, ${at}: documents per numbered batch`, { server: false });
    if (rate === 0) report.add(`${name}.insert_per_s`, result.insertRate, "inserts/s", `${who}: the insert rate the server sustained flat out (${WRITERS} writers)`);
  }
}
