// Where the time goes in a V8 CPU profile (`node --cpu-prof`): self time by function and by
// area (Wasm, the wasm-bindgen glue and the package, bson's EJSON, the driver, GC).
//
//   node bench/lib/cpuprofile-summary.mjs FILE.cpuprofile [top=25]
import { readFileSync } from "node:fs";
import { basename } from "node:path";
import { fileURLToPath } from "node:url";

function area(url, name) {
  if (name === "(garbage collector)") return "GC";
  if (name === "(program)" || name === "(idle)" || name === "(root)") return name;
  if (url.startsWith("wasm://")) return "Wasm (core + shims)";
  if (/node_modules\/bson\//.test(url)) return "bson (EJSON, Long)";
  if (/node_modules\/mongodb\//.test(url)) return "mongodb driver";
  if (/js\/(dist|wasm)\//.test(url) && /mongo_seq_wasm|wasm\.js/.test(url)) return "wasm-bindgen glue";
  if (/js\/dist\//.test(url)) return "mongo-seq package JS (bundle: glue + package)";
  if (url.startsWith("node:") || url === "") return "Node internals / native";
  return basename(url);
}

export function summarize(profile, top = 25) {
  const interval = (profile.endTime - profile.startTime) / Math.max(1, profile.samples.length); // µs per sample
  const byFunction = new Map();
  const byArea = new Map();
  let total = 0;
  for (const node of profile.nodes) {
    const { functionName, url, lineNumber } = node.callFrame;
    const self = (node.hitCount ?? 0) * interval;
    if (self === 0) continue;
    const name = functionName || "(anonymous)";
    const key = `${name} ${url ? `${basename(url)}:${lineNumber + 1}` : ""}`.trim();
    byFunction.set(key, (byFunction.get(key) ?? 0) + self);
    const a = area(url, name);
    byArea.set(a, (byArea.get(a) ?? 0) + self);
    if (name !== "(idle)") total += self;
  }
  const pct = (us) => `${((us / total) * 100).toFixed(1)}%`;
  const lines = [`total (not idle): ${(total / 1000).toFixed(0)} ms`, "", "| area | self time | share |", "|---|---:|---:|"];
  for (const [a, us] of [...byArea].sort((x, y) => y[1] - x[1])) if (a !== "(idle)") lines.push(`| ${a} | ${(us / 1000).toFixed(0)} ms | ${pct(us)} |`);
  lines.push("", "| function | self time | share |", "|---|---:|---:|");
  for (const [f, us] of [...byFunction].sort((x, y) => y[1] - x[1]).slice(0, top)) lines.push(`| \`${f}\` | ${(us / 1000).toFixed(0)} ms | ${pct(us)} |`);
  return lines.join("\n");
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [file, top] = process.argv.slice(2);
  if (!file) {
    console.error("usage: node bench/lib/cpuprofile-summary.mjs FILE.cpuprofile [top]");
    process.exit(2);
  }
  console.log(summarize(JSON.parse(readFileSync(file, "utf8")), Number(top ?? 25)));
}
