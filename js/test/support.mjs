// Shared setup of the package tests: one test server (or MONGODB_URI) per test file, one
// monitored client, a fresh database per test, and a snapshot of a database's contents for
// "nothing was written" assertions.
import { before, after } from "node:test";
import { MongoClient } from "mongodb";
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
