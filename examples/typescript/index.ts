// mongo-seq with TypeScript: the package ships its declarations (numbers are `number | bigint`,
// errors are MongoSeqErrors with a `code`). `npm run build && npm start`.
import { MongoClient } from "mongodb";
import { Sequences, isMongoSeqError, type SequenceNumber } from "mongo-seq";

interface Order {
  item: string;
  orderNo?: SequenceNumber;
}

const client = new MongoClient(process.env.MONGODB_URI ?? "mongodb://127.0.0.1:27017");
try {
  const db = client.db(process.env.EXAMPLE_DB ?? "mongo_seq_example");
  const seqs = new Sequences(db);
  const orders = seqs.sequence("orders", { start: 1000, block: 20 }); // 20 numbers per round trip
  const result = await seqs.insertMany(db.collection<Order>("orders"), [{ item: "tea" }, { item: "milk" }], { sequence: orders, field: "orderNo" });
  const numbers: SequenceNumber[] = result.values;
  console.log(`orders ${numbers.join(", ")}`);
  try {
    seqs.sequence("broken", { step: 0 });
  } catch (error) {
    if (isMongoSeqError(error)) console.log(`refused: ${error.code}`);
  }
} finally {
  await client.close();
}
