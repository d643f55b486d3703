// What `refillAhead` is for: callers that do other work between numbers (here one `ping` round
// trip, like inserting the numbered document) instead of taking numbers in a tight loop. With
// `block: 100` and 10 such callers, the block lasts ten round trips; without refillAhead the
// callers that find it dry wait one more round trip for the next, with it the next block is
// there. Reported: the time of `next()` itself, p50/p99 and the share of calls that waited
// (over a quarter of a ping), side by side in interleaved rounds.
import { MongoClient } from "mongodb";
import { Sequences } from "mongo-seq";
import { concurrently, median, percentile } from "../lib/stats.mjs";

const CALLERS = 10;
const BLOCK = 100;

export async function runRefillAhead({ uri, dbName, numbers, rounds, report, suffix, link }) {
  const client = new MongoClient(uri);
  await client.connect();
  const db = client.db(dbName);
  const admin = client.db("admin");
  const rows = { off: [], on: [] };
  try {
    const pings = [];
    for (let i = 0; i < 20; i++) {
      const started = performance.now();
      await admin.command({ ping: 1 });
      pings.push(performance.now() - started);
    }
    const waited = median(pings) / 4;
    for (let round = 0; round < rounds; round++) {
      const order = round % 2 === 0 ? ["off", "on"] : ["on", "off"];
      for (const mode of order) {
        const sequence = new Sequences(db).sequence(`ahead-${mode}-${round}`, { block: BLOCK, refillAhead: mode === "on" });
        await sequence.next(); // the first block, outside the timing
        const times = [];
        await concurrently(CALLERS, numbers, async () => {
          const started = performance.now();
          await sequence.next();
          times.push(performance.now() - started);
          await admin.command({ ping: 1 }); // the caller's own work with its number
        });
        rows[mode].push({ p50: percentile(times, 50), p99: percentile(times, 99), waited: times.filter((t) => t > waited).length / times.length });
      }
    }
  } finally {
    await db.dropDatabase().catch(() => {});
    await client.close();
  }
  for (const [mode, key] of [["off", `block${BLOCK}`], ["on", `block${BLOCK}.ahead`]]) {
    const what = `next() of block ${BLOCK}${mode === "on" ? " with refillAhead" : ""}, ${CALLERS} callers doing a round trip between numbers, ${link} (median of ${rounds} rounds)`;
    report.add(`client.${key}.c${CALLERS}.busy.next_p50_us${suffix}`, median(rows[mode].map((r) => r.p50)) * 1000, "µs", `${what}: p50`);
    report.add(`client.${key}.c${CALLERS}.busy.next_p99_us${suffix}`, median(rows[mode].map((r) => r.p99)) * 1000, "µs", `${what}: p99`);
    report.add(`client.${key}.c${CALLERS}.busy.waited_pct${suffix}`, median(rows[mode].map((r) => r.waited)) * 100, "%", `${what}: calls that waited for a reservation (over a quarter of a ping)`);
  }
}
