#!/usr/bin/env node
// Two or more builds of the sidecar side by side, interleaved. Default: the scenarios that set
// its peak RSS — drains at batch 1000 (default and gapless) and a live run — with, per scenario
// and build, the peak RSS (VmHWM), the rate and the CPU per 10,000 documents of every round.
// `--latency`: batch 1000 at 200/s, 1,000/s and flat out (bench/sidecar/latency.mjs), with
// commands per document, documents per batch and the latency p50/p95 of every round;
// `--gapless`: the same with a gapless trigger (whose every batch checks its documents first).
// `--sealed`: drains at batch 1000 of a gapless series, unsealed and sealed (seal_fields item,
// qty: sealed-drain.mjs), with the same columns as the default.
// `--batching`: the sidecar-batching section's rows (bench/sidecar/batching.mjs: flat out ÷ the
// bulk-update limit, latency at 500/s ÷ batch 1's), the builds interleaved round by round.
//
//   node bench/sidecar/compare-builds.mjs [--latency [--gapless] | --sealed | --batching] [--docs N] [--seconds N] [--rounds N] NAME=BINARY …
//
// A BINARY may be a script that `exec`s the sidecar with other settings (same pid), e.g.
//   printf '#!/bin/sh\nMALLOC_ARENA_MAX=2 exec target/release/mongo-seq "$@"\n' > /tmp/arenas
import { drainOnce } from "./drain.mjs";
import { liveOnce } from "./live.mjs";
import { latencyOnce } from "./latency.mjs";
import { batchingRound, reportBatching } from "./batching.mjs";
import { Report } from "../lib/report.mjs";

const args = process.argv.slice(2);
let docs = 20_000;
let rounds = 2;
let seconds = 5;
let latency = false;
let gapless = false;
let batching = false;
let sealed = false;
const builds = [];
for (let i = 0; i < args.length; i++) {
  if (args[i] === "--docs") docs = Number(args[++i]);
  else if (args[i] === "--seconds") seconds = Number(args[++i]);
  else if (args[i] === "--latency") latency = true;
  else if (args[i] === "--gapless") gapless = true;
  else if (args[i] === "--batching") batching = true;
  else if (args[i] === "--sealed") sealed = true;
  else if (args[i] === "--rounds") rounds = Number(args[++i]);
  else {
    const at = args[i].indexOf("=");
    if (at < 1) throw new Error(`expected NAME=BINARY, got ${JSON.stringify(args[i])}`);
    builds.push({ name: args[i].slice(0, at), bin: args[i].slice(at + 1) });
  }
}
if (!builds.length || !(docs > 0) || !(rounds > 0) || !(seconds > 0)) {
  console.error("usage: node bench/sidecar/compare-builds.mjs [--latency [--gapless] | --sealed | --batching] [--docs N] [--seconds N] [--rounds N] NAME=BINARY …");
  process.exit(2);
}

if (batching) {
  const perBuild = new Map(builds.map((b) => [b.name, []]));
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 ? [...builds].reverse() : builds;
    for (const build of order) {
      console.error(`round ${round + 1}, ${build.name}`);
      perBuild.get(build.name).push(await batchingRound({ docs, seconds, reverse: round % 2 === 1, bin: build.bin }));
    }
  }
  const reports = builds.map((b) => {
    const report = new Report();
    reportBatching({ rounds: perBuild.get(b.name), docs, report });
    return report;
  });
  console.log(`| figure | ${builds.map((b) => b.name).join(" | ")} | unit |`);
  console.log(`|---|${builds.map(() => "---:|").join("")}---|`);
  for (const figure of reports[0].figures) {
    const values = reports.map((r) => r.get(figure.name));
    console.log(`| \`${figure.name}\` | ${values.map((v) => Number(v.toPrecision(3))).join(" | ")} | ${figure.unit} |`);
  }
  process.exit(0);
}

const MEMORY = [
  { name: "drain b1000 gapless", run: (bin) => drainOnce({ consumer: "sidecar", batch: 1000, gapless: true, delayMs: 0, docs, capSeconds: 60, bin }) },
  { name: "drain b1000", run: (bin) => drainOnce({ consumer: "sidecar", batch: 1000, delayMs: 0, docs, capSeconds: 60, bin }) },
  { name: "live b1000", run: (bin) => liveOnce({ consumer: "sidecar", batch: 1000, docs, capSeconds: 60, bin }) },
];

const LATENCY = [200, 1000, 0].map((rate) => ({
  name: rate ? `${rate}/s` : "flat out",
  run: (bin) => latencyOnce({ consumer: "sidecar", gapless, rate, seconds, bin }),
}));

const SEALED = [
  { name: "drain b1000 gapless", run: MEMORY[0].run },
  { name: "drain b1000 sealed", run: (bin) => drainOnce({ consumer: "sidecar", batch: 1000, gapless: true, sealFields: ["item", "qty"], delayMs: 0, docs, capSeconds: 60, bin }) },
];

const SCENARIOS = latency ? LATENCY : sealed ? SEALED : MEMORY;
const results = new Map();
for (let round = 0; round < rounds; round++) {
  for (const scenario of SCENARIOS) {
    // Order reversed every other round (load drifts).
    const order = round % 2 ? [...builds].reverse() : builds;
    for (const build of order) {
      const run = await scenario.run(build.bin);
      const key = `${scenario.name} | ${build.name}`;
      if (!results.has(key)) results.set(key, []);
      results.get(key).push(run);
      console.error(`${key}: ${JSON.stringify(run)}`);
    }
  }
}

const each = (runs, f) => runs.map(f).join(", ");
if (latency) {
  console.log(`| insert rate | build | achieved inserts/s | commands/doc | docs/batch | p50 ms | p95 ms |`);
  console.log(`|---|---|---|---|---|---|---|`);
  for (const [key, runs] of results) {
    const [scenario, build] = key.split(" | ");
    console.log(`| ${scenario} | ${build} | ${each(runs, (r) => Math.round(r.insertRate))} | ${each(runs, (r) => r.cmdsPerDoc.toFixed(4))} | ${each(runs, (r) => Math.round(r.docsPerBatch))} | ${each(runs, (r) => Math.round(r.p50))} | ${each(runs, (r) => Math.round(r.p95))} |`);
  }
  process.exit(0);
}
console.log(`| scenario | build | peak RSS MiB (each round) | docs/s (each round) | CPU s / 10k docs |`);
console.log(`|---|---|---|---|---:|`);
for (const [key, runs] of results) {
  const [scenario, build] = key.split(" | ");
  const cpu = runs.reduce((sum, r) => sum + (r.cpuSeconds / r.numbered) * 10_000, 0) / runs.length;
  console.log(`| ${scenario} | ${build} | ${each(runs, (r) => r.rssMiB.toFixed(1))} | ${each(runs, (r) => Math.round(r.rate))} | ${cpu.toFixed(3)} |`);
}
