// Child process of the contention test and benchmark: inserts documents one after the other with
// insertOptimistic into one collection that other processes insert into at the same time.
// Usage: insert-optimistic.mjs <uri> <db> <collection> <count>. Prints "ready" once connected,
// waits for a line on stdin (all workers start together), then prints one JSON line:
// { values, failures: [code…], attempts: [insert commands per call…] }.
import { MongoClient } from "mongodb";
import { createInterface } from "node:readline";
import { Sequences } from "mongo-seq";

const [uri, dbName, collectionName, count] = process.argv.slice(2);
const client = new MongoClient(uri, { monitorCommands: true });
await client.connect();
let inserts = 0;
client.on("commandStarted", (event) => {
  if (event.commandName === "insert") inserts += 1;
});
const seqs = new Sequences(client.db(dbName));
const collection = client.db(dbName).collection(collectionName);
console.log("ready");
const lines = createInterface({ input: process.stdin });
await new Promise((resolve) => lines.once("line", resolve));
lines.close();
process.stdin.destroy();

const values = [];
const failures = [];
const attempts = [];
for (let i = 0; i < Number(count); i++) {
  const before = inserts;
  try {
    values.push(String((await seqs.insertOptimistic(collection, { worker: process.pid, i })).value));
  } catch (error) {
    failures.push(error.code ?? String(error));
  }
  attempts.push(inserts - before);
}
console.log(JSON.stringify({ values, failures, attempts }));
await client.close();
