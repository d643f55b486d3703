#!/usr/bin/env node
// What sealing costs, in more rounds than `make bench` runs: drains (batch 1000) of a gapless
// trigger with and without `seal_fields` (item, qty: every field of the orders), interleaved
// (the order reversed every other round), each on a fresh server through the proxy of its link;
// per round the sealed rate ÷ the unsealed one, then the median, and the numbering commands of
// each by command (what the proxy counted: getMore, heartbeats, lease traffic and resume-token
// writes left out).
//
//   node bench/sidecar/sealed-drain.mjs [--docs N] [--rounds N] [--link rtt0|rtt1ms|rtt4ms] [--bin SIDECAR]
import { drainOnce } from "./drain.mjs";
import { SIDECAR_BIN } from "./consumers.mjs";
import { LINKS } from "../lib/servers.mjs";
import { median } from "../lib/stats.mjs";

const args = process.argv.slice(2);
let docs = 20_000;
let rounds = 3;
let link = "rtt0";
let bin = SIDECAR_BIN;
for (let i = 0; i < args.length; i++) {
  const value = () => args[++i];
  if (args[i] === "--docs") docs = Number(value());
  else if (args[i] === "--rounds") rounds = Number(value());
  else if (args[i] === "--link") link = value();
  else if (args[i] === "--bin") bin = value();
  else link = undefined; // an unknown argument: the usage below
}
if (!(docs > 0) || !(rounds > 0) || !LINKS[link]) {
  console.error("usage: node bench/sidecar/sealed-drain.mjs [--docs N] [--rounds N] [--link rtt0|rtt1ms|rtt4ms] [--bin SIDECAR]");
  process.exit(2);
}

// Lease traffic and resume-token writes follow time, not batches.
const TIMED = new Set(["findAndModify mongo_seq_state", "find mongo_seq_state", "update mongo_seq_state"]);
const numbering = (run) => Object.entries(run.commands.byCollection).filter(([key]) => !TIMED.has(key));
const modes = [
  { name: "gapless", sealFields: undefined },
  { name: "sealed", sealFields: ["item", "qty"] },
];
const ratios = [];
console.log(`### Sealed ÷ unsealed gapless drains of ${docs} orders, ${LINKS[link].label}\n`);
console.log("| round | mode | docs/s | numbering commands per 1,000 documents | sealed ÷ gapless |");
console.log("|---:|---|---:|---:|---:|");
const last = {};
for (let round = 1; round <= rounds; round++) {
  const rates = {};
  for (const mode of round % 2 ? modes : [...modes].reverse()) {
    const run = await drainOnce({ consumer: "sidecar", batch: 1000, gapless: true, sealFields: mode.sealFields, delayMs: LINKS[link].delayMs, docs, capSeconds: 120, bin });
    rates[mode.name] = run.rate;
    last[mode.name] = run;
    const perBatch = numbering(run).reduce((sum, [, n]) => sum + n, 0) / (run.numbered / 1000);
    const ratio = rates.sealed && rates.gapless ? (rates.sealed / rates.gapless).toFixed(2) : "";
    console.log(`| ${round} | ${mode.name} | ${Math.round(run.rate)} | ${perBatch.toFixed(2)} | ${ratio} |`);
  }
  ratios.push(rates.sealed / rates.gapless);
}
console.log(`\nMedian sealed ÷ gapless over ${rounds} rounds: ${median(ratios).toFixed(2)}\n`);
for (const [name, run] of Object.entries(last)) {
  console.log(`Last ${name} drain of ${run.numbered}: ${numbering(run).map(([key, n]) => `${key} ${n}`).join(", ")}`);
}
