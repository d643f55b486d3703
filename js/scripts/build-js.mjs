// Bundles the package from src/ and the wasm-bindgen glue (js/wasm/, made by build-wasm) into
// dist/: one ESM bundle (the glue inlined; it reads the .wasm beside it once), a CommonJS entry
// that requires that same bundle (Node ≥ 20.19, Bun and Deno load ES modules with require), so
// an application importing both entries gets one Wasm instance and one set of classes — no
// dual-package hazard — the optimized .wasm, and the type declarations.
import { build } from "esbuild";
import { copyFileSync, mkdirSync, rmSync, existsSync, readFileSync, writeFileSync } from "node:fs";
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
const bundle = { bundle: true, platform: "node", target: "node20", format: "esm", external: ["mongodb"], logLevel: "warning" };
await build({ ...bundle, entryPoints: [join(pkg, "src", "index.js")], outfile: join(dist, "index.mjs") });
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

copyFileSync(join(wasmDir, "mongo_seq_wasm_bg.wasm"), join(dist, "mongo_seq_wasm_bg.wasm"));

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
console.log("js: dist/index.mjs, dist/index.cjs, dist/mongoose.mjs, dist/mongoose.cjs, dist/mongo_seq_wasm_bg.wasm, dist/*.d.ts");
