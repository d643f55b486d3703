// Package cold start: the time to `import` mongo-seq (which loads the driver, compiles the Wasm
// module and initialises it) in a fresh Node, Deno and Bun process, next to the time to import
// the `mongodb` driver alone; and mongo-seq's own share (imported after the driver), also inside
// an application bundled to one CommonJS file by esbuild.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { build as esbuild } from "esbuild";
import { runScript, repoRoot } from "../../tests/harness/runtimes.mjs";
import { median } from "../lib/stats.mjs";

const PROBE = fileURLToPath(new URL("./import-probe.mjs", import.meta.url));
const BUNDLED_PROBE = fileURLToPath(new URL("./import-probe.cjs", import.meta.url));

/** mongo-seq's own cold start in a CommonJS bundle (driver required first), ms per sample. */
async function bundledImportMs(samples) {
  const out = mkdtempSync(join(tmpdir(), "mongo-seq-cold-cjs-"));
  try {
    const bundle = join(out, "app.cjs");
    await esbuild({ entryPoints: [BUNDLED_PROBE], outfile: bundle, bundle: true, platform: "node", format: "cjs", logLevel: "silent" });
    const times = [];
    for (let i = 0; i < samples; i++) {
      const run = await runScript("node", bundle, { cwd: out, timeoutMs: 60_000 });
      const match = /IMPORT_MS ([\d.]+)/.exec(run.stdout);
      if (run.code !== 0 || !match) throw new Error(`bundled import probe failed:\n${run.stdout}\n${run.stderr}`);
      times.push(Number(match[1]));
    }
    return times;
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}

async function importMs(runtime, what) {
  const run = await runScript(runtime, PROBE, { cwd: repoRoot, args: [what], timeoutMs: 60_000 });
  const match = /IMPORT_MS ([\d.]+)/.exec(run.stdout);
  if (run.code !== 0 || !match) throw new Error(`${runtime} import probe (${what}) failed:\n${run.stdout}\n${run.stderr}`);
  return Number(match[1]);
}

export async function runColdStart({ samples, report }) {
  for (const runtime of ["node", "deno", "bun"]) {
    const times = { mongodb: [], "mongo-seq": [], "mongo-seq-after-mongodb": [] };
    for (let i = 0; i < samples; i++) for (const what of Object.keys(times)) times[what].push(await importMs(runtime, what));
    const driver = median(times.mongodb);
    const pkg = median(times["mongo-seq"]);
    report.add(`client.cold_start.${runtime}.mongodb_ms`, driver, "ms", `${runtime}: import the mongodb driver (fresh process, median of ${samples})`, { server: false });
    report.add(`client.cold_start.${runtime}.mongo_seq_ms`, pkg, "ms", `${runtime}: import mongo-seq (driver + Wasm compile + init)`, { server: false });
    report.add(`client.cold_start.${runtime}.mongo_seq_own_ms`, median(times["mongo-seq-after-mongodb"]), "ms", `${runtime}: import mongo-seq with the driver already loaded (the package's own cost)`, { server: false });
  }
  report.add("client.cold_start.node_bundled_cjs.mongo_seq_own_ms", median(await bundledImportMs(samples)), "ms",
    `node: require mongo-seq inside an application bundled to one CommonJS file by esbuild, the driver required first (fresh process, median of ${samples})`, { server: false });
}
