// Vector replay entry for ESM runtimes (Node, Deno, Bun): loads the package as an ES module.
import { core, localDates, Sequences } from "mongo-seq";
import { runVectors, runLedgerVectors } from "./vector-cases.mjs";
import { runPeriodVectors, runHostPeriodVectors } from "./period-cases.mjs";
import { report } from "./report.mjs";

report(runVectors(core));
report(runLedgerVectors(core), "ledger");
report(runPeriodVectors(core), "periods");
report(runHostPeriodVectors({ localDates, Sequences }), "local dates");
