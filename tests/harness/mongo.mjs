// Test harness shared by the JS tests (Node; Deno and Bun through their Node compatibility).
// - startMongo() starts the embedded test server for one test file, or uses MONGODB_URI when
//   set (meant for a real replica set); tests never know which one they got.
// - uniqueDbName() gives each test its own database.
// - countCommands() counts what a client sends, through the driver's command monitoring.
// The server's stdin is a pipe from this process: when the test process exits, however it exits,
// the pipe closes and the server stops.
import { spawn } from "node:child_process";
import { openSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { createInterface } from "node:readline";

const here = dirname(fileURLToPath(import.meta.url));
const launcher = join(here, "..", "mongo-server", "run");
const START_TIMEOUT_MS = 300_000;

/** @returns {Promise<{ uri: string, embedded: boolean, stop: () => Promise<void> }>} */
export async function startMongo() {
  const given = process.env.MONGODB_URI?.trim();
  if (given) return { uri: given, embedded: false, stop: async () => {} };

  const logPath = join(tmpdir(), `mongo-test-server-${process.pid}-${Date.now()}.log`);
  const child = spawn(launcher, ["--port", "0"], {
    stdio: ["pipe", "pipe", openSync(logPath, "w")],
  });
  const exited = new Promise((resolve) => child.once("exit", resolve));
  const uri = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`test server did not start; log: ${logPath}`)), START_TIMEOUT_MS);
    const lines = createInterface({ input: child.stdout });
    lines.once("line", (line) => {
      clearTimeout(timer);
      lines.close();
      line.startsWith("mongodb://") ? resolve(line.trim()) : reject(new Error(`unexpected launcher output: ${line}; log: ${logPath}`));
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`test server exited with ${code}; log: ${logPath}`));
    });
  });
  // Keep the event loop free to exit: the pipe, not a handle, ties the server's life to ours.
  child.unref();
  child.stdout.destroy();
  return {
    uri,
    embedded: true,
    stop: async () => {
      child.ref(); // wait for the exit even when nothing else keeps the event loop alive
      child.stdin.end();
      child.kill("SIGTERM");
      await exited;
    },
  };
}

let counter = 0;
/** A database name no other test (in this or a concurrent run) uses. */
export function uniqueDbName(label) {
  const safe = String(label).replace(/[^A-Za-z0-9]/g, "_").slice(0, 30);
  counter += 1;
  return `mseq_${safe}_${process.pid}_${counter}`;
}

/**
 * Counts commands by name for a client created with `{ monitorCommands: true }`.
 * @returns {{ count: (name: string) => number, snapshot: () => Record<string, number>, reset: () => void }}
 */
export function countCommands(client) {
  let counts = {};
  client.on("commandStarted", (event) => {
    counts[event.commandName] = (counts[event.commandName] ?? 0) + 1;
  });
  return {
    count: (name) => counts[name] ?? 0,
    snapshot: () => ({ ...counts }),
    reset: () => {
      counts = {};
    },
  };
}

/** Resolves like `promise`, or rejects with `message` after `ms`; leaves no timer behind. */
export async function withTimeout(promise, ms, message) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(message)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
