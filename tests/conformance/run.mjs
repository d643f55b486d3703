#!/usr/bin/env node
// Conformance run: the drivers' unified-format spec tests (CRUD, change streams, command
// monitoring, read/write concern), as PyMongo's source distribution ships them, against the
// embedded test server, or against MONGODB_URI when set (a real replica set).
//
//   node tests/conformance/run.mjs [--filter TEXT] [--verbose]
//
// Prints every failure, every known failure (a deviation recorded in tests/FAKE-SERVER.md and
// listed in known-failures.json), the skip reasons grouped, and one summary line:
//   CONFORMANCE passed=… failed=… known=… new=… skipped=… applicable=…
// Exits 1 on a failure not listed as known, or on a listed one that now passes (the list must
// stay true). Against MONGODB_URI nothing is "known": every failure is reported as one.
import { readFileSync, readdirSync, existsSync } from "node:fs";
import { join, dirname, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { MongoClient } from "mongodb";
import { EJSON } from "bson";
import { startMongo } from "../harness/mongo.mjs";
import { describeServer, requirementsUnmet, unusedFeature, missingCapability } from "./lib/selection.mjs";
import { runTest } from "./lib/runner.mjs";
import { SPEC_ROOT, SPEC_DIRECTORIES, NOTICE } from "./specs.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const flag = (name) => args.includes(name);
const value = (name) => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined);
const filter = value("--filter");
const verbose = flag("--verbose");

if (!existsSync(SPEC_ROOT)) {
  console.error(`conformance: the spec files are not there (${SPEC_ROOT}); run tests/conformance/fetch-specs (scripts/setup does)`);
  process.exit(2);
}

const known = JSON.parse(readFileSync(join(here, "known-failures.json"), "utf8")).failures;
const knownKey = (file, test) => `${file} :: ${test}`;
const knownByKey = new Map(known.map((k) => [knownKey(k.file, k.test), k]));

// The embedded server answers hello as a one-member replica set (tests/mongo-server, patch 13):
// change streams are a replica set's feature, and their spec tests ask for one.
process.env.MONGO_TEST_SERVER_REPLICA_SET ??= "conformance";
const server = await startMongo();
const onRealServer = !server.embedded;
const internal = new MongoClient(server.uri, { serverSelectionTimeoutMS: 10_000 });
await internal.connect();
const info = await describeServer(internal);
console.log(`conformance: ${onRealServer ? "MONGODB_URI" : "embedded test server"}, MongoDB ${info.versionText}, ${info.topology}, sessions ${info.sessions ? "yes" : "no"}, fail points ${info.failPoints ? "yes" : "no"}`);
console.log(`conformance: ${NOTICE}`);

const results = [];
for (const directory of SPEC_DIRECTORIES) {
  const files = readdirSync(join(SPEC_ROOT, directory)).filter((f) => f.endsWith(".json")).sort();
  for (const name of files) {
    const path = join(SPEC_ROOT, directory, name);
    const file = EJSON.parse(readFileSync(path, "utf8"), { relaxed: false });
    const fileName = relative(SPEC_ROOT, path);
    const fileUnmet = await requirementsUnmet(file.runOnRequirements, info);
    for (const test of file.tests) {
      const id = knownKey(fileName, test.description);
      if (filter && !id.includes(filter)) continue;
      const skip =
        (test.skipReason && `the spec skips it: ${test.skipReason}`) ||
        fileUnmet ||
        (await requirementsUnmet(test.runOnRequirements, info)) ||
        unusedFeature(fileName, file.createEntities, test) ||
        missingCapability(fileName, file.createEntities, test, info);
      let outcome = skip ? { status: "skipped", reason: skip } : await runTest(file, test, server.uri, internal);
      if (outcome.status === "failed" && !onRealServer && knownByKey.has(id)) outcome = { ...outcome, status: "known", row: knownByKey.get(id).row };
      results.push({ id, file: fileName, test: test.description, ...outcome });
      if (verbose) console.log(`${outcome.status.toUpperCase().padEnd(7)} ${id}${outcome.reason ? ` — ${outcome.reason}` : ""}`);
    }
  }
}
await internal.close();
await server.stop();

const by = (status) => results.filter((r) => r.status === status);
const [passed, failed, knownFailed, skipped] = ["passed", "failed", "known", "skipped"].map(by);
let exitCode = 0;

for (const r of knownFailed) console.log(`KNOWN ${r.id} (tests/FAKE-SERVER.md row ${r.row}) — ${r.reason}`);
for (const r of failed) console.log(`FAIL  ${r.id} — ${r.reason}`);
if (!onRealServer && !filter) {
  const ran = new Set(results.map((r) => r.id));
  for (const k of known) {
    const r = results.find((x) => x.id === knownKey(k.file, k.test));
    if (!ran.has(knownKey(k.file, k.test))) {
      console.log(`STALE known failure not found among the tests: ${knownKey(k.file, k.test)}`);
      exitCode = 1;
    } else if (r.status !== "known") {
      console.log(`STALE known failure that now ${r.status === "passed" ? "passes" : "is skipped"}: ${r.id} (remove it from known-failures.json)`);
      exitCode = 1;
    }
  }
}
const reasons = new Map();
for (const r of skipped) reasons.set(r.reason, (reasons.get(r.reason) ?? 0) + 1);
for (const [reason, count] of [...reasons].sort((a, b) => b[1] - a[1])) console.log(`SKIP ${String(count).padStart(4)} × ${reason}`);

const applicable = passed.length + failed.length + knownFailed.length;
const rate = applicable ? ((100 * passed.length) / applicable).toFixed(1) : "0";
console.log(
  `CONFORMANCE passed=${passed.length} failed=${failed.length + knownFailed.length} known=${knownFailed.length} new=${failed.length} skipped=${skipped.length} applicable=${applicable} passing=${rate}%`,
);
if (failed.length > 0) exitCode = 1;
process.exit(exitCode);
