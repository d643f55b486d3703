// The npm tarball of the release, checked as the registry and users' tools check it: `npm
// publish --dry-run` of the tarball itself, publint (strict: warnings fail too, suggestions are
// reported), arethetypeswrong (the types of every entry point under node10, node16 from ESM and
// from CJS, and bundlers), and what the tarball holds. That it installs and runs in fresh Node,
// Deno and Bun projects is tests/packaging/ (on the same `npm pack` of js/).
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { VERSION, artifact, files, ok, root, run, untar } from "./support.mjs";

const tarball = artifact(`mongo-seq-${VERSION}.tgz`);
const bin = (name) => join(root, "node_modules", ".bin", name);

test("npm publish --dry-run of the release tarball: no warning but the login a dry run cannot have", () => {
  const published = run("npm", ["publish", "--dry-run", tarball], { cwd: root });
  assert.equal(published.status, 0, published.stderr);
  const warnings = published.stderr.split("\n").filter((line) => /^npm warn/i.test(line));
  const unexpected = warnings.filter((line) => !/requires you to be logged in/.test(line));
  assert.deepEqual(unexpected, [], `npm publish warns:\n${published.stderr}`);
  assert.match(published.stderr, new RegExp(`mongo-seq@${VERSION.replaceAll(".", "\\.")}`));
});

test("publint --strict finds nothing in the tarball", () => {
  const linted = run(bin("publint"), ["run", tarball, "--strict"], { cwd: root });
  const output = `${linted.stdout}${linted.stderr}`;
  assert.equal(linted.status, 0, output);
  assert.match(output, /All good!/, `publint reports something:\n${output}`);
});

test("arethetypeswrong: every entry point's types resolve for ESM and CJS, in every resolution mode", () => {
  const checked = run(bin("attw"), [tarball, "--format", "json"], { cwd: root });
  const report = JSON.parse(checked.stdout);
  assert.deepEqual(report.problems ?? {}, {}, JSON.stringify(report.problems, null, 2));
  assert.equal(checked.status, 0, checked.stderr);
  const entrypoints = report.analysis.entrypoints;
  assert.deepEqual(Object.keys(entrypoints).sort(), [".", "./mongoose", "./package.json"]);
  for (const [name, entry] of Object.entries(entrypoints)) {
    if (name === "./package.json") continue;
    for (const mode of ["node10", "node16-cjs", "node16-esm", "bundler"]) {
      const resolution = entry.resolutions[mode]?.resolution;
      assert.ok(resolution?.isTypeScript, `${name} under ${mode}: no declaration file (${JSON.stringify(resolution)})`);
    }
    // TypeScript reads .d.cts as CommonJS and .d.ts (in a "type": "module" package) as ESM.
    assert.match(entry.resolutions["node16-cjs"].resolution.fileName, /\.d\.cts$/, `${name} from CJS: CommonJS types`);
    assert.match(entry.resolutions["node16-esm"].resolution.fileName, /\.d\.ts$/, `${name} from ESM: ESM types`);
  }
});

test("the tarball: the bundles, their declarations, the license and the third-party notices", () => {
  const dir = untar(tarball);
  assert.deepEqual(files(dir), [
    "package/LICENSE",
    "package/README.md",
    "package/THIRD-PARTY-NOTICES.md",
    "package/dist/core.d.cts",
    "package/dist/core.d.ts",
    "package/dist/index.cjs",
    "package/dist/index.d.cts",
    "package/dist/index.d.ts",
    "package/dist/index.mjs",
    "package/dist/mongoose.cjs",
    "package/dist/mongoose.d.cts",
    "package/dist/mongoose.d.ts",
    "package/dist/mongoose.mjs",
    "package/mongoose/package.json",
    "package/package.json",
  ]);
  const manifest = JSON.parse(readFileSync(join(dir, "package/package.json"), "utf8"));
  assert.equal(manifest.version, VERSION);
  assert.equal(manifest.license, "MIT");
  assert.deepEqual(manifest.dependencies ?? {}, {}, "the bundles hold everything but the peers");
  // The Wasm module inside the bundle is compiled from these crates: their notices ship along.
  const notices = readFileSync(join(dir, "package/THIRD-PARTY-NOTICES.md"), "utf8");
  assert.match(notices, /^# Third-party notices: the npm package mongo-seq/);
  for (const crate of ["serde_json", "wasm-bindgen", "js-sys", "talc", "thiserror"]) {
    assert.match(notices, new RegExp(`^- ${crate} \\d`, "m"), `notices name ${crate}`);
  }
  assert.match(notices, /Permission is hereby granted, free of charge/, "the MIT text");
  // The same file beside the release's other artifacts.
  assert.equal(readFileSync(artifact("THIRD-PARTY-NOTICES-npm.md"), "utf8"), notices);
});

test("the node10 redirect for mongo-seq/mongoose points at files the tarball has", () => {
  const dir = untar(tarball);
  const redirect = JSON.parse(readFileSync(join(dir, "package/mongoose/package.json"), "utf8"));
  const have = new Set(files(dir));
  for (const field of ["main", "types"]) {
    assert.ok(have.has(join("package/mongoose", redirect[field])), `mongoose/package.json ${field}: ${redirect[field]}`);
  }
  ok("node", ["-e", `require(${JSON.stringify(join(dir, "package/mongoose/package.json"))})`]);
});
