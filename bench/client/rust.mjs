// The Rust library's lines: bench/rust (`mongo-seq-bench`, a release build) measures
// the `mongo-seq` crate's next() with blocks 1/100/1000 against the tutorial written in Rust, 1
// and 10 tasks, and a warm next() in ns; it prints one JSON figure per line, added here to the
// report beside the JS rows.
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

export const RUST_BENCH_BIN = fileURLToPath(new URL("../../target/release/mongo-seq-bench", import.meta.url));

export async function runRust({ uri, dbName, numbers, warmCalls, rounds, report }) {
  const args = [
    "--uri", uri,
    "--db", dbName,
    "--rounds", String(rounds),
    "--numbers", [1, 100, 1000].map((block) => `${block}=${numbers[block]}`).join(","),
    "--warm-calls", String(warmCalls),
  ];
  const child = spawn(RUST_BENCH_BIN, args, { stdio: ["ignore", "pipe", "inherit"] });
  let out = "";
  child.stdout.setEncoding("utf8").on("data", (chunk) => (out += chunk));
  const code = await new Promise((resolve, reject) => child.on("error", reject).on("exit", resolve));
  if (code !== 0) throw new Error(`mongo-seq-bench exited with ${code}`);
  for (const line of out.split("\n").filter(Boolean)) {
    const { name, value, unit, what, server } = JSON.parse(line);
    report.add(name, value, unit, what, { server });
  }
}
