// A TCP proxy in front of the test server, for the chaos test (cut every connection) and the
// benchmarks (latency each way, every command on the wire counted, whoever sends it: the Rust
// sidecar's getMores included). JS face of `tests/tcp-proxy` (built by `make chaos-ci` and
// `make bench`): a native binary, because Node's timers tick in whole milliseconds and 0.5 ms
// each way must be 0.5 ms.
//
//   const proxy = await startProxy(server.uri, { delayMs: 0.5 });
//   proxy.uri            // the server's URI through the proxy (directConnection=true)
//   await proxy.counts() // { commands: { getMore: 12, … }, byCollection: { "update orders": 3 },
//                        //   waitedUs: { getMore: 5400, … } (request → reply, summed), connections }
//   await proxy.reset(); await proxy.cut(); proxy.cuts; await proxy.close();
import { spawn } from "node:child_process";
import { existsSync, statSync } from "node:fs";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { createInterface } from "node:readline";

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");

/** The proxy binary: MONGO_SEQ_TCP_PROXY, else the newer of target/release and target/debug. */
export function proxyBinary() {
  if (process.env.MONGO_SEQ_TCP_PROXY) return process.env.MONGO_SEQ_TCP_PROXY;
  const built = ["release", "debug"]
    .map((profile) => join(root, "target", profile, "tcp-proxy"))
    .filter((path) => existsSync(path))
    .sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs);
  if (built.length === 0) throw new Error("tcp-proxy is not built: run `cargo build -p mongo-seq-tcp-proxy` (make chaos-ci and make bench do)");
  return built[0];
}

/**
 * Starts a proxy to the server of `uri` (one host). `delayMs`: added in each direction.
 * @returns {Promise<{ port: number, uri: string, counts: () => Promise<{commands: Record<string, number>, byCollection: Record<string, number>, waitedUs: Record<string, number>, connections: number}>, reset: () => Promise<void>, cut: () => Promise<number>, readonly cuts: number, close: () => Promise<void> }>}
 */
export async function startProxy(uri, { delayMs = 0, binary = proxyBinary() } = {}) {
  const url = new URL(uri);
  const target = `${url.hostname}:${url.port || 27017}`;
  const child = spawn(binary, ["--target", target, "--delay-us", String(Math.round(delayMs * 1000))], {
    stdio: ["pipe", "pipe", "inherit"],
  });
  const exited = new Promise((resolve) => child.once("exit", resolve));
  const lines = createInterface({ input: child.stdout });
  // Replies come back in order, one line per command.
  const waiting = [];
  let gone = null;
  lines.on("line", (line) => waiting.shift()?.resolve(line));
  child.once("exit", (code) => {
    gone = new Error(`tcp-proxy exited with ${code}`);
    for (const { reject } of waiting.splice(0)) reject(gone);
  });
  const nextLine = () =>
    new Promise((resolve, reject) => (gone ? reject(gone) : waiting.push({ resolve, reject })));
  const ask = (command) => {
    const reply = nextLine();
    child.stdin.write(`${command}\n`);
    return reply;
  };
  const first = await nextLine();
  const match = /^listening (.+):(\d+)$/.exec(first);
  if (!match) throw new Error(`tcp-proxy: unexpected first line ${JSON.stringify(first)}`);
  const port = Number(match[2]);
  // The pipe, not a handle, ties the proxy's life to ours (like the test server's).
  child.unref();
  const through = new URL(uri);
  through.host = `127.0.0.1:${port}`;
  through.searchParams.set("directConnection", "true");
  let cuts = 0;
  return {
    port,
    uri: through.toString(),
    async counts() {
      const { commands, by_collection: byCollection, waited_us: waitedUs, connections } = JSON.parse(await ask("counts"));
      return { commands, byCollection, waitedUs, connections };
    },
    async reset() {
      await ask("reset");
    },
    /** Traces every command answered from now on, until {@link dump}. */
    async trace() {
      await ask("trace");
    },
    /** The trace: `[{ conn, cmd, coll, sent_us, answered_us }]` (µs from its start); it ends. */
    async dump() {
      return JSON.parse(await ask("dump"));
    },
    async cut() {
      const closed = Number((await ask("cut")).replace(/^cut /, ""));
      if (closed > 0) cuts += 1;
      return closed;
    },
    get cuts() {
      return cuts;
    },
    async close() {
      child.ref();
      child.stdin.end();
      await exited;
    },
  };
}
