// The packed package inside bundled applications, the way people ship them:
// a tiny app (import, one next() against the test server, exit 0) installed with the tarball,
// bundled by esbuild (ESM, and CommonJS as AWS Lambda / Serverless / Vercel / Netlify functions
// ship), webpack 5 (target node), Rollup (node-resolve, commonjs, json) and `bun build`, each
// bundle run alone from a directory without node_modules — nothing copied beside it — and a
// Next.js route handler (`next build`, `next start`, one request). No bundler may warn about
// mongo-seq. A Wasm module that cannot be loaded fails with WASM_LOAD_FAILED (at the first call
// into the core; at import without WebAssembly) saying what was looked for, where, and how to fix it.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { build as esbuild } from "esbuild";
import webpack from "webpack";
import { rollup } from "rollup";
import { nodeResolve } from "@rollup/plugin-node-resolve";
import commonjs from "@rollup/plugin-commonjs";
import json from "@rollup/plugin-json";
import { startMongo, uniqueDbName } from "../harness/mongo.mjs";
import { runScript, describeRun, repoRoot } from "../harness/runtimes.mjs";
import { installProject, packPackage, run } from "./packed.mjs";

const fixtures = fileURLToPath(new URL("fixtures/bundled/", import.meta.url));
const repoModules = join(repoRoot, "node_modules");

let server;
let work;
let tarball;
let app;

before(async () => {
  server = await startMongo();
  ({ work, tarball } = await packPackage("mongo-seq-bundle-"));
  app = await installProject({ work, tarball, name: "app", type: "module", fixtures, files: ["app.mjs", "app.cjs"] });
});
after(async () => {
  if (work) rmSync(work, { recursive: true, force: true });
  await server?.stop();
});

/** Warnings that are about mongo-seq (the driver's optional dependencies are the driver's). */
const aboutUs = (text) => /node_modules[\\/]mongo-seq[\\/]/.test(text);

/** Runs the bundle `file` of `out` from a directory of its own (no node_modules above it): it must number. */
async function runAlone(label, out, file, runtime = "node") {
  const produced = readdirSync(out);
  assert.deepEqual(produced, [file], `${label}: the bundle is one file, nothing beside it to copy (got ${produced.join(", ")})`);
  const alone = join(work, "run", label.replace(/\W+/g, "-"));
  mkdirSync(alone, { recursive: true });
  copyFileSync(join(out, file), join(alone, file));
  const result = await runScript(runtime, join(alone, file), { cwd: alone, env: { MONGODB_URI: server.uri, DB_NAME: uniqueDbName(label) } });
  assert.equal(result.code, 0, describeRun(label, result));
  assert.match(result.stdout, /^bundled ok 1$/m, label);
}

test("esbuild, ESM (platform node): the bundle runs alone", async () => {
  const out = join(app, "out", "esbuild-esm");
  const result = await esbuild({
    entryPoints: [join(app, "app.mjs")],
    outfile: join(out, "app.mjs"),
    bundle: true,
    platform: "node",
    format: "esm",
    // The driver is CommonJS and requires Node's modules: an ESM bundle needs `require` (esbuild's FAQ).
    banner: { js: "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);" },
    logLevel: "silent",
  });
  assert.deepEqual(result.warnings.map((w) => w.text).filter(aboutUs), []);
  await runAlone("esbuild ESM", out, "app.mjs");
});

test("esbuild, one CommonJS file (platform node; Lambda's NodejsFunction default): the bundle runs alone, no import.meta warning", async () => {
  const out = join(app, "out", "esbuild-cjs");
  const result = await esbuild({ entryPoints: [join(app, "app.cjs")], outfile: join(out, "app.cjs"), bundle: true, platform: "node", format: "cjs", logLevel: "silent" });
  const warnings = result.warnings.map((w) => `${w.location?.file}: ${w.text}`);
  assert.deepEqual(warnings.filter((w) => aboutUs(w) || /import\.meta/.test(w)), []);
  await runAlone("esbuild CJS", out, "app.cjs");
});

test("webpack 5 (target node, production): the bundle runs alone", async () => {
  const out = join(app, "out", "webpack");
  const stats = await new Promise((resolve, reject) =>
    webpack(
      { mode: "production", target: "node", context: app, entry: "./app.mjs", output: { path: out, filename: "app.cjs" }, optimization: { minimize: false } },
      (error, result) => (error ? reject(error) : resolve(result)),
    ),
  );
  const { errors, warnings } = stats.toJson({ all: false, errors: true, warnings: true });
  assert.deepEqual(errors.map((e) => e.message), []);
  assert.deepEqual(warnings.map((w) => `${w.moduleName}: ${w.message}`).filter(aboutUs), []);
  await runAlone("webpack", out, "app.cjs");
});

test("Rollup (node-resolve, commonjs, json): the bundle runs alone", async () => {
  const out = join(app, "out", "rollup");
  const warnings = [];
  const bundle = await rollup({
    input: join(app, "app.mjs"),
    plugins: [nodeResolve({ preferBuiltins: true }), commonjs(), json()],
    onwarn: (warning) => warnings.push(`${warning.id ?? ""} ${warning.message}`),
  });
  await bundle.write({ file: join(out, "app.mjs"), format: "esm", inlineDynamicImports: true });
  await bundle.close();
  assert.deepEqual(warnings.filter(aboutUs), []);
  await runAlone("Rollup", out, "app.mjs");
});

test("bun build (target node): the bundle runs alone, in Node and in Bun", async () => {
  const out = join(app, "out", "bun");
  const { stderr } = await run(join(repoModules, ".bin", "bun"), ["build", "app.mjs", "--target=node", "--outfile", join(out, "app.mjs")], { cwd: app });
  assert.ok(!aboutUs(stderr), stderr);
  await runAlone("bun build", out, "app.mjs");
  await runAlone("bun build, run by Bun", out, "app.mjs", "bun");
});

test("a Next.js route handler: next build bundles mongo-seq into the server chunks, next start serves a number", async () => {
  const dir = await installProject({ work, tarball, name: "next", type: "module", fixtures: join(fixtures, "next"), files: ["app/", "next.config.mjs"] });
  // Next and React from the workspace's devDependencies, linked into the project (Turbopack
  // compiles nothing outside the project's root, so a symlink out of it will not do).
  for (const name of dependencyClosure(["next", "react", "react-dom"])) {
    mkdirSync(join(dir, "node_modules", name, ".."), { recursive: true });
    await run("cp", ["-al", join(repoModules, name), join(dir, "node_modules", name)]);
  }
  const next = join(dir, "node_modules", "next", "dist", "bin", "next");
  const env = { ...process.env, NEXT_TELEMETRY_DISABLED: "1", MONGODB_URI: server.uri, DB_NAME: uniqueDbName("next") };
  await run(process.execPath, [next, "build"], { cwd: dir, env, maxBuffer: 16 << 20 }).catch((error) => assert.fail(`next build:\n${error.stdout}${error.stderr}`));
  const chunks = filesUnder(join(dir, ".next", "server")).filter((file) => file.endsWith(".js"));
  assert.ok(
    chunks.some((file) => readFileSync(file, "utf8").includes("mongo-seq could not load its WebAssembly core")),
    "mongo-seq is inside Next's server chunks (bundled, not loaded from node_modules)",
  );
  const port = await freePort();
  const child = spawn(process.execPath, [next, "start", "-p", String(port), "-H", "127.0.0.1"], { cwd: dir, env, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  child.stdout.on("data", (chunk) => (output += chunk));
  child.stderr.on("data", (chunk) => (output += chunk));
  try {
    const response = await fetchWhenUp(`http://127.0.0.1:${port}/api/next`, () => output);
    assert.equal(response.status, 200, output);
    assert.deepEqual(await response.json(), { value: 1 });
  } finally {
    child.kill("SIGTERM");
  }
});

test("a Wasm module that cannot be loaded: WASM_LOAD_FAILED says what was looked for, where, and how to fix it", async () => {
  // No WebAssembly in the runtime.
  const probe = join(app, "probe.mjs");
  writeFileSync(probe, 'import("mongo-seq").then(() => console.log("loaded"), (e) => console.log(JSON.stringify({ code: e.code, message: e.message })));\n');
  const { stdout } = await run(process.execPath, ["--jitless", probe], { cwd: app });
  const refused = JSON.parse(stdout);
  assert.equal(refused.code, "WASM_LOAD_FAILED", stdout);
  assert.match(refused.message, /looked for the \d+-byte module embedded .* in the JavaScript file \S*node_modules\/mongo-seq\/dist\/index\.mjs/);
  assert.match(refused.message, /no `WebAssembly` global.*--jitless.*To fix: /);

  // A bundle whose embedded text a build step altered.
  const out = join(app, "out", "altered");
  await esbuild({ entryPoints: [join(app, "app.cjs")], outfile: join(out, "app.cjs"), bundle: true, platform: "node", format: "cjs", logLevel: "silent" });
  alterEmbeddedText(join(out, "app.cjs"));
  const result = await runScript("node", join(out, "app.cjs"), { cwd: out, env: { MONGODB_URI: server.uri, DB_NAME: uniqueDbName("altered") } });
  assert.notEqual(result.code, 0);
  assert.match(result.stderr, /WASM_LOAD_FAILED|could not load its WebAssembly core/);
  assert.match(result.stderr, /in the JavaScript file \S*out\/altered\/app\.cjs, and (it decoded to|its \w+ text did not)/);
  assert.match(result.stderr, /the text was altered.*To fix: /);

  // The module is loaded on the first call into the core, not by the import (a cold start that
  // imports the package and numbers nothing pays none of it): the altered bundle imports.
  const probeOut = join(app, "out", "altered-probe");
  writeFileSync(
    join(app, "first-call.cjs"),
    'const m = require("mongo-seq"); console.log("imported");\ntry { m.core.version(); console.log("loaded"); } catch (e) { console.log(e.code); }\n',
  );
  await esbuild({ entryPoints: [join(app, "first-call.cjs")], outfile: join(probeOut, "probe.cjs"), bundle: true, platform: "node", format: "cjs", logLevel: "silent" });
  alterEmbeddedText(join(probeOut, "probe.cjs"));
  const firstCall = await runScript("node", join(probeOut, "probe.cjs"), { cwd: probeOut });
  assert.equal(firstCall.code, 0, describeRun("altered probe", firstCall));
  assert.deepEqual(firstCall.stdout.trim().split("\n"), ["imported", "WASM_LOAD_FAILED"]);

  // The admin paths' module is a second one, loaded on their first use only: with its text
  // altered, sequences still number (the hot module alone loads) and the audit fails, naming it.
  const coldOut = join(app, "out", "altered-cold");
  writeFileSync(
    join(app, "cold-call.cjs"),
    'const m = require("mongo-seq"); console.log(m.core.formatSeq("A{seq}", 7));\n' +
      'try { m.core.audit([1], 1, 1, null); console.log("audited"); } catch (e) { console.log(e.code, e.details?.module); }\n',
  );
  await esbuild({ entryPoints: [join(app, "cold-call.cjs")], outfile: join(coldOut, "probe.cjs"), bundle: true, platform: "node", format: "cjs", logLevel: "silent" });
  alterEmbeddedText(join(coldOut, "probe.cjs"), 1);
  const coldCall = await runScript("node", join(coldOut, "probe.cjs"), { cwd: coldOut });
  assert.equal(coldCall.code, 0, describeRun("altered cold probe", coldCall));
  assert.deepEqual(coldCall.stdout.trim().split("\n"), ["A7", "WASM_LOAD_FAILED cold"]);
});

/**
 * Changes one character of a module's base64 text inside the bundle `file` (`which`: 0 the hot
 * module's, the first; 1 the cold one's), as a build step rewriting literals might.
 */
function alterEmbeddedText(file, which = 0) {
  const text = readFileSync(file, "utf8");
  const embedded = [...text.matchAll(/"[A-Za-z0-9+/]{4096,}={0,2}"/g)][which];
  assert.ok(embedded, `the bundle holds module ${which} as base64 text`);
  const at = embedded.index + 2048;
  writeFileSync(file, text.slice(0, at) + (text[at] === "A" ? "B" : "A") + text.slice(at + 1));
}

/** `names` and every package they depend on, as installed (flat) in the workspace's node_modules. */
function dependencyClosure(names) {
  const seen = new Set();
  const pending = [...names];
  while (pending.length > 0) {
    const name = pending.pop();
    if (seen.has(name)) continue;
    let manifest;
    try {
      manifest = JSON.parse(readFileSync(join(repoModules, name, "package.json"), "utf8"));
    } catch {
      continue; // an optional dependency of another platform
    }
    seen.add(name);
    for (const deps of [manifest.dependencies, manifest.optionalDependencies, manifest.peerDependencies]) pending.push(...Object.keys(deps ?? {}));
  }
  return [...seen];
}

function filesUnder(dir) {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath ?? entry.path, entry.name));
}

function freePort() {
  return new Promise((resolve, reject) => {
    const probe = createServer().listen(0, "127.0.0.1", () => {
      const { port } = probe.address();
      probe.close(() => resolve(port));
    });
    probe.once("error", reject);
  });
}

/** GETs `url` once the server answers (within 60 s). */
async function fetchWhenUp(url, log) {
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      return await fetch(url);
    } catch (error) {
      if (Date.now() > deadline) throw new Error(`${url} did not answer within 60 s: ${error.message}\n${log()}`);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
}
