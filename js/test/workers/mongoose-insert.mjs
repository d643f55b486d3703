// Child process of mongoose.test.mjs: numbers documents with the mongoose plugin, by save(),
// create() of several and insertMany(), on one shared sequence, and prints the numbers as JSON.
// Usage: mongoose-insert.mjs <mongoose package> <uri> <db> <worker name>. Prints "ready" once
// connected, then waits for a line on stdin, so all workers start at the same moment.
import { createInterface } from "node:readline";
import { sequencePlugin } from "mongo-seq/mongoose";

const [mongoosePackage, uri, dbName, name] = process.argv.slice(2);
const { default: mongoose } = await import(mongoosePackage);
const connection = await mongoose.createConnection(uri, { dbName }).asPromise();
const schema = new mongoose.Schema({ worker: String, i: Number });
schema.plugin(sequencePlugin, { field: "n", sequence: "shared" });
const Doc = connection.model("Doc", schema, "docs");
console.log("ready");
const lines = createInterface({ input: process.stdin });
await new Promise((resolve) => lines.once("line", resolve));
lines.close();
process.stdin.destroy();

const numbers = [];
for (let round = 0; round < 4; round++) {
  for (let i = 0; i < 5; i++) numbers.push((await new Doc({ worker: name, i }).save()).n);
  numbers.push(...(await Doc.create([{ worker: name }, { worker: name }, { worker: name }, { worker: name }, { worker: name }])).map((doc) => doc.n));
  numbers.push(...(await Doc.insertMany(Array.from({ length: 5 }, () => ({ worker: name })))).map((doc) => doc.n));
}
console.log(JSON.stringify(numbers));
await connection.close();
