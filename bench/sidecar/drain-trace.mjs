#!/usr/bin/env node
// A trace of one drain, command by command, as the counting proxy saw it (which command waits
// for which): the sidecar (default, gapless, or gapless and sealed: `--sealed`, the fields item
// and qty) or the change-stream consumer's limit draining a backlog of `--docs` documents on a
// fresh embedded server, loopback or `--delay-ms` each way.
// Prints the first `--rows` commands of the numbering (after the consumer's start-up; with
// `--startup`, from its first command after the backlog was inserted), then a
// summary over the whole drain: per command, how many, their time in flight, and the time no
// command was in flight at all (the consumer's own work between replies and requests).
//
//   node bench/sidecar/drain-trace.mjs [--consumer sidecar|consumer] [--gapless] [--sealed]
//        [--docs N] [--rows N] [--delay-ms MS] [--bin SIDECAR] [--startup]
import { drainOnce } from "./drain.mjs";
import { SIDECAR_BIN } from "./consumers.mjs";

const args = process.argv.slice(2);
let consumer = "sidecar";
let gapless = false;
let sealFields;
let docs = 5000;
let rows = 40;
let delayMs = 0;
let bin = SIDECAR_BIN;
let startup = false;
for (let i = 0; i < args.length; i++) {
  const value = () => args[++i];
  if (args[i] === "--consumer") consumer = value();
  else if (args[i] === "--gapless") gapless = true;
  else if (args[i] === "--sealed") [gapless, sealFields] = [true, ["item", "qty"]];
  else if (args[i] === "--docs") docs = Number(value());
  else if (args[i] === "--rows") rows = Number(value());
  else if (args[i] === "--delay-ms") delayMs = Number(value());
  else if (args[i] === "--bin") bin = value();
  else if (args[i] === "--startup") startup = true;
  else {
    console.error(`drain-trace: unknown argument ${args[i]}`);
    process.exit(2);
  }
}
if (!["sidecar", "consumer"].includes(consumer) || !(docs > 0) || !(rows >= 0) || !(delayMs >= 0)) {
  console.error("usage: node bench/sidecar/drain-trace.mjs [--consumer sidecar|consumer] [--gapless] [--sealed] [--docs N] [--rows N] [--delay-ms MS] [--bin SIDECAR] [--startup]");
  process.exit(2);
}

const run = await drainOnce({ consumer, batch: 1000, gapless, sealFields, delayMs, docs, capSeconds: 120, bin, trace: true });
const HANDSHAKE = new Set(["hello", "isMaster", "ismaster", "ping", "buildInfo", "endSessions"]);
const trace = run.trace.filter((c) => !HANDSHAKE.has(c.cmd)).sort((a, b) => a.sent_us - b.sent_us);
// The numbering starts at the first getMore (the consumer's start-up before it: index, state, lease).
const from = startup ? 0 : trace.findIndex((c) => c.cmd === "getMore");
const numbering = trace.slice(Math.max(0, from));
const t0 = numbering[0]?.sent_us ?? 0;
const ms = (us) => ((us - t0) / 1000).toFixed(1);
const what = `${consumer === "sidecar" ? `sidecar${gapless ? " gapless" : ""}${sealFields ? " sealed" : ""}, batch 1000` : "change-stream consumer's limit"}`;
console.log(`### Trace: ${what}, drain of ${docs} documents, ${delayMs ? `${delayMs} ms each way` : "loopback"} (${Math.round(run.rate)} docs/s)\n`);
console.log("| sent ms | answered ms | took ms | conn | command | waits behind (answered meanwhile, other connections) |");
console.log("|---:|---:|---:|---:|---|---|");
for (const c of numbering.slice(0, rows)) {
  const behind = numbering.filter((o) => o !== c && o.conn !== c.conn && o.answered_us > c.sent_us && o.answered_us < c.answered_us);
  const label = (o) => `${o.cmd}${o.coll ? ` ${o.coll}` : ""}`;
  console.log(`| ${ms(c.sent_us)} | ${ms(c.answered_us)} | ${((c.answered_us - c.sent_us) / 1000).toFixed(1)} | ${c.conn} | ${label(c)} | ${behind.map(label).join(", ") || "—"} |`);
}

// Summary over the whole numbering.
const end = Math.max(...numbering.map((c) => c.answered_us));
const kinds = new Map();
for (const c of numbering) {
  const key = `${c.cmd}${c.coll ? ` ${c.coll}` : ""}`;
  const k = kinds.get(key) ?? { n: 0, us: 0 };
  k.n += 1;
  k.us += c.answered_us - c.sent_us;
  kinds.set(key, k);
}
// Time with no command in flight: the union of the commands' intervals, subtracted from the span.
let busy = 0;
let reach = t0;
for (const c of [...numbering].sort((a, b) => a.sent_us - b.sent_us)) {
  if (c.answered_us <= reach) continue;
  busy += c.answered_us - Math.max(c.sent_us, reach);
  reach = c.answered_us;
}
const span = end - t0;
console.log(`\n| command | count | in flight, ms total | per command, ms |`);
console.log("|---|---:|---:|---:|");
for (const [key, k] of [...kinds].sort((a, b) => b[1].us - a[1].us)) {
  console.log(`| ${key} | ${k.n} | ${(k.us / 1000).toFixed(1)} | ${(k.us / k.n / 1000).toFixed(2)} |`);
}
console.log(`\n${startup ? "First command" : "First getMore"} to last reply: ${(span / 1000).toFixed(1)} ms; some command in flight ${(busy / 1000).toFixed(1)} ms (${((busy / span) * 100).toFixed(0)}%), none ${((span - busy) / 1000).toFixed(1)} ms (the consumer's own work between a reply and its next request).`);
