#!/usr/bin/env node
// `make bench`: mongo-seq against what people use instead, side by side in one invocation.
// Sections (bench/README in the repository README, results in docs/benchmarks.md):
//   startup   Wasm size; cold start (import) in Node, Deno, Bun next to the mongodb driver
//   client    sequence({block}) vs the tutorial's getNextSequence, 1 and 10 callers, loopback
//             and through the latency proxy; nextMany(1000); warm next() vs plain-JS hi/lo;
//             the package's CPU per reservation; the Rust crate's blocks vs the tutorial in
//             Rust (1 and 10 tasks) and its warm next() (bench/rust)
//   mongoose  mongoose-sequence's save() vs mongo-seq's insertOne and insertMany
//   processes 8 processes on one sequence: block 1 vs block 100 (and the tutorial)
//   sidecar   the sidecar vs the Atlas-trigger recipe vs the raw bulk-update limit: live and
//             drain, batch 1/100/1000, default and gapless (and a sealed gapless drain beside an
//             unsealed one), over three links; commands, CPU, RSS
//   sidecar-batching  the default batching flat out (÷ the bulk-update limit, beside batch 100)
//             and at 500 inserts/s (latency ÷ batch 1's), default and gapless; alone:
//             node bench/run.mjs --only sidecar-batching
//   latency   insert → number visible at fixed insert rates
//   oplog     the embedded server's own cost: an empty getMore as its oplog grows
import { existsSync } from "node:fs";
import os from "node:os";
import { spawnSync } from "node:child_process";
import { Report } from "./lib/report.mjs";
import { parseOptions, UsageError, USAGE } from "./lib/options.mjs";
import { withServer, withProxy, LINKS } from "./lib/servers.mjs";
import { SIDECAR_BIN } from "./sidecar/consumers.mjs";
import { proxyBinary } from "../tests/harness/tcp-proxy.mjs";
import { WASM_FILE, runWasmSize } from "./client/wasm-size.mjs";
import { RUST_BENCH_BIN } from "./client/rust.mjs";

let options;
try {
  options = parseOptions(process.argv.slice(2));
} catch (error) {
  if (!(error instanceof UsageError)) throw error;
  if (!error.message) {
    console.log(USAGE);
    process.exit(0);
  }
  console.error(`bench: ${error.message}\n\n${USAGE}`);
  process.exit(2);
}

// Built by `make bench`: say what is missing rather than fail half-way.
const missing = [
  [WASM_FILE, "make build-js"],
  [SIDECAR_BIN, "cargo build --release -p mongo-seq-sidecar"],
  [RUST_BENCH_BIN, "cargo build --release -p mongo-seq-bench"],
].filter(([file]) => !existsSync(file));
try {
  proxyBinary();
} catch (error) {
  missing.push(["tcp-proxy", "cargo build --release -p mongo-seq-tcp-proxy"]);
}
if (missing.length) {
  console.error(`bench: not built: ${missing.map(([file, how]) => `${file} (${how})`).join(", ")}; \`make bench\` builds everything.`);
  process.exit(2);
}

const report = new Report();
const started = Date.now();
const has = (section) => options.sections.has(section);
const step = (text) => console.error(`\n==> ${text} (${((Date.now() - started) / 1000).toFixed(0)} s)`);
const machine = {
  date: new Date().toISOString(),
  cpu: `${os.cpus()[0]?.model ?? "?"} × ${os.cpus().length}`,
  memory: `${Math.round(os.totalmem() / 2 ** 30)} GiB`,
  kernel: `${os.type()} ${os.release()}`,
  node: process.version,
  // `java -version` (the embedded server's JVM) writes to stderr.
  java: spawnSync("java", ["-version"], { encoding: "utf8" }).stderr?.split("\n")[0]?.trim() || "java: ?",
  server: process.env.MONGODB_URI ? "MONGODB_URI" : "embedded test server (mongo-java-server, in memory)",
  load: os.loadavg().map((l) => l.toFixed(2)).join(" "),
};

if (has("startup")) {
  step("startup: Wasm size, cold start in Node, Deno, Bun");
  runWasmSize({ report });
  const { runColdStart } = await import("./client/cold-start.mjs");
  await runColdStart({ samples: options.coldStartSamples, report });
}

if (has("client")) {
  step("client: blocks vs the tutorial, nextMany, warm next(), CPU per reservation");
  const { runBlocks } = await import("./client/blocks.mjs");
  const { runNextMany } = await import("./client/next-many.mjs");
  const { runWarmNext } = await import("./client/warm-next.mjs");
  const { runReservationCpu, runDriverCpu } = await import("./client/package-cpu.mjs");
  const { runRefillAhead } = await import("./client/refill-ahead.mjs");
  const { runRust } = await import("./client/rust.mjs");
  const { runVerifySeal } = await import("./client/verify-seal.mjs");
  await withServer("client", async ({ uri, db }) => {
    await runBlocks({ uri, dbName: `${db}_a`, suffix: "", numbers: options.clientNumbers, rounds: options.rounds, pairs: options.block1Pairs, report, link: "loopback" });
    await withProxy(uri, LINKS.rtt1ms.delayMs, async (proxy) => {
      await runBlocks({ uri: proxy.uri, dbName: `${db}_b`, suffix: ".rtt1ms", numbers: options.clientNumbersRtt, rounds: options.rounds, pairs: options.block1Pairs, report, link: LINKS.rtt1ms.label });
      await runRefillAhead({ uri: proxy.uri, dbName: `${db}_e`, numbers: options.busyNumbers, rounds: options.rounds, report, suffix: ".rtt1ms", link: LINKS.rtt1ms.label });
    });
    await runNextMany({ uri, dbName: `${db}_c`, report });
    await runVerifySeal({ uri, dbName: `${db}_s`, report, rounds: options.rounds });
    await runWarmNext({ uri, dbName: `${db}_d`, calls: options.warmCalls, rounds: options.rounds, report });
    await runRust({ uri, dbName: `${db}_r`, numbers: options.clientNumbers, warmCalls: options.warmCalls, rounds: options.rounds, report });
    await runDriverCpu({ uri, dbName: `${db}_f`, calls: options.profileReservations, report });
  });
  await runReservationCpu({ calls: options.profileReservations, report });
}

if (has("mongoose")) {
  step(`mongoose: mongoose-sequence vs mongo-seq, ${options.mongooseDocs} documents`);
  const { runMongoose } = await import("./client/mongoose.mjs");
  await withServer("mongoose", async ({ uri, db }) => {
    await runMongoose({ uri, dbName: db, docs: options.mongooseDocs, rounds: options.rounds, report });
    // Through the latency proxy: what mongoose-sequence's three round trips per save cost on a network.
    await withProxy(uri, LINKS.rtt1ms.delayMs, (proxy) =>
      runMongoose({ uri: proxy.uri, dbName: `${db}_b`, docs: options.mongooseDocs, rounds: options.rounds, report, suffix: ".rtt1ms", link: LINKS.rtt1ms.label }),
    );
  });
}

if (has("processes")) {
  step("processes: 8 processes on one sequence");
  const { runProcesses } = await import("./client/processes.mjs");
  await withServer("processes", ({ uri, db }) => runProcesses({ uri, dbName: db, numbers: options.processNumbers, report }));
}

if (has("sidecar")) {
  step("sidecar: recipe, sidecar, limit; live and drain");
  const { runSidecarSection } = await import("./sidecar/section.mjs");
  await runSidecarSection({ options, report });
}

if (has("sidecar-batching")) {
  step("sidecar-batching: default batching flat out and at 500/s, beside batch 100, batch 1 and the limit");
  const { runBatchingSection } = await import("./sidecar/batching.mjs");
  await runBatchingSection({ options, report });
}

if (has("latency")) {
  step("latency: insert → number visible at fixed rates");
  const { runLatencySection } = await import("./sidecar/latency.mjs");
  await runLatencySection({ options, report });
}

if (has("oplog")) {
  step("oplog: the embedded server's getMore cost as its oplog grows");
  const { runOplog } = await import("./sidecar/oplog.mjs");
  await runOplog({ sizes: options.oplogSizes, report });
}

const GOALS = [
  { goal: "block 1 ≥ 1× the tutorial, 1 caller", name: "client.block1.c1.vs_tutorial", atLeast: 1 },
  { goal: "block 100 ≥ 90× the tutorial, 1 caller", name: "client.block100.c1.vs_tutorial", atLeast: 90 },
  { goal: "the package's CPU per reservation ≤ the driver's own per findAndModify", name: "client.reservation_cpu.vs_driver", atMost: 1 },
  { goal: "block 100 ≥ 90× the tutorial, 10 callers", name: "client.block100.c10.vs_tutorial", atLeast: 90 },
  { goal: "block 1000 ≥ 500× the tutorial, 1 caller", name: "client.block1000.c1.vs_tutorial", atLeast: 500 },
  { goal: "block 1000 ≥ 500× the tutorial, 10 callers", name: "client.block1000.c10.vs_tutorial", atLeast: 500 },
  { goal: "block 1, 10 callers ≥ 1× the tutorial, 10 callers", name: "client.block1.c10.vs_tutorial", atLeast: 1 },
  { goal: "warm next() ≤ 1 µs", name: "client.next_warm_ns", atMost: 1000 },
  { goal: "warm next() ≤ 3× plain-JS hi/lo", name: "client.next_warm.vs_hilo_js", atMost: 3 },
  { goal: "warm next() of a yearly sequence ≤ 2× a plain one", name: "client.next_warm.yearly_vs_plain", atMost: 2 },
  { goal: "Rust: block 100 ≥ 90× the tutorial in Rust, 1 task", name: "rust.block100.c1.vs_tutorial", atLeast: 90 },
  { goal: "Rust: block 1000 ≥ 500× the tutorial in Rust, 1 task", name: "rust.block1000.c1.vs_tutorial", atLeast: 500 },
  { goal: "Rust: warm next() ≤ 1 µs", name: "rust.next_warm_ns", atMost: 1000 },
  { goal: "Rust: warm next() of a yearly sequence ≤ 2× a plain one", name: "rust.next_warm.yearly_vs_plain", atMost: 2 },
  { goal: "nextMany(1000): one round trip", name: "client.nextmany1000.round_trips", atLeast: 1, atMost: 1 },
  { goal: "insertMany of 1,000 documents over two periods: one reservation per period", name: "client.insertmany1000.two_periods.reservations", atLeast: 2, atMost: 2 },
  { goal: "sidecar drain on = \"match\" ≥ 0.5× on = \"insert\"", name: "sidecar.b1000.match.drain.vs_insert", atLeast: 0.5 },
  { goal: `insertMany ≥ 50× mongoose-sequence (${options.mongooseDocs} documents)`, name: "client.insertmany.vs_mongoose_sequence", atLeast: 50 },
  { goal: `insertMany ≥ 50× mongoose-sequence (${options.mongooseDocs} documents), 0.5 ms each way`, name: "client.insertmany.vs_mongoose_sequence.rtt1ms", atLeast: 50 },
  // The second performance round retired "Wasm ≤ 120 KB raw" for what users feel; wasm.bytes and wasm.gzip_bytes are still printed.
  { goal: "cold start: mongo-seq's own import ≤ 5 ms, Node", name: "client.cold_start.node.mongo_seq_own_ms", atMost: 5 },
  { goal: "cold start: mongo-seq's own import ≤ 5 ms, Deno", name: "client.cold_start.deno.mongo_seq_own_ms", atMost: 5 },
  { goal: "cold start: mongo-seq's own import ≤ 5 ms, Bun", name: "client.cold_start.bun.mongo_seq_own_ms", atMost: 5 },
  { goal: "cold start: mongo-seq's own require ≤ 10 ms in a bundled CommonJS app", name: "client.cold_start.node_bundled_cjs.mongo_seq_own_ms", atMost: 10 },
  { goal: "sidecar batch 1000 ≤ 0.01 commands/document under load", name: "sidecar.b1000.cmds_per_doc", atMost: 0.01 },
  { goal: "drain at 1 ms RTT ≥ 20× the recipe", name: "sidecar.b1000.drain.vs_recipe.rtt1ms", atLeast: 20 },
  { goal: "drain at 1 ms RTT ≥ 0.8× the bulk-update limit", name: "sidecar.b1000.drain.vs_limit.rtt1ms", atLeast: 0.8 },
  { goal: "sidecar default batching flat out ≥ 0.9× the bulk-update limit", name: "sidecar.batching.flat.b1000.vs_limit", atLeast: 0.9 },
  { goal: "sidecar gapless default batching flat out ≥ 0.9× the bulk-update limit", name: "sidecar.batching.flat.b1000.gapless.vs_limit", atLeast: 0.9 },
  { goal: "sidecar default batching p50 at 500/s ≤ 1.5× batch 1's", name: "sidecar.batching.r500.b1000.p50.vs_b1", atMost: 1.5 },
  { goal: "sidecar gapless default batching p50 at 500/s ≤ 1.5× batch 1's", name: "sidecar.batching.r500.b1000.gapless.p50.vs_b1", atMost: 1.5 },
  { goal: "sidecar RSS ≤ 30 MB (28.6 MiB)", name: "sidecar.rss_mib", atMost: 28.6 },
  // The first call, the sidecar against a change-stream consumer, commands at moderate load:
  // docs/benchmarks.md, "The first call, a consumer's limit, commands at moderate load".
  ...["node", "deno", "bun", "node_bundled_cjs"].map((runtime) => ({
    goal: `cold start: import + the first core call ≤ 5 ms beyond the driver's import, ${runtime}`,
    name: `client.cold_start.${runtime}.mongo_seq_first_call_ms`,
    atMost: 5,
  })),
  { goal: "sidecar drain ≥ 0.9× the change-stream consumer's limit", name: "sidecar.b1000.drain.vs_consumer", atLeast: 0.9 },
  { goal: "sidecar drain at 1 ms RTT ≥ 0.9× the change-stream consumer's limit", name: "sidecar.b1000.drain.vs_consumer.rtt1ms", atLeast: 0.9 },
  { goal: "sidecar gapless drain ≥ 0.9× the change-stream consumer's limit", name: "sidecar.b1000.gapless.drain.vs_consumer", atLeast: 0.9 },
  { goal: "sidecar gapless drain at 1 ms RTT ≥ 0.9× the change-stream consumer's limit", name: "sidecar.b1000.gapless.drain.vs_consumer.rtt1ms", atLeast: 0.9 },
  { goal: "sidecar default batching flat out ≥ 0.9× the change-stream consumer's limit", name: "sidecar.batching.flat.b1000.vs_consumer", atLeast: 0.9 },
  { goal: "sidecar gapless default batching flat out ≥ 0.9× the change-stream consumer's limit", name: "sidecar.batching.flat.b1000.gapless.vs_consumer", atLeast: 0.9 },
  ...["", ".gapless"].flatMap((mode) => [
    { goal: `sidecar${mode ? " gapless" : ""} at 500 inserts/s ≤ 1 command per document`, name: `sidecar.batching.r500.b1000${mode}.cmds_per_doc`, atMost: 1 },
    { goal: `sidecar${mode ? " gapless" : ""} at 500 inserts/s: p50 ≤ 20 ms`, name: `sidecar.batching.r500.b1000${mode}.p50_ms`, atMost: 20 },
    { goal: `sidecar${mode ? " gapless" : ""} at 500 inserts/s: p99 ≤ 50 ms`, name: `sidecar.batching.r500.b1000${mode}.p99_ms`, atMost: 50 },
  ]),
  { goal: "sidecar drain ≤ 0.01 commands per document", name: "sidecar.b1000.drain.cmds_per_doc", atMost: 0.01 },
  // Sealed series: sealing costs one command per batch (the seals' update).
  { goal: "sealed drain ≥ 0.8× the same gapless drain unsealed", name: "sidecar.b1000.sealed.drain.vs_unsealed", atLeast: 0.8 },
  { goal: "sealed drain at 1 ms RTT ≥ 0.8× the same gapless drain unsealed", name: "sidecar.b1000.sealed.drain.vs_unsealed.rtt1ms", atLeast: 0.8 },
  { goal: "sealed drain: at most one more command per batch than unsealed", name: "sidecar.b1000.sealed.drain.extra_cmds_per_batch", atMost: 1 },
  { goal: "sidecar default batching flat out ≤ 0.01 commands per document", name: "sidecar.batching.flat.b1000.cmds_per_doc", atMost: 0.01 },
];

const seconds = (Date.now() - started) / 1000;
console.log(`## mongo-seq benchmark — ${options.full ? "full" : "quick"} mode, ${seconds.toFixed(0)} s

- date: ${machine.date}
- machine: ${machine.cpu}, ${machine.memory}, ${machine.kernel}; load average at start ${machine.load}, at end ${os.loadavg().map((l) => l.toFixed(2)).join(" ")}
- node ${machine.node}; ${machine.java}
- server: ${machine.server}
- command: node bench/run.mjs ${process.argv.slice(2).join(" ")}

${report.table()}

#### Goals

${report.goals(GOALS.filter((g) => report.get(g.name) !== undefined))}

#### Machine-readable

\`\`\`
${report.lines()}
\`\`\``);
