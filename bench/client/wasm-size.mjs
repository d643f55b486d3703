// The Wasm module the package ships (after wasm-opt -Oz; the package carries it inside
// dist/index.mjs, brotli-compressed, as base64): raw, gzip and brotli bytes.
import { readFileSync } from "node:fs";
import { brotliCompressSync, gzipSync, constants } from "node:zlib";
import { fileURLToPath } from "node:url";

export const WASM_FILE = fileURLToPath(new URL("../../js/wasm/mongo_seq_wasm_bg.wasm", import.meta.url));

/** The module compressed each way it could travel (brotli as js/scripts/build-js.mjs does). */
function encodings(bytes) {
  const brotli = brotliCompressSync(bytes, { params: { [constants.BROTLI_PARAM_QUALITY]: constants.BROTLI_MAX_QUALITY, [constants.BROTLI_PARAM_LGWIN]: constants.BROTLI_MAX_WINDOW_BITS, [constants.BROTLI_PARAM_SIZE_HINT]: bytes.length } });
  return { raw: bytes, gzip: gzipSync(bytes, { level: 9 }), brotli };
}

/** `{ raw, gzip, brotli }`: the module's base64 text for each (bench/client/wasm-phases-probe.mjs). */
export function wasmTexts() {
  return Object.fromEntries(Object.entries(encodings(readFileSync(WASM_FILE))).map(([name, bytes]) => [name, bytes.toString("base64")]));
}

export function runWasmSize({ report }) {
  const { raw, gzip, brotli } = encodings(readFileSync(WASM_FILE));
  report.add("wasm.bytes", raw.length, "bytes", "the package's Wasm module, raw (after wasm-opt -Oz)", { server: false });
  report.add("wasm.gzip_bytes", gzip.length, "bytes", "the same, gzip -9", { server: false });
  report.add("wasm.brotli_bytes", brotli.length, "bytes", "the same, brotli (as embedded in dist/index.mjs, base64)", { server: false });
}
