// The Wasm modules the package ships (after wasm-opt -Oz; the package carries them inside
// dist/index.mjs as base64 text, the hot one gzip-, the cold one brotli-compressed:
// js/scripts/build-js.mjs): the hot one, which
// the first call loads (raw, gzip and brotli bytes), and the cold one, loaded by the admin paths.
import { readFileSync, statSync } from "node:fs";
import { brotliCompressSync, gzipSync, constants } from "node:zlib";
import { fileURLToPath } from "node:url";

export const WASM_FILE = fileURLToPath(new URL("../../js/wasm/mongo_seq_wasm_bg.wasm", import.meta.url));
export const COLD_WASM_FILE = fileURLToPath(new URL("../../js/wasm/mongo_seq_wasm_cold_bg.wasm", import.meta.url));
const BUNDLE = fileURLToPath(new URL("../../js/dist/index.mjs", import.meta.url));

/** The module compressed each way it could travel (brotli as js/scripts/build-js.mjs does). */
function encodings(bytes) {
  const brotli = brotliCompressSync(bytes, { params: { [constants.BROTLI_PARAM_QUALITY]: constants.BROTLI_MAX_QUALITY, [constants.BROTLI_PARAM_LGWIN]: constants.BROTLI_MAX_WINDOW_BITS, [constants.BROTLI_PARAM_SIZE_HINT]: bytes.length } });
  return { raw: bytes, gzip: gzipSync(bytes, { level: 9 }), brotli };
}

/** `{ raw, gzip, brotli }`: the hot module's base64 text for each (bench/client/wasm-phases-probe.mjs). */
export function wasmTexts() {
  return Object.fromEntries(Object.entries(encodings(readFileSync(WASM_FILE))).map(([name, bytes]) => [name, bytes.toString("base64")]));
}

export function runWasmSize({ report }) {
  const { raw, gzip, brotli } = encodings(readFileSync(WASM_FILE));
  report.add("wasm.bytes", raw.length, "bytes", "the package's hot Wasm module (what the first call loads), raw (after wasm-opt -Oz)", { server: false });
  report.add("wasm.gzip_bytes", gzip.length, "bytes", "the same, gzip -9 (as embedded in dist/index.mjs, base64)", { server: false });
  report.add("wasm.brotli_bytes", brotli.length, "bytes", "the same, brotli", { server: false });
  const cold = encodings(readFileSync(COLD_WASM_FILE));
  report.add("wasm.cold.bytes", cold.raw.length, "bytes", "the cold Wasm module (audit, ledger, import, assign, adopt, void, rewind, seals; loaded on their first use), raw", { server: false });
  report.add("wasm.cold.brotli_bytes", cold.brotli.length, "bytes", "the same, brotli (as embedded in dist/index.mjs, base64)", { server: false });
  report.add("package.bundle_bytes", statSync(BUNDLE).size, "bytes", "dist/index.mjs: the package's JS and both modules' text (what every import parses)", { server: false });
}
