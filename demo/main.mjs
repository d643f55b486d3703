// mongo-seq demo: the product end to end. Starts the embedded MongoDB test server (or uses
// MONGODB_URI) and the sidecar, runs the same small application in Node and in Deno, issues
// invoices numbered per year on issue, audits the numbered collections with `mongo-seq check`,
// and stops everything it started.
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, openSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { MongoClient } from "mongodb";
import { startMongo, withTimeout } from "../tests/harness/mongo.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const BIN = join(root, "target", "debug", "mongo-seq");
const DENO = join(root, "node_modules", ".bin", "deno");
const say = (line = "") => console.log(line);

/** Runs a command to completion, its output shown; throws unless it exits with `expected`. */
function run(command, args, env = {}, expected = 0) {
  const result = spawnSync(command, args, { cwd: root, stdio: "inherit", env: { ...process.env, ...env } });
  if (result.status !== expected) {
    throw new Error(`${command} ${args.join(" ")} exited ${result.status ?? result.signal}, not ${expected}`);
  }
}

/** Starts the sidecar; resolves once its change stream is open. */
async function startSidecar(uri, logPath) {
  const child = spawn(BIN, ["sidecar", "--config", join(root, "demo", "mongo-seq.toml")], {
    env: { ...process.env, MONGO_SEQ_URI: uri },
    stdio: ["ignore", "ignore", openSync(logPath, "w")],
  });
  const exited = new Promise((resolve) => child.once("exit", (code, signal) => resolve(code ?? signal)));
  const ready = (async () => {
    while (!readFileSync(logPath, "utf8").includes("watching for inserts")) {
      if (child.exitCode !== null) throw new Error(`sidecar exited early; log: ${logPath}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  })();
  await withTimeout(ready, 60_000, `sidecar not ready after 60 s; log: ${logPath}`);
  return { child, exited };
}

const mongo = await startMongo();
let sidecar;
try {
  say(mongo.embedded ? `MongoDB: embedded test server at ${mongo.uri}` : "MongoDB: the server in MONGODB_URI");
  const client = new MongoClient(mongo.uri);
  await client.db("mongo_seq_demo").dropDatabase(); // a fresh demo database every run
  await client.close();

  const logPath = join(mkdtempSync(join(tmpdir(), "mongo-seq-demo-")), "sidecar.log");
  sidecar = await startSidecar(mongo.uri, logPath);
  say(`sidecar: numbering orders on insert and invoices on issue in mongo_seq_demo (config demo/mongo-seq.toml, log ${logPath})`);

  say("\nNode:");
  run(process.execPath, ["demo/client.mjs", mongo.uri, "node", "Sarah C.", "Bob D."]);
  say("\nDeno:");
  run(DENO, ["run", "--allow-all", "demo/client.mjs", mongo.uri, "deno", "Grace H.", "Ted R."], {
    DENO_NO_UPDATE_CHECK: "1",
  });

  say("\nInvoices, drafted by one program and issued later by another (Node):");
  run(process.execPath, ["examples/invoices/invoices.mjs", mongo.uri, "draft"]);
  run(process.execPath, ["examples/invoices/invoices.mjs", mongo.uri, "issue"]);
  run(process.execPath, ["examples/invoices/invoices.mjs", mongo.uri, "amend"]);
  say('\nmongo-seq void invoices 2 --period 2027 --reason "…" (the gap A-104 left, explained):');
  run(BIN, ["void", "invoices", "2", "--period", "2027", "--reason", "A-104 cancelled and deleted before the ledger was kept", "--by", "accounting", "--config", join(root, "demo", "mongo-seq.toml")], { MONGO_SEQ_URI: mongo.uri });

  say("\nmongo-seq counters (each year of the invoices' series is a counter of its own):");
  run(BIN, ["counters", "--config", join(root, "demo", "mongo-seq.toml")], { MONGO_SEQ_URI: mongo.uri });
  say("\nmongo-seq check --config demo/mongo-seq.toml --trigger invoices (each year accounted for on its own):");
  run(BIN, ["check", "--config", join(root, "demo", "mongo-seq.toml"), "--trigger", "invoices"], { MONGO_SEQ_URI: mongo.uri });

  say("\nmongo-seq check --db mongo_seq_demo --collection orders --field seq:");
  run(BIN, ["check", "--uri", mongo.uri, "--db", "mongo_seq_demo", "--collection", "orders", "--field", "seq", "--sequence", "orders"]);

  // The invoices are sealed: every seal is re-computed from the invoices, the ledger and the
  // counters. 2027 shows A-104: deleted before the collection kept pre-images, its sealed link
  // is gone without a record (the void explains the number, not the deleted invoice).
  const config = join(root, "demo", "mongo-seq.toml");
  const asSidecar = { MONGO_SEQ_URI: mongo.uri };
  say("\nmongo-seq check --seal --config demo/mongo-seq.toml --trigger invoices (every seal re-computed):");
  run(BIN, ["check", "--seal", "--config", config, "--trigger", "invoices"], asSidecar, 1);
  say("\nA sealed invoice changed by hand (A-100's total, 100 → 90), and check --seal again:");
  const tamper = new MongoClient(mongo.uri);
  await tamper.db("mongo_seq_demo").collection("invoices").updateOne({ ref: "A-100" }, { $set: { total: 90 } });
  await tamper.close();
  run(BIN, ["check", "--seal", "--config", config, "--trigger", "invoices"], asSidecar, 1);

  const report = join(dirname(logPath), "invoices-2026.html");
  say(`\nmongo-seq report --config demo/mongo-seq.toml --trigger invoices --period 2026 --html ${report}:`);
  run(BIN, ["report", "--config", config, "--trigger", "invoices", "--period", "2026", "--html", report], asSidecar, 1);
} finally {
  if (sidecar) {
    sidecar.child.kill("SIGTERM");
    const status = await sidecar.exited;
    say(`\nsidecar stopped (exit ${status}); ${mongo.embedded ? "test server stopped" : "done"}.`);
  }
  await mongo.stop();
}
