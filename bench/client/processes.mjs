// 8 processes on one sequence: aggregate numbers/s for block 1 and block 100 (and the tutorial),
// timed from the common `go` to the last process done.
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { MongoClient } from "mongodb";

const WORKER = fileURLToPath(new URL("./process-worker.mjs", import.meta.url));
const PROCESSES = 8;

async function aggregateRate(uri, dbName, name, kind, perProcess) {
  const workers = Array.from({ length: PROCESSES }, () => {
    const child = spawn(process.execPath, [WORKER, uri, dbName, name, String(kind), String(perProcess)], { stdio: ["pipe", "pipe", "inherit"] });
    const lines = createInterface({ input: child.stdout });
    const said = (word) => new Promise((resolve, reject) => {
      lines.on("line", (line) => line === word && resolve());
      child.once("exit", (code) => reject(new Error(`worker exited with ${code} before saying ${word}`)));
    });
    return { child, ready: said("ready"), done: said("done") };
  });
  await Promise.all(workers.map((w) => w.ready));
  const started = performance.now();
  for (const w of workers) w.child.stdin.write("go\n");
  await Promise.all(workers.map((w) => w.done));
  const seconds = (performance.now() - started) / 1000;
  await Promise.all(workers.map((w) => new Promise((resolve) => (w.child.exitCode !== null ? resolve() : w.child.once("exit", resolve)))));
  return (PROCESSES * perProcess) / seconds;
}

export async function runProcesses({ uri, dbName, numbers, report }) {
  const client = await MongoClient.connect(uri);
  try {
    await client.db(dbName).collection("counters").insertOne({ _id: "procs-tutorial", seq: 0 });
    const tutorial = await aggregateRate(uri, dbName, "procs-tutorial", "tutorial", numbers.tutorial);
    const block1 = await aggregateRate(uri, dbName, "procs-block1", 1, numbers[1]);
    const block100 = await aggregateRate(uri, dbName, "procs-block100", 100, numbers[100]);
    report.add("client.procs8.tutorial.numbers_per_s", tutorial, "numbers/s", "8 processes, tutorial getNextSequence, aggregate");
    report.add("client.procs8.block1.numbers_per_s", block1, "numbers/s", "8 processes on one sequence, block 1, aggregate");
    report.add("client.procs8.block100.numbers_per_s", block100, "numbers/s", "8 processes on one sequence, block 100, aggregate");
    report.add("client.procs8.block1.vs_tutorial", block1 / tutorial, "x", "8 processes: block 1 ÷ tutorial");
    report.add("client.procs8.block100.vs_block1", block100 / block1, "x", "8 processes: block 100 ÷ block 1");
  } finally {
    await client.db(dbName).dropDatabase().catch(() => {});
    await client.close();
  }
}
