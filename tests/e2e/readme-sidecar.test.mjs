// The README's "Sidecar quick start" runs as written: its shell blocks, in one bash session, with
// the comments `#   …` below a command as the expected output. Between the blocks the test does
// what the prose says ("let your application insert into app.orders; after 5,000 inserts").
// Substitutions, each for the test environment only, never for what is tested:
//   - the connection string → the embedded test server's (or MONGODB_URI);
//   - database `app` → a database of this test's own;
//   - the release build → the debug binary `make test` builds (a release build takes minutes);
//   - the metrics ports 9464/9465 → free ports (other tests may run on this machine).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { MongoClient } from "mongodb";
import { startMongo, uniqueDbName } from "../harness/mongo.mjs";
import { codeBlocks, expectedOutput } from "../docs/code-blocks.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const README_URI = "mongodb://127.0.0.1:27017/?replicaSet=rs0";

let mongo;
let client;
before(async () => {
  mongo = await startMongo();
  client = new MongoClient(mongo.uri);
});
after(async () => {
  await client?.close();
  await mongo?.stop();
});

const freePort = () =>
  new Promise((resolve) => {
    const server = createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** A bash session fed block by block; `run(code)` resolves with that block's stdout lines. */
function bashSession(cwd, env) {
  const bash = spawn("bash", ["-s"], { cwd, env, stdio: ["pipe", "pipe", "pipe"] });
  let out = "";
  let err = "";
  let exited = null;
  bash.stdout.on("data", (d) => (out += d));
  bash.stderr.on("data", (d) => (err += d));
  const exit = new Promise((resolve) => bash.once("exit", (code) => resolve((exited = code))));
  let blocks = 0;
  return {
    stderr: () => err,
    async run(code, timeoutMs = 120_000) {
      const marker = `__BLOCK_${++blocks}_DONE__`;
      const start = out.length;
      bash.stdin.write(`${code}\necho ${marker}\n`);
      const deadline = Date.now() + timeoutMs;
      while (!out.slice(start).includes(`${marker}\n`)) {
        if (exited !== null) throw new Error(`bash exited (${exited}) in block ${blocks}:\n${out.slice(start)}\n${err}`);
        if (Date.now() > deadline) throw new Error(`block ${blocks} did not finish:\n${out.slice(start)}\n${err}`);
        await sleep(20);
      }
      const text = out.slice(start, out.indexOf(`${marker}\n`, start));
      return text.split("\n").filter((line) => line !== "");
    },
    async close() {
      bash.stdin.end();
      await exit;
      return exited;
    },
  };
}

async function health(port) {
  try {
    return await (await fetch(`http://127.0.0.1:${port}/healthz`)).json();
  } catch {
    return null;
  }
}

test("README: the sidecar quick start runs as written", async () => {
  const db = uniqueDbName("readme_sidecar");
  const [portA, portB] = [await freePort(), await freePort()];
  const substitute = (text) =>
    text
      .replaceAll(README_URI, mongo.uri)
      .replace(/\bapp\b/g, db)
      .replaceAll("cargo build --release -p mongo-seq-sidecar", `cargo build -q -p mongo-seq-sidecar --manifest-path '${root}/Cargo.toml'`)
      .replaceAll('"$PWD/target/release', `"${root}/target/debug`)
      .replaceAll("9465", String(portB));
  const blocks = codeBlocks(readFileSync(join(root, "README.md"), "utf8"), { section: "Sidecar quick start", lang: "sh" });
  assert.equal(blocks.length, 2, "two shell blocks: start, then check/counters/set-next");
  const [start, tools] = blocks.map((b) => ({ ...b, code: substitute(b.code) }));
  assert.match(start.code, /mongo-seq sidecar --config mongo-seq.toml &/, "the sidecar runs in the background of the session");

  const env = { ...process.env, MONGO_SEQ_HTTP_PORT: String(portA) };
  for (const name of ["MONGO_SEQ_URI", "MONGODB_URI", "MONGO_SEQ_INSTANCE_ID", "RUST_LOG"]) delete env[name];
  const cwd = mkdtempSync(join(tmpdir(), "mongo-seq-readme-"));
  const bash = bashSession(cwd, env);
  try {
    await bash.run("set -e");
    assert.deepEqual(await bash.run(start.code), expectedOutput(start.code), `block at README.md:${start.line}`);
    await bash.run("__SIDECARS=$(jobs -p)");

    // Both sidecars up: one numbers, the other stands by (the README's "a standby on this host").
    const trigger = `${db}.orders.seq`;
    const deadline = Date.now() + 120_000;
    let states;
    for (;;) {
      states = await Promise.all([portA, portB].map(health));
      const t = states.map((h) => h?.triggers?.[trigger]);
      if (t.every(Boolean) && t.some((h) => h.lease_held && h.state === "running") && t.some((h) => h.state === "standby")) break;
      assert.ok(Date.now() < deadline, `sidecars not up: ${JSON.stringify(states)}\n${bash.stderr()}`);
      await sleep(100);
    }

    // "Now let your application insert into app.orders; after 5,000 inserts:"
    const orders = client.db(db).collection("orders");
    for (let i = 0; i < 5000; i += 500) {
      await orders.insertMany(Array.from({ length: 500 }, (_, k) => ({ item: i + k })));
    }
    while ((await orders.countDocuments({ seq: { $exists: true } })) < 5000) {
      assert.ok(Date.now() < deadline + 120_000, `not numbered:\n${bash.stderr()}`);
      await sleep(100);
    }

    assert.deepEqual(await bash.run(tools.code), expectedOutput(tools.code), `block at README.md:${tools.line}`);
    const exits = await bash.run('for p in $__SIDECARS; do wait "$p" && echo "exit 0" || echo "exit $?"; done');
    assert.deepEqual(exits, ["exit 0", "exit 0"], `both sidecars stop with exit 0 on SIGTERM:\n${bash.stderr()}`);
    const counter = await client.db(db).collection("counters").findOne({ _id: `${db}.orders` });
    assert.equal(Number(counter.seq), 9999, "set-next made 10000 the next number");
  } finally {
    await bash.run("kill $(jobs -p) 2>/dev/null || true").catch(() => {});
    await bash.close();
    await client.db(db).dropDatabase();
  }
});
