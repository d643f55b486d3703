// `mongo-seq import` (the binary): adopting mongoose-sequence and auto-increment counters, dry
// run by default, --apply, --json, usage errors; and a trigger whose counters have another
// shape (`counter_field`, the Atlas recipe's `seq_value`) numbering in place.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { uniqueDbName } from "../harness/mongo.mjs";
import { BIN, useServerAndClient, writeConfig, startSidecar } from "./sidecar.mjs";

const ctx = useServerAndClient();

const importCli = (...args) => spawnSync(BIN, ["import", "--uri", ctx.server.uri, ...args], { encoding: "utf8" });
const all = (db, name) => db.collection(name).find({}, { projection: { _id: 1, seq: 1 } }).sort({ _id: 1 }).toArray();

test("mongoose-sequence counters: a dry run prints and writes nothing; --apply moves mongo-seq's counters past them", async () => {
  const dbName = uniqueDbName("import_ms");
  const db = ctx.client.db(dbName);
  // mongoose-sequence's documents, as it writes them (unscoped and with reference fields).
  await db.collection("counters").insertMany([
    { id: "order_seq", reference_value: null, seq: 41 },
    { id: "invoice_seq", reference_value: { tenant: "acme" }, seq: 7 },
    { id: "broken", reference_value: null, seq: "x" },
  ]);
  await db.collection("mongo_seq_counters").insertOne({ _id: "order_seq", seq: 100 });

  const dry = importCli("--from", "mongoose-sequence", "--db", dbName, "--counters", "mongo_seq_counters");
  assert.equal(dry.status, 0, dry.stderr);
  assert.match(dry.stdout, /dry run \(nothing written; --apply to write\): from counters into mongo_seq_counters/);
  assert.match(dry.stdout, /invoice_seq\/tenant=acme\s+source 7\s+mongo-seq none\s+would be created/);
  assert.match(dry.stdout, /order_seq\s+source 41\s+mongo-seq 100\s+kept/);
  assert.match(dry.stdout, /skipped \{"_id":.*\}: `seq` must be an integer, got string "x"/);
  assert.deepEqual(await all(db, "mongo_seq_counters"), [{ _id: "order_seq", seq: 100 }]);

  const applied = importCli("--from", "mongoose-sequence", "--db", dbName, "--counters", "mongo_seq_counters", "--apply", "--json");
  assert.equal(applied.status, 0, applied.stderr);
  const report = JSON.parse(applied.stdout);
  assert.equal(report.applied, true);
  assert.deepEqual(report.counters.map((c) => [c.counterId, c.action, c.after]), [
    ["order_seq", "keep", 100],
    ["invoice_seq/tenant=acme", "create", 7],
  ]);
  assert.deepEqual(await all(db, "mongo_seq_counters"), [
    { _id: "invoice_seq/tenant=acme", seq: 7 },
    { _id: "order_seq", seq: 100 },
  ]);
});

// Replacing mongoose-sequence where it stands (both default to `counters`):
// the import in place replaces its unique index so mongo-seq's counters fit beside its documents.
test("mongoose-sequence counters in place (--counters defaults to its own collection): its unique index replaced, mongo-seq's counters written beside", async () => {
  const dbName = uniqueDbName("import_in_place");
  const db = ctx.client.db(dbName);
  await db.collection("counters").createIndex({ id: 1, reference_value: 1 }, { unique: true, name: "id_1_reference_value_1" });
  await db.collection("counters").insertMany([
    { id: "order_seq", reference_value: null, seq: 41 },
    { id: "invoice_seq", reference_value: { tenant: "acme" }, seq: 7 },
  ]);
  // The dry run's text says what --apply would do to the index; nothing is changed yet.
  const dry = importCli("--from", "mongoose-sequence", "--db", dbName);
  assert.equal(dry.status, 0, dry.stderr);
  assert.match(dry.stdout, /would replace index id_1_reference_value_1 with id_1_reference_value_-1_where_id \(unique over mongoose-sequence's documents only\), so mongo-seq's counters fit in `counters`/);
  assert.ok((await db.collection("counters").indexes()).some((index) => index.name === "id_1_reference_value_1"));
  const applied = importCli("--from", "mongoose-sequence", "--db", dbName, "--apply", "--json");
  assert.equal(applied.status, 0, applied.stderr);
  const report = JSON.parse(applied.stdout);
  assert.deepEqual(report.index, { dropped: "id_1_reference_value_1", created: "id_1_reference_value_-1_where_id", applied: true });
  assert.deepEqual((await db.collection("counters").indexes()).map((index) => index.name).sort(), ["_id_", "id_1_reference_value_-1_where_id"]);
  assert.deepEqual(await db.collection("counters").find({ _id: { $type: "string" } }).sort({ _id: 1 }).toArray(), [
    { _id: "invoice_seq/tenant=acme", seq: 7, definition: { start: 1, step: 1 }, definitionDigest: "b1992bd103fd143e" },
    { _id: "order_seq", seq: 41, definition: { start: 1, step: 1 }, definitionDigest: "b1992bd103fd143e" },
  ]);
});

test("auto-increment counters: --name renames, --apply advances; usage errors exit 2 and write nothing", async () => {
  const dbName = uniqueDbName("import_ai");
  const db = ctx.client.db(dbName);
  await db.collection("identitycounters").insertMany([{ model: "User", field: "_id", count: 12 }]);
  await db.collection("counters").insertOne({ _id: "users", seq: 5 });
  const applied = importCli("--from", "auto-increment", "--db", dbName, "--name", "User._id=users", "--apply");
  assert.equal(applied.status, 0, applied.stderr);
  assert.match(applied.stdout, /imported from identitycounters into counters/);
  assert.match(applied.stdout, /users\s+source 12\s+mongo-seq 5 -> 12\s+advanced/);
  assert.deepEqual(await all(db, "counters"), [{ _id: "users", seq: 12 }]);

  // A mistyped key: refused before anything is written (the default name would be imported).
  const typo = importCli("--from", "auto-increment", "--db", dbName, "--name", "User._Id=customers", "--apply");
  assert.equal(typo.status, 1, typo.stderr);
  assert.match(typo.stderr, /`names`: `User\._Id` is the key of no counter in `identitycounters` \(keys found: User\._id\)/);
  assert.deepEqual(await all(db, "counters"), [{ _id: "users", seq: 12 }]);

  for (const [args, says] of [
    [["--from", "auto-increment", "--db", dbName, "--counters", "identitycounters", "--apply"], /--counters: .*the auto-increment plugins' collection/],
    [["--from", "auto-increment", "--db", dbName, "--name", "nothing"], /--name "nothing": expected <source key>=<sequence name>/],
    // The same key twice: refused, not the last one silently.
    [["--from", "auto-increment", "--db", dbName, "--name", "User._id=users", "--name", "User._id=customers", "--apply"], /--name "User\._id=customers": source key `User\._id` is already named "users" by an earlier --name/],
    [["--from", "auto-increment", "--db", dbName, "--counter-field", "_id", "--apply"], /--counter-field: .*`_id` is reserved/],
    [["--from", "typegoose", "--db", dbName], /invalid value 'typegoose'/],
  ]) {
    const run = importCli(...args);
    assert.equal(run.status, 2, `${args.join(" ")}: ${run.stderr}`);
    assert.match(run.stderr, says);
  }
  assert.deepEqual(await all(db, "counters"), [{ _id: "users", seq: 12 }]);
});

test("malformed sources: each skipped on one bounded line, the counters of another shape left alone; nothing to import is said", async () => {
  const dbName = uniqueDbName("import_bad");
  const db = ctx.client.db(dbName);
  await db.collection("identitycounters").insertMany([
    { model: "x".repeat(10_240), field: "n", count: 1 },
    { model: "Order", field: "orderNo", count: "12" },
    { model: "User", field: "_id", count: 4 },
  ]);
  await db.collection("counters").insertOne({ _id: "User._id", seq: 9 });
  const before = await all(db, "counters");
  // A dry run reports it and exits 0; --apply with nothing to import exits 1 and says why.
  const dry = importCli("--from", "auto-increment", "--db", dbName, "--counter-field", "seq_value");
  assert.equal(dry.status, 0, dry.stderr);
  assert.match(dry.stdout, /no counters to import \(all skipped\)/);
  const run = importCli("--from", "auto-increment", "--db", dbName, "--counter-field", "seq_value", "--apply");
  assert.equal(run.status, 1, run.stderr);
  assert.match(run.stderr, /nothing imported: every one of the 3 document\(s\) of `identitycounters` was skipped \(the reasons are listed above/);
  assert.match(run.stdout, /no counters to import \(all skipped\)/);
  assert.match(run.stdout, /skipped \{"_id":.*\}: `count` must be an integer, got string "12"/);
  assert.match(run.stdout, /skipped .*: malformed counter `User._id`: document has no `seq_value` field/);
  for (const line of run.stdout.split("\n")) assert.ok(line.length < 400, `an unbounded line: ${line.slice(0, 80)}…`);
  assert.deepEqual(await all(db, "counters"), before, "nothing written");
  // No source counters at all (a mistyped --db or --source): --apply exits 1 too.
  const empty = importCli("--from", "mongoose-sequence", "--db", dbName, "--source", "no_such_counters", "--counters", "mongo_seq_counters", "--apply");
  assert.equal(empty.status, 1, empty.stderr);
  assert.match(empty.stderr, /nothing imported: `no_such_counters` holds no counters of mongoose-sequence \(check --db, --source and --from\)/);
});

test("a trigger with counter_field numbers on the Atlas recipe's counter in place ({_id, seq_value})", async () => {
  const dbName = uniqueDbName("counter_field");
  const db = ctx.client.db(dbName);
  const counterId = `${dbName}.orders`;
  await db.collection("counters").insertOne({ _id: counterId, seq_value: 500 });
  const config = writeConfig(ctx.server.uri, dbName, 'counter_field = "seq_value"');
  const sidecar = await startSidecar(config);
  try {
    await db.collection("orders").insertMany([{ n: 1 }, { n: 2 }, { n: 3 }]);
    const deadline = Date.now() + 30_000;
    while ((await db.collection("orders").countDocuments({ seq: { $exists: true } })) < 3) {
      if (Date.now() > deadline) throw new Error(`not numbered:\n${sidecar.logs.join("\n")}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const numbers = (await db.collection("orders").find().toArray()).map((doc) => doc.seq).sort((a, b) => a - b);
    assert.deepEqual(numbers, [501, 502, 503]);
    const counter = await db.collection("counters").findOne({ _id: counterId });
    assert.equal(counter.seq_value, 503);
    assert.equal(counter.seq, undefined, "the recipe's shape is kept");
  } finally {
    sidecar.child.kill("SIGTERM");
    await sidecar.exited;
  }
});
