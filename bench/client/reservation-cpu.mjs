// The package's own CPU per reservation: `next()` on a block-1 sequence over a stand-in `Db`
// whose findOneAndUpdate answers at once with what the driver hands over for a counter
// ({ _id, seq: Long }, promoteValues off), so no I/O and no driver work is counted: only
// the core's plan, the Wasm glue, the EJSON conversions both ways and the package's async code.
//
//   node bench/client/reservation-cpu.mjs [calls]        prints µs per reservation
//   node --cpu-prof --cpu-prof-dir=DIR bench/client/reservation-cpu.mjs 200000
//   node bench/lib/cpuprofile-summary.mjs DIR/*.cpuprofile  where the time goes
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

/** µs of package CPU per reservation (median of `rounds` runs of `calls` reservations). */
export async function reservationMicros(calls, rounds = 3) {
  const sequence = new Sequences(standInDb()).sequence("bench", { block: 1 });
  for (let i = 0; i < Math.min(calls, 2000); i++) await sequence.next(); // JIT warm-up
  const results = [];
  for (let round = 0; round < rounds; round++) {
    const started = process.hrtime.bigint();
    for (let i = 0; i < calls; i++) await sequence.next();
    results.push(Number(process.hrtime.bigint() - started) / calls / 1000);
  }
  results.sort((a, b) => a - b);
  return results[Math.floor(results.length / 2)];
}

export async function runReservationCpu({ calls, report }) {
  report.add("client.reservation_cpu_us", await reservationMicros(calls), "µs",
    "package CPU per reservation (next() at block 1 over a stand-in Db: plan, Wasm glue, EJSON both ways)", { server: false });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const calls = Number(process.argv[2] ?? 20_000);
  console.log(`${(await reservationMicros(calls)).toFixed(1)} µs per reservation (${calls} calls)`);
}
