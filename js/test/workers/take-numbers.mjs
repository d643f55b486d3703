// Child process of processes.test.mjs: takes numbers from one sequence and prints them as JSON.
// Usage: take-numbers.mjs <uri> <db> <sequence> <block> <count>. Prints "ready" once connected,
// then waits for a line on stdin, so all workers start their first call at the same moment.
import { MongoClient } from "mongodb";
import { createInterface } from "node:readline";
import { Sequences } from "mongo-seq";

const [uri, dbName, name, block, count] = process.argv.slice(2);
const client = new MongoClient(uri);
await client.connect();
const sequence = new Sequences(client.db(dbName)).sequence(name, { block: Number(block) });
console.log("ready");
const lines = createInterface({ input: process.stdin });
await new Promise((resolve) => lines.once("line", resolve));
lines.close();
process.stdin.destroy(); // an open stdin would keep this process alive after its work

// Ten callers at a time on the one sequence object: exercises the shared in-flight refill.
const numbers = [];
while (numbers.length < Number(count)) {
  const batch = Math.min(10, Number(count) - numbers.length);
  numbers.push(...(await Promise.all(Array.from({ length: batch }, () => sequence.next()))));
}
console.log(JSON.stringify(numbers.map(String)));
await client.close();
