// The Wasm module the package ships (after wasm-opt -Oz; the package carries it inside
// dist/index.mjs, brotli-compressed): raw and gzip bytes.
import { readFileSync } from "node:fs";
import { gzipSync } from "node:zlib";
import { fileURLToPath } from "node:url";

export const WASM_FILE = fileURLToPath(new URL("../../js/wasm/mongo_seq_wasm_bg.wasm", import.meta.url));

export function runWasmSize({ report }) {
  const bytes = readFileSync(WASM_FILE);
  report.add("wasm.bytes", bytes.length, "bytes", "the package's Wasm module, raw (after wasm-opt -Oz; goal ≤ 120,000)", { server: false });
  report.add("wasm.gzip_bytes", gzipSync(bytes, { level: 9 }).length, "bytes", "the same, gzip -9", { server: false });
}
