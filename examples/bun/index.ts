// mongo-seq under Bun (`bun install`, `bun index.ts`): TypeScript runs as is.
import { MongoClient } from "mongodb";
import { Sequences } from "mongo-seq";

const client = new MongoClient(process.env.MONGODB_URI ?? "mongodb://127.0.0.1:27017");
try {
  const db = client.db(process.env.EXAMPLE_DB ?? "mongo_seq_example");
  const seqs = new Sequences(db);
  const users = seqs.sequence("users");
  // The tutorial's optimistic loop needs no counter: max(_id) + 1, retried on a duplicate key.
  const first = await seqs.insertOptimistic(db.collection("users"), { name: "Linus" });
  const next = await seqs.insertOne(db.collection("members"), { name: "Ken" }, { sequence: users });
  console.log(`user ${first.value}, member ${next.value}`);
} finally {
  await client.close();
}
