// The release folder as a whole: every artifact scripts/release promises and nothing else,
// SHA256SUMS covering them all, the SBOMs (CycloneDX, by cargo-cyclonedx and npm), the licenses
// checked by the tools that gate the release (and shown to refuse what they must), one version
// everywhere, and the CHANGELOG and README a user reads before installing.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CRATES, RELEASE, TARGETS, VERSION, artifact, ok, root, run } from "./support.mjs";

test("the folder holds every artifact, and SHA256SUMS checks each", () => {
  const expected = [
    `mongo-seq-${VERSION}.tgz`,
    ...CRATES.map((name) => `${name}-${VERSION}.crate`),
    ...TARGETS.flatMap(({ triple, arch }) => [
      `mongo-seq-${VERSION}-${triple}.tar.gz`,
      `mongo-seq-${VERSION}-${triple}.cdx.json`,
      `mongo-seq-${VERSION}-image-linux-${arch}.oci.tar`,
    ]),
    `mongo-seq-${VERSION}-npm.cdx.json`,
    `mongo-seq-${VERSION}-npm-wasm.cdx.json`,
    "THIRD-PARTY-NOTICES-binary.md",
    "THIRD-PARTY-NOTICES-npm.md",
    "SHA256SUMS",
  ].sort();
  assert.deepEqual(readdirSync(RELEASE).sort(), expected);
  const sums = readFileSync(artifact("SHA256SUMS"), "utf8").trim().split("\n");
  assert.deepEqual(sums.map((line) => line.split(/\s+\*?/)[1]).sort(), expected.filter((f) => f !== "SHA256SUMS"));
  const checked = run("sha256sum", ["--check", "--strict", "SHA256SUMS"], { cwd: RELEASE });
  assert.equal(checked.status, 0, checked.stdout + checked.stderr);
});

/** A CycloneDX JSON document: its main component and the names of all others. */
function sbom(name) {
  const bom = JSON.parse(readFileSync(artifact(name), "utf8"));
  assert.equal(bom.bomFormat, "CycloneDX");
  assert.match(bom.specVersion, /^1\.\d+$/);
  const names = new Set();
  const walk = (components = []) => {
    for (const c of components) {
      names.add(c.name);
      walk(c.components);
    }
  };
  walk(bom.components);
  walk(bom.metadata.component.components);
  return { bom, main: bom.metadata.component, names };
}

test("SBOMs: each binary's crates, the npm package, the crates of its Wasm module", () => {
  for (const { triple } of TARGETS) {
    const { bom, main, names } = sbom(`mongo-seq-${VERSION}-${triple}.cdx.json`);
    assert.equal(main.name, "mongo-seq-sidecar");
    assert.equal(main.version, VERSION);
    assert.ok(bom.metadata.tools.some((tool) => tool.name === "cargo-cyclonedx") || bom.metadata.tools?.components?.some((tool) => tool.name === "cargo-cyclonedx"));
    for (const crate of ["mongo-seq", "mongo-seq-core", "mongodb", "tokio", "ring", "rustls"]) assert.ok(names.has(crate), `${triple}: ${crate}`);
    assert.ok(!names.has("mongo-seq-test-harness"), "no test-only crate");
  }
  const npm = sbom(`mongo-seq-${VERSION}-npm.cdx.json`);
  assert.equal(npm.main.name, "mongo-seq");
  assert.equal(npm.main.version, VERSION);
  assert.equal(npm.main.purl, `pkg:npm/mongo-seq@${VERSION}`);
  assert.deepEqual([...npm.names], [], "no npm package inside: the bundles hold our code and the Wasm module alone");
  const wasm = sbom(`mongo-seq-${VERSION}-npm-wasm.cdx.json`);
  assert.equal(wasm.main.name, "mongo-seq-wasm");
  for (const crate of ["mongo-seq-core", "wasm-bindgen", "serde_json", "talc"]) assert.ok(wasm.names.has(crate), `Wasm: ${crate}`);
  assert.ok(!wasm.names.has("mongodb") && !wasm.names.has("tokio"), "the Wasm module has no driver");
});

test("licenses: the crates we ship pass about.toml's list, and one it does not accept is refused", () => {
  // scripts/notices is the check (cargo-about refuses a license not accepted); it ran for the
  // release, so its outputs are there and this run only confirms them.
  for (const part of ["sidecar", "npm"]) {
    const passed = run(join(root, "scripts", "notices"), [part], { cwd: root });
    assert.equal(passed.status, 0, passed.stderr);
  }
  // The same check with MIT struck from the list must fail, naming a crate under MIT alone (the
  // Wasm module's allocator; the module's crates are the smaller graph, so the quicker run).
  const strict = join(mkdtempSync(join(tmpdir(), "mongo-seq-about-")), "about.toml");
  writeFileSync(strict, readFileSync(join(root, "about.toml"), "utf8").replace(/^\s*"MIT",\n/m, ""));
  const refused = run("cargo", ["about", "generate", "--locked", "--offline", "--fail", "-c", strict, "-m", "crates/mongo-seq-wasm/Cargo.toml", "about.hbs"], { cwd: root });
  assert.notEqual(refused.status, 0, "a license not accepted fails the check");
  assert.match(refused.stderr, /failed to satisfy license requirements/);
  assert.match(refused.stderr, /talc/);
});

test("licenses: the npm packages a user's install brings are checked, and one not allowed is refused", () => {
  const passed = run(join(root, "scripts", "check-npm-licenses"), [], { cwd: root });
  assert.equal(passed.status, 0, passed.stdout + passed.stderr);
  assert.match(passed.stdout, /\d+ packages a user's install brings/);
  const refused = run(join(root, "scripts", "check-npm-licenses"), [], { cwd: root, env: { ...process.env, NPM_LICENSES_ALLOW: "MIT;ISC" } });
  assert.notEqual(refused.status, 0);
  assert.match(refused.stdout + refused.stderr, /Apache-2\.0.*not permitted|not permitted.*Apache-2\.0/);
});

test("CHANGELOG.md: Keep a Changelog, an Unreleased section, the released version, links for each", () => {
  const changelog = readFileSync(join(root, "CHANGELOG.md"), "utf8");
  assert.match(changelog, /^# Changelog\n/);
  assert.match(changelog, /keepachangelog\.com\/en\/1\.1\.0/);
  const versions = [...changelog.matchAll(/^## \[([^\]]+)\]/gm)].map((m) => m[1]);
  assert.deepEqual(versions.slice(0, 2), ["Unreleased", VERSION], "newest first, this version under Unreleased");
  for (const version of versions) assert.match(changelog, new RegExp(`^\\[${version.replaceAll(".", "\\.")}\\]: https://`, "m"), `link for ${version}`);
  const section = changelog.split(new RegExp(`^## \\[${VERSION.replaceAll(".", "\\.")}\\]`, "m"))[1].split(/^## \[/m)[0];
  const kinds = [...section.matchAll(/^### (.+)$/gm)].map((m) => m[1]);
  assert.ok(kinds.length > 0 && kinds.every((k) => ["Added", "Changed", "Deprecated", "Removed", "Fixed", "Security"].includes(k)), `change types: ${kinds}`);
});

test("README: installing from each registry, the architectures built, the compatibility promise", () => {
  const readme = readFileSync(join(root, "README.md"), "utf8");
  for (const command of ["npm install mongo-seq", "cargo add mongo-seq", "cargo install mongo-seq-sidecar", "sha256sum --check", "podman load"]) {
    assert.ok(readme.includes(command), `README says how: ${command}`);
  }
  for (const { triple, arch } of TARGETS) {
    assert.ok(readme.includes(triple), `README names ${triple}`);
    assert.ok(readme.includes(`linux/${arch}`), `README names linux/${arch}`);
  }
  const compatibility = readme.split(/^## Compatibility$/m)[1]?.split(/^## /m)[0];
  assert.ok(compatibility, "a Compatibility section");
  for (const subject of ["counter", "ledger", "configuration", "error code", "metric", "exit status"]) {
    assert.match(compatibility, new RegExp(subject, "i"), `the promise covers ${subject}s`);
  }
});
