#!/usr/bin/env node
// Chaos test of the sidecar: N concurrent writers, 3 sidecar processes on the same config (one
// gapless trigger, one default), a random sidecar SIGKILLed and restarted every 1–3 s, optionally
// every sidecar connection cut through a TCP proxy; then quiescence and `mongo-seq check`.
// Prints one final line `CHAOS docs=… numbered=… unnumbered=… duplicates=… gaps=… kills=… seconds=…`
// (gaps: the gapless trigger's) and exits 1 on any violation. See tests/chaos/README.md.
//
//   node tests/chaos/run.mjs [--docs 100000] [--writers 8] [--rate 1000] [--sidecars 3]
//        [--kill-min-ms 1000] [--kill-max-ms 3000] [--delete-every-ms 50] [--proxy]
//        [--cut-min-ms 2000] [--cut-max-ms 6000] [--ttl-ms 1500] [--seed N] [--timeout-s 1800]
//        [--keep-logs]
//
// --rate: documents per second over all writers (0: as fast as the server takes them), so the
// run lasts long enough for many kills. --delete-every-ms: a deleter removes a random document
// that has no number yet (atomically: `findOneAndDelete({seq: {$exists: false}})`) this often,
// racing the sidecars' batches (0: off). Deleted documents never had a number, so they must
// leave no gap either.
//
// MONGODB_URI: use that server instead of the embedded one (the proxy then needs a URI the
// sidecars can reach through a single host: directConnection=true).
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync, createWriteStream, rmSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { MongoClient } from "mongodb";
import { startMongo, uniqueDbName } from "../harness/mongo.mjs";
import { startProxy } from "../harness/tcp-proxy.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const BIN = process.env.MONGO_SEQ_BIN ?? join(root, "target", "debug", "mongo-seq");

// ---------------------------------------------------------------- options
const defaults = {
  docs: 100_000, writers: 8, sidecars: 3, "kill-min-ms": 1000, "kill-max-ms": 3000, proxy: false,
  "cut-min-ms": 2000, "cut-max-ms": 6000, "ttl-ms": 1500, seed: Date.now() % 100000, "timeout-s": 1800, "keep-logs": false,
  rate: 1000, "delete-every-ms": 50,
};
const opts = { ...defaults };
for (let i = 2; i < process.argv.length; i++) {
  const key = process.argv[i].replace(/^--/, "");
  if (!(key in defaults)) {
    console.error(`unknown option ${process.argv[i]}; options: ${Object.keys(defaults).map((k) => `--${k}`).join(" ")}`);
    process.exit(2);
  }
  if (typeof defaults[key] === "boolean") opts[key] = true;
  else opts[key] = Number(process.argv[++i]);
}
// A small deterministic PRNG (mulberry32) so a run's kill schedule can be replayed with --seed.
let state = opts.seed >>> 0;
const random = () => {
  state = (state + 0x6d2b79f5) >>> 0;
  let t = state;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
};
const between = (a, b) => a + Math.floor(random() * (b - a + 1));
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const log = (...a) => console.log(`[chaos ${((Date.now() - started) / 1000).toFixed(1)}s]`, ...a);
const started = Date.now();

// ---------------------------------------------------------------- main
const mongo = await startMongo();
const db = uniqueDbName("chaos");
const dir = mkdtempSync(join(tmpdir(), "mongo-seq-chaos-"));
let proxy = null;
let sidecarUri = mongo.uri;
if (opts.proxy) {
  proxy = await startProxy(mongo.uri);
  sidecarUri = proxy.uri;
}
// Short driver timeouts, so a cut connection or a killed peer is noticed quickly.
const params = "heartbeatFrequencyMS=500&serverSelectionTimeoutMS=3000";
sidecarUri = sidecarUri.includes("?") ? `${sidecarUri}&${params}` : `${sidecarUri.replace(/\/?$/, "/")}?${params}`;
const config = join(dir, "mongo-seq.toml");
writeFileSync(
  config,
  `[mongodb]
uri = "${sidecarUri}"
counters = "${db}.counters"

[sidecar]
batch_size = 500
poll_interval_ms = 20
max_await_ms = 200
heartbeat_secs = 1
backoff_initial_ms = 50
backoff_max_ms = 1000

[http]
port = 0

[lease]
ttl_ms = ${opts["ttl-ms"]}

[[trigger]]
name = "gapless"
database = "${db}"
collection = "gapless"
field = "seq"
gapless = true

[[trigger]]
name = "plain"
database = "${db}"
collection = "plain"
field = "seq"
`,
);

// Sidecars: restarted right after a kill (a new process: another instance id; the killed
// holder is provably gone, so its lease is taken over by whoever comes first, at once).
const sidecars = [];
let kills = 0;
let restarts = 0;
function startSidecar(slot) {
  const out = createWriteStream(join(dir, `sidecar-${slot}.log`), { flags: "a" });
  const child = spawn(BIN, ["sidecar", "--config", config, "--log-format", "json"], { stdio: ["ignore", "ignore", "pipe"] });
  child.stderr.pipe(out);
  const exited = new Promise((resolve) => child.once("exit", (code, signal) => resolve(code ?? signal)));
  sidecars[slot] = { child, exited };
}
for (let slot = 0; slot < opts.sidecars; slot++) startSidecar(slot);

let chaos = true;
const killer = (async () => {
  while (chaos) {
    await sleep(between(opts["kill-min-ms"], opts["kill-max-ms"]));
    if (!chaos) break;
    const slot = between(0, opts.sidecars - 1);
    const { child, exited } = sidecars[slot];
    child.kill("SIGKILL");
    await exited;
    kills++;
    startSidecar(slot);
    restarts++;
  }
})();
const cutter = (async () => {
  if (!proxy) return;
  while (chaos) {
    await sleep(between(opts["cut-min-ms"], opts["cut-max-ms"]));
    if (chaos) await proxy.cut();
  }
})();

// Writers: each inserts its share into both collections, in bursts of 1–20 documents.
const client = new MongoClient(mongo.uri);
const collections = { gapless: client.db(db).collection("gapless"), plain: client.db(db).collection("plain") };
const perWriter = Math.floor(opts.docs / opts.writers);
const total = perWriter * opts.writers;
const inserted = { gapless: 0, plain: 0 };
const deleted = { gapless: 0, plain: 0 };
const perWriterRate = opts.rate > 0 ? opts.rate / opts.writers : 0;
const writers = Array.from({ length: opts.writers }, async (_, w) => {
  const writerClient = new MongoClient(mongo.uri);
  const writerStart = Date.now();
  try {
    const colls = { gapless: writerClient.db(db).collection("gapless"), plain: writerClient.db(db).collection("plain") };
    let done = 0;
    while (done < perWriter) {
      if (perWriterRate > 0) {
        const due = writerStart + (done / perWriterRate) * 1000;
        if (due > Date.now()) await sleep(due - Date.now());
      }
      const n = Math.min(between(1, 20), perWriter - done);
      const which = (done + w) % 2 === 0 ? "gapless" : "plain";
      await colls[which].insertMany(Array.from({ length: n }, (_, i) => ({ w, i: done + i })), { ordered: true });
      inserted[which] += n;
      done += n;
    }
  } finally {
    await writerClient.close();
  }
});
let writing = true;
const deleter = (async () => {
  if (!(opts["delete-every-ms"] > 0)) return;
  while (writing) {
    await sleep(between(1, 2 * opts["delete-every-ms"]));
    const which = random() < 0.5 ? "gapless" : "plain";
    try {
      const gone = await collections[which].findOneAndDelete({ seq: { $exists: false } });
      if (gone) deleted[which]++;
    } catch (e) {
      log(`deleter: ${e.message}`);
    }
  }
})();
const progress = setInterval(async () => {
  try {
    const [g, p] = await Promise.all([
      collections.gapless.countDocuments({ seq: { $exists: true } }),
      collections.plain.countDocuments({ seq: { $exists: true } }),
    ]);
    log(`inserted ${inserted.gapless + inserted.plain}/${total}, deleted ${deleted.gapless + deleted.plain}, numbered gapless ${g} plain ${p}, kills ${kills}${proxy ? `, cuts ${proxy.cuts}` : ""}`);
  } catch {}
}, 5000);
await Promise.all(writers);
writing = false;
await deleter;
const writeSeconds = (Date.now() - started) / 1000;
log(`writers done: ${total} documents in ${writeSeconds.toFixed(1)} s (${Math.round(total / writeSeconds)}/s); stopping the chaos`);
chaos = false;
await killer;
await cutter;

// Quiescence: every document numbered, no intent pending.
const deadline = Date.now() + opts["timeout-s"] * 1000;
let quiet = false;
while (Date.now() < deadline) {
  const [g, p, pending] = await Promise.all([
    collections.gapless.countDocuments({ seq: { $exists: true } }),
    collections.plain.countDocuments({ seq: { $exists: true } }),
    client.db(db).collection("counters").countDocuments({ intent: { $exists: true } }),
  ]);
  if (g === inserted.gapless - deleted.gapless && p === inserted.plain - deleted.plain && pending === 0) {
    quiet = true;
    break;
  }
  await sleep(250);
}
const seconds = (Date.now() - started) / 1000;
clearInterval(progress);
if (!quiet) log(`NOT quiescent after ${opts["timeout-s"]} s`);

// Checks, with the product's own `check`.
function check(collection, gapless) {
  const args = ["check", "--uri", mongo.uri, "--db", db, "--collection", collection, "--field", "seq", "--counters", `${db}.counters`, "--json"];
  const run = spawnSync(BIN, args, { encoding: "utf8" });
  if (run.error || !run.stdout) throw new Error(`check failed: ${run.error ?? run.stderr}`);
  const report = JSON.parse(run.stdout);
  log(`check ${collection}${gapless ? " (gapless)" : ""}: ${report.documents} documents, ${report.numbered} numbered, ${report.unnumbered} unnumbered, ${report.duplicates} duplicates, ${report.gaps} gaps, largest ${report.largest}, counters_ok ${report.counters_ok}`);
  return report;
}
const g = check("gapless", true);
const p = check("plain", false);

// Lease figures from the sidecars' metrics, then a graceful stop.
let takeovers = 0;
let fenced = 0;
for (const { child } of sidecars) child.kill("SIGTERM");
await Promise.all(sidecars.map((s) => s.exited));
for (let slot = 0; slot < opts.sidecars; slot++) {
  const text = readFileSync(join(dir, `sidecar-${slot}.log`), "utf8");
  takeovers += (text.match(/lease acquired/g) ?? []).length;
  fenced += (text.match(/lease lost: this instance stopped numbering/g) ?? []).length;
}
await proxy?.close();
await client.db(db).dropDatabase().catch(() => {});
await client.close();
{
  // The harness unrefs the server process; keep the loop alive while it stops.
  const keepAlive = setInterval(() => {}, 1000);
  await mongo.stop();
  clearInterval(keepAlive);
}

const docs = g.documents + p.documents;
const numbered = g.numbered + p.numbered;
const unnumbered = g.unnumbered + p.unnumbered;
const duplicates = g.duplicates + p.duplicates;
const violations = [];
const expected = total - deleted.gapless - deleted.plain;
if (docs !== expected) violations.push(`${docs} documents found, ${total} inserted - ${total - expected} deleted`);
if (numbered !== docs || unnumbered !== 0) violations.push(`${unnumbered} unnumbered`);
if (duplicates !== 0) violations.push(`${duplicates} duplicates`);
if (g.gaps !== 0) violations.push(`${g.gaps} gaps in the gapless collection`);
if (!g.counters_ok || !p.counters_ok) violations.push("a counter is behind its largest number");
if (g.largest !== g.documents && g.documents > 0) violations.push(`gapless largest ${g.largest} for ${g.documents} documents`);
if (!quiet) violations.push("not quiescent");
log(`inserted ${total}, deleted unnumbered ${deleted.gapless} (gapless) + ${deleted.plain} (default); lease acquisitions ${takeovers}, leases lost ${fenced}, restarts ${restarts}${proxy ? `, connection cuts ${proxy.cuts}` : ""}; default-mode gaps ${p.gaps} (allowed); seed ${opts.seed}`);
if (violations.length) log(`VIOLATIONS: ${violations.join("; ")} (logs kept in ${dir})`);
else if (!opts["keep-logs"]) rmSync(dir, { recursive: true, force: true });
else log(`logs in ${dir}`);
console.log(`CHAOS docs=${docs} numbered=${numbered} unnumbered=${unnumbered} duplicates=${duplicates} gaps=${g.gaps} kills=${kills} seconds=${seconds.toFixed(1)}`);
process.exit(violations.length ? 1 : 0);
