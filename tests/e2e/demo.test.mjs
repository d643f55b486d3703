// `make demo` as a newcomer runs it (demo/main.mjs: its own server unless MONGODB_URI is set):
// every step succeeds and prints what the README and examples/invoices promise — orders numbered
// on insert, invoices numbered when issued in each year's series in Paris, a draft left alone,
// each year audited on its own by `mongo-seq check`, the invoices' seals verified and a change
// made by hand named by `mongo-seq check --seal`, the auditor's report written.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { repoRoot } from "../harness/runtimes.mjs";

test("make demo: orders numbered on insert, invoices on issue per year across New Year in Paris, every number accounted for", () => {
  const demo = spawnSync(process.execPath, [join(repoRoot, "demo", "main.mjs")], {
    cwd: repoRoot,
    encoding: "utf8",
    timeout: 240_000,
  });
  const output = `${demo.stdout}\n${demo.stderr}`;
  assert.equal(demo.status, 0, output);
  for (const line of [
    /the sidecar numbered them: 1 \(ORD-000001\), 2 \(ORD-000002\), 3 \(ORD-000003\)/,
    /A-102 issued 2026-12-31T22:59:59Z \(Paris: 2026-12-31 23:59:59\) → INV-2026-000003/,
    /A-103 issued 2026-12-31T23:00:00Z \(Paris: 2027-01-01 00:00:00\) → INV-2027-000001/,
    /A-104 issued .* → INV-2027-000002/,
    /A-105 \(draft\): no number/,
    // Each with the series' definition.
    /invoices\/2026 +3 +\{start: 1, step: 1, reset: "yearly", timeZone: "Europe\/Paris", yearStart: 1, format: "INV-\{yyyy\}-\{seq:06\}", gapless: true, sealFields: \["customer","total","issuedAt"\]\} +\(period 2026\)/,
    /invoices\/2027 +2 +\{start: 1, step: 1, reset: "yearly".*\} +\(period 2027\)/,
    // One deletion recorded by the sidecar, one gap voided; every number accounted for.
    /A-101 \(INV-2026-000002\) deleted: the sidecar recorded invoices\/2026 #2 in the ledger \("document deleted"\)/,
    /invoices\/2027: voided 2 in mongo_seq_demo\.mongo_seq_ledger/,
    /mongo_seq_demo\.invoices field seq: 3 documents, 3 numbered, 0 unnumbered, 0 duplicates, 0 gaps, 1 voided, 1 deleted/,
    /invoices\/2026: 1\.\.3: 2 held, 0 voided, 1 deleted, 0 unexplained gaps/,
    /invoices\/2027: 1\.\.2: 1 held, 1 voided \(1 "A-104 cancelled and deleted before the ledger was kept"\), 0 deleted, 0 unexplained gaps/,
    /mongo_seq_demo\.orders field seq: 6 documents, 6 numbered, 0 unnumbered, 0 duplicates, 0 gaps/,
    // Sealed: 2026's chain verifies (A-101's deletion a link of its own); 2027's shows A-104,
    // deleted before pre-images were kept, gone without a record; A-100 changed by hand is named.
    /seal invoices\/2026: verified: 4 links/,
    /invoices\/2027: the sealed chain breaks at number 2 \(void\): LINK_MISSING/,
    /invoices\/2026: the sealed chain breaks at number 1 \(issue\): FIELD_CHANGED/,
    /report: 1 series of period 2026: FINDINGS/,
    /invoices\/2026: the chain of seals is BROKEN/,
    /sidecar stopped \(exit 0\)/,
  ]) {
    assert.match(output, line);
  }
});
