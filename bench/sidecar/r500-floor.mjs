#!/usr/bin/env node
// Latency at a moderate rate against its floor: insertOne() → number visible at `--rate`
// inserts/s (default 500) for the change-stream consumer's limit (stream-limit.mjs: what the
// server and this harness add to any numberer) and the sidecar, default and gapless, of each
// build (`--bin NAME=BINARY`, repeatable; default the release build), plus variants of the first
// build with other settings (NAME='{"batch_delay_ms":0}'). Interleaved, the order reversed every
// other round; per variant p50, p95, p99 (each round, then the median), commands per document.
//
//   node bench/sidecar/r500-floor.mjs [--rate N] [--seconds N] [--rounds N] [--bin NAME=BINARY]… [NAME=SETTINGS_JSON]…
import { latencyOnce } from "./latency.mjs";
import { SIDECAR_BIN } from "./consumers.mjs";
import { median } from "../lib/stats.mjs";

const args = process.argv.slice(2);
let rate = 500;
let seconds = 5;
let rounds = 3;
const builds = [];
const settingsVariants = [];
for (let i = 0; i < args.length; i++) {
  const value = () => args[++i];
  if (args[i] === "--rate") rate = Number(value());
  else if (args[i] === "--seconds") seconds = Number(value());
  else if (args[i] === "--rounds") rounds = Number(value());
  else if (args[i] === "--bin") {
    const [name, bin] = value().split("=");
    builds.push({ name, bin });
  } else {
    const at = args[i].indexOf("=");
    if (at < 1) rate = NaN;
    else settingsVariants.push({ name: args[i].slice(0, at), settings: JSON.parse(args[i].slice(at + 1)) });
  }
}
if (!(rate > 0) || !(seconds > 0) || !(rounds > 0) || builds.some((b) => !b.name || !b.bin)) {
  console.error("usage: node bench/sidecar/r500-floor.mjs [--rate N] [--seconds N] [--rounds N] [--bin NAME=BINARY]… [NAME=SETTINGS_JSON]…");
  process.exit(2);
}
if (!builds.length) builds.push({ name: "sidecar", bin: SIDECAR_BIN });

const variants = [
  { name: "consumer", consumer: "consumer" },
  ...builds.flatMap((b) => [false, true].map((gapless) => ({ name: `${b.name}${gapless ? " gapless" : ""}`, bin: b.bin, gapless, settings: {} }))),
  ...settingsVariants.flatMap((v) => [false, true].map((gapless) => ({ name: `${v.name}${gapless ? " gapless" : ""}`, bin: builds[0].bin, gapless, settings: v.settings }))),
];

const runs = new Map(variants.map((v) => [v.name, []]));
for (let round = 0; round < rounds; round++) {
  for (const v of round % 2 ? [...variants].reverse() : variants) {
    const run = await latencyOnce({ consumer: v.consumer ?? "sidecar", batch: 1000, gapless: v.gapless ?? false, rate, seconds, bin: v.bin, settings: v.settings });
    runs.get(v.name).push(run);
    console.error(`round ${round + 1}, ${v.name}: p50 ${run.p50.toFixed(1)}, p95 ${run.p95.toFixed(1)}, p99 ${run.p99.toFixed(1)} ms, ${run.cmdsPerDoc.toFixed(3)} commands/doc, insert p50 ${run.insertP50.toFixed(1)} ms`);
  }
}
console.log(`${rate} inserts/s for ${seconds} s, ${rounds} round(s), finished ${new Date().toISOString()}\n`);
console.log("| numberer | achieved/s | p50 ms | p95 ms | p99 ms (each round) | p99 median | commands/doc | insertOne p50 ms |");
console.log("|---|---:|---:|---:|---|---:|---:|---:|");
const m = (all, f) => median(all.map(f));
for (const v of variants) {
  const all = runs.get(v.name);
  const label = v.settings && Object.keys(v.settings).length ? `${v.name} \`${JSON.stringify(v.settings)}\`` : v.name;
  console.log(`| ${label} | ${Math.round(m(all, (r) => r.insertRate))} | ${m(all, (r) => r.p50).toFixed(1)} | ${m(all, (r) => r.p95).toFixed(1)} | ${all.map((r) => r.p99.toFixed(0)).join(", ")} | ${m(all, (r) => r.p99).toFixed(1)} | ${m(all, (r) => r.cmdsPerDoc).toFixed(3)} | ${m(all, (r) => r.insertP50).toFixed(1)} |`);
}
