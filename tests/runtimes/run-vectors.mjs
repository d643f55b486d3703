// Vector replay entry for ESM runtimes (Node, Deno, Bun): loads the package as an ES module.
import { core, localDates, Sequences } from "mongo-seq";
import { runVectors } from "./vector-cases.mjs";
import { runPeriodVectors, runHostPeriodVectors } from "./period-cases.mjs";
import { report } from "./report.mjs";

report(runVectors(core));
report(runPeriodVectors(core), "periods");
report(runHostPeriodVectors({ localDates, Sequences }), "local dates");
