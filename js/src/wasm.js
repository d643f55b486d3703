// Loads the Wasm core, synchronously, on the package's first call into it (not at import), and
// hands the bindings to the rest of the package (every other module reaches the core through
// `core` here).
//
// Two modules, one shim crate built twice (js/scripts/build-wasm): the hot one (sequences,
// blocks, periods, inserts, formats: what `new Sequences(db).sequence(…)`, `next()`, the
// inserts and the mongoose plugin's saves need), loaded on the first call; and the cold one
// (audit, ledger, import, assign, adopt, void, rewind, seal verification, seeds), loaded on the
// first call of one of those. Each module owns the objects it makes (a `SequenceAdmin` is the
// cold module's own object, built from the options the hot `SequenceSpec` was). Why: the
// first call decodes and compiles the hot module only (docs/benchmarks.md, "The first call").
//
// The modules are inside the JS bundle (base64 text; `mongo-seq:wasm-module` is made by
// scripts/build-js.mjs, which says how each is encoded), not files beside it: an application
// bundled again by esbuild (ESM or CommonJS), webpack, Rollup, `bun build` or Next.js carries
// them in its own bundle, with nothing to copy and no `import.meta.url` (which a CommonJS bundle
// does not have) or file system to find them by. Measured against reading a .wasm file:
// js/README.md, "Bundlers".
//
// Why on first use: decoding and compiling a module is most of the package's cold start; an
// application that imports the package but numbers nothing in a run (a CLI, a serverless handler
// on another route) pays none of it on its main thread, and one that does pays it once, on its
// first `new Sequences(…)`. Every API stays synchronous. Once the import's turn of the event loop
// is over (an application connecting to MongoDB, awaiting anything), the hot module is decoded
// (on the runtime's thread pool when compressed) and compiled on the engine's compile threads,
// in the background (the cold one likewise once the hot one is in use): a first call after that
// only instantiates. A first call made before that finished loads the module as before (from
// the background's bytes when those are there).
import * as hotBindings from "../wasm/mongo_seq_wasm.js";
import * as coldBindings from "../wasm/mongo_seq_wasm_cold.js";
import { HOT, COLD } from "mongo-seq:wasm-module";
import { mongoSeqError } from "./errors.js";
import { builtin } from "./runtime.js";

// What costs nothing is checked at import: a runtime without WebAssembly fails here, not later.
if (typeof WebAssembly !== "object" || WebAssembly === null) {
  throw loadFailed(HOT(), "this runtime has no `WebAssembly` global", "WebAssembly is turned off (node --jitless or --no-expose-wasm, a sandbox that removes it)");
}

/** How each encoding turns into bytes: synchronously, and on the thread pool (absent: at once). */
const DECODERS = {
  raw: { sync: (bytes) => bytes },
  gzip: { sync: (bytes, zlib) => zlib.gunzipSync(bytes), async: "gunzip" },
  brotli: { sync: (bytes, zlib) => zlib.brotliDecompressSync(bytes), async: "brotliDecompress" },
};

/**
 * Whether `bytes` are the module's: its length and CRC-32 (zlib's, ~0.1 ms for the hot module;
 * raw bytes have no check of their own, and a changed byte may still validate as WebAssembly).
 */
function intact(bytes, embedded, zlib) {
  return bytes.length === embedded.bytes && (typeof zlib.crc32 !== "function" || zlib.crc32(bytes) === embedded.crc32);
}

/**
 * One embedded module (a function returning `{ name, encoding, text, bytes, crc32 }`) and its
 * glue's `initSync`: `ready()` loads it once (then calls `afterLoad`); `inBackground()` decodes
 * and compiles it off the main thread.
 */
function moduleLoader(embeddedModule, initSync, afterLoad) {
  let loaded = false;
  /** What the background load has made so far: the module's bytes, then the compiled module. */
  let decoded;
  let compiled;

  function ready() {
    if (!loaded) {
      load();
      loaded = true;
      afterLoad?.();
    }
  }

  /** Any failure is left to the first call's own load, which reports it. */
  function inBackground() {
    try {
      if (loaded || typeof WebAssembly.compile !== "function") return;
      const embedded = embeddedModule();
      const zlib = globalThis.process?.getBuiltinModule?.("node:zlib");
      if (zlib === undefined) return;
      const text = Buffer.from(embedded.text, "base64");
      const decoder = DECODERS[embedded.encoding];
      const compile = (error, bytes) => {
        if (error || loaded || !intact(bytes, embedded, zlib)) return;
        decoded = bytes;
        WebAssembly.compile(bytes).then(
          (module) => {
            if (!loaded) compiled = module;
          },
          () => {},
        );
      };
      if (decoder.async === undefined) return compile(null, text);
      if (typeof zlib[decoder.async] !== "function") return;
      zlib[decoder.async](text, compile);
    } catch {
      // the first call loads the module itself
    }
  }

  function load() {
    const embedded = embeddedModule();
    if (compiled !== undefined) {
      try {
        initSync({ module: compiled });
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
      throw loadFailed(embedded, `it found no zlib to decode it with (${error?.message ?? error})`, "the runtime is older than the package needs", error);
    }
    let bytes = decoded;
    decoded = undefined;
    if (bytes === undefined) {
      try {
        bytes = DECODERS[embedded.encoding].sync(Buffer.from(embedded.text, "base64"), zlib);
      } catch (error) {
        throw loadFailed(embedded, `its ${embedded.encoding} text did not decompress (${error?.message ?? error})`, "the text was altered: a build step rewrote the bundle's string literals", error);
      }
    }
    if (!intact(bytes, embedded, zlib)) {
      const what = bytes.length === embedded.bytes ? "bytes whose CRC-32 is not the module's" : `${bytes.length} bytes, not ${embedded.bytes}`;
      throw loadFailed(embedded, `it decoded to ${what}`, "the text was altered: a build step rewrote the bundle's string literals");
    }
    try {
      // The glue compiles the bytes (`new WebAssembly.Module`) and instantiates them.
      initSync({ module: bytes });
    } catch (error) {
      throw loadFailed(embedded, `WebAssembly refused it (${error?.message ?? error})`, "the runtime is older than the package needs or limits WebAssembly (it uses reference types and bulk memory)", error);
    }
  }

  return { ready, inBackground };
}

// `initSync` alone, not the bindings' namespace: a namespace passed as a value keeps all of it in
// the bundle, wasm-bindgen's asynchronous loader and its `new URL("….wasm", import.meta.url)`
// included (which webpack then tries to resolve).
const cold = moduleLoader(COLD, coldBindings.initSync);
// The cold module compiles in the background once the hot one is in use, not before: it would
// compete with the hot module's load, and an application that numbers nothing never needs it.
const hot = moduleLoader(HOT, hotBindings.initSync, () => loadInBackground(cold));
loadInBackground(hot);

/** `loader.inBackground()` after this turn of the event loop, holding no process open. */
function loadInBackground(loader) {
  if (typeof setImmediate === "function") setImmediate(() => loader.inBackground()).unref?.();
}

/** WASM_LOAD_FAILED: what was looked for, where, what went wrong, and how to fix it. */
function loadFailed(embedded, problem, likely, cause) {
  const where = bundleLocation();
  const how = embedded.encoding === "raw" ? "base64" : `${embedded.encoding}-compressed, base64`;
  const error = mongoSeqError(
    "WASM_LOAD_FAILED",
    `mongo-seq could not load its WebAssembly core: looked for the ${embedded.bytes}-byte module embedded (${how}; the ${embedded.name} one of two) in ${where}, and ${problem}. ` +
      `Likely cause: ${likely}. To fix: run on Node ≥ 20.19, Deno 2 or Bun with WebAssembly enabled, and bundle mongo-seq's dist/index.mjs as it is ` +
      `(or leave the package out of the bundle: esbuild --external:mongo-seq, webpack externals, Next.js serverExternalPackages). Nothing needs to be copied beside the bundle.`,
    { bytes: embedded.bytes, module: embedded.name, where },
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
 * The core's API: the bindings without their loaders (named one by one, so bundlers drop
 * wasm-bindgen's asynchronous loader and its `import.meta.url`), each with the module it is in.
 */
const API = [
  [
    hot,
    {
      SequenceSpec: hotBindings.SequenceSpec,
      Plan: hotBindings.Plan,
      BlockAllocator: hotBindings.BlockAllocator,
      BlockCounter: hotBindings.BlockCounter,
      rangeValues: hotBindings.rangeValues,
      checkCount: hotBindings.checkCount,
      checkFieldPath: hotBindings.checkFieldPath,
      checkCollectionName: hotBindings.checkCollectionName,
      shardKeyRefusal: hotBindings.shardKeyRefusal,
      formatSeq: hotBindings.formatSeq,
      checkInstant: hotBindings.checkInstant,
      readInteger: hotBindings.readInteger,
      errorCodes: hotBindings.errorCodes,
      optionKeys: hotBindings.optionKeys,
      maxRetries: hotBindings.maxRetries,
      version: hotBindings.version,
    },
  ],
  [
    cold,
    {
      SequenceAdmin: coldBindings.SequenceAdmin,
      audit: coldBindings.audit,
      account: coldBindings.account,
      sealLink: coldBindings.sealLink,
      verifySeries: coldBindings.verifySeries,
      unnumbered: coldBindings.unnumbered,
      importRequest: coldBindings.importRequest,
      importCounters: coldBindings.importCounters,
    },
  ],
];

/**
 * The core: each name a getter that loads its module first (`core.f(…)`, `new core.C(…)` work
 * from the first call; a name of the cold module loads only that one).
 */
export const core = Object.freeze(
  Object.defineProperties(
    {},
    Object.fromEntries(
      API.flatMap(([loader, names]) =>
        Object.entries(names).map(([name, value]) => [
          name,
          {
            enumerable: true,
            get() {
              loader.ready();
              return value;
            },
          },
        ]),
      ),
    ),
  ),
);
