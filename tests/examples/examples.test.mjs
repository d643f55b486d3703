// The examples (examples/*) as a user runs them: each copied to a temp dir, the published
// version of mongo-seq replaced by the tarball `npm pack` makes of js/, `npm install` (offline
// first: npm's cache holds the rest), then its documented commands, against the test server,
// in a database of its own. Their output is checked.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { startMongo, uniqueDbName } from "../harness/mongo.mjs";
import { repoRoot } from "../harness/runtimes.mjs";

const run = promisify(execFile);
const npm = process.platform === "win32" ? "npm.cmd" : "npm";

/** Each example, the commands its README gives, and lines its output must hold. */
const EXAMPLES = [
  ["node-esm", [["start"]], [/^inserted INV-00001$/m, /^inserted INV-00002, INV-00003$/m, /^last number issued: 3$/m]],
  ["node-cjs", [["start"]], [/^api-1\nweb-1\napi-2$/m, /^counter ids: tickets\/project=api, tickets\/project=web$/m]],
  ["typescript", [["run", "build"], ["start"]], [/^orders 1000, 1001$/m, /^refused: INVALID_STEP$/m]],
  ["deno", [["start"]], [/^receipts R0001, R0002, R0003$/m]],
  ["bun", [["start"]], [/^user 1, member 1$/m]],
  ["mongoose", [["start"]], [/^saved ORD-000001$/m, /^inserted acme:ORD-000002, globex:ORD-000001, acme:ORD-000500$/m, /^next globex order: ORD-001000$/m]],
];

let server;
let work;
let tarball;
before(async () => {
  server = await startMongo();
  work = mkdtempSync(join(tmpdir(), "mongo-seq-examples-"));
  const { stdout } = await run(npm, ["pack", "--json", "--pack-destination", work], { cwd: join(repoRoot, "js") });
  tarball = join(work, JSON.parse(stdout)[0].filename);
});
after(async () => {
  if (work) rmSync(work, { recursive: true, force: true });
  await server?.stop();
});

for (const [name, commands, expected] of EXAMPLES) {
  test(`examples/${name}`, async () => {
    const dir = join(work, name);
    cpSync(join(repoRoot, "examples", name), dir, { recursive: true, filter: (path) => !path.includes("node_modules") });
    const manifest = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
    assert.equal(manifest.dependencies["mongo-seq"], "^0.1.0", "the example depends on the published package");
    manifest.dependencies["mongo-seq"] = `file:${tarball}`;
    writeFileSync(join(dir, "package.json"), JSON.stringify(manifest, null, 2));
    // Deno and Bun come from the repository's node_modules (scripts/setup installs them).
    const env = {
      ...process.env,
      PATH: `${join(repoRoot, "node_modules", ".bin")}${delimiter}${process.env.PATH}`,
      MONGODB_URI: server.uri,
      EXAMPLE_DB: uniqueDbName(`example_${name}`),
      DENO_NO_UPDATE_CHECK: "1",
      NO_COLOR: "1",
    };
    await run(npm, ["install", "--prefer-offline", "--no-audit", "--no-fund", "--ignore-scripts"], { cwd: dir, env });
    let output = "";
    for (const args of commands) {
      const result = await run(npm, ["--silent", ...args], { cwd: dir, env, timeout: 180_000 }).catch((error) =>
        assert.fail(`npm ${args.join(" ")} in examples/${name}:\n${error.stdout}\n${error.stderr}`),
      );
      output += result.stdout;
    }
    for (const line of expected) assert.match(output, line, `examples/${name} printed:\n${output}`);
  });
}
