// The Rust library's lines: bench/rust (`mongo-seq-bench`, a release build) measures
// the `mongo-seq` crate's next() with blocks 1/100/1000 against the tutorial written in Rust, 1
// and 10 tasks, and a warm next() in ns; it prints one JSON figure per line, added here to the
// report beside the JS rows; block 1 at one task also through the latency proxy, in interleaved
// pairs (`runRustBlock1`).
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

export const RUST_BENCH_BIN = fileURLToPath(new URL("../../target/release/mongo-seq-bench", import.meta.url));

export async function runRust({ uri, dbName, numbers, warmCalls, rounds, report }) {
  await runBench([
    "--uri", uri,
    "--db", dbName,
    "--rounds", String(rounds),
    "--numbers", [1, 100, 1000].map((block) => `${block}=${numbers[block]}`).join(","),
    "--warm-calls", String(warmCalls),
  ], report);
}

/**
 * Block 1 at one task against the tutorial in Rust, in interleaved pairs of short chunks
 * (`rust.block1.c1.vs_tutorial` + `suffix`), through `uri` (the latency proxy's).
 */
export async function runRustBlock1({ uri, dbName, pairs, suffix, link, report, binary = RUST_BENCH_BIN }) {
  await runBench(["--uri", uri, "--db", dbName, "--block1-pairs", String(pairs), "--suffix", suffix, "--link", link], report, binary);
}

async function runBench(args, report, binary = RUST_BENCH_BIN) {
  const child = spawn(binary, args, { stdio: ["ignore", "pipe", "inherit"] });
  let out = "";
  child.stdout.setEncoding("utf8").on("data", (chunk) => (out += chunk));
  const code = await new Promise((resolve, reject) => child.on("error", reject).on("exit", resolve));
  if (code !== 0) throw new Error(`mongo-seq-bench exited with ${code}`);
  for (const line of out.split("\n").filter(Boolean)) {
    const { name, value, unit, what, server } = JSON.parse(line);
    report.add(name, value, unit, what, { server });
  }
}
