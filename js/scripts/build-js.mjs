// Bundles the package from src/ and the wasm-bindgen glue (js/wasm/, made by build-wasm) into
// dist/: one ESM and one CJS bundle (each with the glue inlined, so each format initializes
// the module once), the optimized .wasm they read at load time, and the type declarations.
import { build } from "esbuild";
import { copyFileSync, mkdirSync, rmSync, existsSync } from "node:fs";
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
const common = {
  entryPoints: [join(pkg, "src", "index.js")],
  bundle: true,
  platform: "node",
  target: "node20",
  external: ["mongodb"],
  logLevel: "warning",
  // The glue's async default init mentions import.meta.url; the package only uses initSync.
  logOverride: { "empty-import-meta": "silent" },
};
await build({ ...common, format: "esm", outfile: join(dist, "index.mjs") });
await build({ ...common, format: "cjs", outfile: join(dist, "index.cjs") });

copyFileSync(join(wasmDir, "mongo_seq_wasm_bg.wasm"), join(dist, "mongo_seq_wasm_bg.wasm"));
copyFileSync(join(wasmDir, "mongo_seq_wasm.d.ts"), join(dist, "core.d.ts"));
// The same declarations serve both formats; TypeScript wants a .d.cts beside the CJS entry.
copyFileSync(join(pkg, "src", "index.d.ts"), join(dist, "index.d.ts"));
copyFileSync(join(pkg, "src", "index.d.ts"), join(dist, "index.d.cts"));
console.log("js: dist/index.mjs, dist/index.cjs, dist/mongo_seq_wasm_bg.wasm, dist/*.d.ts");
