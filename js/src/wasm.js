// Loads the Wasm module once, synchronously, from the .wasm file beside the bundle, and hands
// the bindings to the rest of the package (every other module imports the core from here).
import { readFileSync } from "node:fs";
import * as bindings from "../wasm/mongo_seq_wasm.js";

const WASM_FILE = "mongo_seq_wasm_bg.wasm";

// The file sits beside the bundle, located from the module's own URL — never from a global
// __dirname, which ESM shims and `node -e` define to point elsewhere. (There is one bundle, ESM:
// the CommonJS entry requires it, so both entries share this one instance.)
bindings.initSync({ module: readFileSync(new URL(WASM_FILE, import.meta.url)) });

/** The core's API (the bindings without their loader: the module is initialized above, once). */
export const core = Object.freeze({
  SequenceSpec: bindings.SequenceSpec,
  Plan: bindings.Plan,
  BlockAllocator: bindings.BlockAllocator,
  BlockCounter: bindings.BlockCounter,
  rangeValues: bindings.rangeValues,
  checkCount: bindings.checkCount,
  checkFieldPath: bindings.checkFieldPath,
  formatSeq: bindings.formatSeq,
  readInteger: bindings.readInteger,
  audit: bindings.audit,
  importRequest: bindings.importRequest,
  importCounters: bindings.importCounters,
  errorCodes: bindings.errorCodes,
  optionKeys: bindings.optionKeys,
  maxRetries: bindings.maxRetries,
  version: bindings.version,
});
