// A warm next(): the block holds numbers, so no round trip; ns per call through the package
// against the plain-JS hi/lo reference (./hilo.mjs), and a yearly series' warm next() (now's
// period from the cached window: no date formatted per call) beside a plain one; interleaved
// rounds, median.
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
    // A yearly series in a time zone, beside the plain sequence above: next() without a date.
    const yearly = new Sequences(db).sequence("warm-yearly", { block, reset: "yearly", timeZone: "Europe/Paris" });
    await yearly.next();
    await nsPerCall(Math.min(calls, 50_000), () => yearly.next());
    const periodic = [];
    const plainAgain = [];
    for (let round = 0; round < rounds; round++) {
      periodic.push(await nsPerCall(calls, () => yearly.next()));
      plainAgain.push(await nsPerCall(calls, () => sequence.next()));
    }
    report.add("client.next_warm.yearly_ns", median(periodic), "ns", "warm next() of a yearly sequence (Europe/Paris, date = now)", { server: false });
    report.add("client.next_warm.yearly_vs_plain", median(periodic.map((ns, i) => ns / plainAgain[i])), "x", "yearly ÷ plain warm next() (goal ≤ 2)", { server: false });
    const ratios = pkg.map((ns, i) => ns / ref[i]);
    report.add("client.next_warm_ns", median(pkg), "ns", "warm next() through the package (no round trip), median of rounds", { server: false });
    report.add("client.next_warm.hilo_js_ns", median(ref), "ns", "the same with a 10-line plain-JS hi/lo (bench/client/hilo.mjs)", { server: false });
    report.add("client.next_warm.vs_hilo_js", median(ratios), "x", "package ÷ plain JS (lower is better; goal ≤ 3)", { server: false });
  } finally {
    await db.dropDatabase().catch(() => {});
    await client.close();
  }
}
