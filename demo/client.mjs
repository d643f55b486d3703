// The demo's application: takes numbers, inserts numbered users, inserts plain orders and reads
// back the numbers the sidecar gave them. Runs unchanged in Node and Deno:
//   node demo/client.mjs <uri> <label>     deno run -A demo/client.mjs <uri> <label>
import process from "node:process";
import { MongoClient } from "mongodb";
import { Sequences } from "mongo-seq";

const [uri, label, ...names] = process.argv.slice(2);
const say = (line) => console.log(`  [${label}] ${line}`);

const client = new MongoClient(uri);
try {
  const db = client.db("mongo_seq_demo");
  const seqs = new Sequences(db); // counters in mongo_seq_demo.counters, like the tutorial

  const tickets = seqs.sequence("ticket");
  const one = await tickets.next();
  const many = await tickets.nextMany(3);
  say(`ticket numbers: next() → ${one}, nextMany(3) → [${many.join(", ")}] (one round trip each)`);

  // The tutorial's users, numbered in _id: { _id: 1, name: "Sarah C." }
  const users = db.collection("users");
  for (const name of names) {
    const { value } = await seqs.insertOne(users, { name }, { sequence: "userid", field: "_id" });
    say(`insertOne(users, { name: "${name}" }, { field: "_id" }) → { _id: ${value}, name: "${name}" }`);
  }

  // Orders go in with the plain driver; the sidecar numbers them from the change stream.
  const orders = db.collection("orders");
  const { insertedIds } = await orders.insertMany([1, 2, 3].map((i) => ({ item: `${label}-item-${i}` })));
  const numbered = [];
  for (const id of Object.values(insertedIds)) {
    const seq = await seqs.waitForNumber(orders, id, { field: "seq", timeoutMs: 10_000 });
    const { orderNo } = await orders.findOne({ _id: id }, { projection: { orderNo: 1 } });
    numbered.push(`${seq} (${orderNo})`);
  }
  say(`3 plain inserts into orders; the sidecar numbered them: ${numbered.join(", ")}`);
} finally {
  await client.close();
}
