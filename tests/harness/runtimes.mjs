// Runs a script under one of the JS runtimes the package supports (Node ESM/CJS, Deno, Bun),
// all taken from the repo's node_modules/.bin, and collects its output.
import { spawn } from "node:child_process";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";

export const repoRoot = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const bin = (name) => join(repoRoot, "node_modules", ".bin", name);

/** The runtimes, each a command line prefix for running one script file. */
export const RUNTIMES = {
  node: [process.execPath],
  deno: [bin("deno"), "run", "--allow-all", "--quiet"],
  bun: [bin("bun")],
};

/**
 * Runs `script` with `runtime`; resolves with `{ code, stdout, stderr }` (never rejects on a
 * non-zero exit, so tests can show the output), or rejects when it runs past `timeoutMs`.
 */
export function runScript(runtime, script, { cwd, env = {}, args = [], timeoutMs = 120_000 } = {}) {
  const [command, ...prefix] = RUNTIMES[runtime];
  return new Promise((resolve, reject) => {
    const child = spawn(command, [...prefix, script, ...args], {
      cwd,
      env: { ...process.env, DENO_NO_UPDATE_CHECK: "1", NO_COLOR: "1", ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk) => (stdout += chunk));
    child.stderr.on("data", (chunk) => (stderr += chunk));
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`${runtime} ${script} ran past ${timeoutMs} ms\n${stdout}\n${stderr}`));
    }, timeoutMs);
    child.once("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.once("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** A readable failure message for a script run. */
export function describeRun(label, { code, stdout, stderr }) {
  return `${label} exited with ${code}\n--- stdout ---\n${stdout}\n--- stderr ---\n${stderr}`;
}
