#!/usr/bin/env node
// The sidecar's drains against the change-stream consumer's limit (stream-limit.mjs) in more
// rounds than `make bench` runs: per round and link, the consumer, the sidecar (default and
// gapless, batch 1000; `--sealed`: a sealed gapless one too) and the consumer again, the order of
// the sidecars reversed every other round; per round each sidecar's rate ÷ the mean of the two
// consumer runs around it, then the median and the spread. `--bin NAME=BINARY` (repeatable)
// compares builds of the sidecar in the same rounds.
//
//   node bench/sidecar/vs-consumer.mjs [--docs N] [--rounds N] [--links rtt0,rtt1ms] [--sealed] [--bin NAME=BINARY]…
import { drainOnce } from "./drain.mjs";
import { SIDECAR_BIN } from "./consumers.mjs";
import { LINKS } from "../lib/servers.mjs";
import { median } from "../lib/stats.mjs";

const args = process.argv.slice(2);
let docs = 4000;
let rounds = 3;
let links = ["rtt0", "rtt1ms"];
let sealed = false;
const bins = [];
for (let i = 0; i < args.length; i++) {
  const value = () => args[++i];
  if (args[i] === "--docs") docs = Number(value());
  else if (args[i] === "--rounds") rounds = Number(value());
  else if (args[i] === "--links") links = value().split(",");
  else if (args[i] === "--sealed") sealed = true;
  else if (args[i] === "--bin") {
    const [name, bin] = value().split("=");
    bins.push({ name, bin });
  } else docs = NaN; // an unknown argument: the usage below
}
if (!(docs > 0) || !(rounds > 0) || !links.every((l) => LINKS[l]) || bins.some((b) => !b.name || !b.bin)) {
  console.error("usage: node bench/sidecar/vs-consumer.mjs [--docs N] [--rounds N] [--links rtt0,rtt1ms] [--sealed] [--bin NAME=BINARY]…");
  process.exit(2);
}
if (!bins.length) bins.push({ name: "release", bin: SIDECAR_BIN });

const MODES = [
  { mode: "default", config: { gapless: false } },
  { mode: "gapless", config: { gapless: true } },
  ...(sealed ? [{ mode: "sealed", config: { gapless: true, sealFields: ["item", "qty"] } }] : []),
];
const sidecars = bins.flatMap((b) => MODES.map((m) => ({ key: `${b.name} ${m.mode}`, bin: b.bin, ...m.config })));

const ratios = new Map();
const rates = new Map();
const keep = (map, key, value) => map.set(key, [...(map.get(key) ?? []), value]);
for (let round = 0; round < rounds; round++) {
  for (const linkName of links) {
    const { delayMs } = LINKS[linkName];
    const drain = (config) => drainOnce({ batch: 1000, delayMs, docs, capSeconds: 60, ...config });
    const before = await drain({ consumer: "consumer" });
    const runs = [];
    for (const s of round % 2 ? [...sidecars].reverse() : sidecars) runs.push([s, await drain({ consumer: "sidecar", gapless: s.gapless, sealFields: s.sealFields, bin: s.bin })]);
    const after = await drain({ consumer: "consumer" });
    const consumer = (before.rate + after.rate) / 2;
    keep(rates, `${linkName} consumer`, Math.round(before.rate));
    keep(rates, `${linkName} consumer`, Math.round(after.rate));
    for (const [s, run] of runs) {
      keep(ratios, `${linkName} ${s.key}`, run.rate / consumer);
      keep(rates, `${linkName} ${s.key}`, Math.round(run.rate));
    }
    console.error(`round ${round + 1}, ${linkName}: consumer ${Math.round(before.rate)}/${Math.round(after.rate)}, ${runs.map(([s, r]) => `${s.key} ${Math.round(r.rate)} (${(r.rate / consumer).toFixed(3)})`).join(", ")}`);
  }
}

console.log(`Drains of ${docs} documents, ${rounds} round(s), ${new Date().toISOString()}\n`);
console.log("| link | sidecar | ÷ consumer, median | each round | sidecar docs/s |");
console.log("|---|---|---:|---|---|");
for (const [key, values] of ratios) {
  const [link, ...rest] = key.split(" ");
  console.log(`| ${link} | ${rest.join(" ")} | ${median(values).toFixed(3)} | ${values.map((v) => v.toFixed(2)).join(", ")} | ${rates.get(key).join(", ")} |`);
}
for (const link of links) console.log(`\n${link} consumer's limit, docs/s (before and after each round's sidecars): ${rates.get(`${link} consumer`).join(", ")}`);
