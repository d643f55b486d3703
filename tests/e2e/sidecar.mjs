// Helpers for end-to-end tests of the `mongo-seq` binary (built by `make test-e2e`).
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { createInterface } from "node:readline";
import { before, after } from "node:test";
import { MongoClient } from "mongodb";
import { startMongo } from "../harness/mongo.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
export const BIN = process.env.MONGO_SEQ_BIN ?? join(root, "target", "debug", "mongo-seq");

/** One test server and a client on it for a test file (started before its tests, stopped after):
 * read `.server` and `.client` inside the tests. */
export function useServerAndClient() {
  const ctx = {};
  before(async () => {
    ctx.server = await startMongo();
    ctx.client = await MongoClient.connect(ctx.server.uri);
  });
  after(async () => {
    await ctx.client?.close();
    await ctx.server?.stop();
  });
  return ctx;
}

/** Writes a sidecar config for one trigger on `db.orders` and returns its path. */
export function writeConfig(uri, db, trigger = "", sidecar = "") {
  const dir = mkdtempSync(join(tmpdir(), "mongo-seq-e2e-"));
  const path = join(dir, "mongo-seq.toml");
  writeFileSync(
    path,
    `[mongodb]\nuri = "${uri}"\ncounters = "${db}.counters"\n\n[sidecar]\npoll_interval_ms = 20\nmax_await_ms = 200\n${sidecar}\n\n[http]\nport = 0\n\n[[trigger]]\ndatabase = "${db}"\ncollection = "orders"\nfield = "seq"\n${trigger}\n`,
  );
  return path;
}

/**
 * Starts `mongo-seq sidecar` (`bin`: another build, e.g. the benchmark's release binary);
 * resolves once it watches its stream, with the HTTP address.
 * @returns {Promise<{ child: import("node:child_process").ChildProcess, http: string, logs: string[], exited: Promise<number|null> }>}
 */
export async function startSidecar(config, extra = [], { bin = BIN } = {}) {
  const child = spawn(bin, ["sidecar", "--config", config, ...extra], { stdio: ["ignore", "ignore", "pipe"] });
  const exited = new Promise((resolve) => child.once("exit", (code, signal) => resolve(code ?? signal)));
  const logs = [];
  let http = null;
  const ready = new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`sidecar not ready:\n${logs.join("\n")}`)), 60_000);
    createInterface({ input: child.stderr }).on("line", (line) => {
      logs.push(line);
      const addr = line.match(/addr=(127\.0\.0\.1:\d+)/);
      if (addr) http = `http://${addr[1]}`;
      if (line.includes("watching for inserts")) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`sidecar exited with ${code}:\n${logs.join("\n")}`));
    });
  });
  await ready;
  return { child, http, logs, exited };
}

/** Runs `mongo-seq check … --json` and returns its exit status and report. */
export function check(uri, db, extra = []) {
  const run = spawnSync(BIN, ["check", "--uri", uri, "--db", db, "--collection", "orders", "--field", "seq", ...extra], {
    encoding: "utf8",
  });
  return { status: run.status, stdout: run.stdout, stderr: run.stderr };
}
