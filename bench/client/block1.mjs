// Block 1 at one caller, what is left beside the round trip: the embedded server's time per
// command for the tutorial's findAndModify and for the package's, so a reader sees which part of
// the gap to the tutorial is the server's. Two measures: the time from request to reply at the
// counting proxy at no added delay (the server's work plus a loopback hop, the same for both;
// elapsed time, so a shared machine inflates it), and the server process's CPU time per command
// (/proc, when the server runs on this machine: what the fake spends, whatever the load).
//
// `node bench/client/block1.mjs [--pairs N] [--numbers N] [--rounds N] NAME=PATH …` compares builds of the
// package (PATH: a copy's dist/index.mjs; `mongo-seq` for this tree's) interleaved in one
// process on one embedded server: pairs over the 1 ms link (tutorial ÷ build, each pair's
// order rotated), the server's time per command, and the package's CPU per reservation.
import { MongoClient } from "mongodb";
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { tutorialSequence } from "./tutorial.mjs";
import { median, percentile } from "../lib/stats.mjs";

/** Numbers per chunk of an interleaved pair. */
const CHUNK = 20;

/** The pid of the process listening on `uri`'s port on this machine, or undefined. */
export function listenerPid(uri) {
  try {
    const port = new URL(uri.replace(/^mongodb:\/\//, "http://").split(",")[0]).port;
    const line = execFileSync("ss", ["-ltnpH", `sport = :${port}`], { encoding: "utf8" });
    const pid = /pid=(\d+)/.exec(line)?.[1];
    return pid === undefined ? undefined : Number(pid);
  } catch {
    return undefined;
  }
}

/** The CPU time (user + system) process `pid` has used, in µs (clock ticks of 10 ms). */
function cpuMicros(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
  return (Number(fields[11]) + Number(fields[12])) * 10_000;
}

/**
 * Per findAndModify of `take` (called `count` times after a warm-up): µs from request to reply at
 * a proxy that adds no delay, and µs of the server process's CPU (`pid`; undefined without one).
 */
async function serverMicros(proxy, take, count, pid) {
  for (let i = 0; i < 50; i++) await take();
  await proxy.reset();
  const cpuBefore = pid === undefined ? 0 : cpuMicros(pid);
  for (let i = 0; i < count; i++) await take();
  const cpu = pid === undefined ? undefined : (cpuMicros(pid) - cpuBefore) / count;
  const { commands, waitedUs } = await proxy.counts();
  return { waited: waitedUs.findAndModify / commands.findAndModify, cpu };
}

/**
 * The server's time per command, the tutorial's and the package's at block 1, the two
 * interleaved round by round (`proxy`: the counting proxy at no added delay).
 */
export async function runServerTime({ proxy, serverUri, dbName, count = 1000, rounds = 5, report, Sequences }) {
  const client = await MongoClient.connect(proxy.uri);
  const pid = listenerPid(serverUri);
  try {
    const db = client.db(dbName);
    const tutorial = await tutorialSequence(db.collection("counters"), "server-time-tutorial");
    const sequence = new Sequences(db).sequence("server-time", { block: 1 });
    const [ours, theirs] = [[], []];
    for (let round = 0; round < rounds; round++) {
      theirs.push(await serverMicros(proxy, tutorial, count, pid));
      ours.push(await serverMicros(proxy, () => sequence.next(), count, pid));
    }
    const waited = (who) => `the embedded server's time per findAndModify, ${who} (request → reply at the counting proxy, no added delay; median of ${rounds} rounds of ${count})`;
    const waitedOf = (rows) => median(rows.map((r) => r.waited));
    report.add("client.block1.server_us.tutorial", waitedOf(theirs), "µs", waited("the tutorial's"));
    report.add("client.block1.server_us.mongo_seq", waitedOf(ours), "µs", waited("mongo-seq's at block 1"));
    report.add("client.block1.server_us.vs_tutorial", waitedOf(ours) / waitedOf(theirs), "x", "mongo-seq's ÷ the tutorial's, the server's time per command (request → reply)");
    if (pid !== undefined) {
      const cpuOf = (rows) => median(rows.map((r) => r.cpu));
      const cpu = (who) => `the server process's CPU time per findAndModify, ${who} (/proc; median of ${rounds} rounds of ${count})`;
      report.add("client.block1.server_cpu_us.tutorial", cpuOf(theirs), "µs", cpu("the tutorial's"));
      report.add("client.block1.server_cpu_us.mongo_seq", cpuOf(ours), "µs", cpu("mongo-seq's at block 1"));
      report.add("client.block1.server_cpu_us.vs_tutorial", cpuOf(ours) / cpuOf(theirs), "x", "mongo-seq's ÷ the tutorial's, the server's CPU per command");
    }
  } finally {
    await client.db(dbName).dropDatabase().catch(() => {});
    await client.close();
  }
}

/** Elapsed ms of CHUNK calls of `take`. */
async function chunk(take) {
  const started = performance.now();
  for (let i = 0; i < CHUNK; i++) await take();
  return performance.now() - started;
}

async function compareBuilds(argv) {
  let pairs = 60;
  let count = 2000;
  let rounds = 5;
  const builds = [];
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === "--pairs") pairs = Number(argv[++i]);
    else if (argv[i] === "--numbers") count = Number(argv[++i]);
    else if (argv[i] === "--rounds") rounds = Number(argv[++i]);
    else {
      const at = argv[i].indexOf("=");
      if (at < 1) throw new Error(`expected NAME=PATH, got ${JSON.stringify(argv[i])}`);
      builds.push({ name: argv[i].slice(0, at), path: argv[i].slice(at + 1) });
    }
  }
  for (const build of builds) build.Sequences = (await import(build.path)).Sequences;
  const { withServer, withProxy, LINKS } = await import("../lib/servers.mjs");
  const { nextNanos } = await import("./package-cpu.mjs");
  await withServer("block1-builds", async ({ uri, db: dbName }) => {
    const pid = listenerPid(uri);
    await withProxy(uri, LINKS.rtt1ms.delayMs, async (slow) => {
      await withProxy(uri, 0, async (fast) => {
        const slowClient = await MongoClient.connect(slow.uri);
        const fastClient = await MongoClient.connect(fast.uri);
        try {
          const [slowDb, fastDb] = [slowClient.db(dbName), fastClient.db(`${dbName}_fast`)];
          const rows = [{ name: "tutorial", take: await tutorialSequence(slowDb.collection("counters"), "tutorial"), fast: await tutorialSequence(fastDb.collection("counters"), "tutorial") }];
          for (const build of builds) {
            const slowSeq = new build.Sequences(slowDb).sequence(`seq-${build.name}`, { block: 1 });
            const fastSeq = new build.Sequences(fastDb).sequence(`seq-${build.name}`, { block: 1 });
            rows.push({ name: build.name, take: () => slowSeq.next(), fast: () => fastSeq.next(), Sequences: build.Sequences });
          }
          for (const row of rows) await chunk(row.take);
          const ms = Object.fromEntries(rows.map((row) => [row.name, []]));
          for (let pair = 0; pair < pairs; pair++) {
            const order = rows.map((_, i) => rows[(i + pair) % rows.length]);
            for (const row of order) ms[row.name].push(await chunk(row.take));
          }
          const server = Object.fromEntries(rows.map((row) => [row.name, []]));
          const cpu = Object.fromEntries(builds.map((build) => [build.name, []]));
          for (let round = 0; round < rounds; round++) {
            for (const row of rows) server[row.name].push(await serverMicros(fast, row.fast, count, pid));
            for (const build of builds) cpu[build.name].push((await nextNanos(1, 3000, 1, { cpu: true, Sequences: build.Sequences })) / 1000);
          }
          const spread = (values) => `${percentile(values, 25).toFixed(3)}–${percentile(values, 75).toFixed(3)}`;
          console.log(`block 1, 1 caller, ${LINKS.rtt1ms.label}: ${pairs} rotations of ${CHUNK} numbers each; load ${(await import("node:os")).loadavg().map((l) => l.toFixed(2)).join(" ")}`);
          for (const build of builds) {
            const ratios = ms.tutorial.map((t, i) => t / ms[build.name][i]);
            const of = (name, key) => server[name].map((r) => r[key]);
            console.log(`${build.name}: ÷ tutorial ${median(ratios).toFixed(3)} (IQR ${spread(ratios)}), ${(median(ms[build.name]) / CHUNK).toFixed(3)} ms/number; server request → reply ${median(of(build.name, "waited")).toFixed(1)} µs/command (tutorial ${median(of("tutorial", "waited")).toFixed(1)}), server CPU ${median(of(build.name, "cpu")).toFixed(1)} µs/command (tutorial ${median(of("tutorial", "cpu")).toFixed(1)}; rounds ${of(build.name, "cpu").map((v) => v.toFixed(0)).join(" ")} / ${of("tutorial", "cpu").map((v) => v.toFixed(0)).join(" ")}); package CPU ${median(cpu[build.name]).toFixed(1)} µs/reservation (rounds ${cpu[build.name].map((v) => v.toFixed(1)).join(" ")})`);
          }
          console.log(`tutorial: ${(median(ms.tutorial) / CHUNK).toFixed(3)} ms/number`);
        } finally {
          await slowClient.close();
          await fastClient.close();
        }
      });
    });
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await compareBuilds(process.argv.slice(2));
