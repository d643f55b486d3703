// Where the Wasm module's load goes, in one fresh process (Node, Deno or Bun): turning the
// embedded text into bytes (base64 alone, or then gunzip as shipped, or brotli), then
// `new WebAssembly.Module` (decoding and validating: V8 and JSC compile function bodies lazily,
// on their first call), then instantiating it through the wasm-bindgen glue (`initSync`, which
// also runs the module's start function), then the core calls the package's first call makes
// (`new Sequences(db).sequence(…)`: collection names checked, a SequenceSpec, its options, its
// counters), each the first in the process (the engine compiles the functions they reach then).
// The driver is loaded first, as the package's own cold start is measured.
//   <runtime> bench/client/wasm-phases-probe.mjs TEXTS.json raw|gzip|brotli
// TEXTS.json: { raw, gzip, brotli } base64 texts (bench/client/cold-start.mjs writes it).
import { readFileSync } from "node:fs";
import { brotliDecompressSync, gunzipSync } from "node:zlib";
import { initSync, checkCollectionName, SequenceSpec } from "../../js/wasm/mongo_seq_wasm.js";

const DECODE = {
  raw: (text) => Buffer.from(text, "base64"),
  gzip: (text) => gunzipSync(Buffer.from(text, "base64")),
  brotli: (text) => brotliDecompressSync(Buffer.from(text, "base64")),
};
const [file, encoding] = globalThis.Deno?.args ?? globalThis.process?.argv.slice(2);
await import("mongodb"); // loaded first, as in the package's cold start (it loads node:zlib too)
const text = JSON.parse(readFileSync(file, "utf8"))[encoding];
let started = performance.now();
const bytes = DECODE[encoding](text);
const decodeMs = performance.now() - started;
started = performance.now();
const module = new WebAssembly.Module(bytes);
const compileMs = performance.now() - started;
started = performance.now();
initSync({ module });
const instantiateMs = performance.now() - started;
started = performance.now();
checkCollectionName("collection", "counters", "cold_start");
checkCollectionName("ledger", "mongo_seq_ledger", "cold_start");
const spec = new SequenceSpec({ name: "cold_start" });
spec.options();
spec.seriesCounters().warmPathReadsNow();
const callsMs = performance.now() - started;
console.log(`PHASES ${JSON.stringify({ decodeMs, compileMs, instantiateMs, callsMs })}`);
