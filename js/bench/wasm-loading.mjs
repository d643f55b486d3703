// `npm run bench:wasm-loading` (in js/, after `make build-js`): the ways the package could carry
// its Wasm module, side by side — a .wasm file read beside the bundle (what it did before issue
// 23), or the bytes inside the JS bundle as base64 text (raw, deflate, brotli) — by what each
// costs: install size (the files shipped, and gzip as in the tarball) and cold start (a fresh
// Node process importing the package bundle, with the driver already loaded so only the
// package's own load is timed; median of RUNS processes, interleaved). The figures and the
// choice are in js/README.md, "Bundlers".
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, copyFileSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import zlib from "node:zlib";
import { build } from "esbuild";

const RUNS = Number(process.env.BENCH_RUNS ?? 31);
const pkg = fileURLToPath(new URL("..", import.meta.url));
const wasm = readFileSync(join(pkg, "wasm", "mongo_seq_wasm_bg.wasm"));
const work = mkdtempSync(join(tmpdir(), "mongo-seq-wasm-loading-"));
symlinkSync(join(pkg, "..", "node_modules"), join(work, "node_modules"));

const brotli = () =>
  zlib.brotliCompressSync(wasm, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 11, [zlib.constants.BROTLI_PARAM_LGWIN]: 24 } });
/** Each strategy: the source of `mongo-seq:wasm-module` and the code that turns it into bytes. */
const STRATEGIES = {
  "file beside the bundle": {
    module: `export const BYTES = ${wasm.length};`,
    bytes: `readFileSync(new URL("mongo_seq_wasm_bg.wasm", import.meta.url))`,
    file: true,
  },
  "inline base64": { module: `export const TEXT = ${JSON.stringify(wasm.toString("base64"))};`, bytes: `Buffer.from(TEXT, "base64")` },
  "inline deflate+base64": {
    module: `export const TEXT = ${JSON.stringify(zlib.deflateRawSync(wasm, { level: 9 }).toString("base64"))};`,
    bytes: `inflateRawSync(Buffer.from(TEXT, "base64"))`,
  },
  "inline brotli+base64 (chosen)": { module: `export const TEXT = ${JSON.stringify(brotli().toString("base64"))};`, bytes: `brotliDecompressSync(Buffer.from(TEXT, "base64"))` },
};

const rows = [];
try {
  for (const [name, strategy] of Object.entries(STRATEGIES)) {
    const dir = join(work, name.replace(/\W+/g, "-"));
    const loader = join(dir, "wasm.js");
    // The package's bundle with this loader in place of src/wasm.js.
    const source = readFileSync(join(pkg, "src", "wasm.js"), "utf8");
    const body = source.slice(source.indexOf("/** The core's API"));
    await build({
      stdin: {
        contents: `import { readFileSync } from "node:fs"; import { inflateRawSync, brotliDecompressSync } from "node:zlib";
import * as bindings from ${JSON.stringify(join(pkg, "wasm", "mongo_seq_wasm.js"))};
import * as embedded from "mongo-seq:wasm-module";
const { TEXT } = embedded;
bindings.initSync({ module: ${strategy.bytes} });
${body}`,
        resolveDir: pkg,
        sourcefile: loader,
      },
      bundle: true,
      platform: "node",
      format: "esm",
      outfile: join(dir, "index.mjs"),
      logLevel: "error",
      plugins: [
        {
          name: "wasm-module",
          setup(esbuild) {
            esbuild.onResolve({ filter: /^mongo-seq:wasm-module$/ }, (args) => ({ path: args.path, namespace: "wasm-module" }));
            esbuild.onLoad({ filter: /.*/, namespace: "wasm-module" }, () => ({ contents: strategy.module, loader: "js" }));
          },
        },
      ],
    });
    if (strategy.file) copyFileSync(join(pkg, "wasm", "mongo_seq_wasm_bg.wasm"), join(dir, "mongo_seq_wasm_bg.wasm"));
    const files = strategy.file ? ["index.mjs", "mongo_seq_wasm_bg.wasm"] : ["index.mjs"];
    const bytes = files.reduce((sum, file) => sum + readFileSync(join(dir, file)).length, 0);
    const gzip = files.reduce((sum, file) => sum + zlib.gzipSync(readFileSync(join(dir, file)), { level: 9 }).length, 0);
    rows.push({ name, dir, bytes, gzip, times: [] });
  }
  for (let run = 0; run < RUNS; run++) {
    for (const row of rows) {
      const script = `await import("mongodb"); const t = performance.now(); const m = await import(${JSON.stringify(join(row.dir, "index.mjs"))}); const ms = performance.now() - t; if (m.core.formatSeq("{seq}", 7) !== "7") throw new Error("bad"); console.log(ms);`;
      row.times.push(Number(execFileSync(process.execPath, ["--input-type=module", "-e", script], { cwd: work, encoding: "utf8" })));
    }
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const base = rows[0];
console.log(`Wasm module: ${wasm.length} bytes; ${RUNS} fresh Node ${process.version} processes per strategy, interleaved\n`);
console.log("| strategy | loader + module bytes | gzip bytes | import of the package (median) |");
console.log("|---|---:|---:|---:|");
for (const row of rows) {
  const ms = median(row.times);
  console.log(
    `| ${row.name} | ${row.bytes} (${((row.bytes / base.bytes) * 100).toFixed(0)}%) | ${row.gzip} (${((row.gzip / base.gzip) * 100).toFixed(0)}%) | ${ms.toFixed(1)} ms (${ms >= median(base.times) ? "+" : ""}${(ms - median(base.times)).toFixed(1)} ms) |`,
  );
}
