// Shared setup of the package tests: one test server (or MONGODB_URI) per test file, one
// monitored client, a fresh database per test, and a snapshot of a database's contents for
// "nothing was written" assertions.
import { before, after } from "node:test";
import assert from "node:assert/strict";
import { MongoClient } from "mongodb";
import { Sequences, isMongoSeqError } from "mongo-seq";
import { startMongo, uniqueDbName, countCommands } from "../../tests/harness/mongo.mjs";

/** Registers before/after hooks; the returned object is filled once the server is up. */
export function useMongo() {
  const context = { server: undefined, client: undefined, commands: undefined, databases: [] };
  before(async () => {
    context.server = await startMongo();
    context.client = new MongoClient(context.server.uri, { monitorCommands: true });
    await context.client.connect();
    context.commands = countCommands(context.client);
  });
  after(async () => {
    for (const db of context.databases) await db.dropDatabase().catch(() => {});
    await context.client?.close();
    await context.server?.stop();
  });
  /** A database no other test uses, dropped after the file's tests. */
  context.freshDb = (label) => {
    const db = context.client.db(uniqueDbName(label));
    context.databases.push(db);
    return db;
  };
  return context;
}

/** Every document of every collection of `db`, by collection name (sorted), for comparisons. */
export async function snapshot(db) {
  const names = (await db.listCollections({}, { nameOnly: true }).toArray()).map((c) => c.name).sort();
  const contents = {};
  for (const name of names) contents[name] = await db.collection(name).find({}).sort({ _id: 1 }).toArray();
  return contents;
}

/** Text that must never reach a user in a message: Rust or Wasm internals, serde or glue wording. */
export const LEAKS = /JsValue|deserializ|invalid type:|RuntimeError|memory access|unreachable|panicked|Error: |[A-Z][a-z]+[A-Z][a-zA-Z]* \{/;

/**
 * Runs `act(seqs, db)` on a fresh database seeded with one user (and `seed(db)`): it must throw
 * or reject with a MongoSeqError `code` whose message explains (no internals leaked), and the
 * database must be byte-identical afterwards. Returns the error.
 */
export async function assertRefused(mongo, label, code, act, seed = async () => {}) {
  const db = mongo.freshDb(`err_${label}`);
  await db.collection("users").insertOne({ _id: 1, name: "existing" });
  await seed(db);
  const before = await snapshot(db);
  let caught;
  try {
    await act(new Sequences(db), db);
  } catch (error) {
    caught = error;
  }
  assert.ok(caught, `${label}: expected ${code}, but nothing was thrown`);
  assert.ok(isMongoSeqError(caught), `${label}: not a MongoSeqError: ${caught?.stack ?? caught}`);
  assert.equal(caught.code, code, `${label}: ${caught.message}`);
  assert.ok(caught.message.length > 10, "the message explains the problem");
  assert.doesNotMatch(caught.message, LEAKS, `${label}: the message leaks internals`);
  assert.deepEqual(await snapshot(db), before, `${label}: something was written`);
  return caught;
}
