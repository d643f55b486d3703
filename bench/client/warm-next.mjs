// A warm next(): the block holds numbers, so no round trip; ns per call through the package
// against the plain-JS hi/lo reference (./hilo.mjs), interleaved rounds, median.
import { MongoClient } from "mongodb";
import { Sequences } from "mongo-seq";
import { PlainHiLo } from "./hilo.mjs";
import { median } from "../lib/stats.mjs";

/** ns per `await take()` over `calls` sequential calls. */
async function nsPerCall(calls, take) {
  const started = process.hrtime.bigint();
  for (let i = 0; i < calls; i++) await take();
  return Number(process.hrtime.bigint() - started) / calls;
}

export async function runWarmNext({ uri, dbName, calls, rounds, report }) {
  const client = await MongoClient.connect(uri);
  const db = client.db(dbName);
  try {
    // The largest block the package accepts: one round trip per million calls (~1 ns each).
    const block = 1_000_000;
    const sequence = new Sequences(db).sequence("warm", { block });
    const plain = new PlainHiLo(db.collection("counters"), "warm-plain", block);
    await sequence.next();
    await plain.take();
    await nsPerCall(Math.min(calls, 50_000), () => sequence.next()); // JIT warm-up
    await nsPerCall(Math.min(calls, 50_000), () => plain.take());
    const pkg = [];
    const ref = [];
    for (let round = 0; round < rounds; round++) {
      pkg.push(await nsPerCall(calls, () => sequence.next()));
      ref.push(await nsPerCall(calls, () => plain.take()));
    }
    const ratios = pkg.map((ns, i) => ns / ref[i]);
    report.add("client.next_warm_ns", median(pkg), "ns", "warm next() through the package (no round trip), median of rounds", { server: false });
    report.add("client.next_warm.hilo_js_ns", median(ref), "ns", "the same with a 10-line plain-JS hi/lo (bench/client/hilo.mjs)", { server: false });
    report.add("client.next_warm.vs_hilo_js", median(ratios), "x", "package ÷ plain JS (lower is better; goal ≤ 3)", { server: false });
  } finally {
    await db.dropDatabase().catch(() => {});
    await client.close();
  }
}
