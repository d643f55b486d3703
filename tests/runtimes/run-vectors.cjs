// Vector replay entry for Node CJS: loads the package through `require` (its CommonJS entry,
// which requires the ES module); the shared replay logic is an ES module, imported dynamically.
const { core, localDates, Sequences } = require("mongo-seq");

import("./vector-cases.mjs").then(async ({ runVectors, runLedgerVectors, AUDIT_FILE, SEAL_FILE }) => {
  const { readFileSync } = require("node:fs");
  const { parseExact } = await import("./exact-json.mjs");
  const { report } = await import("./report.mjs");
  const { runPeriodVectors, runHostPeriodVectors } = await import("./period-cases.mjs");
  report(runVectors(core));
  report(runVectors(core, parseExact(readFileSync(AUDIT_FILE, "utf8"))), "audit");
  report(runLedgerVectors(core), "ledger");
  report(runVectors(core, parseExact(readFileSync(SEAL_FILE, "utf8"))), "seal");
  report(runPeriodVectors(core), "periods");
  report(runHostPeriodVectors({ core, localDates, Sequences }), "local dates");
});
