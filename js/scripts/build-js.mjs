// Bundles the package from src/ and the wasm-bindgen glue (js/wasm/, made by build-wasm) into
// dist/: one ESM bundle (the glue inlined, and the optimized .wasm inside it, brotli-compressed
// as base64 text: see src/wasm.js), a CommonJS entry that requires that same bundle (Node ≥
// 20.19, Bun and Deno load ES modules with require), so an application importing both entries
// gets one Wasm instance and one set of classes — no dual-package hazard —, and the type
// declarations. No file beside the bundles: an application bundled again (esbuild, webpack,
// Rollup, bun build, Next.js) carries the module inside its own bundle.
import { build } from "esbuild";
import { mkdirSync, rmSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { brotliCompressSync, crc32, gzipSync, constants as zlib } from "node:zlib";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const pkg = join(dirname(fileURLToPath(import.meta.url)), "..");
const wasmDir = join(pkg, "wasm");
const dist = join(pkg, "dist");
/** The two modules (js/scripts/build-wasm): the hot one loaded on the first call, the cold one on first use of its API. */
const MODULES = { HOT: { name: "hot", file: "mongo_seq_wasm_bg.wasm" }, COLD: { name: "cold", file: "mongo_seq_wasm_cold_bg.wasm" } };
for (const { file } of Object.values(MODULES)) {
  if (!existsSync(join(wasmDir, file))) throw new Error(`js/wasm/${file} is missing: run \`make build-wasm\` (js/scripts/build-wasm) first`);
}

/**
 * How each module travels in the bundle (base64 text of: `raw` bytes, `gzip`, `brotli` at its
 * best): the text is scanned by every import, the decoding paid by the module's first load
 * (docs/benchmarks.md, "The first call", has both measured). The hot module gzip: its first load
 * as fast as raw bytes' (less text to scan, a little more to decode), the import as brotli's. `MONGO_SEQ_WASM_ENCODING=hot:raw,cold:brotli`
 * overrides it for a measurement.
 */
const ENCODE = {
  raw: (bytes) => bytes,
  gzip: (bytes) => gzipSync(bytes, { level: 9 }),
  brotli: (bytes) =>
    brotliCompressSync(bytes, {
      params: { [zlib.BROTLI_PARAM_QUALITY]: zlib.BROTLI_MAX_QUALITY, [zlib.BROTLI_PARAM_LGWIN]: zlib.BROTLI_MAX_WINDOW_BITS, [zlib.BROTLI_PARAM_SIZE_HINT]: bytes.length },
    }),
};

const ENCODINGS = { HOT: "gzip", COLD: "brotli", ...encodingOverrides(process.env.MONGO_SEQ_WASM_ENCODING) };

function encodingOverrides(text) {
  if (!text) return {};
  return Object.fromEntries(
    text.split(",").map((pair) => {
      const [module, encoding] = pair.split(":");
      const key = module.toUpperCase();
      if (!(key in MODULES) || !(encoding in ENCODE)) throw new Error(`MONGO_SEQ_WASM_ENCODING: expected hot|cold:raw|gzip|brotli, got ${pair}`);
      return [key, encoding];
    }),
  );
}

rmSync(dist, { recursive: true, force: true });
mkdirSync(dist);
// The modules as src/wasm.js imports them (`mongo-seq:wasm-module`): functions returning `{ name,
// encoding, text, bytes, crc32 }`, the text base64 in a string literal, the module's length and
// CRC-32 to check the decoded bytes against (raw bytes have no check of their own). Inside a function the engine only scans the literal at import; it
// makes the string when the module is first loaded (docs/benchmarks.md, "The first call").
// The hot module's text comes first in the bundle.
const embeddedModules = Object.fromEntries(
  Object.entries(MODULES).map(([key, { name, file }]) => {
    const wasm = readFileSync(join(wasmDir, file));
    const encoded = ENCODE[ENCODINGS[key]](wasm);
    return [key, { name, encoding: ENCODINGS[key], text: encoded.toString("base64"), bytes: wasm.length, crc32: crc32(wasm), encodedBytes: encoded.length }];
  }),
);
const embedded = {
  name: "wasm-module",
  setup(esbuild) {
    esbuild.onResolve({ filter: /^mongo-seq:wasm-module$/ }, (args) => ({ path: args.path, namespace: "wasm-module" }));
    esbuild.onLoad({ filter: /.*/, namespace: "wasm-module" }, () => ({
      contents: Object.entries(embeddedModules)
        .map(([key, { name, encoding, text, bytes, crc32 }]) => `export function ${key}() {\n  return ${JSON.stringify({ name, encoding, text, bytes, crc32 })};\n}\n`)
        .join(""),
      loader: "js",
    }));
  },
};
// Whitespace minified (names and code kept as written: stack traces still name every function):
// parsing the bundle is part of every import's cost, ~0.7 ms less this way (docs/benchmarks.md, "Cold start").
const bundle = { bundle: true, platform: "node", target: "node20", format: "esm", external: ["mongodb"], minifyWhitespace: true, logLevel: "warning" };
await build({ ...bundle, entryPoints: [join(pkg, "src", "index.js")], outfile: join(dist, "index.mjs"), plugins: [embedded] });
// The mongoose plugin (`mongo-seq/mongoose`): its own small bundle that imports the main one,
// so both entries share the one Wasm instance and the same classes.
await build({
  ...bundle,
  entryPoints: [join(pkg, "src", "mongoose.js")],
  outfile: join(dist, "mongoose.mjs"),
  plugins: [
    {
      name: "main-entry",
      setup(esbuild) {
        esbuild.onResolve({ filter: /^\.\/index\.js$/ }, () => ({ path: "./index.mjs", external: true }));
      },
    },
  ],
});
writeFileSync(join(dist, "mongoose.cjs"), '"use strict";\nmodule.exports = require("./mongoose.mjs");\n');
writeFileSync(
  join(dist, "index.cjs"),
  '"use strict";\n// The CommonJS entry is the ES module itself: one Wasm instance per process, whichever entry loads it.\nmodule.exports = require("./index.mjs");\n',
);

// Declarations: the core's (wasm-bindgen's, without the loader API the package does not
// export — it would also drag in DOM types — nor `[Symbol.dispose]`, absent from Node 20) and
// the package's; once per format, since TypeScript reads .d.ts here as ESM and .d.cts as CJS.
const generated = readFileSync(join(wasmDir, "mongo_seq_wasm.d.ts"), "utf8");
const loaderAt = generated.indexOf("export type InitInput");
if (loaderAt < 0) throw new Error("unexpected wasm-bindgen declarations: no InitInput (CLI version changed?)");
// The cold module's classes and functions join the hot module's declarations (the types both
// name are the same custom section; `Plan` is in both).
const coldTypes = readFileSync(join(wasmDir, "mongo_seq_wasm_cold.d.ts"), "utf8");
const hotItems = new Set([...generated.slice(0, loaderAt).matchAll(/^export (?:class|function) (\w+)/gm)].map(([, name]) => name));
const coldItems = [...coldTypes.matchAll(/(?:\/\*\*\n(?: \*[^\n]*\n)* \*\/\n)?export (?:class (\w+)[^\n]*\{\n[\s\S]*?\n\}\n|function (\w+)\([^\n]*;\n)/g)]
  .filter(([, className, functionName]) => !hotItems.has(className ?? functionName) && (className ?? functionName) !== "initSync")
  .map(([item]) => item);
if (!coldItems.some((item) => item.includes("export class SequenceAdmin"))) throw new Error("unexpected wasm-bindgen declarations of the cold module: no SequenceAdmin");
const coreTypes = (generated.slice(0, loaderAt).trimEnd() + "\n\n" + coldItems.join("\n")).replace(/^\s*\[Symbol\.dispose\]\(\): void;\n/gm, "").trimEnd() + "\n";
const indexTypes = readFileSync(join(pkg, "src", "index.d.ts"), "utf8");
writeFileSync(join(dist, "core.d.ts"), coreTypes);
writeFileSync(join(dist, "core.d.cts"), coreTypes);
writeFileSync(join(dist, "index.d.ts"), indexTypes);
writeFileSync(join(dist, "index.d.cts"), indexTypes.replaceAll('"./core.js"', '"./core.cjs"'));
const mongooseTypes = readFileSync(join(pkg, "src", "mongoose.d.ts"), "utf8");
writeFileSync(join(dist, "mongoose.d.ts"), mongooseTypes);
writeFileSync(join(dist, "mongoose.d.cts"), mongooseTypes.replaceAll('"./index.js"', '"./index.cjs"').replaceAll('"./core.js"', '"./core.cjs"'));
const inside = Object.values(embeddedModules).map(({ name, encoding, bytes, encodedBytes }) => `${name} ${bytes} bytes, ${encoding} ${encodedBytes}`);
console.log(`js: dist/index.mjs (the Wasm modules inside: ${inside.join("; ")}), dist/index.cjs, dist/mongoose.mjs, dist/mongoose.cjs, dist/*.d.ts`);
