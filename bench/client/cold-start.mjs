// Package cold start: the time to `import` mongo-seq in a fresh Node, Deno and Bun process, next
// to the time to import the `mongodb` driver alone; mongo-seq's own share (imported after the
// driver), and that plus its first call into the core, which loads the Wasm module (the import
// does not: js/src/wasm.js); the same inside an application bundled to one CommonJS file by
// esbuild; and where the module's load goes (decoding its text, compiling, instantiating).
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { build as esbuild } from "esbuild";
import { runScript, repoRoot } from "../../tests/harness/runtimes.mjs";
import { median, percentile } from "../lib/stats.mjs";

/** "quartiles a–b ms": the spread of `values`, for the figures the goal is read from. */
const spread = (values) => `quartiles ${percentile(values, 25).toFixed(1)}–${percentile(values, 75).toFixed(1)} ms`;
import { wasmTexts } from "./wasm-size.mjs";

const PROBE = fileURLToPath(new URL("./import-probe.mjs", import.meta.url));
const BUNDLED_PROBE = fileURLToPath(new URL("./import-probe.cjs", import.meta.url));
const PHASES_PROBE = fileURLToPath(new URL("./wasm-phases-probe.mjs", import.meta.url));
const RUNTIMES = ["node", "deno", "bun"];

/** Runs a probe; its `KEY value` pairs (IMPORT_MS, FIRST_CALL_MS, …) as numbers. */
async function probe(runtime, script, { cwd = repoRoot, args = [] } = {}) {
  const run = await runScript(runtime, script, { cwd, args, timeoutMs: 60_000 });
  const figures = Object.fromEntries([...run.stdout.matchAll(/([A-Z_]+) ([\d.]+)/g)].map(([, key, value]) => [key, Number(value)]));
  if (run.code !== 0 || figures.IMPORT_MS === undefined) throw new Error(`${runtime} ${script} ${args.join(" ")} failed:\n${run.stdout}\n${run.stderr}`);
  return figures;
}

/**
 * Another build of the package to measure beside this one, interleaved (docs/benchmarks.md,
 * "Cold start": main's before a change): the path of its dist/index.mjs.
 */
const BASELINE = process.env.BENCH_COLD_START_BASELINE;

/**
 * mongo-seq's own cold start in a CommonJS bundle (driver required first), for each build in
 * `pkgs` (undefined: this one), interleaved: `[{ imports, firstCalls }]`, ms per sample.
 */
async function bundledSamples(samples, pkgs) {
  const out = mkdtempSync(join(tmpdir(), "mongo-seq-cold-cjs-"));
  try {
    const builds = [];
    for (const [i, pkg] of pkgs.entries()) {
      const bundle = join(out, `app${i}.cjs`);
      const alias = pkg === undefined ? undefined : { "mongo-seq": pkg };
      await esbuild({ entryPoints: [BUNDLED_PROBE], outfile: bundle, bundle: true, platform: "node", format: "cjs", alias, logLevel: "silent" });
      builds.push({ bundle, imports: [], firstCalls: [], firstCallsCpu: [] });
    }
    for (let i = 0; i < samples; i++) {
      for (const build of builds) {
        const figures = await probe("node", build.bundle, { cwd: out });
        build.imports.push(figures.IMPORT_MS);
        build.firstCalls.push(figures.FIRST_CALL_MS ?? NaN);
        build.firstCallsCpu.push(figures.FIRST_CALL_CPU_MS ?? NaN);
      }
    }
    return builds;
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}

export async function runColdStart({ samples, report }) {
  for (const runtime of RUNTIMES) {
    const times = { mongodb: [], "mongo-seq": [], "mongo-seq-after-mongodb": [], "mongo-seq-after-mongodb-io": [] };
    const firstCalls = [];
    const firstCallsCpu = [];
    const firstCallsAfterIo = [];
    const baseline = { imports: [], firstCalls: [], firstCallsCpu: [] };
    for (let i = 0; i < samples; i++) {
      for (const what of Object.keys(times)) {
        const figures = await probe(runtime, PROBE, { args: [what] });
        times[what].push(figures.IMPORT_MS);
        if (figures.FIRST_CALL_MS !== undefined) (what.endsWith("-io") ? firstCallsAfterIo : firstCalls).push(figures.FIRST_CALL_MS);
        if (what === "mongo-seq-after-mongodb") firstCallsCpu.push(figures.FIRST_CALL_CPU_MS ?? NaN);
      }
      if (BASELINE !== undefined) {
        const figures = await probe(runtime, PROBE, { args: ["mongo-seq-after-mongodb", BASELINE] });
        baseline.imports.push(figures.IMPORT_MS);
        baseline.firstCalls.push(figures.FIRST_CALL_MS ?? NaN);
        baseline.firstCallsCpu.push(figures.FIRST_CALL_CPU_MS ?? NaN);
      }
    }
    const each = `fresh process, median of ${samples}`;
    report.add(`client.cold_start.${runtime}.mongodb_ms`, median(times.mongodb), "ms", `${runtime}: import the mongodb driver (${each})`, { server: false });
    report.add(`client.cold_start.${runtime}.mongo_seq_ms`, median(times["mongo-seq"]), "ms", `${runtime}: import mongo-seq (the driver and the package; the Wasm module loads on first call)`, { server: false });
    report.add(`client.cold_start.${runtime}.mongo_seq_own_ms`, median(times["mongo-seq-after-mongodb"]), "ms", `${runtime}: import mongo-seq with the driver already loaded (the package's own cost)`, { server: false });
    report.add(`client.cold_start.${runtime}.mongo_seq_first_call_ms`, median(firstCalls), "ms", `${runtime}: the same import plus the first call into the core right after it (new Sequences(db).sequence(…): decode, compile, instantiate the hot Wasm module; ${spread(firstCalls)})`, { server: false });
    report.add(`client.cold_start.${runtime}.mongo_seq_first_call_cpu_ms`, median(firstCallsCpu), "ms", `${runtime}: the same, as the process's CPU time (all threads; on a loaded machine the wall clock also counts waits for a core; ${spread(firstCallsCpu)})`, { server: false });
    report.add(`client.cold_start.${runtime}.mongo_seq_first_call_after_io_ms`, median(firstCallsAfterIo), "ms", `${runtime}: the same import plus the first call made 50 ms later, as after connecting (the module compiled in the background meanwhile; the wait itself untimed)`, { server: false });
    if (BASELINE !== undefined) {
      report.add(`client.cold_start.${runtime}.baseline.mongo_seq_own_ms`, median(baseline.imports), "ms", `${runtime}: the same, BENCH_COLD_START_BASELINE's build (interleaved)`, { server: false });
      report.add(`client.cold_start.${runtime}.baseline.mongo_seq_first_call_ms`, median(baseline.firstCalls), "ms", `${runtime}: its import plus first call (${spread(baseline.firstCalls)})`, { server: false });
      report.add(`client.cold_start.${runtime}.baseline.mongo_seq_first_call_cpu_ms`, median(baseline.firstCallsCpu), "ms", `${runtime}: the same as CPU time (${spread(baseline.firstCallsCpu)})`, { server: false });
    }
  }
  const [bundled, bundledBaseline] = await bundledSamples(samples, BASELINE === undefined ? [undefined] : [undefined, BASELINE]);
  report.add("client.cold_start.node_bundled_cjs.mongo_seq_own_ms", median(bundled.imports), "ms",
    `node: require mongo-seq inside an application bundled to one CommonJS file by esbuild, the driver required first (fresh process, median of ${samples})`, { server: false });
  report.add("client.cold_start.node_bundled_cjs.mongo_seq_first_call_ms", median(bundled.firstCalls), "ms",
    `node, bundled CommonJS: the same require plus the first call into the core (loads the hot Wasm module; ${spread(bundled.firstCalls)})`, { server: false });
  report.add("client.cold_start.node_bundled_cjs.mongo_seq_first_call_cpu_ms", median(bundled.firstCallsCpu), "ms", `node, bundled CommonJS: the same as the process's CPU time (${spread(bundled.firstCallsCpu)})`, { server: false });
  if (bundledBaseline !== undefined) {
    report.add("client.cold_start.node_bundled_cjs.baseline.mongo_seq_own_ms", median(bundledBaseline.imports), "ms", "node, bundled CommonJS: BENCH_COLD_START_BASELINE's build (interleaved)", { server: false });
    report.add("client.cold_start.node_bundled_cjs.baseline.mongo_seq_first_call_ms", median(bundledBaseline.firstCalls), "ms", `node, bundled CommonJS: its require plus first call (${spread(bundledBaseline.firstCalls)})`, { server: false });
    report.add("client.cold_start.node_bundled_cjs.baseline.mongo_seq_first_call_cpu_ms", median(bundledBaseline.firstCallsCpu), "ms", `node, bundled CommonJS: the same as CPU time (${spread(bundledBaseline.firstCallsCpu)})`, { server: false });
  }
  await runWasmPhases({ samples, report });
}

/**
 * Where the Wasm module's load goes, per runtime (fresh processes, the driver loaded first): its
 * text to bytes for each way it could travel (base64 alone, gzip as shipped, brotli), then
 * `new WebAssembly.Module`, then instantiation, then the first call's core calls (the hot module,
 * the one the first call loads).
 */
async function runWasmPhases({ samples, report }) {
  const dir = mkdtempSync(join(tmpdir(), "mongo-seq-wasm-phases-"));
  try {
    const file = join(dir, "texts.json");
    writeFileSync(file, JSON.stringify(wasmTexts()));
    for (const runtime of RUNTIMES) {
      const decode = { raw: [], gzip: [], brotli: [] };
      const compile = [];
      const instantiate = [];
      const calls = [];
      for (let i = 0; i < samples; i++) {
        for (const encoding of Object.keys(decode)) {
          const run = await runScript(runtime, PHASES_PROBE, { cwd: repoRoot, args: [file, encoding], timeoutMs: 60_000 });
          const phases = /PHASES (\{.*\})/.exec(run.stdout);
          if (run.code !== 0 || !phases) throw new Error(`${runtime} wasm phases probe failed:\n${run.stdout}\n${run.stderr}`);
          const { decodeMs, compileMs, instantiateMs, callsMs } = JSON.parse(phases[1]);
          decode[encoding].push(decodeMs);
          compile.push(compileMs);
          instantiate.push(instantiateMs);
          calls.push(callsMs);
        }
      }
      const label = { raw: "base64 alone (no compression)", gzip: "base64, then gunzip (shipped)", brotli: "base64, then brotli" };
      for (const [encoding, times] of Object.entries(decode)) {
        report.add(`client.cold_start.${runtime}.wasm_decode_ms.${encoding}`, median(times), "ms", `${runtime}: the module's text to bytes: ${label[encoding]} (first in a fresh process, median of ${samples})`, { server: false });
      }
      report.add(`client.cold_start.${runtime}.wasm_compile_ms`, median(compile), "ms", `${runtime}: new WebAssembly.Module (decode and validate; bodies compile lazily)`, { server: false });
      report.add(`client.cold_start.${runtime}.wasm_instantiate_ms`, median(instantiate), "ms", `${runtime}: instantiate it through the glue (initSync)`, { server: false });
      report.add(`client.cold_start.${runtime}.wasm_first_calls_ms`, median(calls), "ms", `${runtime}: then the core calls of the first call (names checked, a SequenceSpec, its options and counters; the engine compiles what they reach)`, { server: false });
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
