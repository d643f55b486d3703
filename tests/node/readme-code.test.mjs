// The JavaScript in the documentation, run as written. Every ```js block of
// every Markdown file in the repository runs as an ES module in its own Node process against the
// test server (or MONGODB_URI), with the package built in js/dist; each statement whose comment
// starts with a value (`await ids.next(); // 1 (…)`, `// [2, …, 1001]`, `// { last: 5, … }`) must
// produce exactly that value. A comment starting with words is prose and is not checked. A block
// that cannot run is marked in its info string, with the reason: ```js no-run: <why>.
// The only change to a block: the databases it opens get a name of their own (readme-preload.mjs).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { startMongo, uniqueDbName } from "../harness/mongo.mjs";
import { repoRoot, runScript } from "../harness/runtimes.mjs";
import { encode } from "./readme-values.mjs";

const preload = fileURLToPath(new URL("readme-preload.mjs", import.meta.url));
const scratch = fileURLToPath(new URL(".readme-blocks/", import.meta.url)); // git-ignored
let blockCount = 0;

/** The ```js blocks of the repository's Markdown files: { file, line, info, code }. */
export function codeBlocks() {
  const files = execFileSync("git", ["ls-files", "*.md"], { cwd: repoRoot, encoding: "utf8" }).split("\n").filter(Boolean);
  const blocks = [];
  for (const file of files) {
    const lines = readFileSync(join(repoRoot, file), "utf8").split("\n");
    for (let i = 0; i < lines.length; i++) {
      const open = /^```(js|javascript|mjs)\b(.*)$/.exec(lines[i]);
      if (!open) continue;
      const end = lines.findIndex((line, j) => j > i && line.startsWith("```"));
      blocks.push({ file, line: i + 1, info: open[2].trim(), code: lines.slice(i + 1, end).join("\n") });
      i = end;
    }
  }
  return blocks;
}

/** Where a `//` comment starts on a line, outside string literals (or -1). */
function commentStart(line) {
  let quote = null;
  for (let i = 0; i < line.length; i++) {
    const ch = line[i];
    if (quote) {
      if (ch === "\\") i++;
      else if (ch === quote) quote = null;
    } else if (ch === '"' || ch === "'" || ch === "`") quote = ch;
    else if (ch === "/" && line[i + 1] === "/") return i;
  }
  return -1;
}

/** The value literal a comment starts with (`1`, `1001n`, `null`, `"x"`, `[…]`, `{…}`), or null for prose. */
export function leadingValue(comment) {
  const open = comment[0];
  if (open === "[" || open === "{" || open === '"') {
    const close = { "[": "]", "{": "}", '"': '"' }[open];
    let depth = 0;
    for (let i = 0; i < comment.length; i++) {
      if (open !== '"' && comment[i] === open) depth++;
      else if (comment[i] === close && (open === '"' ? i > 0 : --depth === 0)) return comment.slice(0, i + 1);
    }
    return null;
  }
  const word = /^(-?\d[\d_]*n?|null|true|false|undefined)(?=$|[\s:;,(])/.exec(comment);
  return word ? word[1] : null;
}

/** The value a literal stands for; `[a, …, b]` (or `[a … b]`) is the integers from a to b. */
export function expectedValue(literal) {
  const range = /^\[\s*(-?\d+)\s*,?\s*…\s*,?\s*(-?\d+)\s*\]$/.exec(literal);
  if (range) {
    const [first, last] = [Number(range[1]), Number(range[2])];
    return Array.from({ length: last - first + 1 }, (_, i) => first + i);
  }
  return new Function(`return (${literal});`)();
}

/** The block with each value-commented statement wrapped to report its value. */
export function instrument(code) {
  const checks = [];
  const lines = code.split("\n").map((line, index) => {
    const at = commentStart(line);
    if (at < 0) return line;
    const literal = leadingValue(line.slice(at + 2).trim());
    if (literal === null) return line;
    const statement = line.slice(0, at).trimEnd();
    assert.ok(statement.endsWith(";"), `line ${index + 1}: a value comment must follow one complete statement: ${line}`);
    checks.push({ line: index + 1, literal, statement: statement.trim() });
    const declared = /^\s*(?:const|let|var)\s+([A-Za-z_$][\w$]*)\s*=/.exec(statement);
    if (declared) return `${statement} __readmeValue(${index + 1}, ${declared[1]});`;
    const indent = /^\s*/.exec(statement)[0];
    return `${indent}__readmeValue(${index + 1}, (${statement.trim().slice(0, -1)}));`;
  });
  return { source: lines.join("\n"), checks };
}

/**
 * Runs an instrumented block as an ES module file in the repository (so `mongo-seq` and
 * `mongodb` resolve as in a user's project); the preload is imported first, on the block's first
 * line, so line numbers stay the block's own.
 */
async function runBlock(source, env) {
  mkdirSync(scratch, { recursive: true });
  const file = join(scratch, `block-${process.pid}-${++blockCount}.mjs`);
  writeFileSync(file, `import ${JSON.stringify(pathToFileURL(preload).href)}; ${source}\nawait globalThis.__readmeDone();\n`);
  try {
    return await runScript("node", file, { cwd: repoRoot, env, timeoutMs: 60_000 });
  } finally {
    rmSync(file, { force: true });
  }
}

let server;
before(async () => {
  server = await startMongo();
});
after(async () => {
  await server?.stop();
});

const blocks = codeBlocks();

test("the documentation has JavaScript blocks to run, and every one that is skipped says why", () => {
  assert.ok(blocks.filter((b) => b.info === "").length >= 2, "README.md and js/README.md quick starts");
  for (const block of blocks.filter((b) => b.info !== "")) {
    assert.match(block.info, /^no-run: \S/, `${block.file}:${block.line}: unknown info string "${block.info}" (run it, or mark it "no-run: <why>")`);
  }
});

for (const block of blocks.filter((b) => b.info === "")) {
  test(`${block.file}:${block.line} runs as written and prints what its comments say`, async () => {
    const { source, checks } = instrument(block.code);
    const run = await runBlock(source, { MONGODB_URI: server.uri, README_DB_PREFIX: uniqueDbName("readme") });
    assert.equal(run.code, 0, `the block failed:\n${run.stderr}`);
    const values = new Map(
      run.stdout
        .split("\n")
        .filter((line) => line.startsWith("README-VALUE "))
        .map((line) => JSON.parse(line.slice("README-VALUE ".length)))
        .map(({ line, value }) => [line, value]),
    );
    for (const check of checks) {
      const where = `${block.file}:${block.line + check.line}: ${check.statement}`;
      assert.ok(values.has(check.line), `${where}: no value reported`);
      assert.deepEqual(values.get(check.line), encode(expectedValue(check.literal)), `${where}: the comment says ${check.literal}`);
    }
  });
}

test("the value comments are read as intended", () => {
  assert.equal(leadingValue("1 (reserves 1..100 in one round trip)"), "1");
  assert.equal(leadingValue("1001: the last number"), "1001");
  assert.equal(leadingValue("[2, …, 1001] in one round trip"), "[2, …, 1001]");
  assert.equal(leadingValue('{ _id: 1, name: "Sarah C." } as stored'), '{ _id: 1, name: "Sarah C." }');
  assert.equal(leadingValue("9007199254740993n"), "9007199254740993n");
  assert.equal(leadingValue("counters in db.counters"), null);
  assert.equal(leadingValue("max(_id) + 1, no counter"), null);
  assert.deepEqual(expectedValue("[2 … 5]"), [2, 3, 4, 5]);
  const { checks, source } = instrument('const a = await f(); // 1\nawait g("http://x"); // [1, …, 3]\nh(); // the tutorial\n');
  assert.deepEqual(checks.map((c) => c.line), [1, 2]);
  assert.match(source, /__readmeValue\(2, \(await g\("http:\/\/x"\)\)\);/);
});
