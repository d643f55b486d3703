// Vector replay entry for ESM runtimes (Node, Deno, Bun): loads the package as an ES module.
import { core, localDates, Sequences } from "mongo-seq";
import { readFileSync } from "node:fs";
import { runVectors, runLedgerVectors, AUDIT_FILE, SEAL_FILE } from "./vector-cases.mjs";
import { parseExact } from "./exact-json.mjs";
import { runPeriodVectors, runHostPeriodVectors } from "./period-cases.mjs";
import { report } from "./report.mjs";

report(runVectors(core));
report(runVectors(core, parseExact(readFileSync(AUDIT_FILE, "utf8"))), "audit");
report(runLedgerVectors(core), "ledger");
report(runVectors(core, parseExact(readFileSync(SEAL_FILE, "utf8"))), "seal");
report(runPeriodVectors(core), "periods");
report(runHostPeriodVectors({ core, localDates, Sequences }), "local dates");
