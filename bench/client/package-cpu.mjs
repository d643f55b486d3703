// The package's own CPU, without a server: `next()` over a stand-in `Db` whose findOneAndUpdate
// answers at once with what the driver hands over for a counter (the whole document after the
// update, as a server returns it: { _id, seq: Long, definition, definitionDigest }, promoteValues
// off), so no I/O and no driver work is counted.
//   reservation: block 1, every next() a reservation: the core's plan, the Wasm glue, the EJSON
//                conversions both ways, the package's async code
//   warm:        the largest block (10^6), so next() is served from memory (one reservation per 10^6)
//
//   node bench/client/package-cpu.mjs reservation|warm [calls]   prints µs (ns) per call
//   node --cpu-prof --cpu-prof-dir=DIR bench/client/package-cpu.mjs reservation 200000
//   node bench/lib/cpuprofile-summary.mjs DIR/*.cpuprofile       where the time goes
import { BSON } from "mongodb";
import { Sequences as OurSequences } from "mongo-seq";
import { fileURLToPath } from "node:url";

/** A `Db` whose counters collection answers reservations without a server. */
function standInDb() {
  let seq = 0n;
  // The counter as the reservations record it: `{start: 1, step: 1}` and its digest.
  const definition = { start: BSON.Long.fromNumber(1), step: BSON.Long.fromNumber(1) };
  const counters = {
    collectionName: "counters",
    async findOneAndUpdate(_filter, update) {
      seq += BigInt(String(update.$inc.seq));
      return { _id: "bench", seq: BSON.Long.fromBigInt(seq), definition, definitionDigest: "b1992bd103fd143e" };
    },
  };
  return { collection: () => counters };
}

/**
 * ns per next() (median of `rounds` runs of `calls`); `block` 1: each call is a reservation.
 * `cpu`: the process's CPU time (user + system, GC threads included) instead of the elapsed
 * time, which on a shared machine also counts the time other processes held the cores.
 * `Sequences`: another build's (bench/client/block1.mjs compares builds).
 */
export async function nextNanos(block, calls, rounds = 3, { cpu = false, Sequences = OurSequences } = {}) {
  const sequence = new Sequences(standInDb()).sequence("bench", { block });
  for (let i = 0; i < Math.min(calls, 2000); i++) await sequence.next(); // JIT warm-up
  const results = [];
  for (let round = 0; round < rounds; round++) {
    const started = process.hrtime.bigint();
    const startedCpu = process.cpuUsage();
    for (let i = 0; i < calls; i++) await sequence.next();
    const used = process.cpuUsage(startedCpu);
    results.push((cpu ? (used.user + used.system) * 1000 : Number(process.hrtime.bigint() - started)) / calls);
  }
  results.sort((a, b) => a - b);
  return results[Math.floor(results.length / 2)];
}

/**
 * The driver's own CPU per findAndModify: the process CPU time of the tutorial's
 * getNextSequence against a real server (the server runs in another process, so only the
 * driver's work and the loop are counted), median of `rounds` runs of `calls`, in µs.
 */
export async function driverFindAndModifyCpuUs(uri, dbName, calls, rounds = 3) {
  const { MongoClient } = await import("mongodb");
  const { tutorialSequence } = await import("./tutorial.mjs");
  const client = await MongoClient.connect(uri);
  try {
    const next = await tutorialSequence(client.db(dbName).collection("counters"), "driver-cpu");
    for (let i = 0; i < Math.min(calls, 2000); i++) await next(); // JIT warm-up
    const results = [];
    for (let round = 0; round < rounds; round++) {
      const startedCpu = process.cpuUsage();
      for (let i = 0; i < calls; i++) await next();
      const used = process.cpuUsage(startedCpu);
      results.push((used.user + used.system) / calls);
    }
    results.sort((a, b) => a - b);
    return results[Math.floor(results.length / 2)];
  } finally {
    await client.db(dbName).dropDatabase().catch(() => {});
    await client.close();
  }
}

export async function runDriverCpu({ uri, dbName, calls, report }) {
  const driver = await driverFindAndModifyCpuUs(uri, dbName, calls);
  report.add("client.driver_find_and_modify_cpu_us", driver, "µs",
    "the driver's own CPU per findAndModify (process CPU time of the tutorial's getNextSequence; the server's work is in another process)", { server: false });
}

export async function runReservationCpu({ calls, report }) {
  const own = (await nextNanos(1, calls, 3, { cpu: true })) / 1000;
  report.add("client.reservation_cpu_us", own, "µs",
    "package CPU per reservation (process CPU time of next() at block 1 over a stand-in Db: plan, Wasm glue, EJSON both ways)", { server: false });
  const driver = report.get("client.driver_find_and_modify_cpu_us");
  if (driver !== undefined) {
    report.add("client.reservation_cpu.vs_driver", own / driver, "x",
      "the package's own CPU per reservation ÷ the driver's own CPU per findAndModify (≤ 0.25)", { server: false });
  }
  report.add("client.reservation_wall_us", (await nextNanos(1, calls)) / 1000, "µs",
    "the same, elapsed time (one event-loop turn per reservation included; inflated when the machine is shared)", { server: false });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [mode, callsText] = process.argv.slice(2);
  if (mode !== "reservation" && mode !== "warm") {
    console.error("usage: node bench/client/package-cpu.mjs reservation|warm [calls]");
    process.exit(2);
  }
  const calls = Number(callsText ?? 20_000);
  const ns = await nextNanos(mode === "warm" ? 1_000_000 : 1, calls);
  if (mode === "warm") console.log(`${ns.toFixed(0)} ns per warm next() (${calls} calls)`);
  else console.log(`${(ns / 1000).toFixed(1)} µs per reservation elapsed, ${((await nextNanos(1, calls, 3, { cpu: true })) / 1000).toFixed(1)} µs CPU (${calls} calls)`);
}
