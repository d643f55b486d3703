// The packed package, as the packaging tests install it: `npm pack` of js/ into a temp dir, and
// fresh projects beside it that depend on the tarball and the driver (offline-first: npm's
// cache already holds the driver from `npm ci`).
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { copyFileSync, cpSync, mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { repoRoot } from "../harness/runtimes.mjs";

export const run = promisify(execFile);
export const npm = process.platform === "win32" ? "npm.cmd" : "npm";
export const MONGODB_VERSION = "7.9.0";

/** Packs js/ into a new temp dir: `{ work, tarball, packed }` (packed: npm's JSON report). */
export async function packPackage(prefix) {
  const work = mkdtempSync(join(tmpdir(), prefix));
  const { stdout } = await run(npm, ["pack", "--json", "--pack-destination", work], { cwd: join(repoRoot, "js") });
  const packed = JSON.parse(stdout)[0];
  return { work, tarball: join(work, packed.filename), packed };
}

/**
 * A fresh project `work/name` with the tarball and the driver installed, and `files` copied
 * from `fixtures` (a file or a directory each, relative paths kept).
 */
export async function installProject({ work, tarball, name, type, fixtures, files }) {
  const dir = join(work, name);
  const manifest = { name: `smoke-${name}`, private: true, type, dependencies: { "mongo-seq": `file:${tarball}`, mongodb: MONGODB_VERSION } };
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "package.json"), JSON.stringify(manifest, null, 2));
  for (const file of files) {
    mkdirSync(dirname(join(dir, file)), { recursive: true });
    if (file.endsWith("/")) cpSync(join(fixtures, file), join(dir, file), { recursive: true });
    else copyFileSync(join(fixtures, file), join(dir, file));
  }
  await run(npm, ["install", "--prefer-offline", "--no-audit", "--no-fund", "--ignore-scripts"], { cwd: dir });
  return dir;
}
