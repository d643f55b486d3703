#!/usr/bin/env node
// Measures what one sidecar process needs, to size its container (deploy/kubernetes/): memory
// (RSS when idle, peak RSS) and CPU time while it numbers a stream of inserts.
//
//   node tests/deploy/measure-rss.mjs [--docs 50000] [--doc-bytes 1000] [--batch-size 1000]
//                                     [--bin target/x86_64-unknown-linux-musl/release/mongo-seq]
//
// Uses the embedded test server (or MONGODB_URI). The default binary is the image's (musl
// release, `make image`): its allocator is the one that runs in the container.
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { createInterface } from "node:readline";
import { MongoClient } from "mongodb";
import { startMongo, uniqueDbName } from "../harness/mongo.mjs";
import { root, waitFor, freePort } from "./support.mjs";

const { values } = parseArgs({
  options: {
    docs: { type: "string", default: "50000" },
    "doc-bytes": { type: "string", default: "1000" },
    "batch-size": { type: "string", default: "1000" },
    bin: { type: "string", default: join(root, "target/x86_64-unknown-linux-musl/release/mongo-seq") },
  },
});
const docs = Number(values.docs);
const docBytes = Number(values["doc-bytes"]);
const batchSize = Number(values["batch-size"]);
for (const [name, n] of [["--docs", docs], ["--doc-bytes", docBytes], ["--batch-size", batchSize]]) {
  if (!Number.isSafeInteger(n) || n < 1) throw new Error(`${name} must be a positive integer`);
}

/** VmRSS, VmHWM (kB) and CPU seconds (user + system) of `pid`. */
function usage(pid) {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = (field) => Number(status.match(new RegExp(`^${field}:\\s+(\\d+) kB`, "m"))[1]);
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
  const ticks = Number(stat[11]) + Number(stat[12]); // utime + stime, in clock ticks (100/s)
  return { rss: kb("VmRSS"), peak: kb("VmHWM"), cpu: ticks / 100 };
}

const mongo = await startMongo();
const client = new MongoClient(mongo.uri);
const db = uniqueDbName("rss");
const dir = mkdtempSync(join(tmpdir(), "mongo-seq-rss-"));
const config = join(dir, "mongo-seq.toml");
writeFileSync(
  config,
  `[mongodb]\nuri = "${mongo.uri}"\ncounters = "${db}.counters"\n\n[sidecar]\nbatch_size = ${batchSize}\n\n[http]\nport = ${await freePort()}\n\n[[trigger]]\ndatabase = "${db}"\ncollection = "orders"\nfield = "seq"\n`,
);
const sidecar = spawn(values.bin, ["sidecar", "--config", config], { stdio: ["ignore", "ignore", "pipe"] });
let watching = false;
createInterface({ input: sidecar.stderr }).on("line", (line) => {
  if (line.includes("watching for inserts")) watching = true;
});
try {
  await waitFor(() => watching, 60_000, () => "the sidecar did not start");
  await new Promise((resolve) => setTimeout(resolve, 1000));
  const idle = usage(sidecar.pid);

  const coll = client.db(db).collection("orders");
  const padding = "x".repeat(docBytes);
  const started = Date.now();
  for (let i = 0; i < docs; i += 1000) {
    const n = Math.min(1000, docs - i);
    await coll.insertMany(Array.from({ length: n }, (_, j) => ({ i: i + j, padding })));
  }
  let peakSeen = 0;
  await waitFor(
    async () => {
      peakSeen = Math.max(peakSeen, usage(sidecar.pid).rss);
      return (await coll.countDocuments({ seq: { $exists: true } })) === docs;
    },
    600_000,
    () => "not every document was numbered within 10 minutes",
  );
  const seconds = (Date.now() - started) / 1000;
  const busy = usage(sidecar.pid);
  console.log(`binary ${values.bin}`);
  console.log(`idle after start: RSS ${(idle.rss / 1024).toFixed(1)} MiB`);
  console.log(
    `numbering ${docs} documents of ~${docBytes} bytes (batch_size ${batchSize}) in ${seconds.toFixed(1)} s: ` +
      `peak RSS ${(busy.peak / 1024).toFixed(1)} MiB, RSS after ${(busy.rss / 1024).toFixed(1)} MiB, ` +
      `CPU ${(busy.cpu - idle.cpu).toFixed(2)} s (${(((busy.cpu - idle.cpu) / seconds) * 1000).toFixed(0)} millicores on average)`,
  );
  await client.db(db).dropDatabase();
} finally {
  sidecar.kill("SIGTERM");
  await client.close();
  await mongo.stop();
}
