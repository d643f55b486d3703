#!/usr/bin/env node
// Drains at 1 ms RTT (0.5 ms each way through the proxy) of two or more sidecar builds beside the
// bulk-update limit, interleaved: batch 1000 default and gapless, each as a ratio to the limit
// measured before and after it (the goal `sidecar.b1000.drain.vs_limit.rtt1ms`), with commands
// per document.
//
//   node bench/sidecar/drain-rtt.mjs [--docs N] [--rounds N] NAME=BINARY …
import { drainOnce } from "./drain.mjs";
import { totalCommands } from "./documents.mjs";
import { LINKS } from "../lib/servers.mjs";

const args = process.argv.slice(2);
let docs = 20_000;
let rounds = 1;
const builds = [];
for (let i = 0; i < args.length; i++) {
  if (args[i] === "--docs") docs = Number(args[++i]);
  else if (args[i] === "--rounds") rounds = Number(args[++i]);
  else {
    const at = args[i].indexOf("=");
    if (at < 1) throw new Error(`expected NAME=BINARY, got ${JSON.stringify(args[i])}`);
    builds.push({ name: args[i].slice(0, at), bin: args[i].slice(at + 1) });
  }
}
if (!builds.length || !(docs > 0) || !(rounds > 0)) {
  console.error("usage: node bench/sidecar/drain-rtt.mjs [--docs N] [--rounds N] NAME=BINARY …");
  process.exit(2);
}
const delayMs = LINKS.rtt1ms.delayMs;
const limit = () => drainOnce({ consumer: "limit", batch: 1000, delayMs, docs, capSeconds: 60 });
console.log("| round | build | mode | docs/s | ÷ limit | commands/doc |");
console.log("|---|---|---|---:|---:|---:|");
for (let round = 1; round <= rounds; round++) {
  for (const build of round % 2 ? builds : [...builds].reverse()) {
    for (const gapless of [false, true]) {
      const before = await limit();
      const run = await drainOnce({ consumer: "sidecar", batch: 1000, gapless, delayMs, docs, capSeconds: 60, bin: build.bin });
      const after = await limit();
      const reference = (before.rate + after.rate) / 2;
      console.log(`| ${round} | ${build.name} | ${gapless ? "gapless" : "default"} | ${Math.round(run.rate)} | ${(run.rate / reference).toFixed(2)} | ${(totalCommands(run.commands) / run.numbered).toFixed(4)} |`);
    }
  }
}
