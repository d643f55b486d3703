// Loads the Wasm module once, synchronously, from the .wasm file beside the bundle, and hands
// the bindings to the rest of the package (every other module imports the core from here).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import * as bindings from "../wasm/mongo_seq_wasm.js";

const WASM_FILE = "mongo_seq_wasm_bg.wasm";

function wasmBytes() {
  // The CJS bundle has __dirname; the ESM bundle resolves the file against its own URL.
  // eslint-disable-next-line no-undef
  if (typeof __dirname === "string") return readFileSync(join(__dirname, WASM_FILE));
  return readFileSync(new URL(WASM_FILE, import.meta.url));
}

bindings.initSync({ module: wasmBytes() });

/** The core's API (the bindings without their loader: the module is initialized above, once). */
export const core = Object.freeze({
  SequenceSpec: bindings.SequenceSpec,
  Plan: bindings.Plan,
  BlockAllocator: bindings.BlockAllocator,
  rangeValues: bindings.rangeValues,
  formatSeq: bindings.formatSeq,
  readInteger: bindings.readInteger,
  audit: bindings.audit,
  errorCodes: bindings.errorCodes,
  maxRetries: bindings.maxRetries,
  version: bindings.version,
});
