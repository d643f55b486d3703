// The core's vector file through the Wasm build in every runtime the package supports: Node
// ESM, Node CJS, Deno and Bun each replay all cases and must match the native outputs exactly.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { core, localDates, Sequences } from "mongo-seq";
import { runScript, describeRun, repoRoot } from "../harness/runtimes.mjs";
import { runVectors, runLedgerVectors, LEDGER_FILE, VECTOR_FILE, AUDIT_FILE, SEAL_FILE } from "./vector-cases.mjs";
import { runPeriodVectors, runHostPeriodVectors, PERIOD_FILE } from "./period-cases.mjs";
import { parseExact } from "./exact-json.mjs";

const vectors = parseExact(readFileSync(VECTOR_FILE, "utf8"));
const audits = parseExact(readFileSync(AUDIT_FILE, "utf8"));
const ledger = parseExact(readFileSync(LEDGER_FILE, "utf8"));
const seals = parseExact(readFileSync(SEAL_FILE, "utf8"));
const periods = parseExact(readFileSync(PERIOD_FILE, "utf8"));
const hostCases = periods.cases.filter((c) => c.instant !== undefined && c.localDate !== undefined).length;
const script = (name) => fileURLToPath(new URL(name, import.meta.url));

for (const [label, runtime, file] of [
  ["Node ESM", "node", "run-vectors.mjs"],
  ["Node CJS", "node", "run-vectors.cjs"],
  ["Deno", "deno", "run-vectors.mjs"],
  ["Bun", "bun", "run-vectors.mjs"],
]) {
  test(`${label}: all ${vectors.cases.length} core vectors, ${audits.cases.length} audit vectors, ${ledger.cases.length} ledger vectors, ${seals.cases.length} seal vectors and ${periods.cases.length} period vectors match through Wasm, ${hostCases} local dates through Intl`, async () => {
    const run = await runScript(runtime, script(file), { cwd: repoRoot });
    assert.equal(run.code, 0, describeRun(`${label} vector replay`, run));
    assert.match(run.stdout, new RegExp(`vectors: ${vectors.cases.length} cases passed`));
    assert.match(run.stdout, new RegExp(`audit: ${audits.cases.length} cases passed`));
    assert.match(run.stdout, new RegExp(`ledger: ${ledger.cases.length} cases passed`));
    assert.match(run.stdout, new RegExp(`seal: ${seals.cases.length} cases passed`));
    assert.match(run.stdout, new RegExp(`periods: ${periods.cases.length} cases passed`));
    assert.match(run.stdout, new RegExp(`local dates: ${hostCases} cases passed`));
  });
}

test("the replay catches a changed expectation and shows a readable diff", () => {
  const reserve = vectors.cases.find((c) => c.op === "reserve" && c.output && typeof c.output.last === "bigint");
  assert.ok(reserve, "the vector file has a reservation beyond 2^53");
  // Off by one beyond 2^53: invisible to a runner that goes through doubles.
  const tampered = structuredClone(reserve);
  tampered.output.last += 1n;
  tampered.output.first += 1n;
  const { total, failures } = runVectors(core, { cases: [reserve, tampered] });
  assert.equal(total, 2);
  assert.equal(failures.length, 1, failures.join("\n"));
  assert.ok(failures[0].startsWith(`── ${tampered.name} (reserve)\nresult: output differs`), failures[0]);
  assert.match(failures[0], new RegExp(`- +"last": ${tampered.output.last}\\b`));
  assert.match(failures[0], new RegExp(`\\+ +"last": ${reserve.output.last}\\b`));
});

test("the ledger replay catches a changed expectation", () => {
  const voided = ledger.cases.find((c) => c.op === "void" && c.output !== undefined);
  assert.ok(voided, "ledger.json has a void that writes");
  const tampered = { ...structuredClone(voided), name: `${voided.name} (tampered)` };
  tampered.steps.at(-1).command.document.reason = "another reason";
  const { total, failures } = runLedgerVectors(core, { cases: [voided, tampered] });
  assert.equal(total, 2);
  assert.equal(failures.length, 1, failures.join("\n"));
  assert.match(failures[0], /command differs/);
});

test("the period replay catches a changed expectation", () => {
  const yearly = periods.cases.find((c) => c.error === undefined && c.formatted !== undefined);
  assert.ok(yearly, "periods.json has a formatted case");
  const tampered = { ...structuredClone(yearly), name: `${yearly.name} (tampered)`, period: "1999" };
  const { total, failures } = runPeriodVectors(core, { cases: [yearly, tampered] });
  assert.equal(total, 2);
  assert.equal(failures.length, 1, failures.join("\n"));
  assert.match(failures[0], /period is "\d{4}", expected "1999"/);
});

test("the local-date replay catches a changed expectation (date and period)", () => {
  // An Auckland instant whose date differs in UTC: replayed as UTC, both its date and period are off.
  const [auckland] = periods.cases.filter((c) => c.timeZone === "Pacific/Auckland" && c.instant !== undefined && c.error === undefined && c.name.includes("first-ms-of-2026"));
  assert.ok(auckland, "periods.json has an Auckland instant");
  const shifted = { ...structuredClone(auckland), name: `${auckland.name} (as UTC)`, timeZone: "UTC" };
  const { total, failures } = runHostPeriodVectors({ core, localDates, Sequences }, { cases: [auckland, shifted] });
  assert.equal(total, 2);
  assert.equal(failures.length, 1, failures.join("\n"));
  assert.match(failures[0], /local date is "2025-12-31", expected "2026-01-01"/);
  assert.match(failures[0], /periodOf \(cold\) is "2025", expected "2026"/);
  assert.match(failures[0], /window is \{"from":"\d+","until":"\d+"\}, expected/);
});

test("the seal replay catches a changed field", () => {
  const intact = seals.cases.find((c) => c.op === "verifySeries" && c.output?.verified === true && c.output.pending === 0);
  assert.ok(intact, "seal.json has an intact chain");
  const tampered = { ...structuredClone(intact), name: `${intact.name} (tampered)` };
  tampered.input.links[1].fields.total = { $numberInt: "1" };
  const { total, failures } = runVectors(core, { cases: [intact, tampered] });
  assert.equal(total, 2);
  assert.equal(failures.length, 1, failures.join("\n"));
  assert.match(failures[0], /FIELD_CHANGED/);
});
