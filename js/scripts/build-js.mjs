// Bundles the package from src/ and the wasm-bindgen glue (js/wasm/, made by build-wasm) into
// dist/: one ESM bundle (the glue inlined, and the optimized .wasm inside it, brotli-compressed
// as base64 text: see src/wasm.js), a CommonJS entry that requires that same bundle (Node ≥
// 20.19, Bun and Deno load ES modules with require), so an application importing both entries
// gets one Wasm instance and one set of classes — no dual-package hazard —, and the type
// declarations. No file beside the bundles: an application bundled again (esbuild, webpack,
// Rollup, bun build, Next.js) carries the module inside its own bundle.
import { build } from "esbuild";
import { mkdirSync, rmSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { brotliCompressSync, constants as zlib } from "node:zlib";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const pkg = join(dirname(fileURLToPath(import.meta.url)), "..");
const wasmDir = join(pkg, "wasm");
const dist = join(pkg, "dist");
if (!existsSync(join(wasmDir, "mongo_seq_wasm_bg.wasm"))) {
  throw new Error("js/wasm/ is missing: run `make build-wasm` (js/scripts/build-wasm) first");
}

rmSync(dist, { recursive: true, force: true });
mkdirSync(dist);
// The module as src/wasm.js imports it (`mongo-seq:wasm-module`): brotli at its best (−63% on
// the module; docs in js/README.md, "Bundlers"), base64 in a string literal, and its length
// to check the decompression against.
const wasm = readFileSync(join(wasmDir, "mongo_seq_wasm_bg.wasm"));
const compressed = brotliCompressSync(wasm, {
  params: { [zlib.BROTLI_PARAM_QUALITY]: zlib.BROTLI_MAX_QUALITY, [zlib.BROTLI_PARAM_LGWIN]: zlib.BROTLI_MAX_WINDOW_BITS, [zlib.BROTLI_PARAM_SIZE_HINT]: wasm.length },
});
const embedded = {
  name: "wasm-module",
  setup(esbuild) {
    esbuild.onResolve({ filter: /^mongo-seq:wasm-module$/ }, (args) => ({ path: args.path, namespace: "wasm-module" }));
    esbuild.onLoad({ filter: /.*/, namespace: "wasm-module" }, () => ({
      contents: `export const BROTLI_BASE64 = ${JSON.stringify(compressed.toString("base64"))};\nexport const BYTES = ${wasm.length};\n`,
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
const coreTypes = generated.slice(0, loaderAt).replace(/^\s*\[Symbol\.dispose\]\(\): void;\n/gm, "").trimEnd() + "\n";
const indexTypes = readFileSync(join(pkg, "src", "index.d.ts"), "utf8");
writeFileSync(join(dist, "core.d.ts"), coreTypes);
writeFileSync(join(dist, "core.d.cts"), coreTypes);
writeFileSync(join(dist, "index.d.ts"), indexTypes);
writeFileSync(join(dist, "index.d.cts"), indexTypes.replaceAll('"./core.js"', '"./core.cjs"'));
const mongooseTypes = readFileSync(join(pkg, "src", "mongoose.d.ts"), "utf8");
writeFileSync(join(dist, "mongoose.d.ts"), mongooseTypes);
writeFileSync(join(dist, "mongoose.d.cts"), mongooseTypes.replaceAll('"./index.js"', '"./index.cjs"').replaceAll('"./core.js"', '"./core.cjs"'));
console.log(`js: dist/index.mjs (the ${wasm.length}-byte Wasm module inside, ${compressed.length} bytes compressed), dist/index.cjs, dist/mongoose.mjs, dist/mongoose.cjs, dist/*.d.ts`);
