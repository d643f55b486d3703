// Shared by the deployment tests (tests/deploy/): tools installed by scripts/setup, free ports,
// a sidecar's log lines, YAML read through the Python that kubernetes-validate brings.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { createServer } from "node:net";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";

export const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
/** The image `make image` built (scripts/build-image tags it :latest). */
export const IMAGE = `${process.env.MONGO_SEQ_IMAGE || "mongo-seq"}:latest`;
export const BIN = process.env.MONGO_SEQ_BIN ?? join(root, "target", "debug", "mongo-seq");
const venv = join(root, ".tools", "kubernetes-validate", "bin");

/** Runs a command; throws with its output when it cannot start (a missing tool fails loudly). */
export function run(command, args, options = {}) {
  const result = spawnSync(command, args, { encoding: "utf8", maxBuffer: 64 << 20, ...options });
  if (result.error) {
    throw new Error(`cannot run ${command} (installed by scripts/setup): ${result.error.message}`);
  }
  return result;
}

/** A tool from the kubernetes-validate virtualenv (scripts/setup). */
export function venvTool(name) {
  const path = join(venv, name);
  if (!existsSync(path)) throw new Error(`${path} is missing: run scripts/setup`);
  return path;
}

/** Every document of a YAML file (PyYAML's safe loader), as plain JSON values. */
export function readYaml(path) {
  const read = run(venvTool("python"), [
    "-c",
    "import json, sys, yaml; print(json.dumps([d for d in yaml.safe_load_all(open(sys.argv[1])) if d is not None]))",
    path,
  ]);
  if (read.status !== 0) throw new Error(`cannot read ${path} as YAML:\n${read.stderr}`);
  return JSON.parse(read.stdout);
}

/** A loopback port nothing listens on (bound once, then released). */
export async function freePort() {
  const server = createServer();
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Polls `probe` until it returns a truthy value; throws `message()` after `ms`. */
export async function waitFor(probe, ms, message) {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(message());
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
