// `npm run bench:contention` (in js/): insertOptimistic under contention. For each row, P OS
// processes insert N documents each, back to back, into one collection with the tutorial's
// optimistic loop; prints failures (TOO_MANY_RETRIES) and how many insert attempts the calls
// took. Usage: node bench/contention.mjs [inserts per process (200)] [process counts (4,8,16)]
import { fileURLToPath } from "node:url";
import { MongoClient } from "mongodb";
import { startMongo, uniqueDbName } from "../../tests/harness/mongo.mjs";
import { runTogether } from "../../tests/harness/processes.mjs";

const inserts = Number(process.argv[2] ?? 200);
const processCounts = (process.argv[3] ?? "4,8,16").split(",").map(Number);
const worker = fileURLToPath(new URL("../test/workers/insert-optimistic.mjs", import.meta.url));
const BUCKETS = [[1, 1], [2, 5], [6, 10], [11, 25], [26, 50], [51, 100], [101, Infinity]];

const server = await startMongo();
const client = new MongoClient(server.uri);
const rows = [];
try {
  for (const processes of processCounts) {
    const dbName = uniqueDbName(`contention_${processes}`);
    const started = process.hrtime.bigint();
    const results = await runTogether(worker, Array.from({ length: processes }, () => [server.uri, dbName, "docs", inserts]));
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    await client.db(dbName).dropDatabase();
    const attempts = results.flatMap((r) => r.attempts).sort((a, b) => a - b);
    const failures = results.flatMap((r) => r.failures).length;
    const at = (q) => attempts[Math.min(attempts.length - 1, Math.floor(q * attempts.length))];
    const buckets = BUCKETS.map(([low, high]) => attempts.filter((a) => a >= low && a <= high).length);
    const mean = attempts.reduce((sum, a) => sum + a, 0) / attempts.length;
    rows.push({ processes, total: attempts.length, failures, mean, p99: at(0.99), max: attempts.at(-1), buckets, seconds });
  }
} finally {
  await client.close();
  const keepAlive = setInterval(() => {}, 1000); // the harness unrefs the server process
  await server.stop();
  clearInterval(keepAlive);
}

console.log(`insertOptimistic contention: ${inserts} inserts per process, back to back, ${server.embedded ? "embedded test server" : "MONGODB_URI"}`);
console.log(`| processes | inserts | failed | attempts mean | p99 | max | ${BUCKETS.map(([l, h]) => (l === h ? `${l}` : h === Infinity ? `>${l - 1}` : `${l}–${h}`)).join(" | ")} | seconds |`);
console.log(`|---:|---:|---:|---:|---:|---:|${BUCKETS.map(() => "---:|").join("")}---:|`);
for (const r of rows) {
  console.log(`| ${r.processes} | ${r.total} | ${r.failures} | ${r.mean.toFixed(2)} | ${r.p99} | ${r.max} | ${r.buckets.join(" | ")} | ${r.seconds.toFixed(1)} |`);
}
