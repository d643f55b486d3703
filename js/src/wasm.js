// Loads the Wasm module once, synchronously, on the package's first call into the core (not at
// import), and hands the bindings to the rest of the package (every other module reaches the
// core through `core` here).
//
// The module is inside the JS bundle (brotli-compressed, base64; `mongo-seq:wasm-module` is
// made by scripts/build-js.mjs), not a file beside it: an application bundled again by esbuild
// (ESM or CommonJS), webpack, Rollup, `bun build` or Next.js carries it in its own bundle, with
// nothing to copy and no `import.meta.url` (which a CommonJS bundle does not have) or file
// system to find it by. Measured against reading a .wasm file: js/README.md, "Bundlers".
//
// Why on first use: decompressing and compiling the module is most of the package's cold start
// (docs/benchmarks.md, "Cold start"); an application that imports the package but numbers
// nothing in a run (a CLI, a serverless handler on another route) pays none of it on its main
// thread, and one that does pays it once, on its first `new Sequences(…)`. Every API stays
// synchronous. Once the import's turn of the event loop is over (an application connecting to
// MongoDB, awaiting anything), the module is decompressed on the runtime's thread pool and
// compiled on the engine's compile threads, in the background: a first call after that only
// instantiates it. A first call made before that finished loads it as before (from the
// background's decompressed bytes when those are there).
import * as bindings from "../wasm/mongo_seq_wasm.js";
import { BROTLI_BASE64, BYTES } from "mongo-seq:wasm-module";
import { mongoSeqError } from "./errors.js";
import { builtin } from "./runtime.js";

// What costs nothing is checked at import: a runtime without WebAssembly fails here, not later.
if (typeof WebAssembly !== "object" || WebAssembly === null) {
  throw loadFailed("this runtime has no `WebAssembly` global", "WebAssembly is turned off (node --jitless or --no-expose-wasm, a sandbox that removes it)");
}

let loaded = false;
/** What the background load has made so far: the module's bytes, then the compiled module. */
let decompressed;
let compiled;

/** Decompresses, compiles and initialises the module on the first call; nothing after. */
function ready() {
  if (!loaded) {
    load();
    loaded = true;
  }
}

/**
 * The module decompressed (brotli on the thread pool) and compiled (`WebAssembly.compile`) off
 * the main thread, after the import's turn; any failure is left to the first call's own load,
 * which reports it.
 */
function loadInBackground() {
  try {
    const zlib = globalThis.process?.getBuiltinModule?.("node:zlib");
    if (loaded || typeof zlib?.brotliDecompress !== "function" || typeof WebAssembly.compile !== "function") return;
    zlib.brotliDecompress(Buffer.from(BROTLI_BASE64, "base64"), (error, bytes) => {
      if (error || loaded || bytes.length !== BYTES) return;
      decompressed = bytes;
      WebAssembly.compile(bytes).then(
        (module) => {
          if (!loaded) compiled = module;
        },
        () => {},
      );
    });
  } catch {
    // the first call loads the module itself
  }
}
if (typeof setImmediate === "function") setImmediate(loadInBackground).unref?.();

function load() {
  if (compiled !== undefined) {
    try {
      bindings.initSync({ module: compiled });
      return;
    } catch {
      // instantiated below from the bytes, where a failure is reported
    } finally {
      compiled = undefined;
    }
  }
  let zlib;
  try {
    zlib = builtin("node:zlib");
  } catch (error) {
    throw loadFailed(`it found no zlib to decompress it with (${error?.message ?? error})`, "the runtime is older than the package needs", error);
  }
  let bytes = decompressed;
  decompressed = undefined;
  try {
    bytes ??= zlib.brotliDecompressSync(Buffer.from(BROTLI_BASE64, "base64"));
  } catch (error) {
    throw loadFailed(`its brotli text did not decompress (${error?.message ?? error})`, "the text was altered: a build step rewrote the bundle's string literals", error);
  }
  if (bytes.length !== BYTES) {
    throw loadFailed(`it decompressed to ${bytes.length} bytes, not ${BYTES}`, "the text was altered: a build step rewrote the bundle's string literals");
  }
  try {
    bindings.initSync({ module: bytes });
  } catch (error) {
    throw loadFailed(`WebAssembly refused it (${error?.message ?? error})`, "the runtime is older than the package needs or limits WebAssembly (it uses reference types and bulk memory)", error);
  }
}

/** WASM_LOAD_FAILED: what was looked for, where, what went wrong, and how to fix it. */
function loadFailed(problem, likely, cause) {
  const where = bundleLocation();
  const error = mongoSeqError(
    "WASM_LOAD_FAILED",
    `mongo-seq could not load its WebAssembly core: looked for the ${BYTES}-byte module embedded (brotli-compressed, base64) in ${where}, and ${problem}. ` +
      `Likely cause: ${likely}. To fix: run on Node ≥ 20.19, Deno 2 or Bun with WebAssembly enabled, and bundle mongo-seq's dist/index.mjs as it is ` +
      `(or leave the package out of the bundle: esbuild --external:mongo-seq, webpack externals, Next.js serverExternalPackages). Nothing needs to be copied beside the bundle.`,
    { bytes: BYTES, where },
  );
  if (cause !== undefined) error.cause = cause;
  return error;
}

/**
 * The file this code runs from (mongo-seq's dist/index.mjs, or the application's bundle), read
 * from a stack trace: `import.meta.url` would be empty in a CommonJS bundle, and a bundler warns
 * about it in every application built to CommonJS.
 */
function bundleLocation() {
  const frame = String(new Error().stack ?? "")
    .split("\n")
    .find((line) => /(file:|\/|\\)\S+:\d+:\d+/.test(line));
  const file = frame?.match(/\(?((?:file:\/\/)?[^\s()]+?):\d+:\d+\)?\s*$/)?.[1];
  return file ? `the JavaScript file ${file}` : "mongo-seq's JavaScript bundle";
}

/**
 * The core's API: the bindings without their loader (named one by one, so bundlers drop
 * wasm-bindgen's asynchronous loader and its `import.meta.url`).
 */
const API = {
  SequenceSpec: bindings.SequenceSpec,
  Plan: bindings.Plan,
  BlockAllocator: bindings.BlockAllocator,
  BlockCounter: bindings.BlockCounter,
  rangeValues: bindings.rangeValues,
  checkCount: bindings.checkCount,
  checkFieldPath: bindings.checkFieldPath,
  checkCollectionName: bindings.checkCollectionName,
  shardKeyRefusal: bindings.shardKeyRefusal,
  formatSeq: bindings.formatSeq,
  checkInstant: bindings.checkInstant,
  readInteger: bindings.readInteger,
  audit: bindings.audit,
  account: bindings.account,
  sealLink: bindings.sealLink,
  verifySeries: bindings.verifySeries,
  unnumbered: bindings.unnumbered,
  importRequest: bindings.importRequest,
  importCounters: bindings.importCounters,
  errorCodes: bindings.errorCodes,
  optionKeys: bindings.optionKeys,
  maxRetries: bindings.maxRetries,
  version: bindings.version,
};

/** The core: each name a getter that loads the module first (`core.f(…)`, `new core.C(…)` work from the first call). */
export const core = Object.freeze(
  Object.defineProperties(
    {},
    Object.fromEntries(
      Object.entries(API).map(([name, value]) => [
        name,
        {
          enumerable: true,
          get() {
            ready();
            return value;
          },
        },
      ]),
    ),
  ),
);
