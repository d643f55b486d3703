// A sealed series written by the `mongo-seq` binary, checked from outside: the sidecar numbers
// and seals invoices over two years (a string at a nested path, a decimal, a date, an array of
// sub-documents), a sealed invoice is deleted (its deletion recorded from the pre-image), a number
// is voided with `mongo-seq void`, a late invoice of the first year arrives after the second
// began; then what MongoDB holds is dumped as canonical Extended JSON and tests/e2e/sealed_chain.py,
// with docs/sealed-series.md's own Python functions (its code block, extracted as it is),
// re-computes every link and walks each year's chain, as `mongo-seq check --seal` verifies them.
// A value changed by hand, or a link taken out of the dump, makes it fail naming the link.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { BSON, Decimal128 } from "mongodb";
import { uniqueDbName } from "../harness/mongo.mjs";
import { BIN, useServerAndClient, writeConfig, startSidecar } from "./sidecar.mjs";

const root = fileURLToPath(new URL("../../", import.meta.url));
const WALKER = join(root, "tests/e2e/sealed_chain.py");
const SEAL_FIELDS = ["customer.name", "total", "issuedAt", "lines"];
const TRIGGER = `gapless = true\nreset = "yearly"\ndate_field = "issuedAt"\nseal_fields = ${JSON.stringify(SEAL_FIELDS)}\n`;

const ctx = useServerAndClient();

/** docs/sealed-series.md's Python block as a module, `sealed_series`, in a directory of its own. */
function docsModule() {
  const docs = readFileSync(join(root, "docs/sealed-series.md"), "utf8");
  const blocks = [...docs.matchAll(/```python\n([\s\S]*?)```/g)].map((m) => m[1]);
  assert.equal(blocks.length, 1, "one Python block in docs/sealed-series.md");
  const dir = mkdtempSync(join(tmpdir(), "sealed-series-"));
  writeFileSync(join(dir, "sealed_series.py"), blocks[0]);
  return dir;
}

/** Runs the walker on `dump`: `{status, stdout, stderr}`. */
function walk(dump) {
  const dir = mkdtempSync(join(tmpdir(), "sealed-dump-"));
  const file = join(dir, "dump.json");
  writeFileSync(file, dump);
  return spawnSync("python3", [WALKER, file], { encoding: "utf8", env: { ...process.env, PYTHONPATH: docsModule() } });
}

/** What the sidecar stored, as canonical Extended JSON (what a user would export). */
async function dump(db, sequence) {
  const all = (name) => db.collection(name).find({}).sort({ _id: 1 }).toArray();
  const documents = await db.collection("orders").find({}).sort({ seqPeriod: 1, seq: 1 }).toArray();
  const contents = { sequence, field: "seq", sealFields: SEAL_FIELDS, documents, ledger: await all("mongo_seq_ledger"), counters: await all("counters") };
  return BSON.EJSON.stringify(contents, { relaxed: false });
}

/** `mongo-seq check --seal --json --config …`: its exit status and each series' (series, links, verified, failures). */
function checkSeal(config) {
  const run = spawnSync(BIN, ["check", "--seal", "--json", "--config", config], { encoding: "utf8" });
  const [report] = JSON.parse(run.stdout || "[{}]");
  const series = (report.seal ?? []).map((s) => [s.series, s.links, s.verified, s.failures.map((f) => `number ${f.number} (${f.kind}) ${f.reason}`)]);
  return { status: run.status, series, output: run.stdout + run.stderr };
}

/** Polls `check` (async, truthy when done) every 50 ms for up to 60 s. */
async function until(what, check) {
  const deadline = Date.now() + 60_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const day = (y, m, d) => new Date(Date.UTC(y, m - 1, d, 10));

test("a chain the sidecar wrote re-computes and walks with the docs' Python, and a changed value does not", async () => {
  const dbName = uniqueDbName("sealed_chain");
  const db = ctx.client.db(dbName);
  const orders = db.collection("orders");
  const sequence = `${dbName}.orders`;
  // Deletions are recorded from their pre-images (MongoDB 6.0+).
  await db.createCollection("orders");
  await db.command({ collMod: "orders", changeStreamPreAndPostImages: { enabled: true } });
  const config = writeConfig(ctx.server.uri, dbName, TRIGGER);
  const sidecar = await startSidecar(config);
  const sealedCount = () => orders.countDocuments({ seqSeal: { $exists: true } });
  try {
    const invoice = (i, issuedAt, extra = {}) => ({
      customer: { name: `Müller & Søn “${i}” 🧾`, vat: `ES${i}` },
      total: Decimal128.fromString(`${100 + i}.50`),
      issuedAt,
      lines: [{ sku: `A-${i}`, qty: 2 }, { sku: "B", qty: 1.5, note: null }],
      ...extra,
    });
    await orders.insertMany([invoice(1, day(2025, 12, 1)), invoice(2, day(2025, 12, 2), { lines: [] }), invoice(3, day(2025, 12, 3))]);
    await until("2025's three invoices sealed", async () => (await sealedCount()) === 3);
    // 2026: one invoice without `lines` (a path it lacks is left out of its link).
    const { lines: _, ...bare } = invoice(4, day(2026, 1, 2));
    await orders.insertMany([bare, invoice(5, day(2026, 1, 3)), invoice(6, day(2026, 1, 4))]);
    await until("2026's three invoices sealed", async () => (await sealedCount()) === 6);
    // A sealed 2025 invoice deleted: its deletion is a link after 2025's head, with the issue
    // link it held.
    await orders.deleteOne({ seqPeriod: "2025", seq: 2 });
    await until("the deletion recorded", async () => (await db.collection("mongo_seq_ledger").countDocuments({ kind: "deleted", seal: { $exists: true } })) === 1);
    // A late 2025 invoice, after 2026 began: it extends 2025's chain.
    await orders.insertOne(invoice(7, day(2025, 12, 31)));
    await until("the late invoice sealed", async () => (await sealedCount()) === 6);
    // A 2026 number lost (taken from the counter by hand) and voided by a clerk.
    await db.collection("counters").updateOne({ _id: `${sequence}/2026` }, { $inc: { seq: 1 } });
    const voided = spawnSync(BIN, ["void", `${sequence}/2026`, "4", "--reason", "lost in a crash", "--config", config], { encoding: "utf8" });
    assert.equal(voided.status, 0, voided.stdout + voided.stderr);
    await orders.insertOne(invoice(8, day(2026, 2, 1)));
    await until("everything sealed, no record left in the counters", async () => {
      const pending = await db.collection("counters").countDocuments({ "seal.records.0": { $exists: true } });
      return (await sealedCount()) === 7 && pending === 0;
    });
  } finally {
    sidecar.child.kill("SIGTERM");
    assert.equal(await sidecar.exited, 0, sidecar.logs.slice(-20).join("\n"));
  }

  const stored = await dump(db, sequence);
  const run = walk(stored);
  assert.equal(run.status, 0, run.stdout + run.stderr);
  assert.equal(
    run.stdout,
    [
      `${sequence}/2025: issue:1, issue:2, issue:3, deletion:2, issue:4`,
      `${sequence}/2026: issue:1, issue:2, issue:3, void:4, issue:5`,
      "10 links re-computed",
      "",
    ].join("\n"),
  );
  // The product's own reader agrees: both chains verify, five links each.
  const verified = checkSeal(config);
  assert.equal(verified.status, 0, verified.output);
  assert.deepEqual(verified.series, [[`${sequence}/2025`, 5, true, []], [`${sequence}/2026`, 5, true, []]], verified.output);
  // 2026's first link names 2025's head as it was then (number 3's issue link), not its last link.
  const first2026 = await orders.findOne({ seqPeriod: "2026", seq: 1 });
  const issue3 = await orders.findOne({ seqPeriod: "2025", seq: 3 });
  assert.equal(first2026.seqSeal.previous, issue3.seqSeal.hash);

  // One sealed value changed by hand (a cent more): its link's hash differs.
  const second = { seqPeriod: "2026", seq: 2 };
  const { total } = await orders.findOne(second);
  await orders.updateOne(second, { $set: { total: Decimal128.fromString(`${Number(total.toString()) + 0.01}`) } });
  const changed = walk(await dump(db, sequence));
  assert.notEqual(changed.status, 0, changed.stdout);
  assert.match(changed.stderr, new RegExp(`AssertionError: number 2 \\(issue\\) of ${sequence}/2026: hash differs`));
  const named = checkSeal(config);
  assert.equal(named.status, 1, named.output);
  assert.equal(named.series.find(([series]) => series.endsWith("/2026"))?.[3][0], "number 2 (issue) FIELD_CHANGED", named.output);
  await orders.updateOne(second, { $set: { total } });
  assert.equal(walk(await dump(db, sequence)).status, 0, "the value put back verifies again");

  // A link taken out (the void's ledger entry): the chain breaks there.
  const withoutVoid = BSON.EJSON.parse(stored, { relaxed: false });
  withoutVoid.ledger = withoutVoid.ledger.filter((entry) => entry.kind !== "void");
  const broken = walk(BSON.EJSON.stringify(withoutVoid, { relaxed: false }));
  assert.notEqual(broken.status, 0, broken.stdout);
  assert.match(broken.stderr, /AssertionError: 1 links outside the chain/);
});
