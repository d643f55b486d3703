// mongo-seq under Deno, from npm (`npm install`, then
// `deno run --allow-net --allow-env --allow-sys main.ts`: the driver's permissions; the package
// reads no file, its Wasm module is inside its JavaScript).
import { MongoClient } from "npm:mongodb";
import { Sequences } from "npm:mongo-seq";

const client = new MongoClient(Deno.env.get("MONGODB_URI") ?? "mongodb://127.0.0.1:27017");
try {
  const db = client.db(Deno.env.get("EXAMPLE_DB") ?? "mongo_seq_example");
  const receipts = new Sequences(db).sequence("receipts", { format: "R{seq:04}" });
  const numbers = await receipts.nextMany(3);
  console.log(`receipts ${numbers.map((n) => receipts.format(n)).join(", ")}`);
} finally {
  await client.close();
}
