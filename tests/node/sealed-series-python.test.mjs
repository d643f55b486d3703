// docs/sealed-series.md promises that anyone can re-compute a seal in a few lines of Python:
// its Python block, extracted as it is, re-computes every sealLink vector of
// tests/vectors/seal.json (the core's own outputs, natively and through Wasm).
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("../../", import.meta.url));
const docs = readFileSync(join(root, "docs/sealed-series.md"), "utf8");
const blocks = [...docs.matchAll(/```python\n([\s\S]*?)```/g)].map((m) => m[1]);
const vectors = join(root, "tests/vectors/seal.json");

function runCheck(vectorFile) {
  const dir = mkdtempSync(join(tmpdir(), "seal-check-"));
  const script = join(dir, "check.py");
  writeFileSync(script, blocks[0]);
  return execFileSync("python3", [script, vectorFile], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
}

test("the docs' Python check re-computes every seal of the vectors", () => {
  assert.equal(blocks.length, 1, "one Python block in docs/sealed-series.md");
  const cases = JSON.parse(readFileSync(vectors, "utf8")).cases.filter((c) => c.op === "sealLink" && c.output);
  assert.ok(cases.length >= 10);
  assert.match(runCheck(vectors), new RegExp(`^${cases.length} seals re-computed`));
});

test("the docs' Python check fails on a seal it does not re-compute", () => {
  const file = JSON.parse(readFileSync(vectors, "utf8"));
  const sealed = file.cases.find((c) => c.op === "sealLink" && c.output);
  sealed.output.hash = sealed.output.hash.replace(/^./, (c) => (c === "0" ? "1" : "0"));
  const tampered = join(mkdtempSync(join(tmpdir(), "seal-vectors-")), "seal.json");
  writeFileSync(tampered, JSON.stringify(file));
  assert.throws(() => runCheck(tampered), /AssertionError/);
});
