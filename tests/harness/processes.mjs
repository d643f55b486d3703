// Runs worker scripts as separate OS processes that start their work at the same moment: each
// prints "ready" once connected, waits for a line on stdin, works, and prints its result as its
// last line of JSON. Used by the multi-process tests and the contention benchmark.
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";

/** Starts one process per argument list, releases them together, resolves with their results. */
export async function runTogether(script, argLists) {
  const children = argLists.map((args) => {
    const child = spawn(process.execPath, [script, ...args.map(String)], { stdio: ["pipe", "pipe", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (chunk) => (stderr += chunk));
    const lines = createInterface({ input: child.stdout });
    const ready = new Promise((resolve, reject) => {
      lines.once("line", (line) => (line === "ready" ? resolve() : reject(new Error(`worker said ${line}`))));
      child.once("exit", (code) => reject(new Error(`worker exited with ${code} before ready\n${stderr}`)));
    });
    const output = new Promise((resolve, reject) => {
      const got = [];
      lines.on("line", (line) => got.push(line));
      child.once("exit", (code) =>
        code === 0 ? resolve(JSON.parse(got.at(-1))) : reject(new Error(`worker ${args.join(" ")} exited with ${code}\n${stderr}`)),
      );
    });
    return { child, ready, output };
  });
  try {
    await Promise.all(children.map((c) => c.ready));
    for (const { child } of children) child.stdin.write("go\n");
    return await Promise.all(children.map((c) => c.output));
  } finally {
    // On any failure (or a test timeout) no worker is left behind.
    for (const { child } of children) if (child.exitCode === null) child.kill("SIGKILL");
  }
}
