// The package's own CPU, without a server: `next()` over a stand-in `Db` whose findOneAndUpdate
// answers at once with what the driver hands over for a counter ({ _id, seq: Long },
// promoteValues off), so no I/O and no driver work is counted.
//   reservation: block 1, every next() a reservation: the core's plan, the Wasm glue, the EJSON
//                conversions both ways, the package's async code
//   warm:        the largest block (10^6), so next() is served from memory (one reservation per 10^6)
//
//   node bench/client/package-cpu.mjs reservation|warm [calls]   prints µs (ns) per call
//   node --cpu-prof --cpu-prof-dir=DIR bench/client/package-cpu.mjs reservation 200000
//   node bench/lib/cpuprofile-summary.mjs DIR/*.cpuprofile       where the time goes
import { BSON } from "mongodb";
import { Sequences } from "mongo-seq";
import { fileURLToPath } from "node:url";

/** A `Db` whose counters collection answers reservations without a server. */
function standInDb() {
  let seq = 0n;
  const counters = {
    collectionName: "counters",
    async findOneAndUpdate(_filter, update) {
      seq += BigInt(String(update.$inc.seq));
      return { _id: "bench", seq: BSON.Long.fromBigInt(seq) };
    },
  };
  return { collection: () => counters };
}

/** ns per next() (median of `rounds` runs of `calls`); `block` 1: each call is a reservation. */
export async function nextNanos(block, calls, rounds = 3) {
  const sequence = new Sequences(standInDb()).sequence("bench", { block });
  for (let i = 0; i < Math.min(calls, 2000); i++) await sequence.next(); // JIT warm-up
  const results = [];
  for (let round = 0; round < rounds; round++) {
    const started = process.hrtime.bigint();
    for (let i = 0; i < calls; i++) await sequence.next();
    results.push(Number(process.hrtime.bigint() - started) / calls);
  }
  results.sort((a, b) => a - b);
  return results[Math.floor(results.length / 2)];
}

export async function runReservationCpu({ calls, report }) {
  report.add("client.reservation_cpu_us", (await nextNanos(1, calls)) / 1000, "µs",
    "package CPU per reservation (next() at block 1 over a stand-in Db: plan, Wasm glue, EJSON both ways)", { server: false });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [mode, callsText] = process.argv.slice(2);
  if (mode !== "reservation" && mode !== "warm") {
    console.error("usage: node bench/client/package-cpu.mjs reservation|warm [calls]");
    process.exit(2);
  }
  const calls = Number(callsText ?? 20_000);
  const ns = await nextNanos(mode === "warm" ? 1_000_000 : 1, calls);
  console.log(mode === "warm" ? `${ns.toFixed(0)} ns per warm next() (${calls} calls)` : `${(ns / 1000).toFixed(1)} µs per reservation (${calls} calls)`);
}
