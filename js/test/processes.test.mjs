// Several OS processes on one counter: every number is issued once, whatever the block sizes,
// and the first use of a fresh sequence by all of them at once (the tutorial's upsert race)
// never surfaces an error.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { createInterface } from "node:readline";
import { uniqueDbName } from "../../tests/harness/mongo.mjs";
import { useMongo } from "./support.mjs";

const mongo = useMongo();
const worker = fileURLToPath(new URL("workers/take-numbers.mjs", import.meta.url));

/** Starts one worker per block size, releases them together, collects their numbers. */
async function runWorkers(dbName, sequence, blocks, count) {
  const children = blocks.map((block) => {
    const child = spawn(process.execPath, [worker, mongo.server.uri, dbName, sequence, String(block), String(count)], {
      stdio: ["pipe", "pipe", "pipe"],
    });
    let stderr = "";
    child.stderr.on("data", (chunk) => (stderr += chunk));
    const lines = createInterface({ input: child.stdout });
    const ready = new Promise((resolve, reject) => {
      lines.once("line", (line) => (line === "ready" ? resolve() : reject(new Error(`worker said ${line}`))));
      child.once("exit", (code) => reject(new Error(`worker exited with ${code} before ready\n${stderr}`)));
    });
    const output = new Promise((resolve, reject) => {
      const got = [];
      lines.on("line", (line) => got.push(line));
      child.once("exit", (code) =>
        code === 0 ? resolve(JSON.parse(got.at(-1)).map(BigInt)) : reject(new Error(`worker (block ${block}) exited with ${code}\n${stderr}`)),
      );
    });
    return { child, ready, output };
  });
  try {
    await Promise.all(children.map((c) => c.ready));
    for (const { child } of children) child.stdin.write("go\n");
    return await Promise.all(children.map((c) => c.output));
  } finally {
    // On any failure (or a test timeout) no worker is left behind.
    for (const { child } of children) if (child.exitCode === null) child.kill("SIGKILL");
  }
}

test("8 processes x 2,000 numbers with blocks of 1, 7 and 100: 16,000 distinct numbers", { timeout: 240_000 }, async () => {
  const dbName = uniqueDbName("proc_mixed");
  const blocks = [1, 7, 100, 1, 7, 100, 1, 7];
  const perProcess = await runWorkers(dbName, "userid", blocks, 2000);
  for (const numbers of perProcess) assert.equal(numbers.length, 2000);
  const all = perProcess.flat();
  const distinct = new Set(all);
  assert.equal(distinct.size, 16_000, `${16_000 - distinct.size} numbers were issued twice`);
  const counter = await mongo.client.db(dbName).collection("counters").findOne({ _id: "userid" });
  const largest = all.reduce((a, b) => (a > b ? a : b));
  assert.ok(BigInt(counter.seq) >= largest, "the counter covers every number handed out");
  await mongo.client.db(dbName).dropDatabase();
});

test("first use of a fresh sequence by 8 processes at once: no error, 1..8 issued", { timeout: 120_000 }, async () => {
  const dbName = uniqueDbName("proc_first_use");
  const perProcess = await runWorkers(dbName, "fresh", [1, 1, 1, 1, 1, 1, 1, 1], 1);
  const all = perProcess.flat().sort((a, b) => (a < b ? -1 : 1));
  assert.deepEqual(all, [1n, 2n, 3n, 4n, 5n, 6n, 7n, 8n]);
  const counters = await mongo.client.db(dbName).collection("counters").find().toArray();
  assert.deepEqual(counters, [{ _id: "fresh", seq: 8 }], "exactly one counter document was created");
  await mongo.client.db(dbName).dropDatabase();
});
