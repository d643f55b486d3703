// The crates of the release as the registry and docs.rs see them. scripts/release made them with
// `cargo package` of every publishable crate at once, which builds each from its packaged sources
// (its local dependencies verified together, as they will be published): that build failing
// fails `make release`, so these tests read what it made — the metadata the registry shows, the
// files each crate carries, path dependencies gone, and every other workspace crate marked
// `publish = false`.
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { CRATES, VERSION, artifact, ok, root, untar } from "./support.mjs";

const metadata = JSON.parse(ok("cargo", ["metadata", "--format-version", "1", "--locked"], { cwd: root }));
const members = metadata.packages.filter((p) => metadata.workspace_members.includes(p.id));

/** The crate's normalized manifest, as the registry stores it, read by cargo itself. */
function packaged(name) {
  const dir = join(untar(artifact(`${name}-${VERSION}.crate`)), `${name}-${VERSION}`);
  const manifest = JSON.parse(
    ok("cargo", ["read-manifest", "--manifest-path", join(dir, "Cargo.toml")], { cwd: dir }),
  );
  return { dir, manifest };
}

test("the release has a .crate for exactly the workspace crates not marked publish = false", () => {
  const publishable = members.filter((p) => !(Array.isArray(p.publish) && p.publish.length === 0)).map((p) => p.name);
  assert.deepEqual(publishable.sort(), [...CRATES].sort());
  for (const member of members.filter((p) => !CRATES.includes(p.name))) {
    assert.deepEqual(member.publish, [], `${member.name}: test/bench/example crates say publish = false`);
  }
});

for (const name of CRATES) {
  test(`${name}: the metadata the registry and docs.rs show, its README and LICENSE inside`, () => {
    const { dir, manifest } = packaged(name);
    assert.equal(manifest.version, VERSION);
    assert.equal(manifest.license, "MIT");
    assert.ok(manifest.description?.length > 20, "description");
    assert.match(manifest.repository ?? "", /^https:\/\/github\.com\/mongo-seq\/mongo-seq$/);
    assert.ok(manifest.keywords.length >= 3 && manifest.keywords.length <= 5, `keywords (1-5): ${manifest.keywords}`);
    assert.ok(manifest.categories.length >= 1, "categories");
    assert.match(manifest.rust_version ?? "", /^1\.\d+$/, "rust-version");
    assert.equal(manifest.readme, "README.md");
    for (const file of ["README.md", "LICENSE", "Cargo.toml", "Cargo.toml.orig", "src/lib.rs"]) {
      assert.ok(existsSync(join(dir, file)), `${name} carries ${file}`);
    }
    assert.match(readFileSync(join(dir, "LICENSE"), "utf8"), /^MIT License/);
    // What the registry resolves: every dependency by version, none by path; test-only crates
    // (the harness) left out.
    for (const dep of manifest.dependencies) {
      assert.equal(dep.path, undefined, `${dep.name} by path`);
      assert.notEqual(dep.req, "*", `${dep.name} has a version requirement`);
      assert.notEqual(dep.name, "mongo-seq-test-harness");
    }
    for (const local of manifest.dependencies.filter((d) => d.name.startsWith("mongo-seq"))) {
      assert.equal(local.req, `^${VERSION}`, `${local.name} at the version released with it`);
    }
  });
}

// rust-version is a promise: it cannot be lower than what a dependency needs at the lowest
// version the crate allows (a user's resolver may pick that one, never an older). Where the
// lockfile holds exactly that lowest version, its declared rust-version is such a floor. (How
// the values were chosen, with the toolchains themselves: README, "Compatibility".)
test("each crate's rust-version is at least what its dependencies need at the versions it requires", () => {
  const byId = new Map(metadata.packages.map((p) => [p.id, p]));
  const nodes = new Map(metadata.resolve.nodes.map((n) => [n.id, n]));
  const cmp = (a, b) => a.localeCompare(b, undefined, { numeric: true });
  for (const name of CRATES) {
    const member = members.find((p) => p.name === name);
    const floors = [];
    for (const dep of nodes.get(member.id).deps) {
      if (!dep.dep_kinds.some((k) => k.kind === null || k.kind === "build")) continue;
      const locked = byId.get(dep.pkg);
      const declared = member.dependencies.find((d) => d.name === locked.name && d.kind !== "dev");
      const lowest = declared?.req.replace(/^[=^~]/, "");
      if (locked.rust_version && lowest && lowest.split(".").length === 3 && lowest === locked.version) {
        floors.push({ dep: `${locked.name} ${locked.version}`, rust: locked.rust_version });
      }
    }
    for (const floor of floors) {
      assert.ok(
        cmp(member.rust_version, floor.rust.split(".").slice(0, 2).join(".")) >= 0,
        `${name}: rust-version ${member.rust_version}, but ${floor.dep} needs Rust ${floor.rust}`,
      );
    }
  }
});
