// The package as users get it: `npm pack`, then install the tarball into fresh projects in
// temp dirs (Node ESM, Node CJS, Deno, Bun) and run a smoke test against the test server in
// each. Installs are offline-first (npm's cache already holds the driver from `npm ci`).
// (Bundled applications: bundlers.test.mjs.)
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { rmSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { startMongo } from "../harness/mongo.mjs";
import { runScript, describeRun, repoRoot } from "../harness/runtimes.mjs";
import { installProject, packPackage, run } from "./packed.mjs";

const fixtures = fileURLToPath(new URL("fixtures/", import.meta.url));

let server;
let work;
let tarball;
let packed;

before(async () => {
  server = await startMongo();
  ({ work, tarball, packed } = await packPackage("mongo-seq-pack-"));
});
after(async () => {
  if (work) rmSync(work, { recursive: true, force: true });
  await server?.stop();
});

/** A fresh project in its own temp dir with the tarball and the driver installed. */
function project(name, type, files) {
  return installProject({ work, tarball, name, type, fixtures, files });
}

async function smoke(label, runtime, dir, script) {
  const result = await runScript(runtime, join(dir, script), { cwd: dir, env: { MONGODB_URI: server.uri } });
  assert.equal(result.code, 0, describeRun(`${label} smoke test`, result));
  assert.match(result.stdout, /smoke ok/);
}

test("the tarball holds the bundles (the Wasm module inside the ESM one), the declarations, the readme and the license, and no sources", () => {
  // The third-party notices are written by `make release` (scripts/notices npm); the release
  // tests (tests/release/) require them in the tarball it packs.
  const files = packed.files.map((f) => f.path).filter((path) => path !== "THIRD-PARTY-NOTICES.md").sort();
  assert.deepEqual(files, [
    "LICENSE",
    "README.md",
    "dist/core.d.cts",
    "dist/core.d.ts",
    "dist/index.cjs",
    "dist/index.d.cts",
    "dist/index.d.ts",
    "dist/index.mjs",
    "dist/mongoose.cjs",
    "dist/mongoose.d.cts",
    "dist/mongoose.d.ts",
    "dist/mongoose.mjs",
    "mongoose/package.json",
    "package.json",
  ]);
});

test("a fresh Node ESM project: import, smoke test, and types through exports", async () => {
  const dir = await project("esm", "module", ["smoke.mjs", "smoke-body.mjs", "types-check.mts", "types-check.cts"]);
  await smoke("Node ESM", "node", dir, "smoke.mjs");
  const tsc = join(repoRoot, "node_modules", ".bin", "tsc");
  const types = join(repoRoot, "node_modules", "@types");
  const args = ["--noEmit", "--strict", "--module", "node16", "--moduleResolution", "node16", "--target", "es2022"];
  args.push("--lib", "es2022,esnext.disposable", "--typeRoots", types, "--types", "node", "types-check.mts", "types-check.cts");
  await run(tsc, args, { cwd: dir }).catch((error) => assert.fail(`tsc on the installed package:\n${error.stdout}${error.stderr}`));
});

test("the license in the tarball is the repository's MIT license", async () => {
  const dir = join(work, "license");
  await run("mkdir", ["-p", dir]);
  await run("tar", ["-xzf", tarball, "-C", dir]);
  const shipped = readFileSync(join(dir, "package", "LICENSE"), "utf8");
  assert.equal(shipped, readFileSync(join(repoRoot, "LICENSE"), "utf8"));
  assert.match(shipped, /^MIT License/);
  assert.equal(JSON.parse(readFileSync(join(dir, "package", "package.json"), "utf8")).license, "MIT");
});

// ESM shims and `node -e` define a global __dirname; the ESM build must not
// take it for its own directory (the module is inside the bundle now: nothing is located).
test("ESM with a global __dirname, and `node -e 'import(\"mongo-seq\")'`, load the Wasm module", async () => {
  const dir = await project("dirname", "module", ["esm-global-dirname.mjs"]);
  const shimmed = await runScript("node", join(dir, "esm-global-dirname.mjs"), { cwd: dir });
  assert.equal(shimmed.code, 0, describeRun("ESM with a global __dirname", shimmed));
  assert.match(shimmed.stdout, /global __dirname ok/);
  const evaluated = await run(process.execPath, ["-e", 'import("mongo-seq").then(({ core }) => console.log(core.formatSeq("{seq}", 5)))'], { cwd: dir }).catch(
    (error) => assert.fail(`node -e import("mongo-seq"):\n${error.stdout}${error.stderr}`),
  );
  assert.equal(evaluated.stdout.trim(), "5");
});

// The dual-package hazard: importing and requiring the package in one process gives one
// instance (the CommonJS entry requires the ES module), in Node, Bun and Deno.
test("import and require in one process share one instance: classes, core and blocks", async () => {
  const dir = await project("dual", "module", ["dual.mjs"]);
  for (const runtime of ["node", "bun", "deno"]) {
    const result = await runScript(runtime, join(dir, "dual.mjs"), { cwd: dir, env: { MONGODB_URI: server.uri } });
    assert.equal(result.code, 0, describeRun(`${runtime} dual`, result));
    assert.match(result.stdout, /dual ok/, `${runtime}: ${result.stdout}`);
  }
});

test("a fresh Node CJS project: require and smoke test", async () => {
  const dir = await project("cjs", "commonjs", ["smoke.cjs", "smoke-body.mjs"]);
  await smoke("Node CJS", "node", dir, "smoke.cjs");
});

test("a Deno script: npm:mongo-seq from the project's node_modules, offline", async () => {
  const dir = await project("deno", "module", ["smoke-deno.mjs", "smoke-body.mjs"]);
  await smoke("Deno", "deno", dir, "smoke-deno.mjs");
});

test("a Bun script", async () => {
  const dir = await project("bun", "module", ["smoke.mjs", "smoke-body.mjs"]);
  await smoke("Bun", "bun", dir, "smoke.mjs");
});

test("the temp projects used the packed copy, not the workspace", () => {
  for (const name of ["esm", "cjs", "deno", "bun"]) {
    const installed = readdirSync(join(work, name, "node_modules", "mongo-seq"));
    assert.ok(installed.includes("dist") && !installed.includes("src"), `${name}: ${installed}`);
  }
});
