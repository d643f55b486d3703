// The change-stream consumers the sidecar section compares, as processes: the mongo-seq sidecar
// (release build), the Atlas-trigger recipe (./recipe.mjs) and the change-stream consumer's
// limit (./stream-limit.mjs). Each exposes how many documents it numbered (the sidecar's
// /metrics, the others' stdout: no query on the server), its CPU seconds and peak RSS (/proc),
// and a graceful stop.
import { spawn } from "node:child_process";
import { mkdtempSync, writeFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { createInterface } from "node:readline";
import { startSidecar } from "../../tests/e2e/sidecar.mjs";
import { cpuSeconds, peakRssMiB } from "../lib/proc.mjs";
import { waitFor } from "../lib/stats.mjs";

export const SIDECAR_BIN = fileURLToPath(new URL("../../target/release/mongo-seq", import.meta.url));
const SCRIPTS = {
  recipe: fileURLToPath(new URL("./recipe.mjs", import.meta.url)),
  consumer: fileURLToPath(new URL("./stream-limit.mjs", import.meta.url)),
};

/**
 * The sidecar's configuration for one trigger on `db.orders`; everything else at its defaults.
 * `on: "match"` numbers orders when they become `{status: "issued"}` (numbering on issue);
 * `sealFields` (gapless only) seals those fields of every numbered order.
 */
function sidecarConfig({ uri, db, batchSize, gapless, on = "insert", sealFields, settings = {} }) {
  return `[mongodb]
uri = "${uri}"
counters = "${db}.counters"

[sidecar]
batch_size = ${batchSize}
${Object.entries(settings).map(([key, value]) => `${key} = ${value}\n`).join("")}
[http]
port = 0

[[trigger]]
database = "${db}"
collection = "orders"
field = "seq"
gapless = ${gapless}
${on === "match" ? 'on = "match"\nmatch = { status = "issued" }\n' : ""}${sealFields ? `seal_fields = ${JSON.stringify(sealFields)}\n` : ""}`;
}

/** Sums a Prometheus counter over its label sets. */
function metric(text, name) {
  let sum = 0;
  for (const line of text.split("\n")) if (line.startsWith(`${name}{`) || line.startsWith(`${name} `)) sum += Number(line.slice(line.lastIndexOf(" ") + 1));
  return sum;
}

/**
 * When (on `performance.now()`'s clock) the sidecar logged taking its trigger's lease: before it
 * opens the change stream, whose first reply may already bring events (a drain counts from
 * here, so however many the first read brings is timed). From the log line's own UTC timestamp.
 */
function leaseAcquiredAt(logs) {
  const line = logs.find((l) => l.includes("lease acquired"));
  const wallMs = line ? Date.parse(line.slice(0, line.indexOf(" "))) : NaN;
  if (Number.isNaN(wallMs)) throw new Error(`no "lease acquired" line with a timestamp in the sidecar's log:\n${logs.join("\n")}`);
  return performance.now() - (Date.now() - wallMs);
}

/**
 * Starts the sidecar (the release build, or `bin`) and resolves once it watches its stream;
 * `settings`: more of its `[sidecar]` settings (`{ batch_delay_ms: 0 }`).
 */
export async function startSidecarConsumer({ uri, db, batchSize, gapless = false, on = "insert", sealFields, bin = SIDECAR_BIN, settings }) {
  const dir = mkdtempSync(join(tmpdir(), "mongo-seq-bench-"));
  const config = join(dir, "mongo-seq.toml");
  writeFileSync(config, sidecarConfig({ uri, db, batchSize, gapless, on, sealFields, settings }));
  const sidecar = await startSidecar(config, [], { bin });
  const metrics = async () => (await fetch(`${sidecar.http}/metrics`)).text();
  const pid = sidecar.child.pid;
  return {
    kind: "sidecar",
    pid,
    leaseAt: leaseAcquiredAt(sidecar.logs),
    async numbered() {
      return metric(await metrics(), "mongo_seq_documents_numbered_total");
    },
    async batches() {
      return metric(await metrics(), "mongo_seq_batches_total");
    },
    cpu: () => cpuSeconds(pid),
    rss: () => peakRssMiB(pid),
    async stop() {
      sidecar.child.kill("SIGTERM");
      const code = await sidecar.exited;
      rmSync(dir, { recursive: true, force: true });
      if (code !== 0) throw new Error(`sidecar exited with ${code}:\n${sidecar.logs.slice(-20).join("\n")}`);
    },
  };
}

/**
 * Starts the consumer of a run on inserts as they come (live, latency), connected through
 * `proxy`: the sidecar, or the recipe or the stream limit (`consumer`) after the unique index
 * the sidecar would create.
 */
export async function startWatchingConsumer({ consumer, proxy, collection, db, batch, gapless = false, bin, settings }) {
  if (consumer === "sidecar") return startSidecarConsumer({ uri: proxy.uri, db, batchSize: batch, gapless, bin, settings });
  await collection.createIndex({ seq: 1 }, { unique: true, partialFilterExpression: { seq: { $exists: true } } });
  return startScriptConsumer({ kind: consumer, uri: proxy.uri, db });
}

/**
 * Starts the recipe (`kind: "recipe"`) or the change-stream consumer's limit (`"consumer"`),
 * optionally after `startAfter`, and resolves once it watches.
 */
export async function startScriptConsumer({ kind, uri, db, startAfter }) {
  const args = [SCRIPTS[kind], uri, db, "orders", "seq", ...(startAfter ? [JSON.stringify(startAfter)] : [])];
  const child = spawn(process.execPath, args, { stdio: ["ignore", "pipe", "inherit"] });
  const exited = new Promise((resolve) => child.once("exit", (code, signal) => resolve(code ?? signal)));
  let numbered = 0;
  let openingAt;
  const lines = createInterface({ input: child.stdout });
  await new Promise((resolve, reject) => {
    lines.on("line", (line) => {
      if (line === "opening") openingAt = performance.now();
      if (line === "watching") resolve();
      const match = /^numbered (\d+)$/.exec(line);
      if (match) numbered = Number(match[1]);
    });
    child.once("exit", (code) => reject(new Error(`${kind} exited with ${code} before watching`)));
  });
  return {
    kind,
    pid: child.pid,
    // Before the aggregate that opens its stream, which may already bring the first batch.
    openingAt,
    async numbered() {
      return numbered;
    },
    cpu: () => cpuSeconds(child.pid),
    rss: () => peakRssMiB(child.pid),
    async stop() {
      child.kill("SIGTERM");
      const code = await exited;
      if (code !== 0 && code !== "SIGTERM") throw new Error(`${kind} exited with ${code}`);
    },
  };
}

/**
 * Waits until `running` has numbered `docs` documents (or `capSeconds` after `started`), stops
 * it, checks the collection holds as many numbers as it reported, and returns what the run
 * measured: `{ numbered, seconds, rate, commands, cpuSeconds, rssMiB, batches, capped }`.
 */
export async function finishRun({ running, proxy, collection, docs, started, cpuBefore, capSeconds }) {
  const deadline = started + capSeconds * 1000;
  const numbered = await waitFor(async () => {
    const n = await running.numbered();
    return n >= docs || performance.now() > deadline ? n : 0;
  }, { everyMs: 25, timeoutMs: capSeconds * 1000 + 30_000, what: `${running.kind} to number ${docs} documents` });
  const seconds = (performance.now() - started) / 1000;
  const cpuSeconds = running.cpu() - cpuBefore;
  const rssMiB = running.rss();
  const batches = running.batches ? await running.batches() : undefined;
  const commands = await proxy.counts();
  await running.stop();
  const inCollection = await collection.countDocuments({ seq: { $exists: true } });
  if (inCollection < numbered) throw new Error(`${running.kind}: reported ${numbered} numbered, the collection holds ${inCollection}`);
  return { numbered, seconds, rate: numbered / seconds, commands, cpuSeconds, rssMiB, batches, capped: numbered < docs };
}
