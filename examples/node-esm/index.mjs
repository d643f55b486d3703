// mongo-seq in a Node ES module: invoices numbered from a counter, one by one and as a batch
// (one reservation for the whole batch). MONGODB_URI picks the server; EXAMPLE_DB the database.
import { MongoClient } from "mongodb";
import { Sequences } from "mongo-seq";

const client = new MongoClient(process.env.MONGODB_URI ?? "mongodb://127.0.0.1:27017");
try {
  const db = client.db(process.env.EXAMPLE_DB ?? "mongo_seq_example");
  const seqs = new Sequences(db); // counters live in db.counters: { _id: "invoices", seq: <last> }
  const invoices = seqs.sequence("invoices", { format: "INV-{seq:05}" });
  const options = { sequence: invoices, field: "number", formatField: "ref" };

  const one = await seqs.insertOne(db.collection("invoices"), { customer: "Ada" }, options);
  console.log(`inserted ${one.formatted}`);
  const batch = await seqs.insertMany(db.collection("invoices"), [{ customer: "Grace" }, { customer: "Edsger" }], options);
  console.log(`inserted ${batch.formatted.join(", ")}`);
  console.log(`last number issued: ${await invoices.current()}`);
} finally {
  await client.close();
}
