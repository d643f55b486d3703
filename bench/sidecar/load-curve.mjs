#!/usr/bin/env node
// Commands per document against latency (insertOne() → number visible, p50/p99) at fixed insert
// rates and flat out, for sidecar settings side by side (default and gapless each): the curve a
// default linger is chosen from (docs/benchmarks.md, "Commands per document at moderate load").
// Runs are interleaved (every variant at one rate, then the next rate; order reversed every other
// round); each on a fresh embedded server, the sidecar through the counting proxy.
//
//   node bench/sidecar/load-curve.mjs [--seconds N] [--rounds N] [--rates 100,500,2000,0]
//        [--bin SIDECAR] [--gapless both|no|only] NAME='{"linger_ms":10}' …
// A NAME with `{}` runs the sidecar's defaults; no NAME at all: `default='{}'`. Rate 0: flat out.
import { latencyOnce } from "./latency.mjs";
import { SIDECAR_BIN } from "./consumers.mjs";
import { median } from "../lib/stats.mjs";

const args = process.argv.slice(2);
let seconds = 10;
let rounds = 1;
let rates = [100, 500, 2000, 0];
let bin = SIDECAR_BIN;
let modes = [false, true];
const variants = [];
for (let i = 0; i < args.length; i++) {
  const value = () => args[++i];
  if (args[i] === "--seconds") seconds = Number(value());
  else if (args[i] === "--rounds") rounds = Number(value());
  else if (args[i] === "--rates") rates = value().split(",").map(Number);
  else if (args[i] === "--bin") bin = value();
  else if (args[i] === "--gapless") modes = { both: [false, true], no: [false], only: [true] }[value()];
  else {
    const at = args[i].indexOf("=");
    if (at < 1) throw new Error(`expected NAME=SETTINGS_JSON, got ${JSON.stringify(args[i])}`);
    variants.push({ name: args[i].slice(0, at), settings: JSON.parse(args[i].slice(at + 1)) });
  }
}
if (!variants.length) variants.push({ name: "default", settings: {} });
if (!(seconds > 0) || !(rounds > 0) || !modes || rates.some((r) => !(r >= 0))) {
  console.error("usage: node bench/sidecar/load-curve.mjs [--seconds N] [--rounds N] [--rates 100,500,2000,0] [--bin SIDECAR] [--gapless both|no|only] NAME=SETTINGS_JSON …");
  process.exit(2);
}

const runs = new Map(); // "rate|name|gapless" → [results]
const key = (rate, name, gapless) => `${rate}|${name}|${gapless}`;
for (let round = 1; round <= rounds; round++) {
  for (const rate of rates) {
    const order = variants.flatMap((v) => modes.map((gapless) => ({ ...v, gapless })));
    for (const { name, settings, gapless } of round % 2 ? order : order.reverse()) {
      const run = await latencyOnce({ consumer: "sidecar", batch: 1000, gapless, rate, seconds, bin, settings });
      const k = key(rate, name, gapless);
      runs.set(k, [...(runs.get(k) ?? []), run]);
      console.error(`  round ${round}, ${rate || "flat out"}/s, ${name}${gapless ? " gapless" : ""}: ${run.cmdsPerDoc.toFixed(3)} commands/doc, p50 ${run.p50.toFixed(1)} ms, p99 ${run.p99.toFixed(1)} ms, ${run.docsPerBatch?.toFixed(1)} docs/batch`);
    }
  }
}

const fixed = (x, digits) => (Number.isFinite(x) ? x.toFixed(digits) : "—");
console.log(`| rate (achieved) | settings | mode | commands/doc | getMore/doc | docs/batch | p50 ms | p99 ms |`);
console.log(`|---|---|---|---:|---:|---:|---:|---:|`);
for (const rate of rates) {
  for (const { name, settings } of variants) {
    for (const gapless of modes) {
      const all = runs.get(key(rate, name, gapless));
      const m = (f) => median(all.map(f));
      const achieved = Math.round(m((r) => r.insertRate));
      console.log(
        `| ${rate ? `${rate}/s` : "flat out"} (${achieved}/s) | ${name} \`${JSON.stringify(settings)}\` | ${gapless ? "gapless" : "default"} | ${fixed(m((r) => r.cmdsPerDoc), 3)} | ${fixed(m((r) => (r.commands.getMore ?? 0) / r.docs), 3)} | ${fixed(m((r) => r.docsPerBatch), 1)} | ${fixed(m((r) => r.p50), 1)} | ${fixed(m((r) => r.p99), 1)} |`,
      );
    }
  }
}
