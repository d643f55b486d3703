// A real peer: mongoose-sequence (the most used Node auto-increment plugin) with mongoose,
// numbering N documents by save() (its way: a pre-save hook per document), against mongo-seq's
// insertOne loop and one insertMany of the same documents, on the same server. mongoose's own
// insertMany skips save hooks: the documents it inserts get no number (measured too).
import mongoose from "mongoose";
import AutoIncrementFactory from "mongoose-sequence";
import { MongoClient } from "mongodb";
import { Sequences } from "mongo-seq";
import { countCommands } from "../../tests/harness/mongo.mjs";

const doc = (i) => ({ name: `order ${i}`, amount: i });
const total = (commands) => Object.values(commands.snapshot()).reduce((a, b) => a + b, 0);

export async function runMongoose({ uri, dbName, docs, report }) {
  // A database each: mongoose-sequence puts a unique index on {id, reference_value} in its
  // `counters` collection, which mongo-seq's counter documents (neither field) would collide on.
  const connection = await mongoose.createConnection(uri, { dbName: `${dbName}_mongoose`, monitorCommands: true }).asPromise();
  const client = new MongoClient(uri, { monitorCommands: true });
  await client.connect();
  try {
    // mongoose-sequence, as its README shows.
    const AutoIncrement = AutoIncrementFactory(connection);
    const schema = new mongoose.Schema({ name: String, amount: Number });
    schema.plugin(AutoIncrement, { inc_field: "seq", id: "orders_seq" });
    const Order = connection.model("Order", schema);
    await Order.init();
    const mongooseCommands = countCommands(connection.getClient());
    await new Order(doc(-1)).save(); // creates the counter; warm-up
    mongooseCommands.reset();
    let started = performance.now();
    for (let i = 0; i < docs; i++) await new Order(doc(i)).save();
    const mongooseRate = docs / ((performance.now() - started) / 1000);
    const mongooseCommandsPerDoc = total(mongooseCommands) / docs;
    const unnumberedBefore = await Order.countDocuments({ seq: { $exists: false } });
    await Order.insertMany(Array.from({ length: 100 }, (_, i) => doc(i)));
    const numberedByInsertMany = 100 - ((await Order.countDocuments({ seq: { $exists: false } })) - unnumberedBefore);

    // mongo-seq: the same documents, insertOne one by one, then one insertMany.
    const db = client.db(`${dbName}_seq`);
    const commands = countCommands(client);
    const seqs = new Sequences(db);
    await seqs.insertOne(db.collection("orders_one"), doc(-1), { sequence: "orders_one", field: "seq" });
    commands.reset();
    started = performance.now();
    for (let i = 0; i < docs; i++) await seqs.insertOne(db.collection("orders_one"), doc(i), { sequence: "orders_one", field: "seq" });
    const insertOneRate = docs / ((performance.now() - started) / 1000);
    const insertOneCommands = total(commands) / docs;
    const batch = Array.from({ length: docs }, (_, i) => doc(i));
    commands.reset();
    started = performance.now();
    const result = await seqs.insertMany(db.collection("orders_many"), batch, { sequence: "orders_many", field: "seq" });
    const insertManyRate = docs / ((performance.now() - started) / 1000);
    const insertManyCommands = total(commands) / docs;
    if (result.values.length !== docs) throw new Error("insertMany did not number every document");

    report.add("client.mongoose_sequence.save.docs_per_s", mongooseRate, "docs/s", `mongoose-sequence: ${docs} save() one by one`);
    report.add("client.mongoose_sequence.save.commands_per_doc", mongooseCommandsPerDoc, "commands/doc", "mongoose-sequence save(): commands per document", { server: false });
    report.add("client.mongoose_sequence.insertmany.numbered_pct", numberedByInsertMany, "%", "documents numbered by mongoose's insertMany (100 inserted)", { server: false });
    report.add("client.insertone.docs_per_s", insertOneRate, "docs/s", `mongo-seq insertOne(), block 1, ${docs} one by one`);
    report.add("client.insertone.commands_per_doc", insertOneCommands, "commands/doc", "mongo-seq insertOne(): commands per document", { server: false });
    report.add("client.insertone.vs_mongoose_sequence", insertOneRate / mongooseRate, "x", "mongo-seq insertOne loop ÷ mongoose-sequence save loop");
    report.add("client.insertmany.docs_per_s", insertManyRate, "docs/s", `mongo-seq insertMany() of ${docs} documents`);
    report.add("client.insertmany.commands_per_doc", insertManyCommands, "commands/doc", "mongo-seq insertMany(): commands per document", { server: false });
    report.add("client.insertmany.vs_mongoose_sequence", insertManyRate / mongooseRate, "x", `mongo-seq insertMany(${docs}) ÷ mongoose-sequence numbering the same documents (save loop)`);
  } finally {
    await client.db(`${dbName}_seq`).dropDatabase().catch(() => {});
    await connection.dropDatabase().catch(() => {});
    await client.close();
    await connection.close();
  }
}
