// Shared by the release tests (tests/release/): the folder `make release` (scripts/release) filled,
// the version everything is released under, and small helpers to read the artifacts.
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, readdirSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";

export const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
export const RELEASE = process.env.MONGO_SEQ_RELEASE_DIR ?? join(root, "target", "release-artifacts");
/** The version of every artifact: the workspace's (the `mongo-seq` crate's). */
export const VERSION = JSON.parse(readFileSync(join(root, "js", "package.json"), "utf8")).version;
const ALL_TARGETS = [
  { triple: "x86_64-unknown-linux-musl", arch: "amd64", elf: /x86-64/ },
  { triple: "aarch64-unknown-linux-musl", arch: "arm64", elf: /ARM aarch64/ },
];
/** The targets scripts/release built: both, or those MONGO_SEQ_RELEASE_TARGETS names (as there). */
const named = (process.env.MONGO_SEQ_RELEASE_TARGETS ?? "").split(/\s+/).filter(Boolean);
for (const triple of named) {
  if (!ALL_TARGETS.some((t) => t.triple === triple)) throw new Error(`MONGO_SEQ_RELEASE_TARGETS: unknown target ${triple}`);
}
export const TARGETS = named.length ? ALL_TARGETS.filter((t) => named.includes(t.triple)) : ALL_TARGETS;
/** The crates scripts/release packages (every workspace member not marked `publish = false`). */
export const CRATES = ["mongo-seq-core", "mongo-seq", "mongo-seq-sidecar"];

/** Path of an artifact; throws when `make release` did not make it. */
export function artifact(name) {
  const path = join(RELEASE, name);
  if (!existsSync(path)) throw new Error(`${path} is missing: run \`make release\``);
  return path;
}

/** Runs a command; throws with its output when it cannot start (a missing tool fails loudly). */
export function run(command, args, options = {}) {
  const result = spawnSync(command, args, { encoding: "utf8", maxBuffer: 256 << 20, ...options });
  if (result.error) throw new Error(`cannot run ${command} (installed by scripts/setup): ${result.error.message}`);
  return result;
}

/** Runs a command that must succeed; returns its stdout. */
export function ok(command, args, options = {}) {
  const result = run(command, args, options);
  if (result.status !== 0) {
    throw new Error(`${command} ${args.join(" ")} exited ${result.status}:\n${result.stdout}\n${result.stderr}`);
  }
  return result.stdout;
}

/** Extracts a (gzipped) tar into a new temp dir; returns the dir. */
export function untar(file, prefix = "mongo-seq-release-") {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  ok("tar", ["-xf", file, "-C", dir]);
  return dir;
}

/** Every file (not directory) under `dir`, relative to it, sorted. */
export function files(dir, base = dir) {
  return readdirSync(dir)
    .flatMap((name) => {
      const path = join(dir, name);
      return statSync(path).isDirectory() ? files(path, base) : [relative(base, path)];
    })
    .sort();
}

export function sha256(path) {
  return createHash("sha256").update(readFileSync(path)).digest("hex");
}
