// The package's commands carry the concerns the core chose: every write
// `writeConcern: {w: "majority"}`, every read of the counters `readConcern: {level: "majority"}`
// and of the caller's documents `{level: "local"}` (crates/mongo-seq-core/src/concern.rs), and
// `waitForNumber`'s reads `{level: "majority"}` (a number a failover could roll back is never
// handed back),
// whatever the caller's `Db` says (here `w: 1` and `readConcern: local`, the settings under which a failover
// could hand a number out twice). Seen with the driver's command monitoring.
import { test } from "node:test";
import assert from "node:assert/strict";
import { MongoClient } from "mongodb";
import { Sequences } from "mongo-seq";
import { useMongo } from "./support.mjs";

const mongo = useMongo();

const WRITES = new Set(["findAndModify", "insert", "update"]);
const READS = new Set(["find", "aggregate"]);

test("writes carry w: majority, counter reads readConcern majority, not the caller's Db defaults", async () => {
  const name = mongo.freshDb("concerns").databaseName;
  const client = new MongoClient(mongo.server.uri, {
    monitorCommands: true,
    writeConcern: { w: 1 },
    readConcern: { level: "local" },
  });
  const started = [];
  client.on("commandStarted", (event) => {
    if (WRITES.has(event.commandName) || READS.has(event.commandName)) started.push(event);
  });
  await client.connect();
  try {
    const db = client.db(name);
    const seqs = new Sequences(db);
    const invoices = seqs.sequence("invoices", { block: 5 });
    await invoices.next();
    await invoices.nextMany(7);
    await invoices.setNext(100);
    await invoices.current();
    const documents = db.collection("documents");
    await seqs.insertOne(documents, { kind: "one" }, { sequence: "documentId" });
    await seqs.insertMany(documents, [{ kind: "a" }, { kind: "b" }], { sequence: "documentId", field: "n" });
    await seqs.insertOptimistic(db.collection("optimistic"), { kind: "optimistic" });
    await seqs.sequence("imported").seedFromMax(documents, "_id");
    // Document series: a periodic next(), a dated insert, assign.
    const yearly = seqs.sequence("yearly", { reset: "yearly", timeZone: "Europe/Paris" });
    await yearly.next({ date: new Date("2026-01-01T12:00:00Z") });
    await seqs.insertOne(documents, { kind: "dated", at: new Date() }, { sequence: yearly, field: "y", dateField: "at" });
    await documents.insertOne({ kind: "issued" }, { writeConcern: { w: "majority" } });
    assert.equal((await seqs.assign(documents, { kind: "issued" }, { sequence: yearly, field: "z" })).assigned.length, 1);
    const sidecars = db.collection("numberedBySidecar");
    // As the sidecar writes a number: majority.
    await sidecars.insertOne({ _id: "a", seq: 7 }, { writeConcern: { w: "majority" } });
    assert.equal(await seqs.waitForNumber(sidecars, "a"), 7);
  } finally {
    await client.close();
  }
  const seen = new Set(started.map((e) => e.commandName));
  for (const name of ["findAndModify", "insert", "find", "update"]) assert.ok(seen.has(name), `no ${name} was sent`);
  const reads = started.filter((e) => READS.has(e.commandName)).map((e) => e.command[e.commandName]);
  assert.ok(reads.includes("counters") && reads.some((c) => c !== "counters"), `reads of both kinds: ${reads}`);
  for (const event of started) {
    const { commandName: name, command } = event;
    if (WRITES.has(name)) {
      assert.deepEqual(command.writeConcern, { w: "majority" }, `${name} ${JSON.stringify(command)}`);
    } else {
      const level = ["counters", "numberedBySidecar"].includes(command[name]) ? "majority" : "local";
      assert.equal(command.readConcern?.level, level, `${name} ${JSON.stringify(command)}`);
    }
  }
});

// Where the package's reads go: the primary, whatever the caller's `Db` prefers (a lagging
// secondary would give `seedFromMax` an old largest number, the optimistic loop an old
// candidate). The embedded server is a standalone, to which drivers send no `$readPreference`:
// the options the package hands the driver are what is checked here, through collections that
// record them and pass every call on.
test("every read the package sends asks for the primary, whatever the caller's Db prefers", async () => {
  const name = mongo.freshDb("read_preference").databaseName;
  const client = new MongoClient(mongo.server.uri, { readPreference: "secondaryPreferred" });
  await client.connect();
  const asked = [];
  const recording = (collection) =>
    new Proxy(collection, {
      get(target, property) {
        const value = Reflect.get(target, property, target);
        if (!["find", "findOne", "aggregate", "countDocuments"].includes(property) || typeof value !== "function") {
          return typeof value === "function" ? value.bind(target) : value;
        }
        return (filter, options, ...rest) => {
          asked.push({ method: property, collection: target.collectionName, readPreference: options?.readPreference });
          return value.call(target, filter, options, ...rest);
        };
      },
    });
  try {
    const real = client.db(name);
    const db = new Proxy(real, {
      get(target, property) {
        if (property === "collection") return (collection, options) => recording(target.collection(collection, options));
        const value = Reflect.get(target, property, target);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
    const seqs = new Sequences(db);
    const invoices = seqs.sequence("invoices", { block: 5 });
    await invoices.next();
    await invoices.setNext(100);
    await invoices.current();
    const documents = db.collection("documents");
    await seqs.insertOne(documents, { kind: "one" }, { sequence: "documentId" });
    await seqs.insertOptimistic(db.collection("optimistic"), { kind: "optimistic" });
    await seqs.insertOptimistic(db.collection("optimistic"), { kind: "optimistic" });
    await seqs.sequence("imported").seedFromMax(documents, "_id");
    const sidecars = db.collection("numberedBySidecar");
    await sidecars.insertOne({ _id: "a", seq: 7 });
    assert.equal(await seqs.waitForNumber(sidecars, "a"), 7);
  } finally {
    await client.close();
  }
  const collections = new Set(asked.map((a) => a.collection));
  for (const name of ["counters", "optimistic", "documents", "numberedBySidecar"]) {
    assert.ok(collections.has(name), `no read of ${name}: ${JSON.stringify(asked)}`);
  }
  for (const read of asked) assert.equal(read.readPreference, "primary", JSON.stringify(read));
});

