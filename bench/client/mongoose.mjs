// A real peer: mongoose-sequence (the most used Node auto-increment plugin) with mongoose,
// numbering documents by save() (its way: a pre-save hook per document), against mongo-seq's
// insertOne loop and one insertMany of all N documents, on the same server. mongoose's own
// insertMany skips save hooks: the documents it inserts get no number (measured too).
// Rounds: each round times a share of the saves and of the insertOne loop, then one
// insertMany(N), so every ratio compares runs made moments apart (the median is reported).
import mongoose from "mongoose";
import AutoIncrementFactory from "mongoose-sequence";
import { MongoClient } from "mongodb";
import { Sequences } from "mongo-seq";
import { sequencePlugin } from "mongo-seq/mongoose";
import { countCommands } from "../../tests/harness/mongo.mjs";
import { median } from "../lib/stats.mjs";

const doc = (i) => ({ name: `order ${i}`, amount: i });
const total = (commands) => Object.values(commands.snapshot()).reduce((a, b) => a + b, 0);

/** Documents per second of `count` calls of `insert(i)`, one after the other. */
async function rate(count, insert) {
  const started = performance.now();
  for (let i = 0; i < count; i++) await insert(i);
  return count / ((performance.now() - started) / 1000);
}

/**
 * @param {{ uri: string, dbName: string, docs: number, rounds: number, report: import("../lib/report.mjs").Report, suffix?: string, link?: string }} args
 *   suffix: appended to the names of figures that depend on the link ("" on loopback, ".rtt1ms"
 *   through the latency proxy); the command counts are given on loopback only
 */
export async function runMongoose({ uri, dbName, docs, rounds, report, suffix = "", link = "loopback" }) {
  // A database each: mongoose-sequence puts a unique index on {id, reference_value} in its
  // `counters` collection, which mongo-seq's counter documents (neither field) would collide on.
  const connection = await mongoose.createConnection(uri, { dbName: `${dbName}_mongoose`, monitorCommands: true }).asPromise();
  const client = new MongoClient(uri, { monitorCommands: true });
  await client.connect();
  try {
    // mongoose-sequence, as its README shows.
    const AutoIncrement = AutoIncrementFactory(connection);
    const schema = new mongoose.Schema({ name: String, amount: Number });
    // (mongoose-sequence keeps its counter ids in a registry of the process: one per run.)
    schema.plugin(AutoIncrement, { inc_field: "seq", id: `orders_seq${suffix.replace(".", "_")}` });
    const Order = connection.model("Order", schema);
    await Order.init();
    const mongooseCommands = countCommands(connection.getClient());
    await new Order(doc(-1)).save(); // creates the counter; warm-up
    // mongo-seq's mongoose plugin on the same connection (its counters in a collection of their
    // own, beside mongoose-sequence's); commands on them counted apart.
    const pluginSchema = new mongoose.Schema({ name: String, amount: Number });
    pluginSchema.plugin(sequencePlugin, { field: "seq", sequence: "plugin_orders", counters: "mongo_seq_counters" });
    const PluginOrder = connection.model("PluginOrder", pluginSchema);
    await PluginOrder.init();
    await PluginOrder.create(doc(-1)); // creates its counter; warm-up
    let pluginCounterCommands = 0;
    connection.getClient().on("commandStarted", (event) => {
      if (event.command[event.commandName] === "mongo_seq_counters") pluginCounterCommands += 1;
    });

    const db = client.db(`${dbName}_seq`);
    const commands = countCommands(client);
    const seqs = new Sequences(db);
    const one = db.collection("orders_one");
    await seqs.insertOne(one, doc(-1), { sequence: "orders_one", field: "seq" });

    const share = Math.ceil(docs / rounds);
    const saves = [];
    const insertOnes = [];
    const insertManys = [];
    const pluginInsertManys = [];
    const pluginCounterCalls = [];
    let mongooseCount = 0;
    let insertOneCount = 0;
    let insertManyCount = 0;
    mongooseCommands.reset();
    for (let round = 0; round < rounds; round++) {
      saves.push(await rate(share, (i) => new Order(doc(i)).save()));
      mongooseCount += share;
      const before = total(commands);
      insertOnes.push(await rate(share, (i) => seqs.insertOne(one, doc(i), { sequence: "orders_one", field: "seq" })));
      insertOneCount += total(commands) - before;
      const batch = Array.from({ length: docs }, (_, i) => doc(i));
      const manyBefore = total(commands);
      const started = performance.now();
      const result = await seqs.insertMany(db.collection(`orders_many_${round}`), batch, { sequence: `orders_many_${round}`, field: "seq" });
      insertManys.push(docs / ((performance.now() - started) / 1000));
      insertManyCount += total(commands) - manyBefore;
      if (result.values.length !== docs) throw new Error("insertMany did not number every document");
      const pluginBefore = pluginCounterCommands;
      const pluginStarted = performance.now();
      const plugged = await PluginOrder.insertMany(batch);
      pluginInsertManys.push(docs / ((performance.now() - pluginStarted) / 1000));
      pluginCounterCalls.push(pluginCounterCommands - pluginBefore);
      if (plugged.some((order) => typeof order.seq !== "number")) throw new Error("the plugin's insertMany left a document unnumbered");
    }
    const mongooseCommandsPerDoc = total(mongooseCommands) / mongooseCount;
    const unnumberedBefore = await Order.countDocuments({ seq: { $exists: false } });
    await Order.insertMany(Array.from({ length: 100 }, (_, i) => doc(i)));
    const numberedByInsertMany = 100 - ((await Order.countDocuments({ seq: { $exists: false } })) - unnumberedBefore);

    const ratio = (mine) => median(mine.map((r, i) => r / saves[i]));
    const timed = (name, value, unit, what) => report.add(`${name}${suffix}`, value, unit, `${what}, ${link}`);
    const counted = (name, value, unit, what) => suffix === "" && report.add(name, value, unit, what, { server: false });
    timed("client.mongoose_sequence.save.docs_per_s", median(saves), "docs/s", `mongoose-sequence: save() one by one (${rounds} rounds of ${share})`);
    counted("client.mongoose_sequence.save.commands_per_doc", mongooseCommandsPerDoc, "commands/doc", "mongoose-sequence save(): commands per document");
    counted("client.mongoose_sequence.insertmany.numbered_pct", numberedByInsertMany, "%", "documents numbered by mongoose's insertMany (100 inserted)");
    timed("client.insertone.docs_per_s", median(insertOnes), "docs/s", `mongo-seq insertOne(), block 1, one by one (${rounds} rounds of ${share})`);
    counted("client.insertone.commands_per_doc", insertOneCount / (share * rounds), "commands/doc", "mongo-seq insertOne(): commands per document");
    timed("client.insertone.vs_mongoose_sequence", ratio(insertOnes), "x", "mongo-seq insertOne loop ÷ mongoose-sequence save loop (same round)");
    timed("client.insertmany.docs_per_s", median(insertManys), "docs/s", `mongo-seq insertMany() of ${docs} documents`);
    counted("client.insertmany.commands_per_doc", insertManyCount / (docs * rounds), "commands/doc", "mongo-seq insertMany(): commands per document");
    timed("client.insertmany.vs_mongoose_sequence", ratio(insertManys), "x", `mongo-seq insertMany(${docs}) ÷ mongoose-sequence numbering documents by save() (same round)`);
    timed("client.mongoose_plugin.insertmany.docs_per_s", median(pluginInsertManys), "docs/s", `mongo-seq/mongoose: Model.insertMany() of ${docs} documents, all numbered`);
    counted("client.mongoose_plugin.insertmany.counter_commands", Math.max(...pluginCounterCalls), "commands", `mongo-seq/mongoose: commands on the counters per insertMany of ${docs} documents (the most in ${rounds} rounds)`);
    timed("client.mongoose_plugin.insertmany.vs_mongoose_sequence", ratio(pluginInsertManys), "x", `mongo-seq/mongoose insertMany(${docs}) ÷ mongoose-sequence numbering documents by save() (same round)`);
  } finally {
    await client.db(`${dbName}_seq`).dropDatabase().catch(() => {});
    await connection.dropDatabase().catch(() => {});
    await client.close();
    await connection.close();
  }
}
