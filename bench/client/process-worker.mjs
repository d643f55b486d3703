// One of the processes of ./processes.mjs: connects, says `ready`, waits for `go` on stdin,
// takes COUNT numbers from one sequence (block B, or the tutorial's getNextSequence for
// `tutorial`), prints `done`.
//   node bench/client/process-worker.mjs URI DB NAME tutorial|BLOCK COUNT
import { MongoClient } from "mongodb";
import { Sequences } from "mongo-seq";
import { createInterface } from "node:readline";

const [uri, dbName, name, kind, countText] = process.argv.slice(2);
const count = Number(countText);
const client = await MongoClient.connect(uri);
const db = client.db(dbName);
let take;
if (kind === "tutorial") {
  const counters = db.collection("counters");
  // The counter exists already (the parent inserted it): the tutorial's getNextSequence.
  take = async () => (await counters.findOneAndUpdate({ _id: name }, { $inc: { seq: 1 } }, { returnDocument: "after" })).seq;
} else {
  const sequence = new Sequences(db).sequence(name, { block: Number(kind) });
  take = () => sequence.next();
}
await db.command({ ping: 1 });
console.log("ready");
const lines = createInterface({ input: process.stdin });
await new Promise((resolve) => lines.once("line", resolve));
for (let i = 0; i < count; i++) await take();
console.log("done");
lines.close();
await client.close();
